// Host replay of a matrix product after a failed flush (matmul_replay.hpp).
#include "compile/families/matmul/matmul_replay.hpp"

#include <type_traits>
#include <vector>

#include "compile/families/replay_odometer.hpp"

namespace npvk {
namespace {

// Integers multiply and add in uint64_t: wrap-around modulo 2^64, then the
// truncation to T wraps as NumPy's loop does in T (and nothing is promoted
// to a signed int, where overflow would be undefined).
template <class T, bool = std::is_integral_v<T>>
struct Accumulator {
  using type = T;
};
template <class T>
struct Accumulator<T, true> {
  using type = uint64_t;
};

template <class T>
void matmul_typed(const MatmulOp &op, const uint8_t *a, const uint8_t *b, uint8_t *c) {
  using Acc = typename Accumulator<T>::type;
  const T *A = reinterpret_cast<const T *>(a), *B = reinterpret_cast<const T *>(b);
  T *C = reinterpret_cast<T *>(c);
  std::vector<int64_t> shape = op.batch_shape;
  std::vector<std::vector<int64_t>> strides = op.batch_strides;
  if (strides.size() < 3) strides.assign(3, std::vector<int64_t>(shape.size(), 0));
  odometer(shape, strides, 3, [&](const std::vector<int64_t> &at) {
    for (int64_t i = 0; i < op.m; ++i)
      for (int64_t j = 0; j < op.n; ++j) {
        Acc sum = Acc(0);
        for (int64_t k = 0; k < op.k; ++k)
          sum += Acc(A[at[0] + i * op.a_strides[0] + k * op.a_strides[1]]) *
                 Acc(B[at[1] + k * op.b_strides[0] + j * op.b_strides[1]]);
        C[at[2] + i * op.c_strides[0] + j * op.c_strides[1]] = T(sum);
      }
  });
}

}  // namespace

void replay_matmul(const MatmulOp &op, uint8_t *const *bytes) {
  switch (op.dtype) {
#define NPVK_REPLAY_MATMUL(DT, T)                      \
  case DT:                                             \
    matmul_typed<T>(op, bytes[0], bytes[1], bytes[2]); \
    break;
    NPVK_REPLAY_MATMUL(NPVK_INT8, int8_t)
    NPVK_REPLAY_MATMUL(NPVK_INT16, int16_t)
    NPVK_REPLAY_MATMUL(NPVK_INT32, int32_t)
    NPVK_REPLAY_MATMUL(NPVK_INT64, int64_t)
    NPVK_REPLAY_MATMUL(NPVK_UINT8, uint8_t)
    NPVK_REPLAY_MATMUL(NPVK_UINT16, uint16_t)
    NPVK_REPLAY_MATMUL(NPVK_UINT32, uint32_t)
    NPVK_REPLAY_MATMUL(NPVK_UINT64, uint64_t)
    NPVK_REPLAY_MATMUL(NPVK_FLOAT32, float)
    NPVK_REPLAY_MATMUL(NPVK_FLOAT64, double)
#undef NPVK_REPLAY_MATMUL
    default:
      break;
  }
}

}  // namespace npvk
