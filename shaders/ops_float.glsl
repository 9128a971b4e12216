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
