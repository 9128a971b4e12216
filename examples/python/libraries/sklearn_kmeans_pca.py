"""scikit-learn: standardise a data set, fit PCA, then KMeans (Lloyd, one init)
on the projected data.

    python3 examples/python/libraries/sklearn_kmeans_pca.py --n 100000 --out out.npz
"""

import argparse
import time

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.decomposition import PCA
from sklearn.preprocessing import StandardScaler


def fit(n):
    x, _ = make_blobs(n_samples=n, n_features=50, centers=8, random_state=0)
    x = StandardScaler().fit_transform(x)
    pca = PCA(n_components=10, svd_solver="full").fit(x)
    projected = pca.transform(x)
    km = KMeans(n_clusters=8, n_init=1, algorithm="lloyd", random_state=0).fit(projected)
    # PCA's components are defined up to sign; sklearn fixes it (svd_flip), so
    # they are compared as they are.
    return {
        "components": pca.components_,
        "explained_variance": pca.explained_variance_,
        "centers": km.cluster_centers_,
        "labels": km.labels_,
        "inertia": np.array([km.inertia_]),
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    start = time.perf_counter()
    result = fit(args.n)
    print(f"compute_s {time.perf_counter() - start:.4f}")
    np.savez(args.out, **result)
