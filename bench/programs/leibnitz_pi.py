#!/usr/bin/python3
"""Leibniz pi: pi = 4 * sum_k (-1)^k / (2k + 1), with consecutive terms paired
(as in the Bohrium/benchpress benchmark) so that every term is positive:
pi = sum_n 8 / ((4n + 1) (4n + 3)). The n are generated in chunks with
arange (float64), turned into terms elementwise and summed per chunk.

Work: 6 elementwise ops and one sum per term pair. Results: the per-chunk
partial sums and the pi estimate."""

import numpy as np

import benchlib

# chunk length, chunks: small 10.5M term pairs, medium 105M, large 1.05G
SIZES = {"small": (1 << 20, 10), "medium": (1 << 21, 50), "large": (1 << 21, 500)}


def chunk_numpy(n):
    return np.sum(8.0 / ((4.0 * n + 1.0) * (4.0 * n + 3.0)))


def chunk_numexpr(n):
    import numexpr as ne
    return ne.evaluate("sum(8.0 / ((4.0 * n + 1.0) * (4.0 * n + 3.0)))")[()]


def main():
    args = benchlib.parse_args(__doc__, numexpr=True)
    length, chunks = SIZES[args.size]
    chunk = chunk_numexpr if args.numexpr else chunk_numpy

    def setup():
        return None

    def warmup(_):
        chunk(np.arange(0, length, dtype=np.float64))

    def timed(_):
        partial = np.empty(chunks)
        for i in range(chunks):
            n = np.arange(i * length, (i + 1) * length, dtype=np.float64)
            partial[i] = chunk(n)
        pi = np.sum(partial)
        return {"partial": partial, "pi": np.array([pi])}

    benchlib.run("leibnitz_pi", args, setup, warmup, timed,
                 params={"terms": length * chunks, "chunk": length})


if __name__ == "__main__":
    main()
