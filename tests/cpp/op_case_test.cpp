// Runs every OpCase in the layouts that stress a kernel's indexing differently: contiguous,
// strided with offsets and negative steps, in place, scalar operands, and a 3-D output fed by a
// permuted input and broadcast (stride-0, missing and size-1 dimension) inputs.
#include "op_case_test.hpp"

#include <algorithm>

namespace npvk_test {
namespace {

Bytes Slice(const Bytes &values, npvk_dtype dtype, int64_t first, int64_t count) {
  const size_t itemsize = Itemsize(dtype);
  return Bytes(values.begin() + first * itemsize, values.begin() + (first + count) * itemsize);
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

  {
    // Every 2nd element, every 3rd walking backwards, and an element offset of 5.
    const int64_t steps[] = {2, -3, 1};
    const int64_t pads[] = {1, 2, 5};
    std::vector<Operand> ins;
    for (uint32_t k = 0; k < nin; ++k) ins.push_back(Spaced(in[k], c.values[k], steps[k], pads[k]));
    std::vector<Operand> outs;
    for (npvk_dtype d : out) outs.push_back(OutputLaid(d, {n}, {-2}, 2 * std::max<int64_t>(n - 1, 0) + 3, 2));
    RunAndCheck(ctx(), c.loop.op, ins, outs, c.reference, c.tolerance,
                "strided: inputs step 2 / -3 / offset 5, output step -2");
  }

  for (uint32_t k = 0; k < nin; ++k) {
    if (in[k] != out[0]) continue;
    // Through the input's own view handle for input 0, through a second view of its buffer
    // for the others.
    RunAndCheck(ctx(), c.loop.op, dense_inputs(), {InPlace(static_cast<int>(k), k == 0)},
                c.reference, c.tolerance, "in place on input " + std::to_string(k));
  }

  for (uint32_t k = 0; nin >= 2 && k < 2; ++k) {
    // One scalar operand against all the other input's values; its value is taken from the
    // middle of its own list (a random value) and from the start (an edge value).
    for (int64_t pick : {n / 2 + n / 4, int64_t{0}}) {
      std::vector<Operand> ins = dense_inputs();
      ins[k] = Scalar(in[k], Slice(c.values[k], in[k], std::min(pick, n - 1), 1));
      RunAndCheck(ctx(), c.loop.op, ins, outputs({n}), c.reference, c.tolerance,
                  "input " + std::to_string(k) + " scalar");
    }
  }

  {
    // Output (2, 3, m). Input 0 is a transposed (m, 3, 2) array; input 1 is (3, m) with a
    // stride-0 first dimension and a missing leading one; input 2 is (2, 1, 1).
    const int64_t m = std::clamp<int64_t>(n / 6, 1, 40);
    std::vector<Operand> ins;
    ins.push_back(Laid(in[0], c.values[0], {2, 3, m}, {1, 2, 6}, 0));
    if (nin >= 2) ins.push_back(Laid(in[1], c.values[1], {3, m}, {0, 1}, 3));
    if (nin >= 3) ins.push_back(Laid(in[2], c.values[2], {2, 1, 1}, {1, 1, 1}, 1));
    RunAndCheck(ctx(), c.loop.op, ins, outputs({2, 3, m}), c.reference, c.tolerance,
                "3-D broadcast");
  }
}

}  // namespace npvk_test
