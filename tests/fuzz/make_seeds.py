"""Writes the hand-made seeds of tests/fuzz/corpus (run from the repository
root). Each capi seed is a program in fuzz_capi.cpp's byte code; libFuzzer
mutates from there, and the inputs it keeps that found bugs are added to the
corpus beside them."""

import os
import struct

OPS = dict(create_buffer=0, wrap_host=1, view=2, scalar=4, apply=5, sync=7, rw=8, query=9,
           release=10)
DTYPE = dict(bool=0, int32=1, uint8=2, int64=3, float32=4, float64=5, float16=6)
OP = dict(add=0, multiply=1, negative=2, sqrt=3, less=4, where=5, cast=6, divmod=7)


def buffer(nbytes):
    return [OPS["create_buffer"], nbytes // 8, 1]


def view(buf, dtype, shape, strides=None, offset=0):
    out = [OPS["view"], buf, DTYPE[dtype], len(shape)]
    for k, n in enumerate(shape):
        s = strides[k] if strides else 0
        out += [n + 1, s & 0xFF]
    return out + [offset, 1, 1, 0 if strides else 1]


def apply(op, *views):
    out = [OPS["apply"], OP[op], 1]
    for v in views:
        out += [1, v]
    return out


def read(buf, size):
    return [OPS["rw"], 0, buf, 0, 0, size, 1]


def seeds():
    add = (buffer(64) * 3 + view(0, "float64", [8]) + view(1, "float64", [8]) +
           view(2, "float64", [8]) + apply("add", 0, 1, 2) + [OPS["sync"]] + read(2, 64))
    yield "add_float64", add
    # A strided 2-d view (even stride byte: element strides) and a broadcast.
    strided = (buffer(256) * 2 + view(0, "float32", [3, 4], [32, 8]) + view(1, "float32", [4]) +
               view(1, "float32", [3, 4], None, 64) + apply("multiply", 0, 1, 2) + read(1, 255))
    yield "strided_broadcast", strided
    # Releases first, then uses the stale handles.
    stale = (buffer(64) + view(0, "int32", [4]) + [OPS["release"], 0, 0] +
             [OPS["release"], 1, 1, 0] + apply("negative", 0, 0) + [OPS["sync"]])
    yield "stale_handles", stale
    scalar = ([OPS["wrap_host"], 0, 1] + view(0, "float64", [16]) + [OPS["scalar"]] +
              list(struct.pack(">Q", 0x4000000000000000)) + [DTYPE["float64"]] +
              apply("add", 0, 1, 0) + [OPS["query"], 0, 2] + read(0, 128))
    yield "wrapped_scalar", scalar
    where = (buffer(64) * 3 + view(0, "bool", [8]) + view(1, "float64", [8]) +
             view(2, "float64", [8]) + apply("where", 0, 1, 1, 2) + apply("divmod", 1, 1, 2, 1))
    yield "where_divmod", where


def kernel_cache_seeds():
    spirv = struct.pack("<5I", 0x07230203, 0x00010500, 0, 8, 0)
    yield "raw_garbage", b"\x00" + b"NPVKCAC1" + bytes(40)
    yield "wellformed_spirv_header", b"\x02" + spirv
    yield "wellformed_blob", b"\x03" + b"pipeline cache bytes"
    yield "bad_size", b"\x0a" + spirv
    yield "huge_size", b"\x12" + spirv


def main():
    for name, program in seeds():
        with open(os.path.join("tests/fuzz/corpus/capi", name), "wb") as f:
            f.write(bytes(b & 0xFF for b in program))
    for name, data in kernel_cache_seeds():
        with open(os.path.join("tests/fuzz/corpus/kernel_cache", name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
