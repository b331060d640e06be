# Turn the C source IN into a C string NAME (export/runtime/pool.c: the
# buffer pool every built library is linked with). Included with IN, NAME
# and OUT set; OUT is rewritten only when it changes.
file(READ ${IN} _t)
string(REPLACE "\\" "\\\\" _t "${_t}")
string(REPLACE "\"" "\\\"" _t "${_t}")
string(REPLACE "\n" "\\n\"\n\"" _t "${_t}")
set(_c "/* Generated from ${IN} by embed_file.cmake. */\nextern const char ${NAME}[];\nconst char ${NAME}[] =\n\"${_t}\";\n")
set(_old "")
if(EXISTS ${OUT})
  file(READ ${OUT} _old)
endif()
if(NOT _old STREQUAL _c)
  file(WRITE ${OUT} "${_c}")
endif()
