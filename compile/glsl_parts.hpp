// The pieces of generated GLSL that every kernel family's generator shares
// (compile/families/<family>/<family>_glsl.cpp): NumPy's loop semantics per
// op and dtype (glsl_ops.cpp, from the op rows of ops.cpp), loads, stores and
// shader templates (glsl_types.cpp) and FP-flag tests (glsl_fp.cpp). They stay
// in compile/, outside any family folder, because every family uses them.
#pragma once

#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "compile/dtype.hpp"
#include "compile/kernel_spec.hpp"

namespace npvk::glsl {

// The text of an embedded shaders/*.glsl file.
std::string shader_text(const char *name);
// The compute type an op's loop works in (its first input's).
const DtypeInfo &loop_type(const KernelSpec &s);
// The compute type of the op's result (its first output).
const DtypeInfo &result_type(const KernelSpec &s);
// "C(0)" in the compute type of `d`.
std::string zero(const DtypeInfo &d);
std::string cast_expr(const DtypeInfo &from, const DtypeInfo &to, const std::string &x);
// The math of one op on loaded inputs a[0..], in the loop's compute type.
std::string op_expr(const KernelSpec &s, const std::vector<std::string> &a);
// An op row's GLSL or pole template (OpInfo::glsl) for this loop's dtypes,
// or "" when none of its alternatives selects them.
std::string expand_template(const char *tmpl, const KernelSpec &s,
                            const std::vector<std::string> &a);
// Whether a kernel's float loop calls shaders/math_f64.glsl.
bool uses_math_f64(const KernelSpec &s);
// Whether an op's float16 results are float16 values already (no rounding).
bool exact_in_half(npvk_op op);
// A scalar's value from its 64 bits.
std::string scalar_load(const DtypeInfo &d, const std::string &bits);
// The element at `offset` (in elements) from address `base`, as an lvalue.
std::string element_ref(const DtypeInfo &d, const std::string &base, const std::string &offset);
// Elements per invocation on the vector path of a contiguous kernel: CPU
// drivers do not merge consecutive scalar loads, so the vector type is explicit.
constexpr uint32_t kVectorWidth = 4;
// The storage vector type of kVectorWidth elements (f64vec4, u8vec4, ...),
// and the vector at element `offset` (a multiple of kVectorWidth) of a
// buffer aligned to the vector's size.
std::string vector_type(const DtypeInfo &d);
std::string vector_ref(const DtypeInfo &d, const std::string &base, const std::string &offset);
// A compute-type value as stored, and a stored element as a loop reads it.
std::string storage_value(const DtypeInfo &d, const std::string &r);
std::string loaded_value(const DtypeInfo &d, const std::string &stored);
// Bit tests that no driver optimisation can fold away.
std::string is_nan(const DtypeInfo &d, const std::string &x);
std::string is_finite(const DtypeInfo &d, const std::string &x);

// FP exceptions (glsl_fp.cpp). The test for the op's pole ("false" if none).
std::string zero_division_test(const KernelSpec &s, const std::vector<std::string> &a);
// Checks one element and ORs its flags into the word at address `flags`.
std::string fp_flags_code(const KernelSpec &s, const std::vector<std::string> &a,
                          const std::string &flags);
// A float value's class: 0 finite, 1 infinite, 3 NaN (0u for other types).
std::string fp_class(const DtypeInfo &d, const std::string &x);
// ORs what the op raised, branch-free, into the register `acc`.
std::string fp_flags_accumulate(const KernelSpec &s, const std::vector<std::string> &a,
                                const std::vector<std::string> &operand_class,
                                const std::string &result_class, const std::string &acc);
// Turns `acc` into NumPy's flag bits and ORs them into the word at `flags`.
std::string fp_flags_publish(const std::string &acc, const std::string &flags);

// Whether the op's float result is an infinity or a NaN whenever its input
// `input` is one, whatever its other inputs are (x + y, x / y for x, log x,
// x**3, but not x / y for y, exp x or where). Unlisted ops: false.
bool carries_nonfinite(const KernelSpec &op, uint32_t input);
// The steps of a fused kernel whose results the main loop tests for a
// non-finite value. `checked[j]`: step j's result is one to watch (a float
// op with flags, not recomputed branch-free). A result that a later watched
// step reads through an input that carries non-finite values, and whose
// own result is tested or carried on in turn, needs no test of its own:
// its infinity or NaN reaches a tested value.
std::vector<bool> nonfinite_tested(const FusedKernelSpec &s, const std::vector<bool> &checked);

// Which shader templates a kernel's ops need, each emitted once.
struct Templates {
  bool math_f64 = false;
  bool float_type[2] = {false, false};  // float32, float64
  bool divmod[2] = {false, false};
  bool half = false;                                  // float16 conversions (shaders/ops_half.glsl)
  bool half_f64 = false;                              // and casts between float16 and float64
  std::set<std::tuple<std::string, bool, int>> ints;  // type, signed, bits

  void add(const KernelSpec &op);
  void emit(std::ostringstream &out) const;
};

// The header every kernel starts with: version, extensions, workgroup size,
// buffer-reference types of `stored` dtypes (and their vector_type()s with
// `vectors`), the push-constant block.
void emit_prologue(std::ostringstream &out, const std::string &key,
                   const std::set<npvk_dtype> &stored, bool vectors = false);

}  // namespace npvk::glsl
