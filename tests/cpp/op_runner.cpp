#include "op_runner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "npvk_test_support.hpp"

namespace npvk_test {
namespace {

constexpr int kMaxReported = 8;

// Visits every index of `shape` in C order; `visit` gets the multi-index.
template <class F>
void ForEachIndex(const std::vector<int64_t> &shape, F visit) {
  const int64_t n = ElementCount(shape);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    visit(index);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

// The element offset of `index` (an index of the output shape) in an operand that broadcasts
// to it: dimensions align at the end, and size-1 and missing dimensions repeat.
int64_t ElementOffset(const Operand &op, const std::vector<int64_t> &index) {
  if (op.scalar) return 0;
  int64_t offset = op.offset;
  const size_t skip = index.size() - op.shape.size();
  for (size_t d = 0; d < op.shape.size(); ++d) {
    if (op.shape[d] != 1) offset += index[skip + d] * op.strides[d];
  }
  return offset;
}

std::string FormatIndex(const std::vector<int64_t> &index) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < index.size(); ++i) s << (i ? ", " : "") << index[i];
  s << "]";
  return s.str();
}

struct DeviceOperand {
  Buffer buffer;
  View view;
};

DeviceOperand Upload(npvk_context ctx, const Operand &op) {
  DeviceOperand d;
  if (op.scalar) {
    npvk_view v{0};
    EXPECT_TRUE(IsOk(npvk_view_create_scalar(ctx, op.dtype, op.storage.data(), &v),
                     "npvk_view_create_scalar"));
    d.view = View(v);
    return d;
  }
  d.buffer = MakeBuffer(ctx, op.storage);
  d.view = MakeView(d.buffer, op.dtype, op.shape, op.strides, op.offset);
  return d;
}

}  // namespace

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= std::max<int64_t>(shape[d], 1);
  }
  return strides;
}

int64_t ElementCount(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Operand Laid(npvk_dtype dtype, const Bytes &values, const std::vector<int64_t> &shape,
             const std::vector<int64_t> &strides, int64_t offset, int64_t pad) {
  const size_t itemsize = Itemsize(dtype);
  const int64_t count = ElementCount(shape);
  int64_t lowest = offset;
  int64_t highest = offset;
  if (count > 0) {
    for (size_t d = 0; d < shape.size(); ++d) {
      const int64_t reach = (shape[d] - 1) * strides[d];
      (reach < 0 ? lowest : highest) += reach;
    }
  }
  if (lowest < 0) throw std::logic_error("test bug: view reaches before its buffer");
  Operand op;
  op.dtype = dtype;
  op.shape = shape;
  op.strides = strides;
  op.offset = offset;
  op.storage.assign(static_cast<size_t>(highest + 1 + pad) * itemsize, kFiller);
  const size_t nvalues = values.size() / itemsize;
  if (count > 0 && nvalues == 0) throw std::logic_error("test bug: no values for a view");
  int64_t i = 0;
  ForEachIndex(shape, [&](const std::vector<int64_t> &index) {
    const uint8_t *src = values.data() + (static_cast<size_t>(i++) % nvalues) * itemsize;
    std::copy(src, src + itemsize, op.storage.data() + ElementOffset(op, index) * itemsize);
  });
  return op;
}

Operand Dense(npvk_dtype dtype, const Bytes &values, std::vector<int64_t> shape) {
  if (shape.empty()) shape = {static_cast<int64_t>(values.size() / Itemsize(dtype))};
  return Laid(dtype, values, shape, ContiguousStrides(shape), 0, 0);
}

Operand Spaced(npvk_dtype dtype, const Bytes &values, int64_t step, int64_t pad) {
  const int64_t n = static_cast<int64_t>(values.size() / Itemsize(dtype));
  const int64_t offset = step >= 0 ? pad : pad + std::max<int64_t>(n - 1, 0) * -step;
  return Laid(dtype, values, {n}, {step}, offset, pad);
}

Operand Scalar(npvk_dtype dtype, const Bytes &values) {
  Operand op;
  op.dtype = dtype;
  op.scalar = true;
  op.storage.assign(values.begin(), values.begin() + Itemsize(dtype));
  return op;
}

Operand Output(npvk_dtype dtype, const std::vector<int64_t> &shape) {
  return OutputLaid(dtype, shape, ContiguousStrides(shape), 0, 1);
}

Operand OutputLaid(npvk_dtype dtype, const std::vector<int64_t> &shape,
                   const std::vector<int64_t> &strides, int64_t offset, int64_t pad) {
  // Filler values everywhere: the view's own elements too, so an element the op skips shows.
  return Laid(dtype, Bytes(Itemsize(dtype), kFiller), shape, strides, offset, pad);
}

Operand InPlace(int input, bool same_handle) {
  Operand op;
  op.alias_of = input;
  op.alias_same_handle = same_handle;
  return op;
}

void RunAndCheck(npvk_context ctx, npvk_op op, const std::vector<Operand> &inputs,
                 const std::vector<Operand> &outputs_in, const ElementFn &reference,
                 const Tolerance &tolerance, const std::string &label) {
  SCOPED_TRACE(label);
  std::vector<Operand> outputs = outputs_in;
  for (Operand &out : outputs) {
    if (out.alias_of >= 0) {
      const bool same = out.alias_same_handle;
      const int of = out.alias_of;
      out = inputs.at(of);
      out.alias_of = of;
      out.alias_same_handle = same;
    }
  }
  const std::vector<int64_t> &shape = outputs.at(0).shape;

  // Device side.
  std::vector<DeviceOperand> dev_in;
  std::vector<npvk_view> in_views;
  for (const Operand &in : inputs) {
    dev_in.push_back(Upload(ctx, in));
    in_views.push_back(dev_in.back().view.get());
  }
  std::vector<DeviceOperand> dev_out;
  std::vector<npvk_view> out_views;
  for (const Operand &out : outputs) {
    DeviceOperand d;
    if (out.alias_of < 0) {
      d = Upload(ctx, out);
      out_views.push_back(d.view.get());
    } else if (out.alias_same_handle) {
      out_views.push_back(in_views[out.alias_of]);
    } else {
      d.view = MakeView(dev_in[out.alias_of].buffer, out.dtype, out.shape, out.strides, out.offset);
      out_views.push_back(d.view.get());
    }
    dev_out.push_back(std::move(d));
  }
  npvk_status status = npvk_apply(ctx, op, static_cast<uint32_t>(in_views.size()), in_views.data(),
                                  static_cast<uint32_t>(out_views.size()), out_views.data());
  ASSERT_TRUE(IsOk(status, "npvk_apply"));
  std::vector<Bytes> got;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const Buffer &b =
        outputs[j].alias_of < 0 ? dev_out[j].buffer : dev_in[outputs[j].alias_of].buffer;
    got.push_back(ReadBytes(b));
    ASSERT_EQ(got.back().size(), outputs[j].storage.size());
  }

  // Reference side, compared element by element as it goes.
  std::vector<std::vector<bool>> covered;
  std::vector<Bytes> expected;
  for (const Operand &out : outputs) {
    covered.emplace_back(out.storage.size() / Itemsize(out.dtype), false);
    expected.push_back(out.storage);
  }
  std::vector<const uint8_t *> in_ptrs(inputs.size());
  std::vector<uint8_t *> out_ptrs(outputs.size());
  int64_t mismatches = 0;
  std::ostringstream report;
  ForEachIndex(shape, [&](const std::vector<int64_t> &index) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      in_ptrs[k] =
          inputs[k].storage.data() + ElementOffset(inputs[k], index) * Itemsize(inputs[k].dtype);
    }
    for (size_t j = 0; j < outputs.size(); ++j) {
      out_ptrs[j] =
          expected[j].data() + ElementOffset(outputs[j], index) * Itemsize(outputs[j].dtype);
    }
    reference(in_ptrs.data(), out_ptrs.data());
    for (size_t j = 0; j < outputs.size(); ++j) {
      const size_t itemsize = Itemsize(outputs[j].dtype);
      const int64_t element = ElementOffset(outputs[j], index);
      covered[j][element] = true;
      const uint8_t *want = expected[j].data() + element * itemsize;
      const uint8_t *have = got[j].data() + element * itemsize;
      if (ElementsMatch(outputs[j].dtype, want, have, tolerance)) continue;
      if (++mismatches > kMaxReported) continue;
      report << "\n  output " << j << " at " << FormatIndex(index) << ": inputs (";
      for (size_t k = 0; k < inputs.size(); ++k) {
        report << (k ? ", " : "") << FormatElement(inputs[k].dtype, in_ptrs[k]);
      }
      report << ") expected " << FormatElement(outputs[j].dtype, want) << " got "
             << FormatElement(outputs[j].dtype, have);
    }
  });
  if (mismatches > 0) {
    ADD_FAILURE() << mismatches << " of " << ElementCount(shape)
                  << " elements differ from the reference (first " << kMaxReported
                  << "):" << report.str();
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    const size_t itemsize = Itemsize(outputs[j].dtype);
    int64_t stray = 0;
    int64_t first = -1;
    for (size_t e = 0; e < covered[j].size(); ++e) {
      if (covered[j][e]) continue;
      if (std::equal(got[j].begin() + e * itemsize, got[j].begin() + (e + 1) * itemsize,
                     outputs[j].storage.begin() + e * itemsize)) {
        continue;
      }
      if (first < 0) first = static_cast<int64_t>(e);
      ++stray;
    }
    if (stray > 0) {
      ADD_FAILURE() << "output " << j << ": " << stray
                    << " buffer element(s) outside the output view changed, first at element "
                    << first;
    }
  }
}

}  // namespace npvk_test
