#!/usr/bin/python3
"""Monte Carlo pi: draws points uniformly in the unit square with a fixed-seed
PCG64 generator and counts those inside the quarter circle, in chunks. The
random numbers come from NumPy's generator in every variant (npvk leaves them
to NumPy); the test x*x + y*y <= 1 is elementwise.

Work: 2 random doubles, 4 elementwise ops and one count per point.
Results: the per-chunk counts (exact integers) and the pi estimate."""

import numpy as np

import benchlib

# points per chunk, chunks
SIZES = {"small": (1 << 20, 4), "medium": (1 << 22, 10), "large": (1 << 24, 25)}
SEED = 1234


def count_numpy(x, y):
    return int(np.count_nonzero(x * x + y * y <= 1.0))


def count_numexpr(x, y):
    import numexpr as ne
    # numexpr sums int32 here; a chunk has fewer than 2**31 points
    return int(ne.evaluate("sum(where(x * x + y * y <= 1.0, 1, 0))"))


def main():
    args = benchlib.parse_args(__doc__, numexpr=True)
    length, chunks = SIZES[args.size]
    count = count_numexpr if args.numexpr else count_numpy

    def setup():
        return np.random.default_rng(SEED)

    def warmup(_):
        rng = np.random.default_rng(SEED + 1)
        count(rng.random(length), rng.random(length))

    def timed(rng):
        counts = np.empty(chunks, dtype=np.int64)
        for i in range(chunks):
            x = rng.random(length)
            y = rng.random(length)
            counts[i] = count(x, y)
        pi = 4.0 * np.sum(counts) / (length * chunks)
        return {"counts": counts, "pi": np.array([pi])}

    benchlib.run("monte_carlo_pi", args, setup, warmup, timed,
                 params={"points": length * chunks, "chunk": length, "seed": SEED})


if __name__ == "__main__":
    main()
