// Every kernel the compiler can generate compiles to SPIR-V: each
// implemented op over every dtype combination its loop rule accepts
// (contiguous and strided), every reducible op's reductions and scans, and
// the matrix products. Offline (shaderc), so no device is needed.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <spirv-tools/libspirv.hpp>
#include <string>
#include <thread>
#include <vector>

#include "compile/dtype.hpp"
#include "compile/families/elementwise/elementwise_glsl.hpp"
#include "compile/families/matmul/matmul_glsl.hpp"
#include "compile/families/reduce/reduce_glsl.hpp"
#include "compile/kernel_abi.hpp"
#include "compile/ops.hpp"
#include "vulkan/compiler.hpp"

namespace npvk {
namespace {

struct Job {
  std::string key;
  std::string source;
};

// Compiles every job on two threads; returns the failures' messages.
std::vector<std::string> CompileAll(const std::vector<Job> &jobs) {
  std::atomic<size_t> next{0};
  std::mutex lock;
  std::vector<std::string> failures;
  auto work = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      try {
        if (vk::compile_glsl(jobs[i].source, jobs[i].key).empty())
          throw std::runtime_error("empty SPIR-V");
      } catch (const std::exception &e) {
        std::lock_guard<std::mutex> hold(lock);
        failures.push_back(jobs[i].key + ": " + std::string(e.what()).substr(0, 2000));
      }
    }
  };
  std::thread other(work);
  work();
  other.join();
  return failures;
}

// Every dtype tuple of `n` operands.
std::vector<std::vector<npvk_dtype>> Tuples(uint32_t n) {
  std::vector<std::vector<npvk_dtype>> all(1);
  for (uint32_t k = 0; k < n; ++k) {
    std::vector<std::vector<npvk_dtype>> next;
    for (const auto &t : all)
      for (int d = 0; d < NPVK_DTYPE_COUNT; ++d) {
        next.push_back(t);
        next.back().push_back(npvk_dtype(d));
      }
    all = std::move(next);
  }
  return all;
}

// A one-op kernel over fresh slots.
FusedKernelSpec SingleOp(const OpInfo &info, const std::vector<npvk_dtype> &d, bool strided) {
  FusedKernelSpec s;
  FusedKernelSpec::Step st;
  st.op.op = info.op;
  st.op.nin = info.nin;
  st.op.nout = info.nout;
  for (uint32_t k = 0; k < d.size(); ++k) {
    st.op.operands[k].dtype = d[k];
    st.slot[k] = uint8_t(k);
    s.slots.push_back({d[k], false, true});
  }
  s.steps.push_back(st);
  if (strided) {
    s.contiguous = false;
    s.rank = 2;
    s.narrow_index = true;
  }
  return s;
}

std::vector<std::vector<npvk_dtype>> Loops(const OpInfo &info) {
  std::vector<std::vector<npvk_dtype>> loops;
  for (const auto &t : Tuples(info.nin + info.nout))
    if (op_has_loop(info, t.data(), uint32_t(t.size()), nullptr)) loops.push_back(t);
  return loops;
}

// The harness reports what shaderc rejects.
TEST(CompileKernels, BadSourceFails) {
  EXPECT_EQ(CompileAll({{"bad", "#version 460\nvoid main() { undeclared = 1; }\n"}}).size(), 1u);
}

TEST(CompileKernels, ElementwiseEveryOpAndLoop) {
  std::vector<Job> jobs;
  size_t ops = 0;
  for (int o = 0; o < NPVK_OP_COUNT; ++o) {
    const OpInfo &info = op_info(npvk_op(o));
    if (!info.implemented) continue;
    const auto loops = Loops(info);
    EXPECT_FALSE(loops.empty()) << info.name << " has no loop";
    ++ops;
    for (const auto &loop : loops) {
      for (bool strided : {false, true}) {
        FusedKernelSpec s = SingleOp(info, loop, strided);
        s.narrow_offsets = true;  // what arrays below 2^31 elements get
        jobs.push_back({s.key(), generate_glsl(s)});
        // 64-bit offsets: the first loop of each op is enough for the addressing.
        if (&loop != &loops.front()) continue;
        s.narrow_offsets = false;
        jobs.push_back({s.key(), generate_glsl(s)});
        // The vector path (NPVK_VECTOR_ACCESS), which only contiguous kernels take.
        if (strided) continue;
        s.vector_access = true;
        const std::string vector_source = generate_glsl(s);
        EXPECT_NE(vector_source.find("RefV_"), std::string::npos) << s.key();
        jobs.push_back({s.key(), vector_source});
      }
    }
  }
  EXPECT_EQ(ops, size_t(NPVK_OP_COUNT));
  EXPECT_GT(jobs.size(), 1500u);
  for (const std::string &f : CompileAll(jobs)) ADD_FAILURE() << f;
}

TEST(CompileKernels, ReductionsAndScans) {
  std::vector<Job> jobs;
  for (int o = 0; o < NPVK_OP_COUNT; ++o) {
    const OpInfo &info = op_info(npvk_op(o));
    if (!reducible(info.op)) continue;
    for (int d = 0; d < NPVK_DTYPE_COUNT; ++d) {
      const npvk_dtype out = npvk_dtype(d);
      const npvk_dtype loop[3] = {out, out, out};
      if (!op_has_loop(info, loop, 3, nullptr)) continue;
      for (ReduceMode mode : {ReduceMode::PerThread, ReduceMode::Workgroup, ReduceMode::Scan}) {
        ReduceKernelSpec r;
        r.op = info.op;
        r.in = out;
        r.out = out;
        r.mode = mode;
        r.outer_rank = 1;
        r.inner_rank = mode == ReduceMode::Scan ? 1 : 2;
        jobs.push_back({r.key(), generate_reduce_glsl(r)});
      }
      // The input cast to the output's dtype on load (sum of int8 in int64).
      ReduceKernelSpec cast;
      cast.op = info.op;
      cast.in = NPVK_INT8;
      cast.out = out;
      cast.outer_rank = 0;
      cast.inner_rank = 1;
      jobs.push_back({cast.key(), generate_reduce_glsl(cast)});
    }
  }
  EXPECT_GT(jobs.size(), 200u);
  for (const std::string &f : CompileAll(jobs)) ADD_FAILURE() << f;
}

TEST(CompileKernels, Matmul) {
  std::vector<Job> jobs;
  for (npvk_dtype d : {NPVK_FLOAT32, NPVK_FLOAT64})
    for (uint32_t rank : {0u, 2u}) {
      MatmulOp m;
      m.dtype = d;
      m.batch_shape.assign(rank, 2);
      m.batch_strides.assign(3, std::vector<int64_t>(rank, 1));
      jobs.push_back({m.key(), generate_matmul_glsl(m)});
    }
  for (const std::string &f : CompileAll(jobs)) ADD_FAILURE() << f;
}

// What the rows produce, spot-checked: a template, a math function through
// float64, a float16 rounding, a mixed int64 comparison, an FP pole test.
TEST(CompileKernels, GeneratedExpressions) {
  auto glsl = [](npvk_op op, std::vector<npvk_dtype> d) {
    return generate_glsl(SingleOp(op_info(op), d, false));
  };
  EXPECT_NE(glsl(NPVK_OP_ADD, {NPVK_INT32, NPVK_INT32, NPVK_INT32}).find("r = (a0 + a1);"),
            std::string::npos);
  EXPECT_NE(glsl(NPVK_OP_ADD, {NPVK_BOOL, NPVK_BOOL, NPVK_BOOL}).find("r = (a0 || a1);"),
            std::string::npos);
  EXPECT_NE(glsl(NPVK_OP_EXP, {NPVK_FLOAT32, NPVK_FLOAT32}).find("float(npvk_exp_f64(double(a0)))"),
            std::string::npos);
  const std::string half = glsl(NPVK_OP_SQRT, {NPVK_FLOAT16, NPVK_FLOAT16});
  EXPECT_NE(half.find("r = npvk_round_half(r);"), std::string::npos);
  EXPECT_EQ(glsl(NPVK_OP_FLOOR, {NPVK_FLOAT16, NPVK_FLOAT16}).find("npvk_round_half(r)"),
            std::string::npos);
  EXPECT_NE(glsl(NPVK_OP_LESS, {NPVK_INT64, NPVK_UINT64, NPVK_BOOL})
                .find("(a0 < int64_t(0) ? true : (uint64_t(a0) < a1))"),
            std::string::npos);
  EXPECT_NE(glsl(NPVK_OP_LOG1P, {NPVK_FLOAT64, NPVK_FLOAT64}).find("a0 == double(-1)"),
            std::string::npos);
  EXPECT_NE(
      glsl(NPVK_OP_POWER, {NPVK_FLOAT64, NPVK_FLOAT64, NPVK_FLOAT64}).find("npvk_pow_f64(a0, a1)"),
      std::string::npos);
  EXPECT_TRUE(needs_float64(
      SingleOp(op_info(NPVK_OP_SIN), {NPVK_FLOAT32, NPVK_FLOAT32}, false).steps[0].op));
  EXPECT_FALSE(needs_float64(
      SingleOp(op_info(NPVK_OP_ADD), {NPVK_FLOAT32, NPVK_FLOAT32, NPVK_FLOAT32}, false)
          .steps[0]
          .op));
}

// An op whose result is one of its operands' values (up to the sign) never
// makes a new infinity or NaN: its kernel carries no flag code. In place,
// every op of a chain computes flag classes per element, and lavapipe ran
// sklearn's `D *= -2; D += x; D += y; maximum(D, 0, out=D); minimum(c, D,
// out=D)` 400k elements in 1.55 ms with flags in all five, 1.44 without those of
// maximum and minimum.
TEST(CompileKernels, OperandValuedOpsCarryNoFlagCode) {
  for (npvk_op op : {NPVK_OP_MAXIMUM, NPVK_OP_MINIMUM, NPVK_OP_FMAX, NPVK_OP_FMIN, NPVK_OP_NEGATIVE,
                     NPVK_OP_ABSOLUTE, NPVK_OP_COPYSIGN, NPVK_OP_CLIP}) {
    const OpInfo &info = op_info(op);
    FusedKernelSpec s =
        SingleOp(info, std::vector<npvk_dtype>(info.nin + info.nout, NPVK_FLOAT64), false);
    s.steps[0].slot[info.nin] = 0;  // in place: the branch-free classes
    EXPECT_EQ(generate_glsl(s).find("fl0 |="), std::string::npos) << info.name;
  }
  FusedKernelSpec add =
      SingleOp(op_info(NPVK_OP_ADD), {NPVK_FLOAT64, NPVK_FLOAT64, NPVK_FLOAT64}, false);
  add.steps[0].slot[2] = 0;
  EXPECT_NE(generate_glsl(add).find("fl0 |="), std::string::npos);
}

// A kernel that leaves its flags loop to the flags pass has flag registers
// only for its tainted (in-place) steps: the others' would stay 0, and 114
// of them with their atomics were half of Black-Scholes' step kernel. The
// same kernel with the loop inside, and the pass itself, keep every one.
TEST(CompileKernels, DeferredKernelsDeclareOnlyTaintedFlagRegisters) {
  using FlagsLoop = FusedKernelSpec::FlagsLoop;
  FusedKernelSpec s =
      SingleOp(op_info(NPVK_OP_ADD), {NPVK_FLOAT64, NPVK_FLOAT64, NPVK_FLOAT64}, false);
  s.flags_loop = FlagsLoop::Deferred;
  EXPECT_EQ(generate_glsl(s).find("uint fl0"), std::string::npos);
  // Still asks for the pass where a result is not finite.
  EXPECT_NE(generate_glsl(s).find(std::to_string(kFlagsPassWanted) + "u"), std::string::npos);
  for (FlagsLoop loop : {FlagsLoop::InKernel, FlagsLoop::FlagsPass}) {
    s.flags_loop = loop;
    EXPECT_NE(generate_glsl(s).find("uint fl0 = 0u;"), std::string::npos);
  }
  s.flags_loop = FlagsLoop::Deferred;
  s.steps[0].slot[2] = 0;  // in place: tainted, so its register stays
  EXPECT_NE(generate_glsl(s).find("fl0 |="), std::string::npos);
}

// compile_glsl's modules are shrunk: no debug names, and no function-scope
// variable left but the arguments of calls (glslang passes parameters by
// pointer; it gives every GLSL local a variable), and still valid.
TEST(CompileKernels, CompiledModulesAreShrunk) {
  FusedKernelSpec s = SingleOp(op_info(NPVK_OP_EXP), {NPVK_FLOAT64, NPVK_FLOAT64}, false);
  const std::vector<uint32_t> spirv = vk::compile_glsl(generate_glsl(s), s.key());
  constexpr uint32_t kOpName = 5, kOpFunctionCall = 57, kOpVariable = 59, kFunctionStorage = 7;
  size_t names = 0, calls = 0;
  std::set<uint32_t> variables, arguments;
  for (size_t i = 5; i < spirv.size();) {
    const uint32_t opcode = spirv[i] & 0xffffu, words = spirv[i] >> 16;
    ASSERT_GT(words, 0u);
    names += opcode == kOpName;
    if (opcode == kOpVariable && spirv[i + 3] == kFunctionStorage) variables.insert(spirv[i + 2]);
    if (opcode == kOpFunctionCall) {
      ++calls;
      arguments.insert(spirv.begin() + long(i) + 4, spirv.begin() + long(i + words));
    }
    i += words;
  }
  EXPECT_EQ(names, 0u);
  EXPECT_GT(calls, 0u);  // exp is a library call
  for (uint32_t v : variables) EXPECT_TRUE(arguments.count(v)) << "variable %" << v;
  EXPECT_TRUE(spvtools::SpirvTools(SPV_ENV_VULKAN_1_2).Validate(spirv));
}

// A kernel whose work is all dead (its one output contracted, no flag code)
// keeps its push-constant block through shrink(): the layout check requires
// one, and dead-code elimination had removed it (a contracted cast of a
// scalar, in the flush of tests/python/test_fp_errors.py's
// overflow_then_input_overwritten).
TEST(CompileKernels, ShrunkDeadKernelsKeepTheirPushConstants) {
  FusedKernelSpec s = SingleOp(op_info(NPVK_OP_CAST), {NPVK_FLOAT64, NPVK_FLOAT64}, false);
  s.steps[0].op.operands[0].scalar = s.slots[0].scalar = true;
  s.slots[1].stored = false;
  const std::vector<uint32_t> spirv = vk::compile_glsl(generate_glsl(s), s.key());
  constexpr uint32_t kOpVariable = 59, kPushConstantStorage = 9;
  size_t push_blocks = 0;
  for (size_t i = 5; i < spirv.size();) {
    const uint32_t opcode = spirv[i] & 0xffffu, words = spirv[i] >> 16;
    ASSERT_GT(words, 0u);
    push_blocks += opcode == kOpVariable && spirv[i + 3] == kPushConstantStorage;
    i += words;
  }
  EXPECT_EQ(push_blocks, 1u);
}

// A power with a fixed exponent calls its own routine, for every float loop,
// and each form compiles.
TEST(CompileKernels, FixedExponentPowers) {
  const FixedExponent forms[] = {{FixedExponent::Integer, 3},
                                 {FixedExponent::Integer, -1},
                                 {FixedExponent::Integer, -8},
                                 {FixedExponent::Half, 0}};
  const char *calls[] = {"npvk_f64_powi(", "(1.0LF / ", "npvk_f64_powi(", "npvk_f64_pow_half("};
  std::vector<Job> jobs;
  for (npvk_op op : {NPVK_OP_POWER, NPVK_OP_FLOAT_POWER})
    for (npvk_dtype d : {NPVK_FLOAT16, NPVK_FLOAT32, NPVK_FLOAT64}) {
      if (op == NPVK_OP_FLOAT_POWER && d == NPVK_FLOAT16) continue;  // no such loop
      for (size_t f = 0; f < 4; ++f) {
        FusedKernelSpec spec = SingleOp(op_info(op), {d, d, d}, false);
        spec.steps[0].op.operands[1].scalar = spec.slots[1].scalar = true;
        spec.steps[0].op.exponent = forms[f];
        const std::string source = generate_glsl(spec);
        EXPECT_NE(source.find(calls[f]), std::string::npos) << spec.key();
        EXPECT_EQ(source.find("npvk_pow_f64(a"), std::string::npos) << spec.key();
        jobs.push_back({spec.key(), source});
      }
    }
  const std::vector<std::string> failures = CompileAll(jobs);
  EXPECT_TRUE(failures.empty()) << failures.front();
}

}  // namespace
}  // namespace npvk
