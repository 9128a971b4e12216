// The pieces of generated GLSL that every kernel generator shares
// (elementwise in codegen.cpp, reductions and scans in reduce_codegen.cpp):
// NumPy's loop semantics per op and dtype, loads, stores and FP-flag tests.
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
// A scalar's value from its 64 bits.
std::string scalar_load(const DtypeInfo &d, const std::string &bits);
// The element at `offset` (in elements) from address `base`, as an lvalue.
std::string element_ref(const DtypeInfo &d, const std::string &base, const std::string &offset);
// A compute-type value as stored, and a stored element as a loop reads it.
std::string storage_value(const DtypeInfo &d, const std::string &r);
std::string loaded_value(const DtypeInfo &d, const std::string &stored);
// Bit tests that no driver optimisation can fold away.
std::string is_nan(const DtypeInfo &d, const std::string &x);
std::string is_finite(const DtypeInfo &d, const std::string &x);

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
// buffer-reference types of `stored` dtypes, the push-constant block.
void emit_prologue(std::ostringstream &out, const std::string &key,
                   const std::set<npvk_dtype> &stored);

}  // namespace npvk::glsl
