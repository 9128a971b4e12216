// Layouts and sizes on a few ops whose references are trivial, so that a failure here points
// at indexing rather than arithmetic: sizes around the workgroup size, strides, negative
// strides, broadcasting, byte offsets, ranks up to NPVK_MAX_DIMS, and in-place updates.
#include <random>

#include "npvk_test_support.hpp"
#include "op_runner.hpp"
#include "reference_int.hpp"
#include "values.hpp"

namespace npvk_test {
namespace {

class Layouts : public NpvkTest {};

Bytes RandomBytes(npvk_dtype dtype, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  return VisitDtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return ToBytes(RandomValues<T>(rng, static_cast<size_t>(n)));
  });
}

ElementFn AddRef(npvk_dtype dtype) {
  return VisitDtype(dtype, [](auto tag) -> ElementFn {
    using T = typename decltype(tag)::type;
    return MakeElementFn<T, T, T>([](T a, T b) -> T {
      if constexpr (kIsBool<T>)
        return a || b;
      else if constexpr (kIsInt<T>)
        return WrapAdd(a, b);
      else
        return a + b;
    });
  });
}

ElementFn WhereRef(npvk_dtype dtype) {
  return VisitDtype(dtype, [](auto tag) -> ElementFn {
    using T = typename decltype(tag)::type;
    return MakeElementFn<T, bool, T, T>([](bool c, T x, T y) { return c ? x : y; });
  });
}

// The C++ conversion is the reference for casts between integers and to floats.
ElementFn CastRef(npvk_dtype from, npvk_dtype to) {
  return VisitDtype(from, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    return VisitDtype(to, [](auto to_tag) -> ElementFn {
      using To = typename decltype(to_tag)::type;
      return MakeElementFn<To, From>([](From x) -> To {
        if constexpr (kIsBool<To>)
          return x != 0;
        else
          return static_cast<To>(x);
      });
    });
  });
}

void CheckAdd(npvk_context ctx, const std::vector<Operand> &inputs,
              const std::vector<Operand> &outputs, const std::string &label) {
  RunAndCheck(ctx, NPVK_OP_ADD, inputs, outputs, AddRef(inputs[0].dtype), Exact(), label);
}

// Element counts around multiples of typical workgroup sizes (64, 128, 256), and one large.
const int64_t kSizes[] = {0, 1, 7, 127, 129, 1000, 100003};

TEST_F(Layouts, SizesContiguous) {
  for (npvk_dtype d : TestedDtypes()) {
    for (int64_t n : kSizes) {
      const std::string label = std::string(DtypeName(d)) + " n=" + std::to_string(n);
      CheckAdd(ctx(), {Dense(d, RandomBytes(d, n, 1)), Dense(d, RandomBytes(d, n, 2))},
               {Output(d, {n})}, label);
    }
  }
}

TEST_F(Layouts, SizesWithNarrowAndWideTypes) {
  // Input and output of different itemsizes, where a kernel indexing both with one byte
  // offset, or packing 1-byte elements into words, goes wrong.
  const std::pair<npvk_dtype, npvk_dtype> pairs[] = {{NPVK_INT8, NPVK_FLOAT64},
                                                     {NPVK_UINT16, NPVK_INT64},
                                                     {NPVK_INT64, NPVK_INT8},
                                                     {NPVK_BOOL, NPVK_FLOAT32},
                                                     {NPVK_INT32, NPVK_BOOL}};
  for (auto [from, to] : pairs) {
    for (int64_t n : kSizes) {
      RunAndCheck(ctx(), NPVK_OP_CAST, {Dense(from, RandomBytes(from, n, 3))}, {Output(to, {n})},
                  CastRef(from, to), Exact(),
                  std::string(DtypeName(from)) + "->" + DtypeName(to) + " n=" + std::to_string(n));
    }
  }
}

TEST_F(Layouts, SizesWhere) {
  for (npvk_dtype d : {NPVK_INT8, NPVK_FLOAT64}) {
    for (int64_t n : kSizes) {
      RunAndCheck(ctx(), NPVK_OP_WHERE,
                  {Dense(NPVK_BOOL, RandomBytes(NPVK_BOOL, n, 4)), Dense(d, RandomBytes(d, n, 5)),
                   Dense(d, RandomBytes(d, n, 6))},
                  {Output(d, {n})}, WhereRef(d), Exact(),
                  std::string(DtypeName(d)) + " n=" + std::to_string(n));
    }
  }
}

TEST_F(Layouts, Strided) {
  for (npvk_dtype d : TestedDtypes()) {
    const std::string name = DtypeName(d);
    for (int64_t n : {int64_t{7}, int64_t{129}, int64_t{1000}}) {
      const Bytes a = RandomBytes(d, n, 7);
      const Bytes b = RandomBytes(d, n, 8);
      const std::string size = " n=" + std::to_string(n);
      CheckAdd(ctx(), {Spaced(d, a, 2, 0), Spaced(d, b, 3, 0)}, {Output(d, {n})},
               name + " every 2nd + every 3rd" + size);
      CheckAdd(ctx(), {Dense(d, a), Dense(d, b)}, {OutputLaid(d, {n}, {2}, 0)},
               name + " into every 2nd" + size);
      CheckAdd(ctx(), {Spaced(d, a, -1, 0), Spaced(d, b, -2, 1)},
               {OutputLaid(d, {n}, {-3}, 3 * (n - 1) + 1)}, name + " negative strides" + size);
    }
  }
}

// Strided loops split the element index into coordinates with a multiply by
// each extent's magic number and a shift, not a division
// (compile/families/elementwise/elementwise_glsl.cpp, division_magic): extents that are 2, odd,
// prime, powers of two, near 2^16 and near 2^20, on a column-major input so that no dimensions
// merge.
TEST_F(Layouts, IndexSplitByMagicNumbers) {
  const npvk_dtype d = NPVK_INT32;
  const std::vector<std::pair<int64_t, int64_t>> shapes = {
      {3, 2}, {5, 3}, {7, 7}, {2, 641}, {3, 4096}, {5, 65537}, {129, 1000}, {2, 1048573}};
  for (auto [rows, cols] : shapes) {
    const Bytes a = RandomBytes(d, rows * cols, 11);
    const Bytes b = RandomBytes(d, rows * cols, 12);
    const std::string label = std::to_string(rows) + "x" + std::to_string(cols);
    CheckAdd(ctx(), {Laid(d, a, {rows, cols}, {1, rows}, 0), Dense(d, b, {rows, cols})},
             {Output(d, {rows, cols})}, label + " column-major + row-major");
    CheckAdd(ctx(), {Laid(d, a, {cols, rows}, {1, cols}, 0), Dense(d, b, {cols, rows})},
             {Output(d, {cols, rows})}, label + " transposed");
  }
}

TEST_F(Layouts, ByteOffsets) {
  for (npvk_dtype d : TestedDtypes()) {
    const std::string name = DtypeName(d);
    const int64_t n = 129;
    // Offsets of 1 and 3 elements: for 1-byte types not a multiple of 4 bytes, for 8-byte
    // types not a multiple of 16.
    CheckAdd(
        ctx(),
        {Laid(d, RandomBytes(d, n, 9), {n}, {1}, 1), Laid(d, RandomBytes(d, n, 10), {n}, {3}, 3)},
        {OutputLaid(d, {n}, {1}, 5)}, name + " offsets 1, 3, 5");
    CheckAdd(ctx(),
             {Laid(d, RandomBytes(d, n, 11), {n}, {-3}, 3 * (n - 1) + 2),
              Laid(d, RandomBytes(d, n, 12), {n}, {1}, 7)},
             {OutputLaid(d, {n}, {5}, 1)}, name + " odd strides with offsets");
  }
}

TEST_F(Layouts, Broadcast) {
  for (npvk_dtype d : TestedDtypes()) {
    const std::string name = DtypeName(d);
    const int64_t r = 5, c = 131;
    const Bytes matrix = RandomBytes(d, r * c, 13);
    const Bytes row = RandomBytes(d, c, 14);
    const Bytes col = RandomBytes(d, r, 15);
    CheckAdd(ctx(), {Dense(d, matrix, {r, c}), Dense(d, row, {c})}, {Output(d, {r, c})},
             name + " (r,c) + (c,) missing dim");
    CheckAdd(ctx(), {Dense(d, row, {1, c}), Dense(d, matrix, {r, c})}, {Output(d, {r, c})},
             name + " (1,c) + (r,c) size-1 dim");
    CheckAdd(ctx(), {Dense(d, matrix, {r, c}), Dense(d, col, {r, 1})}, {Output(d, {r, c})},
             name + " (r,c) + (r,1)");
    CheckAdd(ctx(), {Laid(d, row, {r, c}, {0, 1}, 0), Laid(d, col, {r, c}, {1, 0}, 0)},
             {Output(d, {r, c})}, name + " explicit stride-0 row and column");
    CheckAdd(ctx(), {Dense(d, col, {r, 1, 1}), Dense(d, row, {1, 3, c / 3})},
             {Output(d, {r, 3, c / 3})}, name + " (r,1,1) + (1,3,k) outer");
    CheckAdd(ctx(), {Dense(d, matrix, {2, 3, 4}), Dense(d, row, {3, 1})}, {Output(d, {2, 3, 4})},
             name + " (2,3,4) + (3,1)");
    CheckAdd(ctx(), {Dense(d, matrix, {r, c}), Scalar(d, row)}, {Output(d, {r, c})},
             name + " matrix + scalar view");
    CheckAdd(ctx(), {Scalar(d, row), Dense(d, matrix, {r, c})}, {Output(d, {r, c})},
             name + " scalar view + matrix");
    CheckAdd(ctx(), {Scalar(d, row), Scalar(d, col)}, {Output(d, {r, c})},
             name + " scalar + scalar into a matrix");
    // 0-d views of a buffer: as an input broadcast to a vector, and as an output.
    CheckAdd(ctx(), {Laid(d, row, {}, {}, 2), Dense(d, col)}, {Output(d, {r})},
             name + " 0-d buffer view + vector");
    CheckAdd(ctx(), {Laid(d, row, {}, {}, 1), Scalar(d, col)}, {OutputLaid(d, {}, {}, 3)},
             name + " 0-d output");
  }
}

TEST_F(Layouts, LargeBroadcast) {
  for (npvk_dtype d : {NPVK_INT8, NPVK_FLOAT32, NPVK_INT64}) {
    CheckAdd(ctx(),
             {Dense(d, RandomBytes(d, 1000 * 101, 16), {1000, 101}),
              Dense(d, RandomBytes(d, 101, 17), {101})},
             {Output(d, {1000, 101})}, std::string(DtypeName(d)) + " (1000,101) + (101,)");
  }
}

// More elements than one dispatch of 65535 workgroups of 128 covers, so a kernel must loop.
TEST_F(Layouts, MoreElementsThanOneDispatch) {
  const int64_t n = int64_t{65535} * 128 + 777;
  const npvk_dtype d = NPVK_INT8;
  const Bytes a = RandomBytes(d, n, 24);
  const Bytes b = RandomBytes(d, n, 25);
  CheckAdd(ctx(), {Dense(d, a), Dense(d, b)}, {Output(d, {n})}, "int8 contiguous");
  CheckAdd(ctx(), {Laid(d, a, {3, n / 3}, {-(n / 3), 1}, 2 * (n / 3)), Dense(d, b, {n / 3})},
           {Output(d, {3, n / 3})}, "int8 2-D with a reversed axis and a broadcast row");
}

TEST_F(Layouts, NonContiguousMultiDim) {
  for (npvk_dtype d : TestedDtypes()) {
    const std::string name = DtypeName(d);
    const Bytes a = RandomBytes(d, 4 * 6 * 9, 18);
    const Bytes b = RandomBytes(d, 4 * 6 * 9, 19);
    // A transposed 2-D array: a (9, 6) buffer read as (6, 9) with strides (1, 6).
    CheckAdd(ctx(), {Laid(d, a, {6, 9}, {1, 6}, 0), Dense(d, b, {6, 9})}, {Output(d, {6, 9})},
             name + " transposed 2-D");
    // a[::2, ::-3] of a (8, 12) array, into a transposed output.
    CheckAdd(ctx(), {Laid(d, a, {4, 4}, {24, -3}, 11), Laid(d, b, {4, 4}, {4, 1}, 0)},
             {OutputLaid(d, {4, 4}, {1, 4}, 0)}, name + " sliced 2-D into transposed output");
    // Every permutation of a 3-D array's axes.
    const int64_t shape[] = {3, 4, 5};
    const int64_t perms[][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (const auto &p : perms) {
      const std::vector<int64_t> base = {shape[p[0]], shape[p[1]], shape[p[2]]};
      const std::vector<int64_t> base_strides = ContiguousStrides(base);
      std::vector<int64_t> strides(3);
      for (int i = 0; i < 3; ++i) strides[p[i]] = base_strides[i];
      CheckAdd(ctx(), {Laid(d, a, {3, 4, 5}, strides, 0), Laid(d, b, {3, 4, 5}, {-20, 5, -1}, 59)},
               {Output(d, {3, 4, 5})},
               name + " 3-D axes permuted " + std::to_string(p[0]) + std::to_string(p[1]) +
                   std::to_string(p[2]) + " + reversed");
    }
  }
}

TEST_F(Layouts, MaxRank) {
  // NPVK_MAX_DIMS dimensions, mostly of size 1, with four of size 2 or 3 spread out.
  std::vector<int64_t> shape(NPVK_MAX_DIMS, 1);
  shape[0] = 2;
  shape[9] = 3;
  shape[20] = 2;
  shape[NPVK_MAX_DIMS - 1] = 3;
  std::vector<int64_t> reversed = ContiguousStrides(shape);
  for (int64_t &s : reversed) s = -s;
  for (npvk_dtype d : {NPVK_INT8, NPVK_FLOAT64}) {
    const Bytes a = RandomBytes(d, 36, 20);
    const Bytes b = RandomBytes(d, 36, 21);
    std::vector<int64_t> row(shape.begin() + 10, shape.end());
    CheckAdd(ctx(), {Laid(d, a, shape, reversed, 35), Dense(d, b, row)}, {Output(d, shape)},
             std::string(DtypeName(d)) + " 32-D reversed + 22-D broadcast");
  }
}

TEST_F(Layouts, InPlace) {
  for (npvk_dtype d : TestedDtypes()) {
    const std::string name = DtypeName(d);
    const int64_t n = 1000;
    const Bytes a = RandomBytes(d, n, 22);
    const Bytes b = RandomBytes(d, n, 23);
    CheckAdd(ctx(), {Dense(d, a), Dense(d, b)}, {InPlace(0)}, name + " a += b (same handle)");
    CheckAdd(ctx(), {Dense(d, a), Dense(d, b)}, {InPlace(1, false)},
             name + " b = a + b (second view of b's buffer)");
    CheckAdd(ctx(), {Spaced(d, a, -2, 1), Scalar(d, b)}, {InPlace(0)},
             name + " reversed strided view += scalar");
    CheckAdd(ctx(), {Dense(d, a, {10, 100}), Dense(d, b, {100})}, {InPlace(0, false)},
             name + " matrix += broadcast row");
  }
}

}  // namespace
}  // namespace npvk_test
