"""matplotlib: a figure of a computed field (the potential of a few point
charges on a grid, with its contours), written as PNG.

    python3 examples/python/libraries/matplotlib_field.py --size 1000 --out field.png
"""

import argparse
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def potential(size):
    y, x = np.mgrid[-2:2:size * 1j, -2:2:size * 1j]
    field = np.zeros_like(x)
    for qx, qy, q in ((-0.8, 0.3, 1.0), (0.9, -0.4, -1.5), (0.1, 1.1, 0.7)):
        field += q / np.sqrt((x - qx) ** 2 + (y - qy) ** 2 + 0.05)
    return x, y, field


def draw(size, out):
    x, y, field = potential(size)
    fig, ax = plt.subplots(figsize=(6, 5), dpi=100)
    image = ax.imshow(field, extent=(-2, 2, -2, 2), origin="lower", cmap="viridis")
    ax.contour(x, y, field, levels=12, colors="white", linewidths=0.6)
    fig.colorbar(image, ax=ax)
    fig.savefig(out, metadata={"Software": None})  # no version string: bytes depend on pixels only
    plt.close(fig)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    start = time.perf_counter()
    draw(args.size, args.out)
    print(f"compute_s {time.perf_counter() - start:.4f}")
