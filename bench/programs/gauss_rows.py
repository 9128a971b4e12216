#!/usr/bin/python3
"""Gaussian elimination by row slices, as written by hand: for each pivot k
the multipliers of the rows below are one column divided by the pivot, and
the trailing block is updated in place (`a[k+1:, k:] -= f[:, None] *
a[k, k:]`). The slices shrink every step, so each step's temporary is a few
pages smaller than the last. With --read the program reads the next pivot
with float() each step (a host read between steps, as a pivot check would).

Work: per step one divide, one broadcast multiply and one in-place subtract
on shrinking 2-D slices of an n x n float64 matrix. Result: the reduced
matrix."""

import sys

import numpy as np

import benchlib

SIZES = {"small": 200, "medium": 600, "large": 1900}


def eliminate(a, read):
    n = a.shape[0]
    for k in range(n - 1):
        f = a[k + 1:, k] / a[k, k]
        a[k + 1:, k:] -= f[:, None] * a[k, k:]
        if read:
            float(a[k + 1, k + 1])
    return a


def main():
    read = "--read" in sys.argv
    if read:
        sys.argv.remove("--read")
    args = benchlib.parse_args(__doc__)
    n = SIZES[args.size]

    def setup():
        rng = np.random.default_rng(5)
        return rng.random((n, n)) + n * np.eye(n)  # diagonally dominant: no pivoting

    def warmup(a):
        eliminate(a[: n // 4, : n // 4].copy(), read)

    def timed(a):
        return {"reduced": eliminate(a, read)}

    benchlib.run("gauss_rows", args, setup, warmup, timed, params={"n": n, "read": read})


if __name__ == "__main__":
    main()
