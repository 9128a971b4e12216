# Checks (or, with -DWRITE=ON, rewrites) the generated settings tables of
# docs/settings.md and README.md: the text between
# <!-- BEGIN tools/npvk_settings KIND --> and <!-- END tools/npvk_settings KIND -->
# must be what `npvk-settings KIND` prints from npvk::option_table().
#
#   cmake -DTOOL=build/tools/npvk-settings -DROOT=. [-DWRITE=ON] -P tools/settings_docs.cmake
#
# ctest runs the check (settings_docs); `cmake --build build --target
# settings-docs` rewrites both files.
if(NOT TOOL OR NOT ROOT)
  message(FATAL_ERROR "usage: cmake -DTOOL=<npvk-settings> -DROOT=<source dir> [-DWRITE=ON] -P settings_docs.cmake")
endif()

set(failed "")
foreach(pair IN ITEMS "docs/settings.md=table" "README.md=readme")
  string(REPLACE "=" ";" pair "${pair}")
  list(GET pair 0 file)
  list(GET pair 1 kind)
  execute_process(COMMAND "${TOOL}" ${kind} OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${TOOL} ${kind} failed (${rc})")
  endif()
  file(READ "${ROOT}/${file}" doc)
  set(begin "<!-- BEGIN tools/npvk_settings ${kind} -->\n")
  set(end "<!-- END tools/npvk_settings ${kind} -->")
  string(FIND "${doc}" "${begin}" a)
  string(FIND "${doc}" "${end}" b)
  if(a EQUAL -1 OR b EQUAL -1 OR b LESS a)
    message(FATAL_ERROR "${file} has no block between '${begin}' and '${end}'")
  endif()
  string(LENGTH "${begin}" begin_length)
  math(EXPR a "${a} + ${begin_length}")
  math(EXPR length "${b} - ${a}")
  string(SUBSTRING "${doc}" ${a} ${length} current)
  if(current STREQUAL generated)
    continue()
  endif()
  if(WRITE)
    string(SUBSTRING "${doc}" 0 ${a} head)
    string(SUBSTRING "${doc}" ${b} -1 tail)
    file(WRITE "${ROOT}/${file}" "${head}${generated}${tail}")
    message(STATUS "wrote ${file}")
  else()
    list(APPEND failed "${file}")
  endif()
endforeach()

if(failed)
  message(FATAL_ERROR
          "${failed}: the settings table differs from npvk::option_table() (base/options.cpp). "
          "Edit the table there, never the Markdown, then regenerate: "
          "cmake --build build --target settings-docs")
endif()
