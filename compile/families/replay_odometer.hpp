// The loop nest the host replays of the standalone families walk (each
// family's *_replay.cpp): shared, so that a new family's replay (gather,
// sort, FFT) steps through strided operands the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace npvk {

// Visits every index of `shape` (row-major), giving each operand's element
// offset (strides[k][d] elements per step of dimension d).
template <class Visit>
inline void odometer(const std::vector<int64_t> &shape,
                     const std::vector<std::vector<int64_t>> &strides, size_t operands,
                     Visit &&visit) {
  std::vector<int64_t> index(shape.size(), 0), offset(operands, 0);
  for (int64_t e : shape)
    if (e == 0) return;
  while (true) {
    visit(offset);
    size_t d = shape.size();
    while (d > 0) {
      --d;
      for (size_t k = 0; k < operands; ++k) offset[k] += strides[k][d];
      if (++index[d] < shape[d]) break;
      for (size_t k = 0; k < operands; ++k) offset[k] -= strides[k][d] * shape[d];
      index[d] = 0;
      if (d == 0) return;
    }
    if (shape.empty()) return;
  }
}

}  // namespace npvk
