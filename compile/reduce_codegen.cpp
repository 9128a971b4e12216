// GLSL for reductions and scans. The push constants' slots are reduce_slot's
// (compile/kernel_abi.hpp), which compile/families/reduce.cpp fills. The
// argument table holds the outer shape, the outer input and output strides,
// the inner shape and the inner input strides, in elements.
#include <sstream>
#include <string>

#include "compile/glsl_parts.hpp"
#include "compile/kernel_abi.hpp"
#include "compile/ops.hpp"
#include "compile/reduction.hpp"

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

}  // namespace

std::string generate_reduce_glsl(const ReduceKernelSpec &s) {
  if (s.mode == ReduceMode::Scan) return generate_scan_glsl(s);
  const DtypeInfo &in = dtype_info(s.in), &res = dtype_info(s.out);
  const KernelSpec comb = s.combiner();
  const bool wg = s.mode == ReduceMode::Workgroup;
  const bool flt = res.kind == DtypeKind::Float;
  // Sums are compensated (Neumaier) along each invocation's run; the lanes'
  // tree is pairwise. NumPy reports overflow and invalid results of float
  // add and multiply reductions ("... encountered in reduce").
  const bool kahan = flt && op_info(s.op).fold == FloatFold::Compensated;
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
  if (has_identity && !kahan)
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
  out << "      acc = " << combine("init", "acc") << ";\n    }\n";
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
