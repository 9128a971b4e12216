"""Black-Scholes option pricing in plain NumPy (float64).

Runs unchanged with and without npvk:
    python3 examples/python/black_scholes.py            # NumPy
    python3 -m npvk examples/python/black_scholes.py    # npvk
    NPVK=1 python3 examples/python/black_scholes.py     # npvk, when installed in a site dir
"""

import argparse
import time

import numpy as np


def cnd(x):
    # Cumulative normal distribution, Abramowitz & Stegun 26.2.17.
    a1, a2, a3, a4, a5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
    k = 1.0 / (1.0 + 0.2316419 * np.abs(x))
    w = 1.0 - 1.0 / np.sqrt(2 * np.pi) * np.exp(-x * x / 2.0) * (
        a1 * k + a2 * k * k + a3 * k ** 3 + a4 * k ** 4 + a5 * k ** 5)
    return np.where(x < 0, 1.0 - w, w)


def black_scholes(s, x, t, r, v):
    d1 = (np.log(s / x) + (r + v * v / 2.0) * t) / (v * np.sqrt(t))
    d2 = d1 - v * np.sqrt(t)
    call = s * cnd(d1) - x * np.exp(-r * t) * cnd(d2)
    put = x * np.exp(-r * t) * cnd(-d2) - s * cnd(-d1)
    return call, put


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--options", type=int, default=2_000_000)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--save", metavar="FILE.npz", help="write the last call and put prices")
    args = parser.parse_args()
    rng = np.random.default_rng(42)
    s = rng.uniform(5.0, 30.0, args.options)
    x = rng.uniform(1.0, 100.0, args.options)
    t = rng.uniform(0.25, 10.0, args.options)
    r, v = 0.02, 0.30
    black_scholes(s, x, t, r, v)  # warm-up: first-run kernel compilation is not timed
    start = time.perf_counter()
    for _ in range(args.iterations):
        call, put = black_scholes(s, x, t, r, v)
    checksum = float(call.sum() + put.sum())
    seconds = time.perf_counter() - start
    rate = args.options * args.iterations / seconds / 1e6
    print(f"black-scholes: {args.options} options x {args.iterations}: {seconds:.3f} s, "
          f"{rate:.1f} M options/s, checksum {checksum:.6f}")
    if args.save:
        np.savez(args.save, call=call, put=put)


if __name__ == "__main__":
    main()
