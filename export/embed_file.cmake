# Turn the C source IN into a C string NAME (export/runtime/pool.c: the
# buffer pool every built library is linked with). Included with IN, NAME
# and OUT set; OUT is rewritten only when it changes.
file(READ ${IN} _t)
autosched_c_string(_t "${_t}" "\\n\"\n\"")
set(_c "/* Generated from ${IN} by embed_file.cmake. */\nextern const char ${NAME}[];\nconst char ${NAME}[] =\n\"${_t}\";\n")
autosched_write_if_changed(${OUT} "${_c}")
