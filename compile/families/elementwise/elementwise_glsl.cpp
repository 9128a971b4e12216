// The elementwise kernel generator: a loop over the iteration space that
// loads each slot, runs the steps (each op's GLSL from compile/glsl_ops.cpp)
// and stores the last write of each stored slot, with the FP-exception
// scheme of docs/architecture.md ("FP exceptions").
#include "compile/families/elementwise/elementwise_glsl.hpp"

#include <functional>
#include <set>
#include <sstream>

#include "base/error.hpp"
#include "base/options.hpp"
#include "compile/dtype.hpp"
#include "compile/glsl_parts.hpp"
#include "compile/kernel_abi.hpp"
#include "compile/ops.hpp"

namespace npvk {

using namespace glsl;

namespace {

// Which memory slots the loop loads from or stores to, and which an element
// loads and then overwrites (in-place updates).
struct SlotUse {
  std::vector<bool> loaded, touched, overwritten;
};

SlotUse slot_use(const FusedKernelSpec &s) {
  const size_t nslots = s.slots.size();
  SlotUse u{std::vector<bool>(nslots), std::vector<bool>(nslots), std::vector<bool>(nslots)};
  std::vector<bool> written(nslots, false);
  for (const FusedKernelSpec::Step &st : s.steps) {
    for (uint32_t k = 0; k < st.op.nin; ++k)
      if (!written[st.slot[k]] && !s.slots[st.slot[k]].scalar) u.loaded[st.slot[k]] = true;
    for (uint32_t k = st.op.nin; k < st.op.count(); ++k) written[st.slot[k]] = true;
  }
  for (size_t k = 0; k < nslots; ++k) {
    u.touched[k] = u.loaded[k] || (written[k] && s.slots[k].stored);
    u.overwritten[k] = u.loaded[k] && written[k] && s.slots[k].stored;
  }
  return u;
}

// Whether the op's float results can raise flags.
bool float_flags(const KernelSpec &op) {
  const DtypeInfo &res = result_type(op);
  return op_info(op.op).fp != FpRule::None &&
         (res.kind == DtypeKind::Float || std::string(res.glsl_compute) == "double");
}

// Steps that depend on a value the element overwrote in place ("tainted":
// an accumulation `s += x`), which the flags loop cannot recompute.
std::vector<bool> tainted_steps(const FusedKernelSpec &s, const std::vector<bool> &overwritten) {
  std::vector<bool> tainted_step(s.steps.size(), false), tainted = overwritten;
  for (size_t j = 0; j < s.steps.size(); ++j) {
    const FusedKernelSpec::Step &st = s.steps[j];
    for (uint32_t k = 0; k < st.op.nin; ++k)
      tainted_step[j] = tainted_step[j] || tainted[st.slot[k]];
    for (uint32_t k = st.op.nin; k < st.op.count(); ++k) tainted[st.slot[k]] = tainted_step[j];
  }
  return tainted_step;
}

}  // namespace

bool has_flags_loop(const FusedKernelSpec &s) {
  const std::vector<bool> tainted = tainted_steps(s, slot_use(s).overwritten);
  for (size_t j = 0; j < s.steps.size(); ++j)
    if (float_flags(s.steps[j].op) && !tainted[j]) return true;
  return false;
}

std::string generate_glsl(const FusedKernelSpec &s) {
  const uint32_t nslots = uint32_t(s.slots.size());
  require(nslots <= kMaxKernelSlots && !s.steps.empty(), NPVK_ERR_INTERNAL,
          "a kernel needs 1 to " + std::to_string(kMaxKernelSlots) + " slots and a step");
  std::ostringstream out;
  const SlotUse use = slot_use(s);
  const std::vector<bool> &loaded = use.loaded, &touched = use.touched,
                          &overwritten = use.overwritten;
  std::set<npvk_dtype> stored_types;
  for (uint32_t k = 0; k < nslots; ++k)
    if (touched[k]) stored_types.insert(s.slots[k].dtype);
  // A contiguous kernel takes kVectorWidth consecutive elements per
  // invocation through vector loads and stores where every operand is
  // aligned to the vector (a view offset by one element is not), and one at
  // a time otherwise and in the tail.
  // Off by default (NPVK_VECTOR_ACCESS): buffer-reference vectors measured no
  // faster on lavapipe, and Black-Scholes far slower (docs/architecture.md).
  const bool vectors = s.contiguous && process_options().vector_access;
  const uint32_t width = vectors ? kVectorWidth : 1;
  emit_prologue(out, s.key(), stored_types, vectors);
  // Only a slot's last write in the kernel is stored: no other invocation
  // reads it meanwhile (the planner guarantees), and this one has the value
  // in a register.
  std::vector<size_t> last_write(nslots, 0);
  for (size_t j = 0; j < s.steps.size(); ++j)
    for (uint32_t k = s.steps[j].op.nin; k < s.steps[j].op.count(); ++k)
      last_write[s.steps[j].slot[k]] = j;
  Templates templates;
  for (const FusedKernelSpec::Step &st : s.steps) templates.add(st.op);
  templates.emit(out);

  // Slots past the push constants come first in the argument table.
  const uint32_t extra = nslots > kPushSlots ? nslots - kPushSlots : 0;
  // Each subgroup sweeps one contiguous run of the elements, its lanes side
  // by side, rather than a grid-stride loop: CPU drivers run few workgroups,
  // so a grid-stride invocation visits elements about a megabyte apart, each
  // visit a new page and a cold prefetch stream. Each workgroup takes a block
  // of a multiple of 128 elements (the workgroup size, a multiple of every
  // subgroup size up to it) and splits it evenly between its subgroups, so
  // runs are disjoint and whole multiples of the lanes, whatever the subgroup
  // size and however invocations map to subgroups (a subgroup wider than the
  // workgroup has 128 lanes in use). The loop that recomputes FP flags
  // revisits the same run in the same invocation.
  // 32-bit loop index and offsets where they fit (narrow_offsets); the
  // vector path keeps 64 bits.
  const bool narrow = s.narrow_offsets && !vectors;
  const char *count_t = narrow ? "uint" : "uint64_t";
  const char *count_s = narrow ? "u" : "ul";
  out << "void main() {\n"
      << "  const " << count_t << " count = " << count_t << "(pc.count);\n"
      << "  const " << count_t << " groups = " << count_t << "(gl_NumWorkGroups.x);\n"
      << "  const " << count_t << " block = ((count + groups - 1" << count_s << ") / groups + "
      << (kWorkgroupSize * width - 1) << count_s << ") / " << kWorkgroupSize * width << count_s
      << " * " << kWorkgroupSize * width << count_s << ";\n"
      << "  const " << count_t << " part = block / " << count_t << "(gl_NumSubgroups);\n"
      << "  const " << count_t << " lanes = " << count_t << "(min(gl_SubgroupSize, "
      << kWorkgroupSize << "u));\n"
      << "  const " << count_t << " first = " << count_t << "(gl_WorkGroupID.x) * block + "
      << count_t << "(gl_SubgroupID) * part;\n"
      << "  const " << count_t << " end = min(first + part, count);\n";
  if (extra || !s.contiguous) out << "  Meta m = Meta(pc.meta);\n";
  // Each slot's address or scalar bits, and the value of scalars, once per
  // invocation; memory values per element.
  std::vector<std::string> base(nslots), value(nslots);
  for (uint32_t k = 0; k < nslots; ++k) {
    if (!touched[k] && !s.slots[k].scalar) continue;
    base[k] = "p" + std::to_string(k);
    out << "  const uint64_t " << base[k] << " = "
        << (k < kPushSlots ? "pc.operand[" + std::to_string(k) + "]"
                           : "uint64_t(m.v[" + std::to_string(k - kPushSlots) + "])")
        << ";\n";
    if (!s.slots[k].scalar) continue;
    const DtypeInfo &d = dtype_info(s.slots[k].dtype);
    value[k] = "c" + std::to_string(k);
    out << "  const " << d.glsl_compute << " " << value[k] << " = " << scalar_load(d, base[k])
        << ";\n";
  }
  // The loop's extents, division magic numbers and strides, once per
  // invocation: the loop's stores could alias the argument table for all the
  // driver knows, so it would read them again for every element.
  const char *index_t = s.narrow_index ? "uint" : "int64_t";
  const char *offset_t = narrow ? "int" : "int64_t";
  if (!s.contiguous) {
    for (uint32_t d = 0; d < s.rank; ++d) {
      const std::string dim = std::to_string(d);
      out << "  const " << index_t << " ix_extent" << dim << " = " << index_t << "(m.v["
          << extra + d << "]);\n";
      if (d > 0 && s.narrow_index)
        out << "  const uint64_t ix_magic" << dim << " = uint64_t(m.v["
            << extra + s.rank * (nslots + 1) + d << "]) & 0xFFFFFFFFul;\n"
            << "  const uint64_t ix_shift" << dim << " = uint64_t(m.v["
            << extra + s.rank * (nslots + 1) + d << "]) >> 32;\n";
      for (uint32_t k = 0; k < nslots; ++k)
        if (touched[k])
          out << "  const " << offset_t << " ix_stride" << k << "_" << dim << " = " << offset_t
              << "(m.v[" << extra + s.rank * (k + 1) + d << "]);\n";
    }
  }
  // Floating-point exceptions. A float op raises something only where its
  // result is NaN or infinite, which is rare, but llvmpipe runs both sides
  // of every branch under a lane mask: a per-element rare branch costs what
  // the element costs. So the loop only notes whether any result was not
  // finite, and a second loop runs after it, in the invocations that noted
  // one, that loads the operands again and computes each op's flags,
  // storing nothing. On llvmpipe its masked-off body costs one element per
  // invocation. Ops that depend on a value the element overwrote in place
  // ("tainted": an accumulation `s += x`) cannot be recomputed there; they
  // compute their flags in the first loop, without a branch, from the
  // classes of their values (fp_flags_accumulate). Each op's flags gather in
  // a register, published after the loops by one atomic per op per
  // invocation.
  const std::vector<bool> tainted_step = tainted_steps(s, overwritten);
  bool any_rare_flags = false;
  for (size_t j = 0; j < s.steps.size(); ++j)
    any_rare_flags = any_rare_flags || (float_flags(s.steps[j].op) && !tainted_step[j]);
  std::vector<bool> watched(s.steps.size());
  for (size_t j = 0; j < s.steps.size(); ++j)
    watched[j] = float_flags(s.steps[j].op) && !tainted_step[j];
  const std::vector<bool> tested = glsl::nonfinite_tested(s, watched);
  // A step's flag register, where a loop of this kernel can set it: a
  // deferred kernel's untainted steps leave theirs to the flags pass, and
  // 100 dead registers and their atomics made Black-Scholes' kernel a third
  // larger for the driver and the validator to read on every load.
  const bool rare_loop_here =
      any_rare_flags && s.flags_loop != FusedKernelSpec::FlagsLoop::Deferred;
  std::vector<bool> flag_register(s.steps.size());
  for (size_t j = 0; j < s.steps.size(); ++j)
    flag_register[j] = float_flags(s.steps[j].op) && (tainted_step[j] || rare_loop_here);
  for (size_t j = 0; j < s.steps.size(); ++j)
    if (flag_register[j]) out << "  uint fl" << j << " = 0u;\n";
  if (any_rare_flags) out << "  uint nonfinite = 0u;\n";

  // Whether the kernel stores slot k (its last write).
  std::vector<bool> stores(nslots, false);
  for (const FusedKernelSpec::Step &st : s.steps)
    for (uint32_t k = st.op.nin; k < st.op.count(); ++k)
      stores[st.slot[k]] = s.slots[st.slot[k]].stored;
  if (vectors) {
    // Vectors start at the element `shift` (mod kVectorWidth) that aligns
    // the first operand: NumPy's large arrays start 16 bytes into a page, so
    // operands share a misalignment far more often than they are aligned.
    // The other operands must then be aligned there too.
    std::string aligned, shift = "0ul";
    for (uint32_t k = 0; k < nslots; ++k) {
      if (!touched[k]) continue;
      const uint32_t item = dtype_info(s.slots[k].dtype).itemsize;
      const std::string mask = std::to_string(item * kVectorWidth - 1) + "ul";
      if (aligned.empty())
        shift = "((" + std::to_string(item * kVectorWidth) + "ul - (" + base[k] + " & " + mask +
                ")) & " + mask + ") / " + std::to_string(item) + "ul";
      aligned += std::string(aligned.empty() ? "" : " | ") + "((" + base[k] + " + shift * " +
                 std::to_string(item) + "ul) & " + mask + ")";
    }
    out << "  const uint64_t shift = " << shift << ";\n"
        << "  const bool aligned = (" << (aligned.empty() ? "0ul" : aligned)
        << ") == 0ul;\n"
        // A shifted run starts one step early so that its first elements are
        // the tail of a step that begins before the run.
        << "  const int64_t start = int64_t(first + (aligned ? shift : 0ul)) - "
           "((aligned && shift != 0ul) ? int64_t(lanes * "
        << kVectorWidth << "ul) : 0l);\n";
  }

  // One element's loads, steps and stores; ref(k) is slot k's element in memory.
  std::vector<std::string> offset(nslots, "i");
  auto emit_body = [&](bool rare, const std::function<std::string(uint32_t)> &ref) {
    if (!s.contiguous) {
      // Shape, then each slot's element strides, as the planner merged them.
      out << "    " << index_t << " rest = " << index_t << "(i);\n";
      for (uint32_t k = 0; k < nslots; ++k) {
        if (!touched[k]) continue;
        offset[k] = narrow ? "int64_t(o" + std::to_string(k) + ")" : "o" + std::to_string(k);
        out << "    " << offset_t << " o" << k << " = 0;\n";
      }
      for (int d = int(s.rank) - 1; d >= 0; --d) {
        const std::string dim = std::to_string(d);
        out << "    {\n";
        if (d > 0 && s.narrow_index) {
          // No CPU has a vector integer division: a multiply by the extent's
          // magic number and a shift (division_magic()) instead.
          out << "      uint q = uint((uint64_t(rest) * ix_magic" << dim << ") >> ix_shift" << dim
              << ");\n"
              << "      " << offset_t << " c = " << offset_t << "(rest - q * ix_extent" << dim
              << ");\n"
              << "      rest = q;\n";
        } else {
          out << "      " << offset_t << " c = " << offset_t << "("
              << (d == 0 ? "rest" : "rest % ix_extent" + dim) << ");\n";
          if (d > 0) out << "      rest /= ix_extent" << dim << ";\n";
        }
        for (uint32_t k = 0; k < nslots; ++k)
          if (touched[k]) out << "      o" << k << " += c * ix_stride" << k << "_" << dim << ";\n";
        out << "    }\n";
      }
    }
    for (uint32_t k = 0; k < nslots; ++k) {
      if (s.slots[k].scalar) continue;
      const DtypeInfo &d = dtype_info(s.slots[k].dtype);
      value[k] = "v" + std::to_string(k);
      out << "    " << d.glsl_compute << " " << value[k];
      if (loaded[k] && !(rare && overwritten[k])) out << " = " << loaded_value(d, ref(k));
      out << ";\n";
    }
    for (size_t j = 0; j < s.steps.size(); ++j) {
      if (rare && tainted_step[j]) continue;
      const FusedKernelSpec::Step &st = s.steps[j];
      const KernelSpec &op = st.op;
      out << "    {  // " << op_info(op.op).name << "\n";
      std::vector<std::string> args;
      for (uint32_t k = 0; k < op.nin; ++k) {
        const DtypeInfo &d = dtype_info(op.operands[k].dtype);
        std::string name = "a" + std::to_string(k);
        out << "    " << d.glsl_compute << " " << name << " = " << value[st.slot[k]] << ";\n";
        args.push_back(name);
      }
      // `precise` forbids the driver from contracting or reassociating, which
      // would change the last bit compared with NumPy; it also keeps fused
      // ops from merging into one another. Output k is r, r1, ...: a second
      // output is an `out` argument of the op's function.
      std::vector<std::string> results;
      auto precise_decl = [](const DtypeInfo &d) {
        return std::string(d.kind == DtypeKind::Float ? "precise " : "") + d.glsl_compute;
      };
      for (uint32_t k = op.nin; k < op.count(); ++k) {
        results.push_back(k == op.nin ? "r" : "r" + std::to_string(k - op.nin));
        if (k > op.nin) {
          out << "    " << precise_decl(dtype_info(op.operands[k].dtype)) << " " << results.back()
              << ";\n";
          args.push_back(results.back());
        }
      }
      const DtypeInfo &res = result_type(op);
      out << "    " << precise_decl(res) << " r = " << op_expr(op, args) << ";\n";
      // A float16 result is the float32 one rounded, after every op (NumPy's
      // half loops); ops whose results are float16 values already skip it.
      for (uint32_t k = op.nin; k < op.count(); ++k)
        if (op.operands[k].dtype == NPVK_FLOAT16 && !exact_in_half(op.op))
          out << "    " << results[k - op.nin] << " = npvk_round_half(" << results[k - op.nin]
              << ");\n";
      args.resize(op.nin);
      if (float_flags(op) && (rare || tainted_step[j])) {
        std::vector<std::string> operand_class;
        for (uint32_t k = 0; k < op.nin; ++k)
          operand_class.push_back(fp_class(dtype_info(op.operands[k].dtype), args[k]));
        // Each output raises what it brings; the first's pole test serves all.
        for (uint32_t k = op.nin; k < op.count(); ++k)
          out << "    {\n"
              << fp_flags_accumulate(
                     op, args, operand_class,
                     fp_class(dtype_info(op.operands[k].dtype), results[k - op.nin]),
                     "fl" + std::to_string(j))
              << "    }\n";
      } else if (float_flags(op)) {
        // A result not tested reaches one that is (nonfinite_tested).
        for (uint32_t k = op.nin; k < op.count() && tested[j]; ++k)
          out << "    nonfinite |= uint(!"
              << is_finite(dtype_info(op.operands[k].dtype), results[k - op.nin]) << ");\n";
      } else if (!rare) {
        out << fp_flags_code(op, args, "pc.flags + " + std::to_string(4 * j) + "ul");
      }
      for (uint32_t k = op.nin; k < op.count(); ++k) {
        const uint32_t slot = st.slot[k];
        const DtypeInfo &d = dtype_info(s.slots[slot].dtype);
        const bool store = !rare && s.slots[slot].stored && last_write[slot] == j;
        if (d.dtype == NPVK_FLOAT16) {
          // Already a float16 value (rounded above): converted only to be stored.
          if (store)
            out << "    " << ref(slot) << " = " << storage_value(d, results[k - op.nin]) << ";\n";
          out << "    " << value[slot] << " = " << results[k - op.nin] << ";\n";
          continue;
        }
        std::string t = "t" + std::to_string(k);
        out << "    " << d.glsl_storage << " " << t << " = "
            << storage_value(d, results[k - op.nin]) << ";\n";
        if (store) out << "    " << ref(slot) << " = " << t << ";\n";
        out << "    " << value[slot] << " = " << loaded_value(d, t) << ";\n";
      }
      out << "    }\n";
    }
  };
  auto element = [&](uint32_t k) {
    return element_ref(dtype_info(s.slots[k].dtype), base[k], offset[k]);
  };

  auto emit_loop = [&](bool rare) {
    if (!vectors) {
      out << "  for (" << count_t << " i = first + " << count_t
          << "(gl_SubgroupInvocationID); i < end; i += lanes) {\n";
      emit_body(rare, element);
      out << "  }\n";
      return;
    }
    const std::string w = std::to_string(kVectorWidth) + "ul";
    out << "  for (int64_t s0 = start + int64_t(gl_SubgroupInvocationID * " << kVectorWidth
        << "u); s0 < int64_t(end); s0 += int64_t(lanes * " << w << ")) {\n"
        << "  const uint64_t i0 = uint64_t(max(s0, int64_t(first)));\n";
    if (!rare) {
      // The flags loop takes the scalar path: it revisits the same elements.
      out << "  if (aligned && s0 >= int64_t(first) && i0 + " << w << " <= end) {\n";
      for (uint32_t k = 0; k < nslots; ++k) {
        if (!touched[k]) continue;
        const DtypeInfo &d = dtype_info(s.slots[k].dtype);
        out << "    " << vector_type(d) << " q" << k;
        if (loaded[k]) out << " = " << vector_ref(d, base[k], "i0");
        out << ";\n";
      }
      for (uint32_t e = 0; e < kVectorWidth; ++e) {
        out << "  {\n";
        emit_body(false, [&](uint32_t k) {
          return "q" + std::to_string(k) + "[" + std::to_string(e) + "]";
        });
        out << "  }\n";
      }
      for (uint32_t k = 0; k < nslots; ++k)
        if (stores[k])
          out << "    " << vector_ref(dtype_info(s.slots[k].dtype), base[k], "i0") << " = q" << k
              << ";\n";
      out << "  } else {\n";
    }
    out << "  for (uint64_t i = i0; i < min(uint64_t(s0 + " << kVectorWidth << "l), end); ++i) {\n";
    emit_body(rare, element);
    out << "  }\n";
    if (!rare) out << "  }\n";
    out << "  }\n";
  };
  using FlagsLoop = FusedKernelSpec::FlagsLoop;
  if (s.flags_loop != FlagsLoop::FlagsPass) emit_loop(false);
  if (any_rare_flags && s.flags_loop == FlagsLoop::InKernel) {
    out << "  if (nonfinite != 0u) {\n";
    emit_loop(true);
    out << "  }\n";
  } else if (any_rare_flags && s.flags_loop == FlagsLoop::Deferred) {
    out << "  if (nonfinite != 0u) atomicOr(FpFlags(pc.flags).v, " << kFlagsPassWanted << "u);\n";
  } else if (any_rare_flags) {
    emit_loop(true);  // the flags pass: every element, the operands as the kernel read them
  }
  for (size_t j = 0; j < s.steps.size(); ++j)
    if (flag_register[j])
      out << fp_flags_publish("fl" + std::to_string(j),
                              "pc.flags + " + std::to_string(4 * j) + "ul");
  out << "}\n";
  return out.str();
}

}  // namespace npvk
