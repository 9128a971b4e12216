#include "vulkan/compiler.hpp"

#include <shaderc/shaderc.h>

#include <memory>
#include <spirv-tools/optimizer.hpp>
#include <sstream>

#include "base/error.hpp"

namespace npvk::vk {
namespace {

std::string numbered(const std::string &source) {
  std::istringstream in(source);
  std::ostringstream out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) out << n << ": " << line << "\n";
  return out.str();
}

// One compiler for the process. glslang builds its tables of built-in
// functions once per process and frees them when the last compiler is
// released: a compiler per kernel paid that, about 55 ms, for every kernel
// (measured: 57-73 ms per Black-Scholes kernel, 2-14 ms with the tables
// kept). Compiling takes the compiler as const, so threads share it. Never
// released: managed memory's atexit handler may still compile.
shaderc_compiler_t process_compiler() {
  static shaderc_compiler_t compiler = shaderc_compiler_initialize();
  return compiler;
}

}  // namespace

std::vector<uint32_t> compile_glsl(const std::string &source, const std::string &name) {
  shaderc_compiler_t compiler = process_compiler();
  std::unique_ptr<shaderc_compile_options, void (*)(shaderc_compile_options_t)> options(
      shaderc_compile_options_initialize(), shaderc_compile_options_release);
  require(compiler && options, NPVK_ERR_OUT_OF_HOST_MEMORY, "shaderc could not start");
  shaderc_compile_options_set_target_env(options.get(), shaderc_target_env_vulkan,
                                         shaderc_env_version_vulkan_1_2);
  // The driver optimises anyway; SPIR-V-level optimisation would only cost
  // compile time, which users notice on first runs.
  shaderc_compile_options_set_optimization_level(options.get(), shaderc_optimization_level_zero);
  std::unique_ptr<shaderc_compilation_result, void (*)(shaderc_compilation_result_t)> result(
      shaderc_compile_into_spv(compiler, source.data(), source.size(), shaderc_compute_shader,
                               name.c_str(), "main", options.get()),
      shaderc_result_release);
  require(result != nullptr, NPVK_ERR_OUT_OF_HOST_MEMORY, "shaderc returned no result");
  if (shaderc_result_get_compilation_status(result.get()) != shaderc_compilation_status_success)
    fail(NPVK_ERR_COMPILE, "kernel " + name + " failed to compile:\n" +
                               shaderc_result_get_error_message(result.get()) + "\n" +
                               numbered(source));
  const auto *words = reinterpret_cast<const uint32_t *>(shaderc_result_get_bytes(result.get()));
  std::vector<uint32_t> spirv(words, words + shaderc_result_get_length(result.get()) / 4);
  return shrink(std::move(spirv));
}

std::vector<uint32_t> shrink(std::vector<uint32_t> spirv) {
  // glslang at level zero gives every GLSL local a function variable with a
  // name, loaded and stored around each use. The driver promotes them
  // itself, but it and the validator read the module on every process's
  // first use of a cached kernel. Promoting them and dropping what is then
  // dead and the names, with no inlining or rewriting of the arithmetic
  // (NoContraction decorations stay on their instructions), took
  // Black-Scholes' step kernel from 76 to 27 KB in about 20 ms, once, at
  // compile time. Where a pass fails, the module as glslang wrote it serves.
  spvtools::Optimizer optimizer(SPV_ENV_VULKAN_1_2);
  // The entry point's interface stays whole: a kernel whose work is all dead
  // (a contracted cast of a scalar) otherwise lost its push-constant block,
  // which the layout check requires (vulkan/reflection.cpp).
  optimizer.RegisterPass(spvtools::CreateStripDebugInfoPass())
      .RegisterPass(spvtools::CreateSSARewritePass())
      .RegisterPass(spvtools::CreateAggressiveDCEPass(/*preserve_interface=*/true));
  std::vector<uint32_t> smaller;
  if (!optimizer.Run(spirv.data(), spirv.size(), &smaller)) return spirv;
  return smaller;
}

}  // namespace npvk::vk
