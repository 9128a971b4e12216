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

NPVK_T npvk_sign(NPVK_T a) {
#if NPVK_SIGNED
  return a > NPVK_T(0) ? NPVK_T(1) : (a < NPVK_T(0) ? NPVK_T(-1) : NPVK_T(0));
#else
  return a > NPVK_T(0) ? NPVK_T(1) : NPVK_T(0);
#endif
}

// NumPy's integer reciprocal is C's (T)(1.0 / a): 1 and -1 map to themselves,
// other nonzero values truncate to 0, and 1 / 0 = inf converts as x86 does
// (the minimum of the 32- or 64-bit signed compute type, which the store to a
// narrower dtype truncates to 0; 0 for unsigned types).
NPVK_T npvk_reciprocal(NPVK_T a) {
  if (a == NPVK_T(1)) return NPVK_T(1);
#if NPVK_SIGNED
  if (a == NPVK_T(-1)) return NPVK_T(-1);
  if (a == NPVK_T(0)) return NPVK_T(1) << (NPVK_BITS - 1);
#endif
  return NPVK_T(0);
}

// gcd and lcm work on the magnitudes as unsigned numbers, so |MIN| is 2^(bits-1)
// (NumPy: gcd(MIN, 6) == 2, gcd(MIN, 0) == MIN); lcm wraps like NumPy's
// a / gcd * b.
#if NPVK_BITS == 64
#define NPVK_UT uint64_t
#else
#define NPVK_UT uint
#endif
NPVK_UT npvk_magnitude(NPVK_T a) {
#if NPVK_SIGNED
  return a < NPVK_T(0) ? NPVK_UT(0) - NPVK_UT(a) : NPVK_UT(a);
#else
  return NPVK_UT(a);
#endif
}

// The unsigned gcd of a width is shared by its signed and unsigned types
// (int64 and uint64 in one kernel: a second body would not compile), so the
// first instantiation of that width defines it.
#if (NPVK_BITS == 64 && !defined(NPVK_HAVE_GCD_UNSIGNED_64)) || (NPVK_BITS == 32 && !defined(NPVK_HAVE_GCD_UNSIGNED_32))
#if NPVK_BITS == 64
#define NPVK_HAVE_GCD_UNSIGNED_64
#else
#define NPVK_HAVE_GCD_UNSIGNED_32
#endif
NPVK_UT npvk_gcd_unsigned(NPVK_UT a, NPVK_UT b) {
  while (a != NPVK_UT(0)) {
    NPVK_UT c = a;
    a = b % a;
    b = c;
  }
  return b;
}
#endif

NPVK_T npvk_gcd(NPVK_T a, NPVK_T b) {
  return NPVK_T(npvk_gcd_unsigned(npvk_magnitude(a), npvk_magnitude(b)));
}

NPVK_T npvk_lcm(NPVK_T a, NPVK_T b) {
  NPVK_UT ua = npvk_magnitude(a), ub = npvk_magnitude(b);
  NPVK_UT g = npvk_gcd_unsigned(ua, ub);
  return g == NPVK_UT(0) ? NPVK_T(0) : NPVK_T(ua / g * ub);
}
#undef NPVK_UT

// NumPy's integer divmod: floor_divide and remainder together (their zero
// divisors and MIN / -1 included).
NPVK_T npvk_divmod_pair(NPVK_T a, NPVK_T b, out NPVK_T modulus) {
  modulus = npvk_remainder(a, b);
  return npvk_floor_divide(a, b);
}
