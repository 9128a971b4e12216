#include "compile/iteration.hpp"

#include <string>

#include "base/error.hpp"
#include "compile/dtype.hpp"

namespace npvk {
namespace {

std::string shape_string(const View &v) {
  std::string s = "(";
  for (uint32_t d = 0; d < v.ndim; ++d)
    s += std::to_string(v.shape[d]) + (d + 1 < v.ndim ? ", " : "");
  return s + (v.ndim == 1 ? ",)" : ")");
}

}  // namespace

IterationSpace plan_iteration(const std::vector<const View *> &ops, uint32_t nin) {
  const View &out0 = *ops[nin];
  const uint32_t nd = out0.ndim;
  const size_t nops = ops.size();
  for (size_t k = nin + 1; k < nops; ++k) {
    const View &o = *ops[k];
    bool same = o.ndim == nd;
    for (uint32_t d = 0; same && d < nd; ++d) same = o.shape[d] == out0.shape[d];
    NPVK_REQUIRE(same, NPVK_ERR_SHAPE_MISMATCH,
                 "outputs differ in shape: " + shape_string(out0) + " and " + shape_string(o));
  }

  // Full-rank element strides per operand, with broadcasting applied.
  OperandDims strides(nops, Dims(nd, 0));
  for (size_t k = 0; k < nops; ++k) {
    const View &v = *ops[k];
    if (v.scalar) continue;
    NPVK_REQUIRE(v.ndim <= nd, NPVK_ERR_SHAPE_MISMATCH,
                 "operand " + std::to_string(k) + " of shape " + shape_string(v) +
                     " has more dimensions than the output " + shape_string(out0));
    const int64_t item = dtype_info(v.dtype).itemsize;
    for (uint32_t j = 0; j < v.ndim; ++j) {
      uint32_t d = nd - v.ndim + j;  // aligned at the last dimension
      if (v.shape[j] == out0.shape[d]) {
        strides[k][d] = v.shape[j] == 1 ? 0 : v.strides[j] / item;
      } else {
        NPVK_REQUIRE(v.shape[j] == 1, NPVK_ERR_SHAPE_MISMATCH,
                     "operand " + std::to_string(k) + " of shape " + shape_string(v) +
                         " does not broadcast to the output shape " + shape_string(out0));
      }
    }
  }

  Dims shape = first_dims(out0.shape, nd);
  OperandFlags unit_stride(nops);
  for (size_t k = 0; k < nops; ++k) unit_stride[k] = !ops[k]->scalar;
  IterationSpace space = merge_dimensions(shape, strides, unit_stride);
  if (in_memory_order(space) && nd > 1) {
    // Every array steps through its elements in order: planned as the flat
    // loop NumPy's iterator hands a ufunc's loop for such arrays, so that an
    // op recorded from whole arrays (`a[k] = t`, the ufunc call hook) and
    // ops recorded from loop calls over the same elements look alike
    // (loops_pair_up). np.mgrid's `nn[k] = nn[k] * step + start` cut its
    // kernel before the (2048, 2048) assignment after a flat multiply, and
    // stored the dead temporary: 64 MB of fresh pages.
    shape.assign(1, space.count);
    for (size_t k = 0; k < nops; ++k) strides[k].assign(1, ops[k]->scalar ? 0 : 1);
  }
  space.full_shape = std::move(shape);
  space.full_strides = std::move(strides);
  return space;
}

IterationSpace merge_dimensions(const Dims &shape, const OperandDims &strides,
                                const OperandFlags &unit_stride) {
  const size_t nops = strides.size();
  IterationSpace space;
  space.count = 1;
  for (int64_t e : shape) space.count *= e;
  space.strides.assign(nops, {});
  if (space.count <= 1) {
    space.contiguous = true;
    return space;
  }
  space.shape.reserve(shape.size());
  for (auto &s : space.strides) s.reserve(shape.size());
  // Drop size-1 dimensions, then merge d into the previous kept dimension
  // wherever every operand steps through both as through one.
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t extent = shape[d];
    if (extent == 1) continue;
    bool merge = !space.shape.empty();
    for (size_t k = 0; merge && k < nops; ++k)
      merge = space.strides[k].back() == strides[k][d] * extent;
    if (merge) {
      space.shape.back() *= extent;
      for (size_t k = 0; k < nops; ++k) space.strides[k].back() = strides[k][d];
    } else {
      space.shape.push_back(extent);
      for (size_t k = 0; k < nops; ++k) space.strides[k].push_back(strides[k][d]);
    }
  }
  space.rank = uint32_t(space.shape.size());
  space.contiguous = space.rank == 1;
  for (size_t k = 0; space.contiguous && k < nops; ++k)
    space.contiguous = k >= unit_stride.size() || !unit_stride[k] || space.strides[k][0] == 1;
  return space;
}

bool in_c_order(const Dims &shape, const Dims &strides) {
  int64_t step = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 1) continue;
    if (strides[d] != step) return false;
    step *= shape[d];
  }
  return true;
}

Dims c_order_strides(const Dims &shape) {
  Dims strides(shape.size(), 0);
  int64_t step = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 1) continue;
    strides[d] = step;
    step *= shape[d];
  }
  return strides;
}

bool loops_pair_up(const Dims &shape_a, bool flat_a, const Dims &shape_b, bool flat_b) {
  if (shape_a == shape_b) return true;
  if (!flat_a && !flat_b) return false;
  int64_t count_a = 1, count_b = 1;
  for (int64_t e : shape_a) count_a *= e;
  for (int64_t e : shape_b) count_b *= e;
  return count_a == count_b;
}

bool offsets_fit_int32(const IterationSpace &space) {
  constexpr int64_t limit = int64_t(1) << 31;
  if (space.count >= limit) return false;
  for (const Dims &strides : space.strides) {
    int64_t span = 0;  // the largest |offset|: every coordinate at its extreme
    for (size_t d = 0; d < strides.size(); ++d) {
      const int64_t stride = strides[d] < 0 ? -strides[d] : strides[d];
      if (stride >= limit) return false;
      span += (space.shape[d] - 1) * stride;  // < 2^31 * 2^31 * rank: no overflow
      if (span >= limit) return false;
    }
  }
  return true;
}

uint64_t division_magic(uint32_t divisor) {
  uint32_t log2_ceil = 0;
  while ((uint64_t(1) << log2_ceil) < divisor) ++log2_ceil;
  const uint32_t p = 31 + log2_ceil;
  const uint64_t m = ((uint64_t(1) << p) + divisor - 1) / divisor;  // p <= 62: no overflow
  return m | uint64_t(p) << 32;
}

}  // namespace npvk
