#include "vulkan/reflection.hpp"

#include <spirv-tools/libspirv.h>
#include <spirv_cross_c.h>

#include <memory>
#include <string>

#include "base/error.hpp"

namespace npvk::vk {
namespace {

// SPIRV-Cross trusts its input: a malformed module can crash its parser
// (fuzz_kernel_cache found one, a damaged disk cache entry with a valid
// checksum). SPIRV-Tools' validator is built for hostile input, so every
// module is validated before SPIRV-Cross reads it.
void validate(const std::vector<uint32_t> &spirv) {
  std::unique_ptr<spv_context_t, void (*)(spv_context)> ctx(spvContextCreate(SPV_ENV_VULKAN_1_2),
                                                            spvContextDestroy);
  require(ctx != nullptr, NPVK_ERR_OUT_OF_HOST_MEMORY, "SPIRV-Tools could not start");
  spv_diagnostic diagnostic = nullptr;
  const spv_result_t result = spvValidateBinary(ctx.get(), spirv.data(), spirv.size(), &diagnostic);
  std::string why = diagnostic && diagnostic->error ? diagnostic->error : "";
  spvDiagnosticDestroy(diagnostic);
  if (result != SPV_SUCCESS)
    fail(NPVK_ERR_COMPILE, "kernel layout check: not a valid SPIR-V module: " + why);
}

}  // namespace

void check_push_layout(const std::vector<uint32_t> &spirv, const PushLayout &expected) {
  validate(spirv);
  spvc_context ctx = nullptr;
  require(spvc_context_create(&ctx) == SPVC_SUCCESS, NPVK_ERR_OUT_OF_HOST_MEMORY,
          "SPIRV-Cross could not start");
  std::string problem;
  spvc_parsed_ir ir = nullptr;
  spvc_compiler compiler = nullptr;
  spvc_resources resources = nullptr;
  const spvc_reflected_resource *list = nullptr;
  size_t count = 0;
  if (spvc_context_parse_spirv(ctx, spirv.data(), spirv.size(), &ir) != SPVC_SUCCESS ||
      spvc_context_create_compiler(ctx, SPVC_BACKEND_NONE, ir, SPVC_CAPTURE_MODE_TAKE_OWNERSHIP,
                                   &compiler) != SPVC_SUCCESS ||
      spvc_compiler_create_shader_resources(compiler, &resources) != SPVC_SUCCESS ||
      spvc_resources_get_resource_list_for_type(resources, SPVC_RESOURCE_TYPE_PUSH_CONSTANT, &list,
                                                &count) != SPVC_SUCCESS) {
    problem = std::string("SPIRV-Cross cannot read the module: ") +
              spvc_context_get_last_error_string(ctx);
  } else if (count != 1) {
    problem = "expected one push-constant block, found " + std::to_string(count);
  } else {
    spvc_type type = spvc_compiler_get_type_handle(compiler, list[0].base_type_id);
    size_t size = 0;
    spvc_compiler_get_declared_struct_size(compiler, type, &size);
    unsigned members = spvc_type_get_num_member_types(type);
    if (size != expected.size || members != expected.offsets.size()) {
      problem = "push-constant block has " + std::to_string(members) + " members in " +
                std::to_string(size) + " bytes; the runtime fills " +
                std::to_string(expected.offsets.size()) + " in " + std::to_string(expected.size);
    } else {
      for (unsigned i = 0; i < members; ++i) {
        unsigned offset = 0;
        spvc_compiler_type_struct_member_offset(compiler, type, i, &offset);
        if (offset != expected.offsets[i])
          problem = "push-constant member " + std::to_string(i) + " is at byte " +
                    std::to_string(offset) + ", the runtime writes it at " +
                    std::to_string(expected.offsets[i]);
      }
    }
  }
  spvc_context_destroy(ctx);
  if (!problem.empty()) fail(NPVK_ERR_COMPILE, "kernel layout check: " + problem);
}

}  // namespace npvk::vk
