// Runs every OpCase in three layouts that need different kernels: contiguous (also in place),
// a scalar second operand, and a 3-D layout where every operand is strided differently. On
// lavapipe each distinct kernel costs an LLVM compile of ~0.3 s (seconds for power/log), so the
// variants are chosen to cover the index paths of a loop with as few kernels as possible; the
// layouts themselves are covered in depth, on a few ops, by test_layouts.cpp.
#include "op_case_test.hpp"

#include <algorithm>

namespace npvk_test {
namespace {

Bytes Slice(const Bytes &values, npvk_dtype dtype, int64_t first, int64_t count) {
  const size_t itemsize = Itemsize(dtype);
  return Bytes(values.begin() + first * itemsize, values.begin() + (first + count) * itemsize);
}

// The first value whose top bit is set (a negative number, -0.0, or an unsigned value of 2^(bits-1)
// or more): as a scalar it shows a kernel that widens scalar bits with the wrong sign.
int64_t FirstWithTopBit(const Bytes &values, npvk_dtype dtype) {
  const size_t itemsize = Itemsize(dtype);
  const int64_t n = static_cast<int64_t>(values.size() / itemsize);
  for (int64_t i = 0; i < n; ++i) {
    if (values[i * itemsize + itemsize - 1] & 0x80) return i;  // little-endian
  }
  return n - 1;
}

}  // namespace

TEST_P(OpCaseTest, MatchesReference) {
  const OpCase &c = GetParam();
  const uint32_t nin = c.loop.nin;
  const std::vector<npvk_dtype> in(c.loop.dtypes.begin(), c.loop.dtypes.begin() + nin);
  const std::vector<npvk_dtype> out(c.loop.dtypes.begin() + nin, c.loop.dtypes.end());
  const int64_t n = static_cast<int64_t>(c.values.at(0).size() / Itemsize(in[0]));
  int supported = 0;
  NPVK_ASSERT_OK(npvk_op_supported(ctx(), c.loop.op, c.loop.dtypes.data(),
                                   static_cast<uint32_t>(c.loop.dtypes.size()), &supported));
  ASSERT_EQ(supported, 1) << "docs/ops.md lists this loop; npvk_op_supported says no";

  auto outputs = [&](const std::vector<int64_t> &shape) {
    std::vector<Operand> o;
    for (npvk_dtype d : out) o.push_back(Output(d, shape));
    return o;
  };
  auto dense_inputs = [&]() {
    std::vector<Operand> ops;
    for (uint32_t k = 0; k < nin; ++k) ops.push_back(Dense(in[k], c.values[k]));
    return ops;
  };

  RunAndCheck(ctx(), c.loop.op, dense_inputs(), outputs({n}), c.reference, c.tolerance,
              "contiguous");

  for (uint32_t k = 0; k < nin; ++k) {
    if (in[k] != out[0]) continue;
    // Through the input's own view handle for input 0, through a second view of its buffer
    // for the others.
    // A second output (divmod, modf, frexp) goes to memory of its own.
    std::vector<Operand> outs = outputs({n});
    outs[0] = InPlace(static_cast<int>(k), k == 0);
    RunAndCheck(ctx(), c.loop.op, dense_inputs(), outs, c.reference, c.tolerance,
                "in place on input " + std::to_string(k));
  }

  if (nin >= 2) {
    // A scalar second operand against all of the first input's values, once with a random
    // value from the middle of its list and once with a value whose top bit is set.
    for (int64_t pick : {n / 2 + n / 4, FirstWithTopBit(c.values[1], in[1])}) {
      std::vector<Operand> ins = dense_inputs();
      ins[1] = Scalar(in[1], Slice(c.values[1], in[1], std::min(pick, n - 1), 1));
      RunAndCheck(ctx(), c.loop.op, ins, outputs({n}), c.reference, c.tolerance,
                  "second input scalar");
    }
  }

  {
    // Output (2, 3, m), every 2nd element with its first axis reversed. Input 0 is a transposed
    // (m, 3, 2) array with its middle axis reversed; input 1 is (3, m) with a stride-0 first
    // axis, a reversed last one and a missing leading one; input 2 is (2, 1, 1). Every operand
    // starts at a nonzero element offset.
    const int64_t m = std::clamp<int64_t>(n / 6, 1, 40);
    std::vector<Operand> ins;
    ins.push_back(Laid(in[0], c.values[0], {2, 3, m}, {1, -2, 6}, 4));
    if (nin >= 2) ins.push_back(Laid(in[1], c.values[1], {3, m}, {0, -1}, m + 1));
    if (nin >= 3) ins.push_back(Laid(in[2], c.values[2], {2, 1, 1}, {1, 1, 1}, 1));
    std::vector<Operand> outs;
    for (npvk_dtype d : out)
      outs.push_back(OutputLaid(d, {2, 3, m}, {-6 * m, 2 * m, 2}, 6 * m + 1));
    RunAndCheck(ctx(), c.loop.op, ins, outs, c.reference, c.tolerance, "3-D strided and broadcast");
  }
}

}  // namespace npvk_test
