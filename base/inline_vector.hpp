// A vector that holds its first N elements inline, and whose move is
// declared noexcept. The recording path keeps per-operand lists (views,
// strides) in every queued op: inline they cost no allocation per op, and a
// noexcept move lets the queue relocate its ops rather than copy them.
//
// Boost's small_vector does not declare its move noexcept (Boost 1.74 and
// 1.83, Debian 12 and 13), though it cannot throw when its elements move
// without throwing: it steals the heap storage, or moves the inline elements
// into inline storage of the same capacity.
#pragma once

#include <boost/container/small_vector.hpp>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace npvk {

template <class T, std::size_t N>
class InlineVector : public boost::container::small_vector<T, N> {
  using Base = boost::container::small_vector<T, N>;
  static_assert(std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>,
                "moving an InlineVector moves its elements");

 public:
  using Base::Base;
  InlineVector() = default;
  InlineVector(const InlineVector &) = default;
  InlineVector &operator=(const InlineVector &) = default;
  InlineVector(InlineVector &&other) noexcept : Base(std::move(static_cast<Base &>(other))) {}
  InlineVector &operator=(InlineVector &&other) noexcept {
    Base::operator=(std::move(static_cast<Base &>(other)));
    return *this;
  }
};

}  // namespace npvk
