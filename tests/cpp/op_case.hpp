// One documented loop with its reference and input values; the test_ops_*.cpp files build these
// and op_case_test.cpp runs each in several layouts.
#ifndef NPVK_TESTS_CPP_OP_CASE_HPP
#define NPVK_TESTS_CPP_OP_CASE_HPP

#include <functional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "op_runner.hpp"
#include "op_table.hpp"
#include "values.hpp"

namespace npvk_test {

struct OpCase {
  Loop loop;
  ElementFn reference;
  Tolerance tolerance;
  // One entry per input; element i of every entry together form one input tuple.
  std::vector<Bytes> values;
};

inline void PrintTo(const OpCase &c, std::ostream *os) {
  *os << LoopName(c.loop);
}

// The cases of each test_ops_*.cpp, one per documented loop of its ops.
std::vector<OpCase> ArithCases();
std::vector<OpCase> MathCases();
std::vector<OpCase> MathExtCases();
std::vector<OpCase> BitwiseCases();
std::vector<OpCase> CompareCases();
std::vector<OpCase> WhereCases();
std::vector<OpCase> CastCases();
std::vector<OpCase> FloatPartsCases();

// How many random tuples a case adds to its edge values.
constexpr size_t kRandomUnary = 1000;
constexpr size_t kRandomBinary = 500;

// Edge values then random ones, as the values of a unary case.
template <class T>
std::vector<Bytes> UnaryValues(std::mt19937 &rng, std::vector<T> edges = EdgeValues<T>()) {
  std::vector<T> v = std::move(edges);
  for (size_t i = 0; i < kRandomUnary; ++i) v.push_back(RandomValue<T>(rng));
  return {ToBytes(v)};
}

// Every pair of edge values, then random pairs.
template <class A, class B = A>
std::vector<Bytes> BinaryValues(std::mt19937 &rng, const std::vector<A> &edges_a = EdgeValues<A>(),
                                const std::vector<B> &edges_b = EdgeValues<B>()) {
  std::vector<A> a;
  std::vector<B> b;
  for (A x : edges_a) {
    for (B y : edges_b) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  for (size_t i = 0; i < kRandomBinary; ++i) {
    a.push_back(RandomValue<A>(rng));
    b.push_back(RandomValue<B>(rng));
  }
  return {ToBytes(a), ToBytes(b)};
}

// For each documented loop of `op`, calls make(loop, rng, Tag<T>) with T the C++ type of the
// loop's dtype number `key` (the first input unless told) and collects the case it returns.
// `rng` is seeded from the loop's name, so every case's values are the same in every run.
template <class Make>
void AddCases(std::vector<OpCase> &cases, npvk_op op, Make make, size_t key = 0) {
  for (const Loop &loop : DocumentedLoops(op)) {
    std::mt19937 rng(SeedFor(LoopName(loop)));
    OpCase c = VisitDtype(loop.dtypes[key], [&](auto tag) { return make(loop, rng, tag); });
    c.loop = loop;
    cases.push_back(std::move(c));
  }
}

}  // namespace npvk_test

#endif  // NPVK_TESTS_CPP_OP_CASE_HPP
