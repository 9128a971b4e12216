// GLSL for reductions and scans. The push constants' slots are reduce_slot's
// (compile/kernel_abi.hpp), which compile/families/reduce/reduce_binding.cpp fills. The
// argument table holds the outer shape, the outer input and output strides,
// the inner shape and the inner input strides, in elements.
#include "compile/families/reduce/reduce_glsl.hpp"

#include <sstream>
#include <string>

#include "compile/glsl_parts.hpp"
#include "compile/kernel_abi.hpp"
#include "compile/ops.hpp"

namespace npvk {

using namespace glsl;

namespace {

// A push-constant operand, as the GLSL reads it.
std::string slot(uint32_t i) {
  return "pc.operand[" + std::to_string(i) + "]";
}

// `offset += ...` for the index `index` decomposed over a merged space whose
// shape is at m.v[shape_at] and one operand's strides at m.v[strides_at[k]].
void emit_decompose(std::ostringstream &out, uint32_t rank, const std::string &index,
                    uint32_t shape_at, const std::vector<std::pair<std::string, uint32_t>> &terms,
                    const char *indent) {
  if (rank == 0) return;
  out << indent << "{\n" << indent << "  int64_t rest = " << index << ";\n";
  for (int d = int(rank) - 1; d >= 0; --d) {
    out << indent << "  {\n";
    if (d > 0)
      out << indent << "    int64_t extent = m.v[" << shape_at + d << "];\n"
          << indent << "    int64_t c = rest % extent;\n"
          << indent << "    rest /= extent;\n";
    else
      out << indent << "    int64_t c = rest;\n";
    for (const auto &t : terms)
      out << indent << "    " << t.first << " += c * m.v[" << t.second + d << "];\n";
    out << indent << "  }\n";
  }
  out << indent << "}\n";
}

// Prologue and the shader templates the combining op needs.
void emit_head(std::ostringstream &out, const ReduceKernelSpec &s, const KernelSpec &comb) {
  emit_prologue(out, s.key(), {s.in, s.out});
  Templates templates;
  templates.add(comb);
  templates.emit(out);
}

// A scan: each invocation walks one line along the axis, storing every
// running result, which passes through the output's storage type as NumPy's
// loop reads back out[i - 1]. The argument table ends with the line's
// length, input stride and output stride.
std::string generate_scan_glsl(const ReduceKernelSpec &s) {
  const DtypeInfo &in = dtype_info(s.in), &res = dtype_info(s.out);
  const KernelSpec comb = s.combiner();
  const bool flt = res.kind == DtypeKind::Float;
  const bool flags = flt && op_info(s.op).fold != FloatFold::Exact;
  const uint32_t ro = s.outer_rank;
  const std::string acc_t = res.glsl_compute;
  std::ostringstream out;
  emit_head(out, s, comb);
  // One line per invocation, elements operand[7] to operand[8] of it: a
  // long line is scanned by several dispatches in turn (llvmpipe caps a loop
  // at 65535 iterations), each continuing from the last result stored.
  out << "void main() {\n"
      << "  Meta m = Meta(pc.meta);\n"
      << "  const uint64_t pin = " << slot(reduce_slot::kInput)
      << ", pout = " << slot(reduce_slot::kOutput) << ";\n"
      << "  const int64_t in_stride = m.v[" << 3 * ro + 1 << "], out_stride = m.v[" << 3 * ro + 2
      << "];\n"
      << "  const int64_t r0 = int64_t(" << slot(reduce_slot::kLineBegin) << "), r1 = int64_t("
      << slot(reduce_slot::kLineEnd) << ");\n"
      << "  const uint64_t local = gl_GlobalInvocationID.x;\n"
      << "  if (local < pc.count) {\n"
      << "    const int64_t item = int64_t(" << slot(reduce_slot::kFirstItem) << " + local);\n"
      << "    int64_t base = 0, out_offset = 0;\n";
  emit_decompose(out, ro, "item", 0, {{"base", ro}, {"out_offset", 2 * ro}}, "    ");
  out << "    " << (flt ? "precise " : "") << acc_t << " acc = " << acc_t << "(0);\n"
      << "    if (r0 > 0) acc = "
      << loaded_value(res, element_ref(res, "pout", "out_offset + (r0 - 1) * out_stride")) << ";\n"
      << "    uint fpe = 0u;\n";
  // A NaN or infinity carried in from the previous part raises nothing new.
  if (flags)
    out << "    bool nan_input = r0 > 0 && " << is_nan(res, "acc") << ";\n"
        << "    bool nonfinite_input = r0 > 0 && !" << is_finite(res, "acc") << ";\n";
  out << "    for (int64_t r = r0; r < r1; ++r) {\n"
      << "      " << (flt ? "precise " : "") << acc_t << " x = "
      << cast_expr(in, res, loaded_value(in, element_ref(in, "pin", "base + r * in_stride")))
      << ";\n"
      << "      acc = r == 0 ? x : " << op_expr(comb, {"acc", "x"}) << ";\n";
  if (flags)
    out << "      nan_input = nan_input || " << is_nan(res, "x") << ";\n"
        << "      nonfinite_input = nonfinite_input || !" << is_finite(res, "x") << ";\n"
        << "      if (!" << is_finite(res, "acc") << ") {\n"
        << "        if (" << is_nan(res, "acc") << ") fpe |= nan_input ? 0u : 8u;\n"
        << "        else fpe |= nonfinite_input ? 0u : 2u;\n      }\n";
  out << "      " << res.glsl_storage << " stored = " << storage_value(res, "acc") << ";\n"
      << "      " << element_ref(res, "pout", "out_offset + r * out_stride") << " = stored;\n"
      << "      acc = " << loaded_value(res, "stored") << ";\n    }\n";
  if (flags) out << "    if (fpe != 0u) atomicOr(FpFlags(pc.flags).v, fpe);\n";
  out << "  }\n}\n";
  return out.str();
}

// The start of a pairwise pass: the block geometry from the push constants
// (the full blocks' split depth, the last block's, 2^depth slots per block).
void emit_pairwise_geometry(std::ostringstream &out, const ReduceKernelSpec &s) {
  const DtypeInfo &res = dtype_info(s.out);
  out << "  Meta m = Meta(pc.meta);\n"
      << "  const uint64_t pin = " << slot(reduce_slot::kInput)
      << ", pout = " << slot(reduce_slot::kOutput) << ";\n"
      << "  const int64_t R = int64_t(" << slot(reduce_slot::kReduced) << "), B = int64_t("
      << slot(reduce_slot::kSumBlock) << ");\n"
      << "  const uint full_depth = uint(" << slot(reduce_slot::kDepths)
      << ") & 255u, last_depth = uint(" << slot(reduce_slot::kDepths) << " >> 8) & 255u;\n"
      << "  const int64_t blocks = (R + B - 1) / B, S = int64_t(1) << full_depth;\n"
      << "  const int64_t flags_at = int64_t(" << slot(reduce_slot::kFlagsAt) << ");\n"
      << "  const bool apply_init = " << slot(reduce_slot::kApplyInitial) << " != 0ul;\n"
      << "  const " << res.glsl_compute
      << " init = " << scalar_load(res, slot(reduce_slot::kInitial)) << ";\n";
}

// `acc` is the result: report overflow (an infinity from finite inputs) and
// invalid (a NaN from no NaN input). `bad`: 1 some input (or `initial`) not
// finite, 2 some input NaN.
void emit_sum_flags(std::ostringstream &out, const DtypeInfo &res) {
  out << "    if (!" << is_finite(res, "acc") << ") {\n"
      << "      uint fpe = 0u;\n"
      << "      if (" << is_nan(res, "acc") << ") {\n"
      << "        if ((bad & 2u) == 0u && !(apply_init && " << is_nan(res, "init")
      << ")) fpe = 8u;\n"
      << "      } else if (bad == 0u) {\n        fpe = 2u;\n      }\n"
      << "      if (fpe != 0u) atomicOr(FpFlags(pc.flags).v, fpe);\n    }\n";
}

// NumPy's pairwise_sum (numpy/core/src/umath/loops_utils.h.src), one subtree
// per invocation: descend `depth` levels of NumPy's split to the subtree the
// slot names, then evaluate it with an explicit stack, each leaf of at most
// 128 elements with NumPy's 8 accumulators. A slot's value and its inputs'
// class go to scratch, or, when a result is one subtree, `initial` plus it to
// the output.
std::string generate_pairwise_glsl(const ReduceKernelSpec &s) {
  const DtypeInfo &in = dtype_info(s.in), &res = dtype_info(s.out);
  const KernelSpec comb = s.combiner();
  const uint32_t ro = s.outer_rank;
  const std::string acc_t = res.glsl_compute;
  auto combine = [&](const std::string &a, const std::string &b) { return op_expr(comb, {a, b}); };
  const std::string negative_zero =
      scalar_load(res, std::to_string(uint64_t(1) << (8 * res.itemsize - 1)) + "ul");
  std::ostringstream out;
  emit_head(out, s, comb);
  out << acc_t << " load_element(uint64_t pin, int64_t base, int64_t r) {\n"
      << "  Meta m = Meta(pc.meta);\n"
      << "  return "
      << cast_expr(
             in, res,
             loaded_value(
                 in, element_ref(in, "pin", "base + r * m.v[" + std::to_string(3 * ro + 1) + "]")))
      << ";\n}\n";
  // A leaf: below 8 elements one sum from -0 (NumPy's start, which keeps a
  // sum of negative zeros -0); else 8 running sums over i += 8, joined
  // ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the rest in order.
  out << acc_t << " leaf_sum(uint64_t pin, int64_t base, int64_t off, int64_t n) {\n"
      << "  if (n < 8l) {\n"
      << "    precise " << acc_t << " res = " << negative_zero << ";\n"
      << "    for (int64_t i = 0; i < n; ++i) res = "
      << combine("res", "load_element(pin, base, off + i)") << ";\n"
      << "    return res;\n  }\n";
  for (int k = 0; k < 8; ++k)
    out << "  precise " << acc_t << " r" << k << " = load_element(pin, base, off + " << k << ");\n";
  out << "  const int64_t whole = n - n % 8l;\n"
      << "  int64_t i = 8;\n"
      << "  for (; i < whole; i += 8) {\n";
  for (int k = 0; k < 8; ++k)
    out << "    r" << k << " = "
        << combine("r" + std::to_string(k),
                   "load_element(pin, base, off + i + " + std::to_string(k) + ")")
        << ";\n";
  out << "  }\n"
      << "  precise " << acc_t << " res = "
      << combine(combine(combine("r0", "r1"), combine("r2", "r3")),
                 combine(combine("r4", "r5"), combine("r6", "r7")))
      << ";\n"
      << "  for (; i < n; ++i) res = " << combine("res", "load_element(pin, base, off + i)")
      << ";\n"
      << "  return res;\n}\n";

  out << "void main() {\n";
  emit_pairwise_geometry(out, s);
  out << "  const uint64_t local = gl_GlobalInvocationID.x;\n"
      << "  if (local < pc.count) {\n"
      << "    const int64_t item = int64_t(" << slot(reduce_slot::kFirstItem) << " + local);\n"
      << "    const int64_t o = item / (blocks * S), rest = item - o * (blocks * S);\n"
      << "    const int64_t b = rest / S, j = rest - b * S;\n"
      << "    const bool last = b == blocks - 1;\n"
      << "    const uint depth = last ? last_depth : full_depth;\n"
      << "    if (j >= (int64_t(1) << depth)) return;\n"
      << "    int64_t base = 0, out_offset = 0;\n";
  emit_decompose(out, ro, "o", 0, {{"base", ro}, {"out_offset", 2 * ro}}, "    ");
  out << "    int64_t off = b * B, n = last ? R - b * B : B;\n"
      << "    for (uint k = depth; k > 0u; --k) {\n"
      << "      const int64_t h = (n / 2) & ~7l;\n"
      << "      if (((j >> (k - 1u)) & 1l) != 0l) {\n        off += h;\n        n -= h;\n"
      << "      } else {\n        n = h;\n      }\n    }\n"
      // The stack: a node's range and stage (0 new, 1 left half pending,
      // 2 right half pending, its left sum kept).
      << "    int64_t node_off[48], node_n[48];\n"
      << "    uint node_stage[48];\n"
      << "    precise " << acc_t << " node_left[48];\n"
      << "    int sp = 1;\n"
      << "    node_off[0] = off;\n    node_n[0] = n;\n    node_stage[0] = 0u;\n"
      << "    precise " << acc_t << " acc = " << zero(res) << ";\n"
      << "    bool done = false;\n"
      << "    while (sp > 0) {\n"
      << "      const int t = sp - 1;\n"
      << "      if (done && node_stage[t] == 1u) {\n"
      << "        node_left[t] = acc;\n        node_stage[t] = 2u;\n        done = false;\n"
      << "        const int64_t h = (node_n[t] / 2) & ~7l;\n"
      << "        node_off[sp] = node_off[t] + h;\n        node_n[sp] = node_n[t] - h;\n"
      << "        node_stage[sp] = 0u;\n        ++sp;\n"
      << "      } else if (done) {\n"
      << "        acc = " << combine("node_left[t]", "acc") << ";\n        --sp;\n"
      << "      } else if (node_n[t] <= " << kPairwiseLeaf << "l) {\n"
      << "        acc = leaf_sum(pin, base, node_off[t], node_n[t]);\n"
      << "        done = true;\n        --sp;\n"
      << "      } else {\n"
      << "        node_stage[t] = 1u;\n"
      << "        node_off[sp] = node_off[t];\n        node_n[sp] = (node_n[t] / 2) & ~7l;\n"
      << "        node_stage[sp] = 0u;\n        ++sp;\n"
      << "      }\n    }\n"
      // A non-finite sum: which inputs were not finite, or NaN.
      << "    uint bad = 0u;\n"
      << "    if (!" << is_finite(res, "acc") << ")\n"
      << "      for (int64_t r = off; r < off + n; ++r) {\n"
      << "        const " << acc_t << " x = load_element(pin, base, r);\n"
      << "        bad |= (" << is_finite(res, "x") << " ? 0u : 1u) | (" << is_nan(res, "x")
      << " ? 2u : 0u);\n"
      << "      }\n"
      << "    if (blocks == 1l && full_depth == 0u) {\n"
      << "      if (apply_init) {\n"
      << "        bad |= " << is_finite(res, "init") << " ? 0u : 1u;\n"
      << "        acc = " << combine("init", "acc") << ";\n      }\n";
  emit_sum_flags(out, res);
  out << "      " << element_ref(res, "pout", "out_offset") << " = " << storage_value(res, "acc")
      << ";\n"
      << "    } else {\n"
      << "      " << element_ref(res, "pout", "item") << " = " << storage_value(res, "acc") << ";\n"
      << "      " << element_ref(res, "pout", "flags_at + item") << " = "
      << storage_value(res, acc_t + "(bad)") << ";\n"
      << "    }\n  }\n}\n";
  return out.str();
}

// The pass after the subtrees: per result, each block's 2^depth subtree
// values joined as NumPy's tree joins them (complete above the cut: a binary
// counter's stack), and the blocks added in order to `initial`.
std::string generate_block_combine_glsl(const ReduceKernelSpec &s) {
  const DtypeInfo &res = dtype_info(s.out);
  const KernelSpec comb = s.combiner();
  const uint32_t ro = s.outer_rank;
  const std::string acc_t = res.glsl_compute;
  auto combine = [&](const std::string &a, const std::string &b) { return op_expr(comb, {a, b}); };
  std::ostringstream out;
  emit_head(out, s, comb);
  out << "void main() {\n";
  emit_pairwise_geometry(out, s);
  out << "  const uint64_t local = gl_GlobalInvocationID.x;\n"
      << "  if (local < pc.count) {\n"
      << "    const int64_t o = int64_t(" << slot(reduce_slot::kFirstItem) << " + local);\n"
      << "    int64_t out_offset = 0;\n";
  emit_decompose(out, ro, "o", 0, {{"out_offset", 2 * ro}}, "    ");
  out << "    precise " << acc_t << " acc = apply_init ? init : "
      << scalar_load(res, std::to_string(uint64_t(1) << (8 * res.itemsize - 1)) + "ul") << ";\n"
      << "    uint bad = apply_init && !" << is_finite(res, "init") << " ? 1u : 0u;\n"
      << "    precise " << acc_t << " pending[48];\n"
      << "    for (int64_t b = 0; b < blocks; ++b) {\n"
      << "      const int64_t count = int64_t(1) << (b == blocks - 1 ? last_depth : full_depth);\n"
      << "      const int64_t first = (o * blocks + b) * S;\n"
      << "      int sp = 0;\n"
      << "      for (int64_t j = 0; j < count; ++j) {\n"
      << "        precise " << acc_t
      << " v = " << loaded_value(res, element_ref(res, "pin", "first + j")) << ";\n"
      << "        bad |= uint("
      << loaded_value(res, element_ref(res, "pin", "flags_at + first + j")) << ");\n"
      << "        for (int64_t t = j; (t & 1l) != 0l; t >>= 1) {\n"
      << "          --sp;\n          v = " << combine("pending[sp]", "v") << ";\n        }\n"
      << "        pending[sp] = v;\n        ++sp;\n      }\n"
      << "      acc = " << combine("acc", "pending[0]") << ";\n    }\n";
  emit_sum_flags(out, res);
  out << "    " << element_ref(res, "pout", "out_offset") << " = " << storage_value(res, "acc")
      << ";\n  }\n}\n";
  return out.str();
}

}  // namespace

std::string generate_reduce_glsl(const ReduceKernelSpec &s) {
  if (s.mode == ReduceMode::Scan) return generate_scan_glsl(s);
  if (s.mode == ReduceMode::Pairwise) return generate_pairwise_glsl(s);
  if (s.mode == ReduceMode::BlockCombine) return generate_block_combine_glsl(s);
  const DtypeInfo &in = dtype_info(s.in), &res = dtype_info(s.out);
  const KernelSpec comb = s.combiner();
  const bool wg = s.mode == ReduceMode::Workgroup;
  const bool flt = res.kind == DtypeKind::Float;
  // Sums are compensated (Neumaier) along each invocation's run; the lanes'
  // tree is pairwise. NumPy reports overflow and invalid results of float
  // add and multiply reductions ("... encountered in reduce").
  const bool kahan = flt && op_info(s.op).fold == FloatFold::Compensated && !s.in_order;
  const bool flags = flt && op_info(s.op).fold != FloatFold::Exact;
  const uint32_t ro = s.outer_rank, ri = s.inner_rank;
  const std::string acc_t = res.glsl_compute;

  std::ostringstream out;
  emit_head(out, s, comb);
  auto combine = [&](const std::string &a, const std::string &b) { return op_expr(comb, {a, b}); };
  if (wg)
    out << "shared " << acc_t << " lane_value[" << kWorkgroupSize << "];\n"
        << "shared uint lane_bad[" << kWorkgroupSize << "];\n"
        << "shared uint nan_found;\n";

  // The element `r` of the result being folded, cast to the output's type.
  out << acc_t << " load_element(uint64_t pin, int64_t base, int64_t r) {\n"
      << "  Meta m = Meta(pc.meta);\n  int64_t offset = base;\n";
  if (ri == 1)
    out << "  offset += r * m.v[" << 3 * ro + 1 << "];\n";
  else
    emit_decompose(out, ri, "r", 3 * ro, {{"offset", 3 * ro + ri}}, "  ");
  out << "  return " << cast_expr(in, res, loaded_value(in, element_ref(in, "pin", "offset")))
      << ";\n}\n";

  out << "void main() {\n"
      << "  Meta m = Meta(pc.meta);\n"
      << "  const uint64_t pin = " << slot(reduce_slot::kInput)
      << ", pout = " << slot(reduce_slot::kOutput) << ";\n"
      << "  const int64_t R = int64_t(" << slot(reduce_slot::kReduced) << "), C = int64_t("
      << slot(reduce_slot::kChunks) << ");\n"
      << "  const bool apply_init = " << slot(reduce_slot::kApplyInitial) << " != 0ul;\n"
      << "  const " << acc_t << " init = " << scalar_load(res, slot(reduce_slot::kInitial))
      << ";\n";
  // An empty lane starts from a value that changes nothing: the identity, or
  // (for idempotent ops without one: max, min) the result's first element.
  uint64_t identity_bits = 0;
  const bool has_identity = reduce_identity(s.op, s.out, &identity_bits);
  // One item (result, or chunk of one) per invocation or workgroup, and no
  // loop around it: llvmpipe caps the iterations of a loop nest at 65535, so
  // the planner bounds the one loop over elements instead.
  if (wg)
    out << "  const uint lane = gl_LocalInvocationID.x;\n"
        << "  const uint64_t local = gl_WorkGroupID.x;\n";
  else
    out << "  const uint64_t local = gl_GlobalInvocationID.x;\n";
  out << "  if (local < pc.count) {\n"
      << "    const int64_t item = int64_t(" << slot(reduce_slot::kFirstItem) << " + local);\n"
      << "    const int64_t o = item / C, c = item - o * C;\n"
      << "    int64_t base = 0, out_offset = c;\n";
  emit_decompose(out, ro, "o", 0, {{"base", ro}, {"out_offset", 2 * ro}}, "    ");
  if (wg)
    out << "    const int64_t first = c * " << kWorkgroupSize << "l + int64_t(lane), stride = C * "
        << kWorkgroupSize << "l;\n";
  else
    out << "    const int64_t first = 0, stride = 1;\n";
  out << "    " << (flt ? "precise " : "") << acc_t << " acc = ";
  if (s.in_order)
    // NumPy's outer-axis loop: `initial` first, then each element in turn.
    out << "apply_init ? init : "
        << (has_identity ? scalar_load(res, std::to_string(identity_bits) + "ul")
                         : "load_element(pin, base, 0)");
  else if (has_identity && !kahan)
    out << scalar_load(res, std::to_string(identity_bits) + "ul");
  else if (kahan)
    // -0, the exact identity of float addition: a run of negative zeros stays
    // -0, so that `initial` -0 gives -0 as in NumPy (Context::reduce makes
    // `initial` +0 where none is given: NumPy's sum of negative zeros is +0).
    out << scalar_load(res, std::to_string(uint64_t(1) << (8 * res.itemsize - 1)) + "ul");
  else
    out << "load_element(pin, base, 0)";
  out << ";\n    uint bad = 0u;\n";
  if (kahan) out << "    precise " << acc_t << " comp = " << acc_t << "(0);\n";
  out << "    for (int64_t r = first; r < R; r += stride) {\n"
      << "      " << (flt ? "precise " : "") << acc_t << " x = load_element(pin, base, r);\n";
  if (flags) out << "      bad |= uint(!" << is_finite(res, "x") << ");\n";
  if (kahan)
    out << "      precise " << acc_t << " t = acc + x;\n"
        << "      comp += (abs(acc) >= abs(x)) ? ((acc - t) + x) : ((x - t) + acc);\n"
        << "      acc = t;\n";
  else
    out << "      acc = " << combine("acc", "x") << ";\n";
  out << "    }\n";
  // An infinite sum makes the compensation NaN: keep the sum.
  // (A zero compensation is not added: -0 + +0 would make a -0 sum +0.)
  if (kahan)
    out << "    if (" << is_finite(res, "acc") << " && comp != " << acc_t
        << "(0)) acc = acc + comp;\n";

  if (wg) {
    // The lanes' tree, unrolled (a loop would count against the cap).
    out << "    lane_value[lane] = acc;\n    lane_bad[lane] = bad;\n    barrier();\n";
    for (uint32_t span = kWorkgroupSize / 2; span > 0; span /= 2)
      out << "    if (lane < " << span << "u) {\n"
          << "      lane_value[lane] = "
          << combine("lane_value[lane]", "lane_value[lane + " + std::to_string(span) + "u]")
          << ";\n"
          << "      lane_bad[lane] |= lane_bad[lane + " << span << "u];\n    }\n    barrier();\n";
    out << "    acc = lane_value[0];\n    bad = lane_bad[0];\n";
  }
  out << "    if (apply_init) {\n";
  if (flags) out << "      bad |= uint(!" << is_finite(res, "init") << ");\n";
  if (!s.in_order) out << "      acc = " << combine("init", "acc") << ";\n";
  out << "    }\n";
  if (flags) {
    // A NaN from no NaN input is invalid; an infinity from finite inputs an
    // overflow. Which inputs were NaN is looked up again only when the result
    // is NaN and some input was not finite: each lane over its own elements.
    out << "    const bool rescan = " << is_nan(res, "acc") << " && bad != 0u;\n";
    if (wg) out << "    if (lane == 0u) nan_found = 0u;\n    barrier();\n";
    out << "    if (rescan) {\n"
        << "      bool nan_input = false;\n"
        << "      for (int64_t r = first; r < R; r += stride)\n"
        << "        nan_input = nan_input || " << is_nan(res, "load_element(pin, base, r)") << ";\n"
        << "      if (nan_input) " << (wg ? "atomicOr(nan_found, 1u)" : "bad |= 2u") << ";\n"
        << "    }\n";
    if (wg) out << "    barrier();\n    if (nan_found != 0u) bad |= 2u;\n";
    out << "    if (" << (wg ? "lane == 0u && " : "") << "!" << is_finite(res, "acc") << ") {\n"
        << "      uint fpe = 0u;\n"
        << "      if (" << is_nan(res, "acc") << ") {\n"
        << "        if ((bad & 2u) == 0u && !(apply_init && " << is_nan(res, "init")
        << ")) fpe = 8u;\n"
        << "      } else if (bad == 0u) {\n        fpe = 2u;\n      }\n"
        << "      if (fpe != 0u) atomicOr(FpFlags(pc.flags).v, fpe);\n    }\n";
  }
  out << "    " << (wg ? "if (lane == 0u) " : "") << element_ref(res, "pout", "out_offset") << " = "
      << storage_value(res, "acc") << ";\n";
  out << "  }\n}\n";
  return out.str();
}

}  // namespace npvk
