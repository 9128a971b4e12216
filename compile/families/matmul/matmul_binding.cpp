// The matrix product family: a workgroup per 16 x 16 tile of C, in as many
// dispatches as the device's workgroup count limit needs.
#include <algorithm>

#include "compile/dtype.hpp"
#include "compile/families/kernels.hpp"
#include "compile/families/matmul/matmul_glsl.hpp"
#include "compile/families/matmul/matmul_replay.hpp"
#include "compile/fusion.hpp"

namespace npvk {
namespace {

class MatmulKernel final : public StandaloneKernel {
 public:
  explicit MatmulKernel(MatmulOp op) : op_(std::move(op)) {}

  std::string key() const override { return op_.key(); }
  std::string glsl() const override { return generate_matmul_glsl(op_); }
  std::string name() const override { return "matmul"; }
  std::string describe() const override {
    return "matmul, " + std::string(dtype_info(op_.dtype).name) + ": " +
           std::to_string(op_.batches) + " x (" + std::to_string(op_.m) + " x " +
           std::to_string(op_.k) + ") @ (" + std::to_string(op_.k) + " x " + std::to_string(op_.n) +
           "), " + std::to_string(op_.tiles()) + " tiles of " + std::to_string(kMatmulTile) +
           " x " + std::to_string(kMatmulTile) + ", a workgroup each\n";
  }
  std::string summary(int64_t) const override {
    return "matmul, " + std::to_string(op_.tiles()) + " tiles";
  }
  std::string trace_args(int64_t) const override {
    return "\"m\":" + std::to_string(op_.m) + ",\"k\":" + std::to_string(op_.k) +
           ",\"n\":" + std::to_string(op_.n) + ",\"batches\":" + std::to_string(op_.batches) +
           ",\"kernel\":\"" + op_.key() + "\"";
  }

  void bind(const PlannedKernel &k, const BindTarget &t,
            std::vector<DispatchArgs> &batch) const override {
    std::vector<int64_t> meta = {op_.a_strides[0], op_.a_strides[1], op_.b_strides[0],
                                 op_.b_strides[1], op_.c_strides[0], op_.c_strides[1]};
    meta.insert(meta.end(), op_.batch_shape.begin(), op_.batch_shape.end());
    for (const std::vector<int64_t> &strides : op_.batch_strides)
      meta.insert(meta.end(), strides.begin(), strides.end());
    const uint64_t tiles = uint64_t(op_.tiles());
    const uint64_t limit = t.max_group_count;
    const MatmulOp *op = &op_;
    for (uint64_t first = 0; first < tiles; first += limit) {
      DispatchArgs d;
      d.key = op_.key();
      d.source = [op] { return generate_matmul_glsl(*op); };
      const uint32_t operand_slots[3] = {matmul_slot::kA, matmul_slot::kB, matmul_slot::kC};
      for (int v = 0; v < 3; ++v) {
        d.push.operand[operand_slots[v]] = t.address(size_t(v));
        d.accesses.push_back(
            {v, uint64_t(k.slots[size_t(v)].lo), uint64_t(k.slots[size_t(v)].hi), v == 2});
      }
      d.push.operand[matmul_slot::kM] = uint64_t(op_.m);
      d.push.operand[matmul_slot::kK] = uint64_t(op_.k);
      d.push.operand[matmul_slot::kN] = uint64_t(op_.n);
      d.push.operand[matmul_slot::kFirstTile] = first;
      d.push.count = std::min(limit, tiles - first);
      d.push.tables = t.tables_address;
      d.meta = meta;
      d.groups = uint32_t(d.push.count);
      batch.push_back(std::move(d));
    }
  }

  bool replay_supported(const HostLoop &) const override {
    return op_.dtype != NPVK_BOOL && op_.dtype != NPVK_FLOAT16;
  }
  uint32_t replay(const HostLoop &, uint8_t *const *bytes) const override {
    replay_matmul(op_, bytes);
    return 0;
  }

 private:
  MatmulOp op_;
};

}  // namespace

std::shared_ptr<const StandaloneKernel> make_matmul_kernel(MatmulOp op) {
  return std::make_shared<const MatmulKernel>(std::move(op));
}

}  // namespace npvk
