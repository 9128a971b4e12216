// Arithmetic ops against C++ references written from docs/ops.md (NumPy's loops). All of them
// are exact: docs/ops.md promises bit-identical results for everything but exp, log, power.
#include <cmath>

#include "op_case_test.hpp"
#include "reference_int.hpp"

namespace npvk_test {
namespace {

// References are instantiated for every dtype (VisitDtype), but only called for the loops
// docs/ops.md lists; the final `else` branches are the dtypes without a loop.

template <class T>
T Add(T a, T b) {
  if constexpr (kIsBool<T>)
    return a || b;
  else if constexpr (kIsInt<T>)
    return WrapAdd(a, b);
  else
    return a + b;
}

template <class T>
T Subtract(T a, T b) {
  if constexpr (kIsInt<T>)
    return WrapSub(a, b);
  else if constexpr (kIsFloat<T>)
    return a - b;
  else
    return T();
}

template <class T>
T Multiply(T a, T b) {
  if constexpr (kIsBool<T>)
    return a && b;
  else if constexpr (kIsInt<T>)
    return WrapMul(a, b);
  else
    return a * b;
}

// Integers are converted to float64 first (the "ii->d" loops).
template <class T>
auto TrueDivide(T a, T b) {
  if constexpr (kIsFloat<T>)
    return a / b;
  else
    return static_cast<double>(a) / static_cast<double>(b);
}

// NumPy's npy_divmod (npymath), step by step, in T's precision.
template <class T>
T NpyDivmod(T a, T b, T *modulus) {
  T mod = std::fmod(a, b);
  if (!b) {
    *modulus = mod;
    return a / b;
  }
  T div = (a - mod) / b;
  if (mod) {
    if (std::isless(b, T(0)) != std::isless(mod, T(0))) {
      mod += b;
      div -= T(1);
    }
  } else {
    mod = std::copysign(T(0), b);
  }
  T floordiv;
  if (div) {
    floordiv = std::floor(div);
    if (std::isgreater(div - floordiv, T(0.5))) floordiv += T(1);
  } else {
    floordiv = std::copysign(T(0), a / b);
  }
  *modulus = mod;
  return floordiv;
}

template <class T>
T FloorDivide(T a, T b) {
  if constexpr (kIsInt<T>) {
    if (b == 0) return 0;
    T q = TruncDiv(a, b);
    if constexpr (std::is_signed_v<T>) {
      if (TruncRem(a, b) != 0 && ((a < 0) != (b < 0))) --q;
    }
    return q;
  } else if constexpr (kIsFloat<T>) {
    if (!b) return a / b;
    T mod;
    return NpyDivmod(a, b, &mod);
  } else {
    return T();
  }
}

template <class T>
T Remainder(T a, T b) {
  if constexpr (kIsInt<T>) {
    if (b == 0) return 0;
    T r = TruncRem(a, b);
    if constexpr (std::is_signed_v<T>) {
      if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    }
    return r;
  } else if constexpr (kIsFloat<T>) {
    if (!b) return std::fmod(a, b);
    T mod;
    NpyDivmod(a, b, &mod);
    return mod;
  } else {
    return T();
  }
}

template <class T>
T Fmod(T a, T b) {
  if constexpr (kIsInt<T>)
    return b == 0 ? T(0) : TruncRem(a, b);
  else if constexpr (kIsFloat<T>)
    return std::fmod(a, b);
  else
    return T();
}

template <class T>
T Negative(T a) {
  if constexpr (kIsInt<T>)
    return WrapSub<T>(0, a);
  else if constexpr (kIsFloat<T>)
    return -a;
  else
    return T();
}

template <class T>
T Absolute(T a) {
  if constexpr (kIsInt<T> && std::is_signed_v<T>)
    return a < 0 ? WrapSub<T>(0, a) : a;
  else if constexpr (kIsFloat<T>)
    return std::fabs(a);
  else
    return a;  // unsigned and bool
}

template <class T>
T Square(T a) {
  return Multiply(a, a);
}

template <class Fn>
void AddBinary(std::vector<OpCase> &cases, npvk_op op, Fn fn) {
  AddCases(cases, op, [&](const Loop &, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    using R = decltype(fn(T(), T()));
    return OpCase{{},
                  MakeElementFn<R, T, T>([fn](T a, T b) { return fn(a, b); }),
                  Exact(),
                  BinaryValues<T>(rng)};
  });
}

template <class Fn>
void AddUnary(std::vector<OpCase> &cases, npvk_op op, Fn fn) {
  AddCases(cases, op, [&](const Loop &, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    return OpCase{
        {}, MakeElementFn<T, T>([fn](T a) { return fn(a); }), Exact(), UnaryValues<T>(rng)};
  });
}

// divmod: floor_divide and remainder of one pair, as NumPy's divmod loops compute them.
void AddDivmod(std::vector<OpCase> &cases) {
  AddCases(cases, NPVK_OP_DIVMOD, [&](const Loop &, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    ElementFn ref = [](const uint8_t *const *in, uint8_t *const *out) {
      const T a = Load<T>(in[0]), b = Load<T>(in[1]);
      Store<T>(out[0], FloorDivide(a, b));
      Store<T>(out[1], Remainder(a, b));
    };
    return OpCase{{}, ref, Exact(), BinaryValues<T>(rng)};
  });
}

// Generic lambdas so one object serves every dtype.
#define NPVK_REF2(F) [](auto a, auto b) { return F(a, b); }
#define NPVK_REF1(F) [](auto a) { return F(a); }

}  // namespace

std::vector<OpCase> ArithCases() {
  std::vector<OpCase> cases;
  AddBinary(cases, NPVK_OP_ADD, NPVK_REF2(Add));
  AddBinary(cases, NPVK_OP_SUBTRACT, NPVK_REF2(Subtract));
  AddBinary(cases, NPVK_OP_MULTIPLY, NPVK_REF2(Multiply));
  AddBinary(cases, NPVK_OP_TRUE_DIVIDE, NPVK_REF2(TrueDivide));
  AddBinary(cases, NPVK_OP_FLOOR_DIVIDE, NPVK_REF2(FloorDivide));
  AddBinary(cases, NPVK_OP_REMAINDER, NPVK_REF2(Remainder));
  AddBinary(cases, NPVK_OP_FMOD, NPVK_REF2(Fmod));
  AddDivmod(cases);
  AddUnary(cases, NPVK_OP_NEGATIVE, NPVK_REF1(Negative));
  AddUnary(cases, NPVK_OP_POSITIVE, [](auto a) { return a; });
  AddUnary(cases, NPVK_OP_ABSOLUTE, NPVK_REF1(Absolute));
  AddUnary(cases, NPVK_OP_FABS, NPVK_REF1(Absolute));
  AddUnary(cases, NPVK_OP_SQUARE, NPVK_REF1(Square));
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Arith, OpCaseTest, ::testing::ValuesIn(ArithCases()), OpCaseName);

}  // namespace npvk_test
