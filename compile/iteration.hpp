// The iteration space of one elementwise operation: NumPy broadcasting of the
// inputs to the output shape, then the smallest equivalent loop nest (size-1
// dimensions dropped, dimensions that are contiguous in every operand merged).
// The kernel key depends only on the resulting rank and whether it is one
// unit-stride dimension, so most programs need few kernels whatever their
// shapes.
#pragma once

#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "base/inline_vector.hpp"
#include "compile/view.hpp"

namespace npvk {

constexpr int kMaxOperands = 4;

// A loop's extents or one operand's strides, inline up to 4 dimensions, in a
// list inline up to kMaxOperands operands: recording an op allocates nothing
// for them (bench/record: malloc and free were about a third of a recorded
// op's instructions). A fused kernel's slots may outnumber kMaxOperands; the
// list then grows onto the heap.
using Dims = boost::container::small_vector<int64_t, 4>;
static_assert(std::is_nothrow_move_constructible_v<Dims>);
using OperandDims = InlineVector<Dims, kMaxOperands>;
// The first n of a view's extents or strides.
inline Dims first_dims(const ViewDims &dims, uint32_t n) {
  Dims out(n);
  for (uint32_t d = 0; d < n; ++d) out[d] = dims[d];
  return out;
}
// Per operand: whether it must step by one element for a loop to count as
// contiguous (merge_dimensions).
using OperandFlags = InlineVector<bool, kMaxOperands>;

struct IterationSpace {
  int64_t count = 0;        // elements
  uint32_t rank = 0;        // after merging; 0 when count is 0 or 1
  bool contiguous = false;  // rank 1 (or less) with unit stride in every array operand
  Dims shape;               // [rank]
  // [operand][rank]: strides in elements; zero for broadcast dimensions and scalars.
  OperandDims strides;
  // Before merging: the output's shape and [operand][its ndim] element strides,
  // so that ops over the same shape can be planned as one loop (fusion).
  Dims full_shape;
  OperandDims full_strides;
};

// `operands`: inputs then outputs; all outputs must have the same shape, and
// each input broadcasts to it. Throws NPVK_ERR_SHAPE_MISMATCH otherwise.
IterationSpace plan_iteration(const std::vector<const View *> &operands, uint32_t nin);

// The smallest loop nest for operands with these full-rank element strides
// over `shape` (scalar operands: all-zero strides). unit_stride[k] says that
// operand k must have unit stride for the loop to count as contiguous
// (operands past its end need not).
IterationSpace merge_dimensions(const Dims &shape, const OperandDims &strides,
                                const OperandFlags &unit_stride);

// Whether an op's arrays all step through their elements in memory order
// (scalars aside): plan_iteration gives such an op the flat full shape
// {count}, as NumPy's iterator hands a ufunc's loop such arrays in one run.
inline bool in_memory_order(const IterationSpace &space) {
  return space.contiguous && space.count > 1;
}

// Whether `strides` (elements, 0 where the extent is 1) walk `shape` in C
// order without gaps, so element i of the loop is element i in memory.
bool in_c_order(const Dims &shape, const Dims &strides);

// The C-order element strides of `shape` (0 over extents of 1).
Dims c_order_strides(const Dims &shape);

// Whether ops over these two loops can share a kernel: they pair up the
// same elements in the same order. Equal full shapes do; so does the same
// count where one side is in memory order (its element i is element i of
// the other's loop in C order). `flat_*`: in_memory_order of that side.
bool loops_pair_up(const Dims &shape_a, bool flat_a, const Dims &shape_b, bool flat_b);

// Whether the loop's element count and every operand's element offsets
// (from its first element: each partial sum of coordinate * stride lies
// between the extremes of the full sum) are below 2^31, so that a kernel can
// compute them in 32 bits.
bool offsets_fit_int32(const IterationSpace &space);

// Splitting a strided loop's element index into coordinates divides by each
// extent, and no CPU has a vector integer division (llvmpipe calls a scalar
// one per lane). For an index n < 2^31 and 1 <= divisor < 2^31:
// n / divisor == (n * m) >> p, with m = ceil(2^p / divisor) (32 bits) and
// p = 31 + ceil(log2 divisor) (Granlund and Montgomery, "Division by
// invariant integers using multiplication", 1994, theorem 4.2: m * divisor
// exceeds 2^p by less than divisor <= 2^(p - 31)). Returns m | p << 32.
uint64_t division_magic(uint32_t divisor);

}  // namespace npvk
