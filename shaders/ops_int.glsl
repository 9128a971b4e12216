// Integer loops with NumPy's semantics, instantiated once per compute type:
// the generator defines NPVK_T (int, uint, int64_t or uint64_t), NPVK_SIGNED
// (1 or 0) and NPVK_BITS (32 or 64) before this text and undefines them after.
// Narrow dtypes compute in 32 bits; storing truncates, which is NumPy's wrap.

NPVK_T npvk_floor_divide(NPVK_T a, NPVK_T b) {
  if (b == NPVK_T(0)) return NPVK_T(0);  // NumPy: 0, with a divide-by-zero warning
#if NPVK_SIGNED
  if (b == NPVK_T(-1)) return NPVK_T(0) - a;  // MIN // -1 wraps to MIN
  NPVK_T q = a / b;
  // Truncation rounds toward zero; floor needs one less when signs differ and
  // the division was inexact.
  if ((a % b != NPVK_T(0)) && ((a < NPVK_T(0)) != (b < NPVK_T(0)))) q -= NPVK_T(1);
  return q;
#else
  return a / b;
#endif
}

NPVK_T npvk_remainder(NPVK_T a, NPVK_T b) {
  if (b == NPVK_T(0)) return NPVK_T(0);
#if NPVK_SIGNED
  if (b == NPVK_T(-1)) return NPVK_T(0);
  NPVK_T r = a % b;
  // NumPy's remainder takes the sign of the divisor.
  if (r != NPVK_T(0) && ((r < NPVK_T(0)) != (b < NPVK_T(0)))) r += b;
  return r;
#else
  return a % b;
#endif
}

NPVK_T npvk_fmod(NPVK_T a, NPVK_T b) {
  if (b == NPVK_T(0)) return NPVK_T(0);
#if NPVK_SIGNED
  if (b == NPVK_T(-1)) return NPVK_T(0);
#endif
  return a % b;  // C's %: the sign of the dividend
}

NPVK_T npvk_power(NPVK_T base, NPVK_T exponent) {
#if NPVK_SIGNED
  if (exponent < NPVK_T(0)) {
    // NumPy raises here; the C ABI documents this result instead.
    if (base == NPVK_T(1)) return NPVK_T(1);
    if (base == NPVK_T(-1)) return (exponent & NPVK_T(1)) != NPVK_T(0) ? NPVK_T(-1) : NPVK_T(1);
    return NPVK_T(0);
  }
#endif
  NPVK_T result = NPVK_T(1);
  while (exponent != NPVK_T(0)) {
    if ((exponent & NPVK_T(1)) != NPVK_T(0)) result *= base;
    base *= base;
    exponent >>= 1;
  }
  return result;
}

// Shifts by a negative count or at least the width are defined by NumPy, not
// by GLSL. For narrow dtypes computed in 32 bits, counts from the dtype's
// width up to 31 already give NumPy's answer after truncation.
NPVK_T npvk_left_shift(NPVK_T a, NPVK_T b) {
#if NPVK_SIGNED
  if (b < NPVK_T(0)) return NPVK_T(0);
#endif
  if (b >= NPVK_T(NPVK_BITS)) return NPVK_T(0);
  return a << b;
}

NPVK_T npvk_right_shift(NPVK_T a, NPVK_T b) {
#if NPVK_SIGNED
  if (b < NPVK_T(0) || b >= NPVK_T(NPVK_BITS)) return a < NPVK_T(0) ? NPVK_T(-1) : NPVK_T(0);
#else
  if (b >= NPVK_T(NPVK_BITS)) return NPVK_T(0);
#endif
  return a >> b;
}
