// float16 with NumPy's semantics (numpy/core/src/npymath/halffloat.c): a
// float16 value is stored as its uint16_t bits and computed in a float
// register that holds a value float16 can represent. Every op with a float16
// result computes in float32 and rounds with npvk_round_half, as NumPy's half
// loops do. The conversions are integer arithmetic, so they are exact on
// drivers that flush subnormals or touch NaN payloads.
// The generator defines NPVK_HALF_F64 where a kernel casts between float16 and
// float64.

// Half bits to float32 bits, exactly: subnormals normalised, a NaN's payload
// moved to the top of the float significand.
uint npvk_half_to_f32_bits(uint h) {
  uint sgn = (h & 0x8000u) << 16;
  uint e = (h >> 10) & 0x1fu;
  uint m = h & 0x3ffu;
  if (e == 0x1fu) return sgn | 0x7f800000u | (m << 13);
  if (e != 0u) return sgn | ((e + 112u) << 23) | (m << 13);
  if (m == 0u) return sgn;
  // m * 2^-24 = 2^(p - 24) * (m / 2^p), with p the top bit of m.
  int p = findMSB(m);
  return sgn | (uint(p + 103) << 23) | ((m << uint(23 - p)) & 0x7fffffu);
}

float npvk_half_to_float(uint h) { return uintBitsToFloat(npvk_half_to_f32_bits(h)); }

// sig >> sh (1 <= sh <= 53), rounded to nearest, ties to even.
uint npvk_half_rne(uint64_t sig, uint sh) {
  uint64_t q = sig >> sh;
  uint64_t rest = sig & ((1ul << sh) - 1ul);
  uint64_t halfway = 1ul << (sh - 1u);
  return uint(q) + ((rest > halfway || (rest == halfway && (q & 1ul) != 0ul)) ? 1u : 0u);
}

// float32 bits to half bits: round to nearest even; a finite value from 65520
// up becomes inf; a NaN keeps the top 10 bits of its payload (at least 1).
uint npvk_f32_bits_to_half(uint f) {
  uint sgn = (f >> 16) & 0x8000u;
  uint mag = f & 0x7fffffffu;
  if (mag >= 0x7f800000u)
    return sgn | 0x7c00u | (mag == 0x7f800000u ? 0u : max((mag & 0x7fffffu) >> 13, 1u));
  if (mag >= 0x477ff000u) return sgn | 0x7c00u;
  // Normal halves (from 2^-14): exponent rebiased by 127 - 15, 13 bits rounded
  // off; a carry into the exponent is right.
  if (mag >= 0x38800000u) return sgn | npvk_half_rne(uint64_t(mag - 0x38000000u), 13u);
  if (mag < 0x33000000u) return sgn;  // below 2^-25: rounds to zero
  // Subnormal halves count units of 2^-24: sig * 2^(e - 150) / 2^-24.
  uint e = mag >> 23;
  return sgn | npvk_half_rne(uint64_t((mag & 0x7fffffu) | 0x800000u), 126u - e);
}

uint npvk_float_to_half_bits(float x) { return npvk_f32_bits_to_half(floatBitsToUint(x)); }

// The float16 value nearest to x (NumPy's npy_float_to_half, then back).
float npvk_round_half(float x) { return npvk_half_to_float(npvk_float_to_half_bits(x)); }

#ifdef NPVK_HALF_F64
// float64 to half directly (NumPy's npy_double_to_half), rounded once.
float npvk_double_to_half(double x) {
  uint64_t d = doubleBitsToUint64(x);
  uint sgn = uint(d >> 48) & 0x8000u;
  uint64_t mag = d & 0x7ffffffffffffffful;
  uint h;
  if (mag >= 0x7ff0000000000000ul)
    h = sgn | 0x7c00u |
        (mag == 0x7ff0000000000000ul ? 0u : max(uint((mag & 0xffffffffffffful) >> 42), 1u));
  else if (mag >= 0x40effe0000000000ul)  // from 65520 up
    h = sgn | 0x7c00u;
  else if (mag >= 0x3f10000000000000ul)  // from 2^-14
    h = sgn | npvk_half_rne(mag - 0x3f00000000000000ul, 42u);
  else if (mag < 0x3e60000000000000ul)  // below 2^-25
    h = sgn;
  else
    h = sgn | npvk_half_rne((mag & 0xffffffffffffful) | 0x10000000000000ul,
                            1051u - uint(mag >> 52));
  return npvk_half_to_float(h);
}

// A float16 value as float64 (npy_halfbits_to_doublebits): the bits of a NaN
// moved over, as a float-to-double conversion (which quiets) would not.
double npvk_half_to_double(float x) {
  uint f = floatBitsToUint(x);
  if ((f & 0x7fffffffu) <= 0x7f800000u) return double(x);
  return packDouble2x32(uvec2(0u, (f & 0x80000000u) | 0x7ff00000u | ((f & 0x7fffffu) >> 3)));
}
#endif

// NumPy's half maximum/minimum/fmax/fmin compare with >= and <=: of two equal
// operands (+0 and -0) they return the first, unlike the float loops.
float npvk_maximum_half(float a, float b) { return (a >= b || npvk_isnan(a)) ? a : b; }
float npvk_minimum_half(float a, float b) { return (a <= b || npvk_isnan(a)) ? a : b; }
float npvk_fmax_half(float a, float b) { return (a >= b || npvk_isnan(b)) ? a : b; }
float npvk_fmin_half(float a, float b) { return (a <= b || npvk_isnan(b)) ? a : b; }

// npy_half_nextafter on the half bits: NaN (0x7e00) if either is NaN, x if
// they are equal (so +0 toward -0 stays +0), else one step toward y.
float npvk_nextafter_half(float xf, float yf) {
  uint x = npvk_float_to_half_bits(xf), y = npvk_float_to_half_bits(yf);
  if (npvk_isnan(xf) || npvk_isnan(yf)) return npvk_half_to_float(0x7e00u);
  if (xf == yf) return xf;
  if ((x & 0x7fffu) == 0u) return npvk_half_to_float((y & 0x8000u) | 1u);
  // Sign-magnitude bits: +1 moves away from zero.
  bool away = (yf > xf) == ((x & 0x8000u) == 0u);
  return npvk_half_to_float(away ? x + 1u : x - 1u);
}

// npy_half_spacing: always positive; NaN (0x7e00) for inf and NaN; inf for
// 65504; for a negative power of two, the gap below its magnitude.
float npvk_spacing_half(float xf) {
  uint h = npvk_float_to_half_bits(xf);
  uint e = h & 0x7c00u, m = h & 0x3ffu;
  uint r;
  if (e == 0x7c00u)
    r = 0x7e00u;
  else if (h == 0x7bffu)
    r = 0x7c00u;
  else if ((h & 0x8000u) != 0u && m == 0u)
    r = e > 0x2c00u ? e - 0x2c00u : (e > 0x0400u ? 1u << ((e >> 10) - 2u) : 1u);
  else
    r = e > 0x2800u ? e - 0x2800u : (e > 0x0400u ? 1u << ((e >> 10) - 1u) : 1u);
  return npvk_half_to_float(r);
}
