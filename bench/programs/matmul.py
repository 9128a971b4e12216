#!/usr/bin/python3
"""Matmul: C = A @ B for dense n x n float64 matrices (NumPy's BLAS).

Work: 2 n^3 flops. Result: C."""

import numpy as np

import benchlib

# n grows by 10^(1/3) per size step (work is n^3)
SIZES = {"small": 740, "medium": 1600, "large": 3450}


def main():
    args = benchlib.parse_args(__doc__)
    n = SIZES[args.size]

    def setup():
        rng = np.random.default_rng(3)
        return rng.random((n, n)), rng.random((n, n))

    def warmup(state):
        A, B = state
        A @ B

    def timed(state):
        A, B = state
        return {"C": A @ B}

    benchlib.run("matmul", args, setup, warmup, timed, params={"n": n, "gflop": 2e-9 * n ** 3})


if __name__ == "__main__":
    main()
