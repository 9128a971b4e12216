#version 460
// Black-Scholes, one rate: the hand-fused reference for the step kernel npvk
// generates from bench/programs/black_scholes.py. Per option it loads S, X, T
// and the two running sums once, computes the call and put prices with the
// same operations in the same order as price_numpy() (so every rounding is
// the same: `precise` keeps the driver from contracting into fma), and adds
// them into the sums. No FP exception flags, no index arithmetic beyond a
// 32-bit counter; exp and log are npvk's own (math_f64.glsl, <= 1 ulp).
//
// Push constants (reference_prelude.glsl): operand[0..4] = addresses of S, X, T, call_sum, put_sum;
// operand[5..7] = the bits of r, v and r + 0.5 v v (computed on the host, as
// Python computes that scalar); count = options.
#include "reference_prelude.glsl"
#define NPVK_F64_TABLES pc.tables
#include "math_f64.glsl"

// The constants of black_scholes.py; glslang rounds LF literals correctly.
const double RSQRT2PI = 0.39894228040143267794LF;
const double A1 = 0.31938153LF, A2 = -0.356563782LF, A3 = 1.781477937LF;
const double A4 = -1.821255978LF, A5 = 1.330274429LF;

// cnd(d) of black_scholes.py, Horner's rule as written there.
double cnd(double d) {
  precise double k = 1.0LF / (1.0LF + 0.2316419LF * abs(d));
  precise double poly = k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5))));
  precise double w = RSQRT2PI * npvk_exp_f64(-0.5LF * d * d) * poly;
  precise double below = 1.0LF - w;
  return d > 0.0LF ? below : w;
}

void main() {
  uint first, end, lanes;
  subgroup_run(uint(pc.count), first, end, lanes);
  F64 s_in = F64(pc.operand[0]), x_in = F64(pc.operand[1]), t_in = F64(pc.operand[2]);
  F64 call_sum = F64(pc.operand[3]), put_sum = F64(pc.operand[4]);
  const double r = uint64BitsToDouble(pc.operand[5]);
  const double v = uint64BitsToDouble(pc.operand[6]);
  const double rv = uint64BitsToDouble(pc.operand[7]);
  const double minus_r = -r;
  for (uint i = first + gl_SubgroupInvocationID; i < end; i += lanes) {
    const double S = s_in.v[i], X = x_in.v[i], T = t_in.v[i];
    precise double v_sqrt_t = v * sqrt(T);
    precise double d1 = (npvk_log_f64(S / X) + rv * T) / v_sqrt_t;
    precise double d2 = d1 - v_sqrt_t;
    const double cnd1 = cnd(d1), cnd2 = cnd(d2);
    precise double x_exp_rt = X * npvk_exp_f64(minus_r * T);
    precise double call = S * cnd1 - x_exp_rt * cnd2;
    precise double put = x_exp_rt * (1.0LF - cnd2) - S * (1.0LF - cnd1);
    precise double new_call = call_sum.v[i] + call;
    precise double new_put = put_sum.v[i] + put;
    call_sum.v[i] = new_call;
    put_sum.v[i] = new_put;
  }
}
