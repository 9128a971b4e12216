"""scipy.ndimage on a large image: Gaussian smoothing, Sobel gradient magnitude
(NumPy's hypot on SciPy's output), a median filter and a labelled threshold.

    python3 examples/python/libraries/ndimage_filters.py --size 2048 --out out.npz
"""

import argparse
import time

import numpy as np
from scipy import ndimage


def filter_image(size):
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:size, 0:size] / size
    image = np.sin(12 * x) * np.cos(9 * y) + 0.2 * rng.standard_normal((size, size))
    smooth = ndimage.gaussian_filter(image, sigma=3.0)
    magnitude = np.hypot(ndimage.sobel(smooth, axis=0), ndimage.sobel(smooth, axis=1))
    median = ndimage.median_filter(image[: size // 2, : size // 2], size=3)
    mask = smooth > smooth.mean() + 0.5 * smooth.std()
    labels, count = ndimage.label(mask)
    return {"smooth": smooth, "magnitude": magnitude, "median": median,
            "labels": labels, "count": np.array([count])}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    start = time.perf_counter()
    result = filter_image(args.size)
    print(f"compute_s {time.perf_counter() - start:.4f}")
    np.savez(args.out, **result)
