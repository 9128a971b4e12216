// The elementwise kernel generator: a loop over the iteration space that
// loads each slot, runs the steps (each op's GLSL from compile/glsl_ops.cpp)
// and stores the last write of each stored slot, with the FP-exception
// scheme of docs/architecture.md ("FP exceptions").
//
// The kernel is written in parts, in the order they appear in the source:
// the header (extensions, buffer types, templates), the invocation's range
// of elements, each slot's address, the loop's constants, the flag
// registers, the vector path's alignment, the loops (each element: index
// math, loads, then each step's math, flags and stores), and the flags'
// publication. What the parts share (which slots are loaded, stored or
// overwritten, the index types, which steps test or accumulate flags) is
// worked out once, from the spec alone, before any is written.
#include "compile/families/elementwise/elementwise_glsl.hpp"

#include <functional>
#include <set>
#include <sstream>

#include "base/error.hpp"
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

// Floating-point exceptions. A float op raises something only where its
// result is NaN or infinite, which is rare, but llvmpipe runs both sides of
// every branch under a lane mask: a per-element rare branch costs what the
// element costs. So the loop only notes whether any result was not finite,
// and a second loop ("rare") runs after it, in the invocations that noted
// one, that loads the operands again and computes each op's flags, storing
// nothing. On llvmpipe its masked-off body costs one element per
// invocation. Ops that depend on a value the element overwrote in place
// ("tainted": an accumulation `s += x`) cannot be recomputed there; they
// compute their flags in the first loop, without a branch, from the classes
// of their values (fp_flags_accumulate). Each op's flags gather in a
// register, published after the loops by one atomic per op per invocation.
struct FlagPlan {
  std::vector<bool> tainted;  // per step: its flags accumulate in the main loop
  std::vector<bool> tested;   // per step: the main loop tests its result (nonfinite_tested)
  std::vector<bool> reg;      // per step: it has a flag register in this kernel
  bool any_rare = false;      // some step's flags come from the rare loop
};

FlagPlan plan_flags(const FusedKernelSpec &s, const std::vector<bool> &overwritten) {
  FlagPlan f;
  f.tainted = tainted_steps(s, overwritten);
  std::vector<bool> watched(s.steps.size());
  for (size_t j = 0; j < s.steps.size(); ++j) {
    watched[j] = float_flags(s.steps[j].op) && !f.tainted[j];
    f.any_rare = f.any_rare || watched[j];
  }
  f.tested = glsl::nonfinite_tested(s, watched);
  // A step's flag register, where a loop of this kernel can set it: a
  // deferred kernel's untainted steps leave theirs to the flags pass, and
  // 100 dead registers and their atomics made Black-Scholes' kernel a third
  // larger for the driver and the validator to read on every load.
  const bool rare_loop_here = f.any_rare && s.flags_loop != FusedKernelSpec::FlagsLoop::Deferred;
  f.reg.resize(s.steps.size());
  for (size_t j = 0; j < s.steps.size(); ++j)
    f.reg[j] = float_flags(s.steps[j].op) && (f.tainted[j] || rare_loop_here);
  return f;
}

// A slot's element as an lvalue: in memory, or a lane of a vector register.
using ElementRef = std::function<std::string(uint32_t slot)>;

// Writes one elementwise kernel. The constructor works out what the parts
// share; each emit_* method writes one part.
class ElementwiseWriter {
 public:
  explicit ElementwiseWriter(const FusedKernelSpec &s)
      : s_(s),
        nslots_(uint32_t(s.slots.size())),
        use_(slot_use(s)),
        // A contiguous kernel takes kVectorWidth consecutive elements per
        // invocation through vector loads and stores where every operand is
        // aligned to the vector (a view offset by one element is not), and
        // one at a time otherwise and in the tail.
        vectors_(s.contiguous && s.vector_access),
        // 32-bit loop index and offsets where they fit (narrow_offsets);
        // the vector path keeps 64 bits.
        narrow_(s.narrow_offsets && !vectors_),
        count_t_(narrow_ ? "uint" : "uint64_t"),
        count_s_(narrow_ ? "u" : "ul"),
        index_t_(s.narrow_index ? "uint" : "int64_t"),
        offset_t_(narrow_ ? "int" : "int64_t"),
        // Slots past the push constants come first in the argument table.
        extra_(nslots_ > kPushSlots ? nslots_ - kPushSlots : 0),
        flags_(plan_flags(s, use_.overwritten)),
        base_(nslots_),
        value_(nslots_),
        offset_(nslots_, "i") {
    // Only a slot's last write in the kernel is stored: no other invocation
    // reads it meanwhile (the planner guarantees), and this one has the
    // value in a register.
    last_write_.assign(nslots_, 0);
    stores_.assign(nslots_, false);
    for (size_t j = 0; j < s.steps.size(); ++j)
      for (uint32_t k = s.steps[j].op.nin; k < s.steps[j].op.count(); ++k) {
        last_write_[s.steps[j].slot[k]] = j;
        stores_[s.steps[j].slot[k]] = s.slots[s.steps[j].slot[k]].stored;
      }
  }

  std::string write() {
    emit_header();
    out_ << "void main() {\n";
    emit_invocation_range();
    emit_slot_addresses();
    emit_loop_constants();
    emit_flag_registers();
    if (vectors_) emit_vector_alignment();
    emit_loops();
    emit_flag_publication();
    out_ << "}\n";
    return out_.str();
  }

 private:
  // Version, extensions, buffer types and the shader templates the ops need.
  void emit_header() {
    std::set<npvk_dtype> stored_types;
    for (uint32_t k = 0; k < nslots_; ++k)
      if (use_.touched[k]) stored_types.insert(s_.slots[k].dtype);
    emit_prologue(out_, s_.key(), stored_types, vectors_);
    Templates templates;
    for (const FusedKernelSpec::Step &st : s_.steps) templates.add(st.op);
    templates.emit(out_);
  }

  // Each subgroup sweeps one contiguous run of the elements, its lanes side
  // by side, rather than a grid-stride loop: CPU drivers run few workgroups,
  // so a grid-stride invocation visits elements about a megabyte apart, each
  // visit a new page and a cold prefetch stream. Each workgroup takes a
  // block of a multiple of 128 elements (the workgroup size, a multiple of
  // every subgroup size up to it) and splits it evenly between its
  // subgroups, so runs are disjoint and whole multiples of the lanes,
  // whatever the subgroup size and however invocations map to subgroups (a
  // subgroup wider than the workgroup has 128 lanes in use). The loop that
  // recomputes FP flags revisits the same run in the same invocation.
  void emit_invocation_range() {
    const uint32_t per_group = kWorkgroupSize * (vectors_ ? kVectorWidth : 1);
    const std::string t = count_t_, sfx = count_s_;
    out_ << "  const " << t << " count = " << t << "(pc.count);\n"
         << "  const " << t << " groups = " << t << "(gl_NumWorkGroups.x);\n"
         << "  const " << t << " block = ((count + groups - 1" << sfx << ") / groups + "
         << (per_group - 1) << sfx << ") / " << per_group << sfx << " * " << per_group << sfx
         << ";\n"
         << "  const " << t << " part = block / " << t << "(gl_NumSubgroups);\n"
         << "  const " << t << " lanes = " << t << "(min(gl_SubgroupSize, " << kWorkgroupSize
         << "u));\n"
         << "  const " << t << " first = " << t << "(gl_WorkGroupID.x) * block + " << t
         << "(gl_SubgroupID) * part;\n"
         << "  const " << t << " end = min(first + part, count);\n";
    if (extra_ || !s_.contiguous) out_ << "  Meta m = Meta(pc.meta);\n";
  }

  // Each slot's address or scalar bits, and the value of scalars, once per
  // invocation; memory values per element.
  void emit_slot_addresses() {
    for (uint32_t k = 0; k < nslots_; ++k) {
      if (!use_.touched[k] && !s_.slots[k].scalar) continue;
      base_[k] = "p" + std::to_string(k);
      out_ << "  const uint64_t " << base_[k] << " = "
           << (k < kPushSlots ? "pc.operand[" + std::to_string(k) + "]"
                              : "uint64_t(m.v[" + std::to_string(k - kPushSlots) + "])")
           << ";\n";
      if (!s_.slots[k].scalar) continue;
      const DtypeInfo &d = dtype_info(s_.slots[k].dtype);
      value_[k] = "c" + std::to_string(k);
      out_ << "  const " << d.glsl_compute << " " << value_[k] << " = " << scalar_load(d, base_[k])
           << ";\n";
    }
  }

  // The loop's extents, division magic numbers and strides, once per
  // invocation: the loop's stores could alias the argument table for all
  // the driver knows, so it would read them again for every element.
  void emit_loop_constants() {
    if (s_.contiguous) return;
    const uint32_t rank = s_.rank;
    for (uint32_t d = 0; d < rank; ++d) {
      const std::string dim = std::to_string(d);
      out_ << "  const " << index_t_ << " ix_extent" << dim << " = " << index_t_ << "(m.v["
           << extra_ + d << "]);\n";
      if (d > 0 && s_.narrow_index)
        out_ << "  const uint64_t ix_magic" << dim << " = uint64_t(m.v["
             << extra_ + rank * (nslots_ + 1) + d << "]) & 0xFFFFFFFFul;\n"
             << "  const uint64_t ix_shift" << dim << " = uint64_t(m.v["
             << extra_ + rank * (nslots_ + 1) + d << "]) >> 32;\n";
      for (uint32_t k = 0; k < nslots_; ++k)
        if (use_.touched[k])
          out_ << "  const " << offset_t_ << " ix_stride" << k << "_" << dim << " = " << offset_t_
               << "(m.v[" << extra_ + rank * (k + 1) + d << "]);\n";
    }
  }

  void emit_flag_registers() {
    for (size_t j = 0; j < s_.steps.size(); ++j)
      if (flags_.reg[j]) out_ << "  uint fl" << j << " = 0u;\n";
    if (flags_.any_rare) out_ << "  uint nonfinite = 0u;\n";
  }

  // Vectors start at the element `shift` (mod kVectorWidth) that aligns the
  // first operand: NumPy's large arrays start 16 bytes into a page, so
  // operands share a misalignment far more often than they are aligned.
  // The other operands must then be aligned there too.
  void emit_vector_alignment() {
    std::string aligned, shift = "0ul";
    for (uint32_t k = 0; k < nslots_; ++k) {
      if (!use_.touched[k]) continue;
      const uint32_t item = dtype_info(s_.slots[k].dtype).itemsize;
      const std::string mask = std::to_string(item * kVectorWidth - 1) + "ul";
      if (aligned.empty())
        shift = "((" + std::to_string(item * kVectorWidth) + "ul - (" + base_[k] + " & " + mask +
                ")) & " + mask + ") / " + std::to_string(item) + "ul";
      aligned += std::string(aligned.empty() ? "" : " | ") + "((" + base_[k] + " + shift * " +
                 std::to_string(item) + "ul) & " + mask + ")";
    }
    out_ << "  const uint64_t shift = " << shift << ";\n"
         << "  const bool aligned = (" << (aligned.empty() ? "0ul" : aligned)
         << ") == 0ul;\n"
         // A shifted run starts one step early so that its first elements
         // are the tail of a step that begins before the run.
         << "  const int64_t start = int64_t(first + (aligned ? shift : 0ul)) - "
            "((aligned && shift != 0ul) ? int64_t(lanes * "
         << kVectorWidth << "ul) : 0l);\n";
  }

  // The main loop and the flags loop, after s.flags_loop.
  void emit_loops() {
    using FlagsLoop = FusedKernelSpec::FlagsLoop;
    if (s_.flags_loop != FlagsLoop::FlagsPass) emit_loop(false);
    if (!flags_.any_rare) return;
    if (s_.flags_loop == FlagsLoop::InKernel) {
      out_ << "  if (nonfinite != 0u) {\n";
      emit_loop(true);
      out_ << "  }\n";
    } else if (s_.flags_loop == FlagsLoop::Deferred) {
      out_ << "  if (nonfinite != 0u) atomicOr(FpFlags(pc.flags).v, " << kFlagsPassWanted
           << "u);\n";
    } else {
      emit_loop(true);  // the flags pass: every element, the operands as the kernel read them
    }
  }

  void emit_flag_publication() {
    for (size_t j = 0; j < s_.steps.size(); ++j)
      if (flags_.reg[j])
        out_ << fp_flags_publish("fl" + std::to_string(j),
                                 "pc.flags + " + std::to_string(4 * j) + "ul");
  }

  // One loop over the invocation's run: the main loop, or the flags loop
  // (`rare`), which stores nothing.
  void emit_loop(bool rare) {
    const ElementRef element = [this](uint32_t k) {
      return element_ref(dtype_info(s_.slots[k].dtype), base_[k], offset_[k]);
    };
    if (!vectors_) {
      out_ << "  for (" << count_t_ << " i = first + " << count_t_
           << "(gl_SubgroupInvocationID); i < end; i += lanes) {\n";
      emit_element(rare, element);
      out_ << "  }\n";
      return;
    }
    const std::string w = std::to_string(kVectorWidth) + "ul";
    out_ << "  for (int64_t s0 = start + int64_t(gl_SubgroupInvocationID * " << kVectorWidth
         << "u); s0 < int64_t(end); s0 += int64_t(lanes * " << w << ")) {\n"
         << "  const uint64_t i0 = uint64_t(max(s0, int64_t(first)));\n";
    // The flags loop takes the scalar path: it revisits the same elements.
    if (!rare) emit_vector_step(w);
    out_ << "  for (uint64_t i = i0; i < min(uint64_t(s0 + " << kVectorWidth
         << "l), end); ++i) {\n";
    emit_element(rare, element);
    out_ << "  }\n";
    if (!rare) out_ << "  }\n";
    out_ << "  }\n";
  }

  // The vector path of the main loop: kVectorWidth elements loaded and
  // stored through vector registers, and the opening of the scalar
  // fallback's `else`.
  void emit_vector_step(const std::string &w) {
    out_ << "  if (aligned && s0 >= int64_t(first) && i0 + " << w << " <= end) {\n";
    for (uint32_t k = 0; k < nslots_; ++k) {
      if (!use_.touched[k]) continue;
      const DtypeInfo &d = dtype_info(s_.slots[k].dtype);
      out_ << "    " << vector_type(d) << " q" << k;
      if (use_.loaded[k]) out_ << " = " << vector_ref(d, base_[k], "i0");
      out_ << ";\n";
    }
    for (uint32_t e = 0; e < kVectorWidth; ++e) {
      out_ << "  {\n";
      emit_element(false, [&](uint32_t k) {
        return "q" + std::to_string(k) + "[" + std::to_string(e) + "]";
      });
      out_ << "  }\n";
    }
    for (uint32_t k = 0; k < nslots_; ++k)
      if (stores_[k])
        out_ << "    " << vector_ref(dtype_info(s_.slots[k].dtype), base_[k], "i0") << " = q" << k
             << ";\n";
    out_ << "  } else {\n";
  }

  // One element's index math, loads, steps and stores.
  void emit_element(bool rare, const ElementRef &ref) {
    if (!s_.contiguous) emit_element_offsets();
    for (uint32_t k = 0; k < nslots_; ++k) {
      if (s_.slots[k].scalar) continue;
      const DtypeInfo &d = dtype_info(s_.slots[k].dtype);
      value_[k] = "v" + std::to_string(k);
      out_ << "    " << d.glsl_compute << " " << value_[k];
      if (use_.loaded[k] && !(rare && use_.overwritten[k]))
        out_ << " = " << loaded_value(d, ref(k));
      out_ << ";\n";
    }
    for (size_t j = 0; j < s_.steps.size(); ++j)
      if (!(rare && flags_.tainted[j])) emit_step(j, rare, ref);
  }

  // The element's coordinates from the loop index `i` (shape, then each
  // slot's element strides, as the planner merged them), and each slot's
  // offset o<k> from them.
  void emit_element_offsets() {
    out_ << "    " << index_t_ << " rest = " << index_t_ << "(i);\n";
    for (uint32_t k = 0; k < nslots_; ++k) {
      if (!use_.touched[k]) continue;
      offset_[k] = narrow_ ? "int64_t(o" + std::to_string(k) + ")" : "o" + std::to_string(k);
      out_ << "    " << offset_t_ << " o" << k << " = 0;\n";
    }
    for (int d = int(s_.rank) - 1; d >= 0; --d) {
      const std::string dim = std::to_string(d);
      out_ << "    {\n";
      if (d > 0 && s_.narrow_index) {
        // No CPU has a vector integer division: a multiply by the extent's
        // magic number and a shift (division_magic()) instead.
        out_ << "      uint q = uint((uint64_t(rest) * ix_magic" << dim << ") >> ix_shift" << dim
             << ");\n"
             << "      " << offset_t_ << " c = " << offset_t_ << "(rest - q * ix_extent" << dim
             << ");\n"
             << "      rest = q;\n";
      } else {
        out_ << "      " << offset_t_ << " c = " << offset_t_ << "("
             << (d == 0 ? "rest" : "rest % ix_extent" + dim) << ");\n";
        if (d > 0) out_ << "      rest /= ix_extent" << dim << ";\n";
      }
      for (uint32_t k = 0; k < nslots_; ++k)
        if (use_.touched[k])
          out_ << "      o" << k << " += c * ix_stride" << k << "_" << dim << ";\n";
      out_ << "    }\n";
    }
  }

  // Step j on the element's values: its math, its flags, and its results
  // written back to their slots' registers (and stored where this is the
  // slot's last write and not the flags loop).
  void emit_step(size_t j, bool rare, const ElementRef &ref) {
    const FusedKernelSpec::Step &st = s_.steps[j];
    const KernelSpec &op = st.op;
    out_ << "    {  // " << op_info(op.op).name << "\n";
    std::vector<std::string> args, results;
    for (uint32_t k = 0; k < op.nin; ++k) {
      const DtypeInfo &d = dtype_info(op.operands[k].dtype);
      std::string name = "a" + std::to_string(k);
      out_ << "    " << d.glsl_compute << " " << name << " = " << value_[st.slot[k]] << ";\n";
      args.push_back(name);
    }
    // `precise` forbids the driver from contracting or reassociating, which
    // would change the last bit compared with NumPy; it also keeps fused ops
    // from merging into one another. Output k is r, r1, ...: a second output
    // is an `out` argument of the op's function.
    auto precise_decl = [](const DtypeInfo &d) {
      return std::string(d.kind == DtypeKind::Float ? "precise " : "") + d.glsl_compute;
    };
    for (uint32_t k = op.nin; k < op.count(); ++k) {
      results.push_back(k == op.nin ? "r" : "r" + std::to_string(k - op.nin));
      if (k > op.nin) {
        out_ << "    " << precise_decl(dtype_info(op.operands[k].dtype)) << " " << results.back()
             << ";\n";
        args.push_back(results.back());
      }
    }
    out_ << "    " << precise_decl(result_type(op)) << " r = " << op_expr(op, args) << ";\n";
    // A float16 result is the float32 one rounded, after every op (NumPy's
    // half loops); ops whose results are float16 values already skip it.
    for (uint32_t k = op.nin; k < op.count(); ++k)
      if (op.operands[k].dtype == NPVK_FLOAT16 && !exact_in_half(op.op))
        out_ << "    " << results[k - op.nin] << " = npvk_round_half(" << results[k - op.nin]
             << ");\n";
    args.resize(op.nin);
    emit_step_flags(j, rare, args, results);
    emit_step_results(j, rare, results, ref);
    out_ << "    }\n";
  }

  // What step j raised: accumulated branch-free (tainted steps, and every
  // step in the flags loop), noted as a non-finite result for the flags
  // loop, or, for ops that are not float, tested and published at once.
  void emit_step_flags(size_t j, bool rare, const std::vector<std::string> &args,
                       const std::vector<std::string> &results) {
    const KernelSpec &op = s_.steps[j].op;
    if (float_flags(op) && (rare || flags_.tainted[j])) {
      std::vector<std::string> operand_class;
      for (uint32_t k = 0; k < op.nin; ++k)
        operand_class.push_back(fp_class(dtype_info(op.operands[k].dtype), args[k]));
      // Each output raises what it brings; the first's pole test serves all.
      for (uint32_t k = op.nin; k < op.count(); ++k)
        out_ << "    {\n"
             << fp_flags_accumulate(op, args, operand_class,
                                    fp_class(dtype_info(op.operands[k].dtype), results[k - op.nin]),
                                    "fl" + std::to_string(j))
             << "    }\n";
    } else if (float_flags(op)) {
      // A result not tested reaches one that is (nonfinite_tested).
      for (uint32_t k = op.nin; k < op.count() && flags_.tested[j]; ++k)
        out_ << "    nonfinite |= uint(!"
             << is_finite(dtype_info(op.operands[k].dtype), results[k - op.nin]) << ");\n";
    } else if (!rare) {
      out_ << fp_flags_code(op, args, "pc.flags + " + std::to_string(4 * j) + "ul");
    }
  }

  // Step j's results as their slots hold them: rounded to the slot's
  // storage type, stored at the slot's last write, and read back as the
  // next step would load them.
  void emit_step_results(size_t j, bool rare, const std::vector<std::string> &results,
                         const ElementRef &ref) {
    const FusedKernelSpec::Step &st = s_.steps[j];
    const KernelSpec &op = st.op;
    for (uint32_t k = op.nin; k < op.count(); ++k) {
      const uint32_t slot = st.slot[k];
      const DtypeInfo &d = dtype_info(s_.slots[slot].dtype);
      const bool store = !rare && s_.slots[slot].stored && last_write_[slot] == j;
      if (d.dtype == NPVK_FLOAT16) {
        // Already a float16 value (rounded above): converted only to be stored.
        if (store)
          out_ << "    " << ref(slot) << " = " << storage_value(d, results[k - op.nin]) << ";\n";
        out_ << "    " << value_[slot] << " = " << results[k - op.nin] << ";\n";
        continue;
      }
      std::string t = "t" + std::to_string(k);
      out_ << "    " << d.glsl_storage << " " << t << " = " << storage_value(d, results[k - op.nin])
           << ";\n";
      if (store) out_ << "    " << ref(slot) << " = " << t << ";\n";
      out_ << "    " << value_[slot] << " = " << loaded_value(d, t) << ";\n";
    }
  }

  const FusedKernelSpec &s_;
  const uint32_t nslots_;
  const SlotUse use_;
  const bool vectors_, narrow_;
  const char *const count_t_, *const count_s_, *const index_t_, *const offset_t_;
  const uint32_t extra_;
  const FlagPlan flags_;
  std::vector<size_t> last_write_;  // per slot: the step whose write is stored
  std::vector<bool> stores_;        // per slot: the kernel stores its last write
  // Per slot, the GLSL names the parts share: its address, its value in the
  // current element (or a scalar's), its element offset.
  std::vector<std::string> base_, value_, offset_;
  std::ostringstream out_;
};

}  // namespace

bool has_flags_loop(const FusedKernelSpec &s) {
  const std::vector<bool> tainted = tainted_steps(s, slot_use(s).overwritten);
  for (size_t j = 0; j < s.steps.size(); ++j)
    if (float_flags(s.steps[j].op) && !tainted[j]) return true;
  return false;
}

std::string generate_glsl(const FusedKernelSpec &s) {
  NPVK_REQUIRE(s.slots.size() <= kMaxKernelSlots && !s.steps.empty(), NPVK_ERR_INTERNAL,
               "a kernel needs 1 to " + std::to_string(kMaxKernelSlots) + " slots and a step");
  return ElementwiseWriter(s).write();
}

}  // namespace npvk
