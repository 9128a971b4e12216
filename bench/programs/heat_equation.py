#!/usr/bin/python3
"""Heat equation: explicit finite differences for du/dt = alpha * laplace(u)
on an (n+2)x(n+2) float64 plate with a hot left edge, ping-ponging between two
grids. The interior update writes straight into the other grid's interior view
with a ufunc out= argument (no slice assignment).

Work: 7 elementwise ops on strided 2-D views per step. Result: the final grid."""

import numpy as np

import benchlib

# interior size n, time steps: n grows by sqrt(10) per size step
SIZES = {"small": (320, 50), "medium": (1000, 50), "large": (3200, 50)}
ALPHA = 0.2  # alpha*dt/dx^2, stable below 0.25


def step_numpy(u, un):
    lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
    np.add(u[1:-1, 1:-1], ALPHA * lap, out=un[1:-1, 1:-1])


def step_numexpr(u, un):
    import numexpr as ne
    ne.evaluate("c + alpha * (n + s + e + w - 4.0 * c)",
                local_dict={"c": u[1:-1, 1:-1], "n": u[2:, 1:-1], "s": u[:-2, 1:-1],
                            "e": u[1:-1, 2:], "w": u[1:-1, :-2], "alpha": ALPHA},
                out=un[1:-1, 1:-1])


# Module level, so that bench/compare-reference builds the same grid and
# result for the hand-written reference kernel.
def make_grid(n):
    u = np.zeros((n + 2, n + 2))
    u[:, 0] = 100.0
    x = np.linspace(0.0, 1.0, n + 2)
    u[-1, :] = 200.0 * x * (1.0 - x)   # a parabolic profile on the bottom edge
    return u


def solve(u, un, steps, step=step_numpy):
    """`steps` steps ping-ponging between u and un; the final grid."""
    for _ in range(steps):
        step(u, un)
        u, un = un, u
    return {"u": u}


def main():
    args = benchlib.parse_args(__doc__, numexpr=True)
    n, steps = SIZES[args.size]
    step = step_numexpr if args.numexpr else step_numpy

    def setup():
        u = make_grid(n)
        return u, u.copy()

    def warmup(state):
        step(*state)

    def timed(state):
        u, un = state
        return solve(u, un, steps, step)

    benchlib.run("heat_equation", args, setup, warmup, timed,
                 params={"n": n, "steps": steps, "alpha": ALPHA})


if __name__ == "__main__":
    main()
