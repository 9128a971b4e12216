// Planning a matrix product: the core dimensions and strides of A, B and C,
// and the broadcast batch dimensions, merged (matmul_plan.hpp).
#include "compile/families/matmul/matmul_plan.hpp"

#include "base/error.hpp"
#include "compile/dtype.hpp"
#include "compile/iteration.hpp"

namespace npvk {

std::string MatmulOp::key() const {
  return std::string("matmul:") + dtype_info(dtype).suffix + "/b" + std::to_string(batch_rank());
}

MatmulOp plan_matmul(const View &a, const View &b, const View &c) {
  require(!a.scalar && !b.scalar && !c.scalar, NPVK_ERR_INVALID_ARGUMENT,
          "matmul operands must be arrays, not scalar views");
  require(a.ndim >= 2 && b.ndim >= 2 && c.ndim >= 2, NPVK_ERR_SHAPE_MISMATCH,
          "matmul operands need at least two dimensions (give vectors a size-1 one)");
  require(a.dtype == b.dtype && a.dtype == c.dtype, NPVK_ERR_BAD_DTYPE,
          "matmul operands must have one dtype");
  const DtypeInfo &d = dtype_info(a.dtype);
  NPVK_REQUIRE(d.kind != DtypeKind::Bool && a.dtype != NPVK_FLOAT16, NPVK_ERR_UNSUPPORTED,
               std::string("matmul of ") + d.name + " is not supported");
  MatmulOp op;
  op.dtype = a.dtype;
  const int64_t item = d.itemsize;
  op.m = a.shape[a.ndim - 2];
  op.k = a.shape[a.ndim - 1];
  op.n = b.shape[b.ndim - 1];
  NPVK_REQUIRE(b.shape[b.ndim - 2] == op.k, NPVK_ERR_SHAPE_MISMATCH,
               "matmul: A has " + std::to_string(op.k) + " columns but B has " +
                   std::to_string(b.shape[b.ndim - 2]) + " rows");
  NPVK_REQUIRE(c.shape[c.ndim - 2] == op.m && c.shape[c.ndim - 1] == op.n, NPVK_ERR_SHAPE_MISMATCH,
               "matmul: the output's last two extents must be (" + std::to_string(op.m) + ", " +
                   std::to_string(op.n) + ")");
  for (int i = 0; i < 2; ++i) {
    op.a_strides[i] = a.strides[a.ndim - 2 + i] / item;
    op.b_strides[i] = b.strides[b.ndim - 2 + i] / item;
    op.c_strides[i] = c.strides[c.ndim - 2 + i] / item;
  }
  // Batch dimensions: the output's; each input broadcasts to them.
  const uint32_t rank = c.ndim - 2;
  require(a.ndim - 2 <= rank && b.ndim - 2 <= rank, NPVK_ERR_SHAPE_MISMATCH,
          "matmul: the output has fewer batch dimensions than an input");
  Dims shape = first_dims(c.shape, rank);
  OperandDims strides(3, Dims(rank, 0));
  const View *views[3] = {&a, &b, &c};
  for (int v = 0; v < 3; ++v) {
    const View &x = *views[v];
    const uint32_t xr = x.ndim - 2;
    for (uint32_t j = 0; j < xr; ++j) {
      const uint32_t dim = rank - xr + j;
      require(x.shape[j] == shape[dim] || x.shape[j] == 1, NPVK_ERR_SHAPE_MISMATCH,
              "matmul: batch dimensions do not broadcast to the output's");
      strides[size_t(v)][dim] = x.shape[j] == 1 ? 0 : x.strides[j] / item;
    }
  }
  IterationSpace batch = merge_dimensions(shape, strides, {});
  op.batches = batch.count;
  op.batch_shape.assign(batch.shape.begin(), batch.shape.end());
  op.batch_strides.assign(3, {});
  for (size_t v = 0; v < 3 && batch.rank; ++v)
    op.batch_strides[v].assign(batch.strides[v].begin(), batch.strides[v].end());
  return op;
}

}  // namespace npvk
