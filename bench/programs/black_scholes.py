#!/usr/bin/python3
"""Black-Scholes: prices European call and put options, elementwise over
arrays of spot prices, strikes and maturities (float64), with the
Abramowitz-Stegun polynomial for the normal CDF. Each iteration prices the
whole book at a different risk-free rate and accumulates the prices.

Work: about 60 elementwise ops (exp, log, sqrt, abs, >, where, + - * /) per
option per iteration. Results: accumulated call and put prices."""

import numpy as np

import benchlib

# options, iterations (rates): small ~10x less work than medium, large ~10x more
SIZES = {"small": (200_000, 10), "medium": (2_000_000, 10), "large": (20_000_000, 10)}

RSQRT2PI = 0.39894228040143267794
A1, A2, A3 = 0.31938153, -0.356563782, 1.781477937
A4, A5 = -1.821255978, 1.330274429
VOLATILITY = 0.30


def cnd(d):
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    w = RSQRT2PI * np.exp(-0.5 * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))))
    return np.where(d > 0, 1.0 - w, w)


def price_numpy(S, X, T, r, v):
    sqrt_t = np.sqrt(T)
    d1 = (np.log(S / X) + (r + 0.5 * v * v) * T) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    cnd1 = cnd(d1)
    cnd2 = cnd(d2)
    exp_rt = np.exp(-r * T)
    call = S * cnd1 - X * exp_rt * cnd2
    put = X * exp_rt * (1.0 - cnd2) - S * (1.0 - cnd1)
    return call, put


# The same expressions, in the same order, for numexpr (one evaluate per
# NumPy statement that numexpr can fuse; numexpr has no local variables).
NE_W = ("RSQRT2PI * exp(-0.5 * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))))")


def cnd_numexpr(d):
    import numexpr as ne
    k = ne.evaluate("1.0 / (1.0 + 0.2316419 * abs(d))")
    w = ne.evaluate(NE_W, local_dict=dict(d=d, k=k, RSQRT2PI=RSQRT2PI,
                                          A1=A1, A2=A2, A3=A3, A4=A4, A5=A5))
    return ne.evaluate("where(d > 0, 1.0 - w, w)")


def price_numexpr(S, X, T, r, v):
    import numexpr as ne
    sqrt_t = ne.evaluate("sqrt(T)")
    rv = r + 0.5 * v * v  # Python scalars, as in the NumPy form
    mr = -r
    d1 = ne.evaluate("(log(S / X) + rv * T) / (v * sqrt_t)")
    d2 = ne.evaluate("d1 - v * sqrt_t")
    cnd1 = cnd_numexpr(d1)
    cnd2 = cnd_numexpr(d2)
    exp_rt = ne.evaluate("exp(mr * T)")
    call = ne.evaluate("S * cnd1 - X * exp_rt * cnd2")
    put = ne.evaluate("X * exp_rt * (1.0 - cnd2) - S * (1.0 - cnd1)")
    return call, put


# Module level, so that bench/compare-reference builds the same inputs and
# results for the hand-written reference kernel.
def make_inputs(n):
    rng = np.random.default_rng(20240601)
    S = rng.uniform(5.0, 30.0, n)
    X = rng.uniform(1.0, 100.0, n)
    T = rng.uniform(0.25, 10.0, n)
    return S, X, T


def rates(iterations):
    return [0.02 + 0.001 * i for i in range(iterations)]


def price_book(S, X, T, iterations, price=price_numpy):
    """The whole problem: the book priced at every rate, prices accumulated."""
    call_sum = np.zeros(len(S))
    put_sum = np.zeros(len(S))
    for r in rates(iterations):
        call, put = price(S, X, T, r, VOLATILITY)
        call_sum += call
        put_sum += put
    return {"call": call_sum, "put": put_sum}


def main():
    args = benchlib.parse_args(__doc__, numexpr=True)
    n, iterations = SIZES[args.size]
    price = price_numexpr if args.numexpr else price_numpy

    def setup():
        return make_inputs(n)

    def warmup(state):
        S, X, T = state
        price(S, X, T, 0.02, VOLATILITY)

    def timed(state):
        S, X, T = state
        return price_book(S, X, T, iterations, price)

    benchlib.run("black_scholes", args, setup, warmup, timed,
                 params={"options": n, "iterations": iterations})


if __name__ == "__main__":
    main()
