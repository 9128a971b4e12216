// Matrix products (np.matmul): C[..., i, j] = sum_k A[..., i, k] * B[..., k, j]
// over broadcast batch dimensions, with a tiled shader: each workgroup
// computes a 16 x 16 tile of C from 16 x 16 tiles of A and B staged in
// shared memory. See docs/architecture.md, "Matrix products".
#pragma once

#include <npvk/npvk.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compile/view.hpp"

namespace npvk {

constexpr int64_t kMatmulTile = 16;

struct MatmulOp {
  npvk_dtype dtype = NPVK_FLOAT64;  // of A, B and C
  int64_t m = 0, k = 0, n = 0;
  int64_t a_strides[2] = {}, b_strides[2] = {}, c_strides[2] = {};  // elements
  // Batch dimensions after merging: shape, then A's, B's and C's strides
  // (zero where an operand is broadcast).
  std::vector<int64_t> batch_shape;
  std::vector<std::vector<int64_t>> batch_strides;  // [3][rank]
  int64_t batches = 1;

  uint32_t batch_rank() const { return uint32_t(batch_shape.size()); }
  int64_t tiles() const {
    return batches * ((m + kMatmulTile - 1) / kMatmulTile) * ((n + kMatmulTile - 1) / kMatmulTile);
  }
  std::string key() const;  // e.g. "matmul:f8/b1"
};

// Plans C = A @ B for views of rank >= 2 each (batch dimensions broadcast,
// aligned at the last; C has the broadcast batch shape). Throws on
// mismatched shapes or dtypes.
MatmulOp plan_matmul(const View &a, const View &b, const View &c);

}  // namespace npvk
