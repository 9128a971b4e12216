# The layering of the runtime (docs/architecture.md, "Layers"), checked on
# every build: each layer may include only the layers below it. Run with
# -DROOT=<source dir> [-DSTAMP=<file to touch on success>].
#
#   base/      nothing of npvk
#   compile/   base/; backend-free, so no Vulkan, SPIRV-Cross or shaderc header
#   vulkan/    base/ and compile/kernel_abi.hpp (the push-constant contract) only
#   runtime/   base/, compile/, vulkan/
#   interpose/ base/, compile/, vulkan/, runtime/
#   capi/      everything but python-shim/
#
# Within compile/, a kernel family's folder (compile/families/<family>/) may
# not include another family's: what two families share belongs in
# compile/families/ or compile/, so that a family can be changed, or a new
# one added, without reading the others (compile/families/README.md).
set(allowed_base "base/")
set(allowed_compile "base/|compile/")
set(allowed_vulkan "base/|vulkan/|compile/kernel_abi\\.hpp")
set(allowed_runtime "base/|compile/|vulkan/|runtime/")
set(allowed_interpose "base/|compile/|vulkan/|runtime/|interpose/")
set(allowed_capi "base/|compile/|vulkan/|runtime/|interpose/|capi/")
# System headers that only the device layers may see.
set(device_headers "vulkan/|spirv_cross|spirv-tools|shaderc/|glslang/")

if(NOT IS_DIRECTORY "${ROOT}")
  message(FATAL_ERROR "check_layers: ROOT=${ROOT} is not a directory")
endif()
set(violations "")
foreach(layer IN ITEMS base compile vulkan runtime interpose capi)
  file(GLOB_RECURSE sources RELATIVE ${ROOT} ${ROOT}/${layer}/*.hpp ${ROOT}/${layer}/*.cpp)
  foreach(source IN LISTS sources)
    file(STRINGS ${ROOT}/${source} lines REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS lines)
      if(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
        set(target "${CMAKE_MATCH_1}")
        # A header beside the source (no directory) belongs to its own layer.
        if(target MATCHES "/" AND NOT target MATCHES "^(${allowed_${layer}})")
          string(APPEND violations "  ${source}: #include \"${target}\"\n")
        endif()
        if(source MATCHES "^compile/families/([^/]+)/")
          set(family "${CMAKE_MATCH_1}")
          if(target MATCHES "^compile/families/([^/]+)/" AND NOT CMAKE_MATCH_1 STREQUAL family)
            string(APPEND violations "  ${source}: #include \"${target}\" (another family's)\n")
          endif()
        endif()
      elseif(line MATCHES "#[ \t]*include[ \t]*<([^>]+)>")
        set(target "${CMAKE_MATCH_1}")
        if(layer MATCHES "^(base|compile)$" AND target MATCHES "^(${device_headers})")
          string(APPEND violations "  ${source}: #include <${target}>\n")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "Includes that break the layering (docs/architecture.md, \"Layers\"):\n"
                      "${violations}")
endif()
if(STAMP)
  file(TOUCH ${STAMP})
endif()
