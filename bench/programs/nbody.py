#!/usr/bin/python3
"""N-body: direct-sum gravitational N-body simulation with softening and a
leapfrog (kick-drift) integrator. Each step forms the N x N pairwise
separations by broadcasting, the inverse cubed distances, and sums the
accelerations along one axis.

Work: about 17 elementwise ops on N x N float64 arrays plus 3 row sums per
step. Results: final positions and velocities."""

import numpy as np

import benchlib

# bodies, steps: N grows by sqrt(10) per size step (work is N^2)
SIZES = {"small": (630, 10), "medium": (2000, 10), "large": (6300, 10)}
G = 1.0
SOFTENING2 = 1e-3
DT = 1e-3


def accelerations(x, y, z, m):
    dx = x[None, :] - x[:, None]
    dy = y[None, :] - y[:, None]
    dz = z[None, :] - z[:, None]
    r2 = dx * dx + dy * dy + dz * dz + SOFTENING2
    inv_r3 = 1.0 / (r2 * np.sqrt(r2))
    f = (G * inv_r3) * m[None, :]
    return np.sum(f * dx, axis=1), np.sum(f * dy, axis=1), np.sum(f * dz, axis=1)


def step(state):
    x, y, z, vx, vy, vz, m = state
    ax, ay, az = accelerations(x, y, z, m)
    vx += ax * DT
    vy += ay * DT
    vz += az * DT
    x += vx * DT
    y += vy * DT
    z += vz * DT


def main():
    args = benchlib.parse_args(__doc__)
    n, steps = SIZES[args.size]

    def setup():
        rng = np.random.default_rng(42)
        x, y, z = rng.standard_normal((3, n))
        vx, vy, vz = 0.1 * rng.standard_normal((3, n))
        m = rng.uniform(0.5, 1.5, n) / n
        return [a.copy() for a in (x, y, z, vx, vy, vz, m)]

    def warmup(state):
        step(state)

    def timed(state):
        for _ in range(steps):
            step(state)
        x, y, z, vx, vy, vz, _ = state
        return {"pos": np.stack([x, y, z]), "vel": np.stack([vx, vy, vz])}

    benchlib.run("nbody", args, setup, warmup, timed, params={"bodies": n, "steps": steps})


if __name__ == "__main__":
    main()
