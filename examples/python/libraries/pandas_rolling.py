"""A pandas analysis: per-sensor statistics, rolling and exponentially weighted
means of a noisy signal, and a derived column computed with NumPy.

    python3 examples/python/libraries/pandas_rolling.py --n 2000000 --out out.npz
"""

import argparse
import time

import numpy as np
import pandas as pd


def analyse(n):
    rng = np.random.default_rng(0)
    t = np.arange(n, dtype=np.float64)
    df = pd.DataFrame({
        "sensor": rng.integers(0, 64, n),
        "value": np.sin(t / 500.0) + 0.1 * rng.standard_normal(n),
        "load": rng.random(n) * 100.0,
    })
    df["power"] = np.sqrt(df["value"] ** 2 + (df["load"] / 100.0) ** 2) * np.exp(-df["load"] / 400.0)
    per_sensor = df.groupby("sensor").agg({"value": ["mean", "std", "max"], "power": ["sum", "mean"]})
    rolled = df["value"].rolling(256).mean()
    smoothed = df["power"].ewm(span=64).mean()
    return {
        "per_sensor": per_sensor.to_numpy(),
        "rolled": rolled.to_numpy(),
        "smoothed": smoothed.to_numpy(),
        "power": df["power"].to_numpy(),
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2_000_000)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    start = time.perf_counter()
    result = analyse(args.n)
    print(f"compute_s {time.perf_counter() - start:.4f}")
    np.savez(args.out, **result)
