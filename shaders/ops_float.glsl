// Floating-point loops with NumPy's semantics, instantiated once per type: the
// generator defines NPVK_F (float or double), NPVK_U (the unsigned integer of
// the same width), NPVK_TO_BITS / NPVK_FROM_BITS, NPVK_SIGN_MASK and
// NPVK_EXP_MASK.
// Classification works on the bits, so it survives drivers that assume no NaN.

bool npvk_isnan(NPVK_F x) { return (NPVK_TO_BITS(x) & ~NPVK_SIGN_MASK) > NPVK_EXP_MASK; }
bool npvk_isinf(NPVK_F x) { return (NPVK_TO_BITS(x) & ~NPVK_SIGN_MASK) == NPVK_EXP_MASK; }
bool npvk_isfinite(NPVK_F x) { return (NPVK_TO_BITS(x) & NPVK_EXP_MASK) != NPVK_EXP_MASK; }
bool npvk_signbit(NPVK_F x) { return (NPVK_TO_BITS(x) & NPVK_SIGN_MASK) != NPVK_U(0); }
NPVK_F npvk_fabs(NPVK_F x) { return NPVK_FROM_BITS(NPVK_TO_BITS(x) & ~NPVK_SIGN_MASK); }
NPVK_F npvk_copysign(NPVK_F x, NPVK_F y) {
  return NPVK_FROM_BITS((NPVK_TO_BITS(x) & ~NPVK_SIGN_MASK) | (NPVK_TO_BITS(y) & NPVK_SIGN_MASK));
}

// As NumPy 1.24's x86-64 loops: a NaN in either operand wins, and of two
// equal operands (+0.0 and -0.0) the second is returned.
NPVK_F npvk_maximum(NPVK_F a, NPVK_F b) { return (a > b || npvk_isnan(a)) ? a : b; }
NPVK_F npvk_minimum(NPVK_F a, NPVK_F b) { return (a < b || npvk_isnan(a)) ? a : b; }
// fmax/fmin: a NaN loses to a number; of equal operands, the second.
NPVK_F npvk_fmax(NPVK_F a, NPVK_F b) { return (a > b || npvk_isnan(b)) ? a : b; }
NPVK_F npvk_fmin(NPVK_F a, NPVK_F b) { return (a < b || npvk_isnan(b)) ? a : b; }

// The bit helpers below work on the bit patterns so that subnormal operands
// and results are exact on drivers that flush float subnormals in arithmetic.
#define NPVK_MANT_BITS (NPVK_SIGN_MASK == NPVK_U(0x80000000u) ? 23 : 52)
#define NPVK_QNAN (NPVK_EXP_MASK | ((NPVK_EXP_MASK >> 1) & ~NPVK_EXP_MASK))

// NumPy 1.24: in > 0 ? 1 : in < 0 ? -1 : in == 0 ? 0 : in, so NaN stays NaN
// and both zeros give +0.
NPVK_F npvk_sign(NPVK_F x) {
  NPVK_U b = NPVK_TO_BITS(x);
  if (npvk_isnan(x)) return x;
  if ((b & ~NPVK_SIGN_MASK) == NPVK_U(0)) return NPVK_F(0);
  return (b & NPVK_SIGN_MASK) != NPVK_U(0) ? NPVK_F(-1) : NPVK_F(1);
}

// NumPy: NaN x stays NaN, 0 (either sign) gives h, otherwise the step.
NPVK_F npvk_heaviside(NPVK_F x, NPVK_F h) {
  NPVK_U b = NPVK_TO_BITS(x);
  if (npvk_isnan(x)) return x;
  if ((b & ~NPVK_SIGN_MASK) == NPVK_U(0)) return h;
  return (b & NPVK_SIGN_MASK) != NPVK_U(0) ? NPVK_F(0) : NPVK_F(1);
}

// A key whose unsigned order is the floats' numeric order (-0 and +0 equal).
NPVK_U npvk_order_key(NPVK_U b) {
  NPVK_U mag = b & ~NPVK_SIGN_MASK;
  return (b & NPVK_SIGN_MASK) != NPVK_U(0) ? NPVK_SIGN_MASK - mag : NPVK_SIGN_MASK + mag;
}

// C99 nextafter: NaN if either is NaN, y if x == y, else one step toward y.
NPVK_F npvk_nextafter(NPVK_F x, NPVK_F y) {
  if (npvk_isnan(x)) return x;
  if (npvk_isnan(y)) return y;
  NPVK_U bx = NPVK_TO_BITS(x), by = NPVK_TO_BITS(y);
  NPVK_U kx = npvk_order_key(bx), ky = npvk_order_key(by);
  if (kx == ky) return y;
  if ((bx & ~NPVK_SIGN_MASK) == NPVK_U(0))
    return NPVK_FROM_BITS((by & NPVK_SIGN_MASK) | NPVK_U(1));  // smallest subnormal toward y
  // Sign-magnitude bits: +1 moves away from zero, -1 toward it.
  bool away = (ky > kx) == ((bx & NPVK_SIGN_MASK) == NPVK_U(0));
  return NPVK_FROM_BITS(away ? bx + NPVK_U(1) : bx - NPVK_U(1));
}

// NumPy's npy_spacing: NaN for inf and NaN, else nextafter(x, away from 0) - x,
// which is the ulp of x with x's sign (+ for -0), or inf past the largest.
NPVK_F npvk_spacing(NPVK_F x) {
  NPVK_U b = NPVK_TO_BITS(x);
  NPVK_U mag = b & ~NPVK_SIGN_MASK;
  if (mag >= NPVK_EXP_MASK) return NPVK_FROM_BITS(NPVK_QNAN);
  NPVK_U sign = mag == NPVK_U(0) ? NPVK_U(0) : (b & NPVK_SIGN_MASK);
  if (mag + NPVK_U(1) == NPVK_EXP_MASK) return NPVK_FROM_BITS(sign | NPVK_EXP_MASK);
  int m = NPVK_MANT_BITS;
  int e = int(mag >> m);
  NPVK_U ulp = e <= m ? (NPVK_U(1) << max(e - 1, 0)) : (NPVK_U(e - m) << m);
  return NPVK_FROM_BITS(sign | ulp);
}

// The significand of a finite nonzero magnitude with its leading bit at
// NPVK_MANT_BITS, and in `e` its biased exponent (below 1 for subnormals),
// so that |x| = sig * 2^(e - bias - NPVK_MANT_BITS) also for subnormals.
NPVK_U npvk_significand(NPVK_U mag, out int e) {
  int m = NPVK_MANT_BITS;
  NPVK_U unit = NPVK_U(1) << m;
  e = int(mag >> m);
  NPVK_U sig = mag & (unit - NPVK_U(1));
  if (e != 0) return sig | unit;
  // subnormal: the integer significand converts exactly; its exponent is the top bit
  int top = int(NPVK_TO_BITS(NPVK_F(sig)) >> m) - int((NPVK_EXP_MASK >> m) >> 1);
  e = 1 - (m - top);
  return sig << (m - top);
}

// C's ldexp(x, n) on the bits, |n| <= 4000: exact, with one round-half-even
// for subnormal results, so flushing drivers still give them.
NPVK_F npvk_ldexp(NPVK_F x, int n) {
  NPVK_U b = NPVK_TO_BITS(x);
  NPVK_U sign = b & NPVK_SIGN_MASK;
  NPVK_U mag = b & ~NPVK_SIGN_MASK;
  if (mag == NPVK_U(0) || mag >= NPVK_EXP_MASK) return x;  // +-0, +-inf, NaN
  int m = NPVK_MANT_BITS;
  int bias = int((NPVK_EXP_MASK >> m) >> 1);
  NPVK_U unit = NPVK_U(1) << m;
  int e;
  NPVK_U sig = npvk_significand(mag, e);
  int ne = e + n;  // x * 2^n = sig * 2^(ne - bias - m)
  if (ne >= 2 * bias + 1) return NPVK_FROM_BITS(sign | NPVK_EXP_MASK);
  if (ne >= 1) return NPVK_FROM_BITS(sign | (NPVK_U(ne) << m) | (sig & (unit - NPVK_U(1))));
  int sh = 1 - ne;
  if (sh > m + 1) return NPVK_FROM_BITS(sign);  // below half the smallest subnormal
  NPVK_U q = sig >> sh;
  NPVK_U rest = sig & ((NPVK_U(1) << sh) - NPVK_U(1));
  NPVK_U halfway = NPVK_U(1) << (sh - 1);
  if (rest > halfway || (rest == halfway && (q & NPVK_U(1)) != NPVK_U(0))) q += NPVK_U(1);
  return NPVK_FROM_BITS(sign | q);  // a carry into the exponent field is right too
}

// trunc and roundEven on the bits. llvmpipe on CPUs without AVX-512 lowers
// float64 trunc() and roundEven() of its 8-lane vectors (512 bits) through a
// 32-bit integer conversion: wrong past 2^31 and for halfway cases, and -0
// becomes +0. These are exact on every driver.
NPVK_F npvk_trunc(NPVK_F x) {
  NPVK_U b = NPVK_TO_BITS(x);
  int m = NPVK_MANT_BITS;
  if ((b & ~NPVK_SIGN_MASK) > NPVK_EXP_MASK) return NPVK_FROM_BITS(b | NPVK_QNAN);  // quieted
  int e = int((b & ~NPVK_SIGN_MASK) >> m) - int((NPVK_EXP_MASK >> m) >> 1);
  if (e >= m) return x;                               // integral or inf
  if (e < 0) return NPVK_FROM_BITS(b & NPVK_SIGN_MASK);  // |x| < 1
  return NPVK_FROM_BITS(b & ~((NPVK_U(1) << (m - e)) - NPVK_U(1)));
}

// Round half to even (C's rint in the default rounding mode).
NPVK_F npvk_rint(NPVK_F x) {
  NPVK_U b = NPVK_TO_BITS(x);
  NPVK_U sign = b & NPVK_SIGN_MASK;
  NPVK_U mag = b & ~NPVK_SIGN_MASK;
  int m = NPVK_MANT_BITS;
  if (mag > NPVK_EXP_MASK) return NPVK_FROM_BITS(b | NPVK_QNAN);  // a NaN, quieted as C's
  int e = int(mag >> m) - int((NPVK_EXP_MASK >> m) >> 1);
  if (e >= m) return x;                      // integral or inf
  if (e < -1) return NPVK_FROM_BITS(sign);  // |x| < 0.5
  // The significand with its implicit bit; `sh` bits lie below the units.
  NPVK_U unit = NPVK_U(1) << m;
  NPVK_U sig = (mag & (unit - NPVK_U(1))) | unit;
  int sh = m - e;
  NPVK_U rest = sig & ((NPVK_U(1) << sh) - NPVK_U(1));
  NPVK_U halfway = NPVK_U(1) << (sh - 1);
  NPVK_U low = mag - rest;  // |x| truncated (for e = -1: zero)
  NPVK_F t = e < 0 ? NPVK_F(0) : NPVK_FROM_BITS(low);
  bool odd = e >= 0 && ((sig >> sh) & NPVK_U(1)) != NPVK_U(0);
  // An integer below 2^m plus one: exact.
  if (rest > halfway || (rest == halfway && odd)) t += NPVK_F(1);
  return NPVK_FROM_BITS(sign | NPVK_TO_BITS(t));
}

// C's modf on the bits: the fraction is returned, the integral part written
// to `ipart`, both with x's sign. |x| < 1 keeps x as the fraction bit for bit
// (a flushing driver would lose a subnormal in x - 0); values past the
// mantissa are integers; x - trunc(x) is exact otherwise.
NPVK_F npvk_modf(NPVK_F x, out NPVK_F ipart) {
  NPVK_U b = NPVK_TO_BITS(x);
  NPVK_U sign = b & NPVK_SIGN_MASK;
  NPVK_U mag = b & ~NPVK_SIGN_MASK;
  if (mag > NPVK_EXP_MASK) {
    ipart = x;
    return x;
  }
  int m = NPVK_MANT_BITS;
  int e = int(mag >> m) - int((NPVK_EXP_MASK >> m) >> 1);
  if (e < 0) {
    ipart = NPVK_FROM_BITS(sign);
    return x;
  }
  if (e >= m) {
    ipart = x;
    return NPVK_FROM_BITS(sign);
  }
  NPVK_F i = npvk_trunc(x);
  precise NPVK_F f = x - i;
  ipart = i;
  return NPVK_FROM_BITS(sign | NPVK_TO_BITS(f));
}

// C's frexp on the bits: a fraction in [0.5, 1) with x's sign, and the
// exponent (0 for +-0, +-inf and NaN, as glibc). Subnormals are normalised
// exactly.
NPVK_F npvk_frexp(NPVK_F x, out int exponent) {
  NPVK_U b = NPVK_TO_BITS(x);
  NPVK_U sign = b & NPVK_SIGN_MASK;
  NPVK_U mag = b & ~NPVK_SIGN_MASK;
  exponent = 0;
  if (mag == NPVK_U(0) || mag >= NPVK_EXP_MASK) return x;
  int m = NPVK_MANT_BITS;
  int bias = int((NPVK_EXP_MASK >> m) >> 1);
  int e;
  NPVK_U sig = npvk_significand(mag, e);
  exponent = e - (bias - 1);
  // The fraction's biased exponent is bias - 1: [0.5, 1).
  return NPVK_FROM_BITS(sign | (NPVK_U(bias - 1) << m) | (sig & ~(NPVK_U(1) << m)));
}
