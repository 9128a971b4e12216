# Writes OUT: a C++ file with one string constant per GLSL source in SOURCES,
# looked up by file name through npvk::embedded_shader().
set(body "// Generated from shaders/*.glsl by cmake/embed_shaders.cmake. Do not edit.\n")
string(APPEND body "#include <cstring>\n#include <string>\nnamespace npvk {\n")
string(APPEND body "const char *embedded_shader(const char *name) {\n")
string(REPLACE "|" ";" SOURCES "${SOURCES}")
foreach(src IN LISTS SOURCES)
  get_filename_component(name ${src} NAME)
  file(READ ${src} text)
  # Raw string literals keep the source as it is; the delimiter cannot occur in GLSL.
  string(APPEND body "  if (std::strcmp(name, \"${name}\") == 0)\n    return R\"npvk_glsl(${text})npvk_glsl\";\n")
endforeach()
string(APPEND body "  return nullptr;\n}\n}  // namespace npvk\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
