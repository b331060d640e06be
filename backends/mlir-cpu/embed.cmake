# Turn each templates/NAME.in into a C string constant mlircpu_tpl_NAME
# (dots and dashes become underscores). Included with DIR (the templates
# folder) and OUT (the .c file) set; OUT is rewritten only when it changes.
set(_c "/* Generated from backends/mlir-cpu/templates by embed.cmake. */\n")
file(GLOB IN ${DIR}/*.in)
list(SORT IN)
foreach(f ${IN})
  get_filename_component(_name ${f} NAME)
  string(REGEX REPLACE "\\.in$" "" _name "${_name}")
  string(REGEX REPLACE "[^A-Za-z0-9]" "_" _name "${_name}")
  file(READ ${f} _t)
  autosched_c_string(_t "${_t}" "\\n\"\n\t\"")
  string(APPEND _c "extern const char mlircpu_tpl_${_name}[];\nconst char mlircpu_tpl_${_name}[] =\n\t\"${_t}\";\n")
endforeach()
autosched_write_if_changed(${OUT} "${_c}")
