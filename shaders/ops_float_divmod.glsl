// NumPy's float fmod, floor_divide and remainder, instantiated like
// ops_float.glsl (after it, for the same type), with NPVK_FMOD naming the
// exact fmod of math_f64.glsl for the type.

NPVK_F npvk_fmod(NPVK_F a, NPVK_F b) { return NPVK_FMOD(a, b); }

// NumPy's npy_divmod: the remainder has the sign of the divisor, and the
// quotient is the floor of the exact quotient, corrected for rounding.
NPVK_F npvk_divmod(NPVK_F a, NPVK_F b, out NPVK_F modulus) {
  precise NPVK_F mod = NPVK_FMOD(a, b);
  if (b == NPVK_F(0)) {
    modulus = mod;
    return a / b;
  }
  precise NPVK_F div = (a - mod) / b;
  if (!(mod == NPVK_F(0))) {
    if ((b < NPVK_F(0)) != (mod < NPVK_F(0))) {
      mod += b;
      div -= NPVK_F(1);
    }
  } else {
    mod = npvk_copysign(NPVK_F(0), b);
  }
  precise NPVK_F floordiv;
  if (!(div == NPVK_F(0))) {
    floordiv = floor(div);
    if (div - floordiv > NPVK_F(0.5)) floordiv += NPVK_F(1);
  } else {
    floordiv = npvk_copysign(NPVK_F(0), a / b);
  }
  modulus = mod;
  return floordiv;
}

NPVK_F npvk_floor_divide(NPVK_F a, NPVK_F b) {
  if (b == NPVK_F(0)) return a / b;
  NPVK_F mod;
  return npvk_divmod(a, b, mod);
}

NPVK_F npvk_remainder(NPVK_F a, NPVK_F b) {
  if (b == NPVK_F(0)) return NPVK_FMOD(a, b);
  NPVK_F mod;
  npvk_divmod(a, b, mod);
  return mod;
}

// NumPy's float divmod loop is npy_divmod itself: (floor_divide, remainder).
NPVK_F npvk_divmod_pair(NPVK_F a, NPVK_F b, out NPVK_F modulus) {
  precise NPVK_F mod;
  precise NPVK_F q = npvk_divmod(a, b, mod);
  modulus = mod;
  return q;
}
