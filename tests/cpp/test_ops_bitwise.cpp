// Bitwise ops and shifts against C++ references; exact. Shift counts of the edge values cover
// width - 1, width, width + 1, negative counts and MIN/MAX (docs/ops.md defines them all).
#include "op_case_test.hpp"
#include "reference_int.hpp"

namespace npvk_test {
namespace {

template <class T>
constexpr int kBits = static_cast<int>(sizeof(T) * 8);

// True when `count` is a usable shift count for T: not negative and below the width.
template <class T>
bool InRangeShift(T count) {
  if constexpr (std::is_signed_v<T>) {
    if (count < 0) return false;
  }
  return static_cast<uint64_t>(count) < static_cast<uint64_t>(kBits<T>);
}

// a << b, 0 when b is negative or at least the width; signed values shift as their bits.
template <class T>
T LeftShift(T a, T b) {
  if constexpr (kIsInt<T>) {
    if (!InRangeShift(b)) return 0;
    return static_cast<T>(static_cast<WrapType<T>>(a) << b);
  } else {
    return T();
  }
}

// a >> b, arithmetic for signed; out-of-range counts give -1 for negative a, else 0.
template <class T>
T RightShift(T a, T b) {
  if constexpr (kIsInt<T>) {
    if (!InRangeShift(b)) return (std::is_signed_v<T> && a < 0) ? T(-1) : T(0);
    return static_cast<T>(a >> b);
  } else {
    return T();
  }
}

template <class T>
T Invert(T a) {
  if constexpr (kIsBool<T>)
    return !a;
  else if constexpr (kIsInt<T>)
    return static_cast<T>(~a);
  else
    return T();
}

// bool's bitwise ops are its logical ones on the 0/1 bytes.
template <class T>
T BitAnd(T a, T b) {
  if constexpr (kIsFloat<T>)
    return T();
  else
    return static_cast<T>(a & b);
}
template <class T>
T BitOr(T a, T b) {
  if constexpr (kIsFloat<T>)
    return T();
  else
    return static_cast<T>(a | b);
}
template <class T>
T BitXor(T a, T b) {
  if constexpr (kIsFloat<T>)
    return T();
  else
    return static_cast<T>(a ^ b);
}

template <class Fn>
void AddBinary(std::vector<OpCase> &cases, npvk_op op, Fn fn) {
  AddCases(cases, op, [&](const Loop &, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    return OpCase{{},
                  MakeElementFn<T, T, T>([fn](T a, T b) { return fn(a, b); }),
                  Exact(),
                  BinaryValues<T>(rng)};
  });
}

// Shift counts: edge pairs, random pairs, and every count from -2 to width + 2 on random values.
template <class T>
std::vector<Bytes> ShiftValues(std::mt19937 &rng) {
  std::vector<Bytes> v = BinaryValues<T>(rng);
  std::vector<T> a = FromBytes<T>(v[0]);
  std::vector<T> b = FromBytes<T>(v[1]);
  for (int count = std::is_signed_v<T> ? -2 : 0; count <= kBits<T> + 2; ++count) {
    for (int i = 0; i < 8; ++i) {
      a.push_back(RandomValue<T>(rng));
      b.push_back(static_cast<T>(count));
    }
  }
  return {ToBytes(a), ToBytes(b)};
}

}  // namespace

std::vector<OpCase> BitwiseCases() {
  std::vector<OpCase> cases;
  AddBinary(cases, NPVK_OP_BITWISE_AND, [](auto a, auto b) { return BitAnd(a, b); });
  AddBinary(cases, NPVK_OP_BITWISE_OR, [](auto a, auto b) { return BitOr(a, b); });
  AddBinary(cases, NPVK_OP_BITWISE_XOR, [](auto a, auto b) { return BitXor(a, b); });
  AddCases(cases, NPVK_OP_INVERT, [](const Loop &, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    return OpCase{{}, MakeElementFn<T, T>(Invert<T>), Exact(), UnaryValues<T>(rng)};
  });
  AddCases(cases, NPVK_OP_LEFT_SHIFT, [](const Loop &, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    return OpCase{{}, MakeElementFn<T, T, T>(LeftShift<T>), Exact(), ShiftValues<T>(rng)};
  });
  AddCases(cases, NPVK_OP_RIGHT_SHIFT, [](const Loop &, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    return OpCase{{}, MakeElementFn<T, T, T>(RightShift<T>), Exact(), ShiftValues<T>(rng)};
  });
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Bitwise, OpCaseTest, ::testing::ValuesIn(BitwiseCases()), OpCaseName);

}  // namespace npvk_test
