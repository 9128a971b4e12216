#!/usr/bin/python3
"""LU decomposition by row slices (Doolittle, no pivoting), as written by
hand: column k of L is written with slice assignment, and the trailing block
of U is updated in place each step. The slices shrink every step. A host read
of the next pivot each step (float()), as a pivot check would.

Work: per step one divide into a column of L, one broadcast multiply and one
in-place subtract on shrinking 2-D slices of n x n float64 matrices. Result:
L and U."""

import numpy as np

import benchlib

SIZES = {"small": 200, "medium": 600, "large": 1900}


def decompose(a):
    n = a.shape[0]
    lower, upper = np.eye(n), a.copy()
    for k in range(n - 1):
        lower[k + 1:, k] = upper[k + 1:, k] / upper[k, k]
        upper[k + 1:, k:] -= lower[k + 1:, k, None] * upper[k, k:]
        float(upper[k + 1, k + 1])
    return lower, upper


def main():
    args = benchlib.parse_args(__doc__)
    n = SIZES[args.size]

    def setup():
        rng = np.random.default_rng(6)
        return rng.random((n, n)) + n * np.eye(n)  # diagonally dominant: no pivoting

    def warmup(a):
        decompose(a[: n // 4, : n // 4].copy())

    def timed(a):
        lower, upper = decompose(a)
        return {"lower": lower, "upper": upper}

    benchlib.run("lu_rows", args, setup, warmup, timed, params={"n": n})


if __name__ == "__main__":
    main()
