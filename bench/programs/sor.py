#!/usr/bin/python3
"""SOR: weighted (Jacobi-style) successive over-relaxation for the Laplace
equation on an (n+2)x(n+2) float64 grid with a hot top edge. Each sweep
computes the 4-neighbour average of the old grid from shifted slices and
writes the relaxed interior back with slice assignment.

Work: 7 elementwise ops on strided 2-D views plus one slice assignment per
sweep. Result: the final grid."""

import numpy as np

import benchlib

# interior size n, sweeps: n grows by sqrt(10) per size step
SIZES = {"small": (320, 50), "medium": (1000, 50), "large": (3200, 50)}
OMEGA = 0.9


def sweep(g):
    c = g[1:-1, 1:-1]
    avg = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
    g[1:-1, 1:-1] = c + OMEGA * (avg - c)


def main():
    args = benchlib.parse_args(__doc__)
    n, sweeps = SIZES[args.size]

    def setup():
        g = np.zeros((n + 2, n + 2))
        g[0, :] = 100.0          # hot top edge
        g[:, 0] = 25.0           # warm left edge
        rng = np.random.default_rng(11)
        g[1:-1, 1:-1] = rng.random((n, n))
        return g

    def warmup(g):
        sweep(g)

    def timed(g):
        for _ in range(sweeps):
            sweep(g)
        return {"grid": g}

    benchlib.run("sor", args, setup, warmup, timed, params={"n": n, "sweeps": sweeps, "omega": OMEGA})


if __name__ == "__main__":
    main()
