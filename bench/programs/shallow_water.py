#!/usr/bin/python3
"""Shallow water: the 2-D shallow water equations (height H, momenta U, V)
solved with the two-step Lax-Wendroff scheme on an (n+2)x(n+2) float64 grid,
starting from a water drop, with reflecting boundaries set by slice assignment
(after the classic MATLAB/Bohrium demo).

Work: about 140 elementwise ops (+ - * / and squares, no transcendentals) on
strided 2-D views and 15 slice assignments (12 edges, 3 interiors) per step.
Results: the final H, U, V."""

import numpy as np

import benchlib

# interior size n, time steps: n grows by sqrt(10) per size step
SIZES = {"small": (320, 5), "medium": (1000, 5), "large": (3200, 5)}
G = 9.8
DT = 0.02
DX = 1.0
DY = 1.0


def step(H, U, V):
    n = H.shape[0] - 2
    # reflecting boundary conditions
    H[:, 0] = H[:, 1]
    U[:, 0] = U[:, 1]
    V[:, 0] = -V[:, 1]
    H[:, n + 1] = H[:, n]
    U[:, n + 1] = U[:, n]
    V[:, n + 1] = -V[:, n]
    H[0, :] = H[1, :]
    U[0, :] = -U[1, :]
    V[0, :] = V[1, :]
    H[n + 1, :] = H[n, :]
    U[n + 1, :] = -U[n, :]
    V[n + 1, :] = V[n, :]

    # first half step, x direction
    Hx = (H[1:, 1:-1] + H[:-1, 1:-1]) / 2 - DT / (2 * DX) * (U[1:, 1:-1] - U[:-1, 1:-1])
    Ux = (U[1:, 1:-1] + U[:-1, 1:-1]) / 2 - DT / (2 * DX) * (
        (U[1:, 1:-1] ** 2 / H[1:, 1:-1] + G / 2 * H[1:, 1:-1] ** 2)
        - (U[:-1, 1:-1] ** 2 / H[:-1, 1:-1] + G / 2 * H[:-1, 1:-1] ** 2))
    Vx = (V[1:, 1:-1] + V[:-1, 1:-1]) / 2 - DT / (2 * DX) * (
        (U[1:, 1:-1] * V[1:, 1:-1] / H[1:, 1:-1])
        - (U[:-1, 1:-1] * V[:-1, 1:-1] / H[:-1, 1:-1]))
    # first half step, y direction
    Hy = (H[1:-1, 1:] + H[1:-1, :-1]) / 2 - DT / (2 * DY) * (V[1:-1, 1:] - V[1:-1, :-1])
    Uy = (U[1:-1, 1:] + U[1:-1, :-1]) / 2 - DT / (2 * DY) * (
        (V[1:-1, 1:] * U[1:-1, 1:] / H[1:-1, 1:])
        - (V[1:-1, :-1] * U[1:-1, :-1] / H[1:-1, :-1]))
    Vy = (V[1:-1, 1:] + V[1:-1, :-1]) / 2 - DT / (2 * DY) * (
        (V[1:-1, 1:] ** 2 / H[1:-1, 1:] + G / 2 * H[1:-1, 1:] ** 2)
        - (V[1:-1, :-1] ** 2 / H[1:-1, :-1] + G / 2 * H[1:-1, :-1] ** 2))

    # second half step
    H[1:-1, 1:-1] = (H[1:-1, 1:-1]
                     - (DT / DX) * (Ux[1:, :] - Ux[:-1, :])
                     - (DT / DY) * (Vy[:, 1:] - Vy[:, :-1]))
    U[1:-1, 1:-1] = (U[1:-1, 1:-1]
                     - (DT / DX) * ((Ux[1:, :] ** 2 / Hx[1:, :] + G / 2 * Hx[1:, :] ** 2)
                                    - (Ux[:-1, :] ** 2 / Hx[:-1, :] + G / 2 * Hx[:-1, :] ** 2))
                     - (DT / DY) * ((Vy[:, 1:] * Uy[:, 1:] / Hy[:, 1:])
                                    - (Vy[:, :-1] * Uy[:, :-1] / Hy[:, :-1])))
    V[1:-1, 1:-1] = (V[1:-1, 1:-1]
                     - (DT / DX) * ((Ux[1:, :] * Vx[1:, :] / Hx[1:, :])
                                    - (Ux[:-1, :] * Vx[:-1, :] / Hx[:-1, :]))
                     - (DT / DY) * ((Vy[:, 1:] ** 2 / Hy[:, 1:] + G / 2 * Hy[:, 1:] ** 2)
                                    - (Vy[:, :-1] ** 2 / Hy[:, :-1] + G / 2 * Hy[:, :-1] ** 2)))


def main():
    args = benchlib.parse_args(__doc__)
    n, steps = SIZES[args.size]

    def setup():
        H = np.ones((n + 2, n + 2))
        U = np.zeros((n + 2, n + 2))
        V = np.zeros((n + 2, n + 2))
        # a water drop: a smooth polynomial bump, off centre (only + - * /, so
        # every variant starts from bit-identical water)
        x = np.linspace(-1.0, 1.0, n + 2)
        r2 = (x[:, None] + 0.3) ** 2 + (x[None, :] - 0.2) ** 2
        H += 0.5 * np.maximum(0.0, 1.0 - r2 / 0.09) ** 2
        return H, U, V

    def warmup(state):
        step(*state)

    def timed(state):
        H, U, V = state
        for _ in range(steps):
            step(H, U, V)
        return {"H": H, "U": U, "V": V}

    benchlib.run("shallow_water", args, setup, warmup, timed,
                 params={"n": n, "steps": steps, "dt": DT})


if __name__ == "__main__":
    main()
