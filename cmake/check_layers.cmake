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
#   python-shim/src/  the public ABI (npvk/npvk.h) and its own headers only:
#              where work runs is the runtime's decision (runtime/placement/,
#              asked through npvk_placement_decide), so no cost figure of
#              the ABI's (a field named *_ns or *_ns_per_byte) is computed
#              with there either.
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
set(allowed_python-shim/src "npvk/")
# npvk's own directories, which the shim reaches by <...> no more than by "...".
set(npvk_dirs "base/|compile/|vulkan/|runtime/|interpose/|capi/")
# A cost figure (npvk_cost_model's, npvk_placement's) beside an arithmetic
# or comparison operator.
set(figure "\\.[a-z_]+_ns(_per_byte)?")
set(cost_arithmetic "${figure}[ \t]*[-+*/<>]|[-+*/<>][ \t]*[A-Za-z_]+${figure}")
# System headers that only the device layers may see.
set(device_headers "vulkan/|spirv_cross|spirv-tools|shaderc/|glslang/")

if(NOT IS_DIRECTORY "${ROOT}")
  message(FATAL_ERROR "check_layers: ROOT=${ROOT} is not a directory")
endif()
# What fusion's rules are made of (compile/iteration.hpp, compile/kernel_spec.hpp),
# outside comments.
set(fusion_rule_primitives "^[^/]*(loops_pair_up|in_memory_order|kMaxFusedSteps)")
set(violations "")
# reject_lines(<source> <regex variable> <what>): each line of the source that
# matches the regex is a violation.
function(reject_lines source regex_var what)
  file(STRINGS ${ROOT}/${source} matched REGEX "${${regex_var}}")
  foreach(line IN LISTS matched)
    string(STRIP "${line}" line)
    string(APPEND violations "  ${source}: ${what}: ${line}\n")
  endforeach()
  set(violations "${violations}" PARENT_SCOPE)
endfunction()
foreach(layer IN ITEMS base compile vulkan runtime interpose capi python-shim/src)
  file(GLOB_RECURSE sources RELATIVE ${ROOT} ${ROOT}/${layer}/*.hpp ${ROOT}/${layer}/*.cpp)
  foreach(source IN LISTS sources)
    # Fusion's rules (which ops share a kernel) live in compile/fusion*: the
    # runtime asks the planner and the FenceTracker, and uses none of the
    # primitives those rules are made of.
    if(layer MATCHES "^(runtime|interpose|capi)$")
      reject_lines(${source} fusion_rule_primitives "a fusion rule outside compile/")
    endif()
    if(layer STREQUAL "python-shim/src")
      reject_lines(${source} cost_arithmetic "cost arithmetic")
    endif()
    file(STRINGS ${ROOT}/${source} lines REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS lines)
      if(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
        set(target "${CMAKE_MATCH_1}")
        # A header beside the source (no directory) belongs to its own layer.
        if(target MATCHES "/" AND NOT target MATCHES "^(${allowed_${layer}})")
          string(APPEND violations "  ${source}: #include \"${target}\"\n")
        endif()
        # The recorder is the context's part, fed by it: it must not reach
        # back into the context (the two included each other).
        if(source MATCHES "^runtime/recorder\\." AND target STREQUAL "runtime/context.hpp")
          string(APPEND violations "  ${source}: #include \"${target}\" (the recorder's owner)\n")
        endif()
        if(source MATCHES "^compile/families/([^/]+)/")
          set(family "${CMAKE_MATCH_1}")
          if(target MATCHES "^compile/families/([^/]+)/" AND NOT CMAKE_MATCH_1 STREQUAL family)
            string(APPEND violations "  ${source}: #include \"${target}\" (another family's)\n")
          endif()
        endif()
      elseif(line MATCHES "#[ \t]*include[ \t]*<([^>]+)>")
        set(target "${CMAKE_MATCH_1}")
        if((layer MATCHES "^(base|compile)$" AND target MATCHES "^(${device_headers})")
           OR (layer STREQUAL "python-shim/src" AND target MATCHES "^(${npvk_dirs})"))
          string(APPEND violations "  ${source}: #include <${target}>\n")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "What breaks the layering (docs/architecture.md, \"Layers\"):\n"
                      "${violations}")
endif()
if(STAMP)
  file(TOUCH ${STAMP})
endif()
