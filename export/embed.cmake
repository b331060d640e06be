# Turn each iree/NAME.mlir.in (one IREE attribute syntax per file, named for
# the IREE release that introduced it) into a row of a C table
# {name, text}, newest first. Included with DIR and OUT set; OUT is rewritten
# only when it changes.
set(_c "/* Generated from export/iree by embed.cmake. */\n#include <stddef.h>\n")
string(APPEND _c "extern const char *const export_iree_syntax[];\nconst char *const export_iree_syntax[] = {\n")
file(GLOB IN ${DIR}/*.mlir.in)
list(SORT IN ORDER DESCENDING)
foreach(f ${IN})
  get_filename_component(_name ${f} NAME)
  string(REGEX REPLACE "\\.mlir\\.in$" "" _name "${_name}")
  file(READ ${f} _t)
  string(STRIP "${_t}" _t)
  autosched_c_string(_t "${_t}" "\\n")
  string(APPEND _c "\t\"${_name}\", \"${_t}\",\n")
endforeach()
string(APPEND _c "\tNULL, NULL\n};\n")
autosched_write_if_changed(${OUT} "${_c}")
