// Runs one npvk_apply on operands laid out in any way a view can describe, and checks every
// byte of every output buffer against a per-element reference: the elements inside the output
// view must match the reference, those outside it must be untouched.
#ifndef NPVK_TESTS_CPP_OP_RUNNER_HPP
#define NPVK_TESTS_CPP_OP_RUNNER_HPP

#include <npvk/npvk.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "compare.hpp"
#include "dtypes.hpp"

namespace npvk_test {

// One element of every output from one element of every input, as raw bytes.
using ElementFn = std::function<void(const uint8_t *const *in, uint8_t *const *out)>;

namespace internal {
template <class Out, class... In, class F, size_t... I>
ElementFn MakeElementFn(F f, std::index_sequence<I...>) {
  return [f](const uint8_t *const *in, uint8_t *const *out) {
    Store<Out>(out[0], static_cast<Out>(f(Load<In>(in[I])...)));
  };
}
}  // namespace internal

// Wraps a typed single-output function f(In...) -> Out as an ElementFn.
template <class Out, class... In, class F>
ElementFn MakeElementFn(F f) {
  return internal::MakeElementFn<Out, In...>(f, std::index_sequence_for<In...>{});
}

struct Operand {
  npvk_dtype dtype = NPVK_BOOL;
  // The whole buffer: an input's values, or an output's initial contents.
  Bytes storage;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements, one per dimension
  int64_t offset = 0;            // in elements
  // An input given by npvk_view_create_scalar(storage), not by a buffer.
  bool scalar = false;
  // An output that is input `alias_of`'s view exactly (in place).
  int alias_of = -1;
  // In place through the input's own view handle, or through a second view of its buffer.
  bool alias_same_handle = true;
};

// The byte every element outside a view is filled with, so stray writes and stray reads show.
constexpr uint8_t kFiller = 0xA5;

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t> &shape);
int64_t ElementCount(const std::vector<int64_t> &shape);

// A view of `shape` with element `strides` starting `offset` elements into a buffer that has
// `pad` filler elements after the last element the view reaches. The view's elements, in C
// order, take `values` (cycled when shorter: a stride-0 view has fewer distinct elements).
Operand Laid(npvk_dtype dtype, const Bytes &values, const std::vector<int64_t> &shape,
             const std::vector<int64_t> &strides, int64_t offset, int64_t pad = 1);
// `values` as a C-contiguous array of `shape`, or 1-D when `shape` is empty.
Operand Dense(npvk_dtype dtype, const Bytes &values, std::vector<int64_t> shape = {});
// A 1-D view of `values` with `step` elements between neighbours: negative steps walk down from
// the end of the buffer. `pad` filler elements sit before and after.
Operand Spaced(npvk_dtype dtype, const Bytes &values, int64_t step, int64_t pad);
// A scalar input holding the first element of `values`.
Operand Scalar(npvk_dtype dtype, const Bytes &values);
// Outputs: filler-initialised, so elements the op leaves unwritten are seen.
Operand Output(npvk_dtype dtype, const std::vector<int64_t> &shape);
Operand OutputLaid(npvk_dtype dtype, const std::vector<int64_t> &shape,
                   const std::vector<int64_t> &strides, int64_t offset, int64_t pad = 1);
Operand InPlace(int input, bool same_handle = true);

// Records `op` on these operands, reads every output buffer and checks it; failures are
// reported with `label`, the element's index, its inputs, the expected and the actual value.
void RunAndCheck(npvk_context ctx, npvk_op op, const std::vector<Operand> &inputs,
                 const std::vector<Operand> &outputs, const ElementFn &reference,
                 const Tolerance &tolerance, const std::string &label);

}  // namespace npvk_test

#endif  // NPVK_TESTS_CPP_OP_RUNNER_HPP
