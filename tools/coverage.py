#!/usr/bin/env python3
"""Write docs/coverage.md: for every NumPy ufunc and dtype, does npvk run it on the device?

For each ufunc in NumPy's namespace and each dtype among bool, int8-int64,
uint8-uint64, float16, float32, float64, complex64 and complex128, the NumPy
loops whose first input has that dtype are looked up in npvk's op table
(npvk_op_get_info, by NumPy name; radians/degrees are deg2rad/rad2deg's
loops, and NumPy 1.24 names true_divide's ufunc divide) and asked of npvk_op_supported on the default device:

    device    npvk has these loops (npvk.enable() replaces NumPy's with them)
    partial   npvk has some of them
    fallback  NumPy has the loop, npvk does not: NumPy's own loop runs
    (blank)   NumPy has no loop for this dtype

    /usr/bin/python3 tools/coverage.py [--lib build/libnpvk.so] [--write docs/coverage.md]
"""
import argparse
import ctypes
import os
import sys

import numpy as np

import mdblock

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# npvk_dtype codes (include/npvk/npvk.h) by NumPy type character.
NPVK_DTYPE = {"?": 0, "b": 1, "h": 2, "i": 3, "l": 4, "q": 4, "B": 5, "H": 6, "I": 7, "L": 8,
              "Q": 8, "e": 9, "f": 10, "d": 11}
NUMERIC = set("?bBhHiIlLqQefdgFDG")
COLUMNS = [("bool", "?"), ("int8", "b"), ("int16", "h"), ("int32", "i"), ("int64", "l"),
           ("uint8", "B"), ("uint16", "H"), ("uint32", "I"), ("uint64", "L"), ("float16", "e"),
           ("float32", "f"), ("float64", "d"), ("complex64", "F"), ("complex128", "D")]
# NumPy ufuncs that are the same loops under a second name (distinct ufunc objects).
ALIASES = {"radians": "deg2rad", "degrees": "rad2deg", "divide": "true_divide"}


class OpInfo(ctypes.Structure):
    # npvk_op_info of npvk.h
    _fields_ = [("struct_size", ctypes.c_uint32), ("nin", ctypes.c_uint32), ("nout", ctypes.c_uint32),
                ("implemented", ctypes.c_uint32), ("name", ctypes.c_char_p)]


class Handle(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint64)]


def load(lib_path):
    lib = ctypes.CDLL(lib_path)
    lib.npvk_op_get_info.argtypes = [ctypes.c_int, ctypes.POINTER(OpInfo)]
    lib.npvk_context_create.argtypes = [ctypes.c_void_p, ctypes.POINTER(Handle)]
    lib.npvk_op_supported.argtypes = [Handle, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                      ctypes.c_uint32, ctypes.POINTER(ctypes.c_int)]
    lib.npvk_context_release.argtypes = [Handle]
    return lib


def op_table(lib):
    ops = {}
    for op in range(256):
        info = OpInfo()
        info.struct_size = ctypes.sizeof(OpInfo)
        if lib.npvk_op_get_info(op, ctypes.byref(info)) != 0:
            break
        ops[info.name.decode()] = op
    return ops


def supported(lib, ctx, op, sig):
    codes = [NPVK_DTYPE.get(c) for c in sig.replace("->", "")]
    if op is None or None in codes:
        return False
    ok = ctypes.c_int(0)
    arr = (ctypes.c_int * len(codes))(*codes)
    return lib.npvk_op_supported(ctx, op, arr, len(codes), ctypes.byref(ok)) == 0 and ok.value == 1


def coverage(lib, ctx):
    ops = op_table(lib)
    ufuncs = {n: getattr(np, n) for n in dir(np) if isinstance(getattr(np, n), np.ufunc)}
    # clip is a ufunc only in NumPy's umath module (np.clip is a function calling it).
    ufuncs["clip"] = np.core.umath.clip
    seen = set()
    rows = []
    for name, uf in sorted(ufuncs.items()):
        if id(uf) in seen:
            continue                    # np.abs is np.absolute, ...
        seen.add(id(uf))
        op = ops.get(ALIASES.get(uf.__name__, uf.__name__))
        cells = []
        for _, ch in COLUMNS:
            # numeric loops only (not multiply's 'dm->m' on timedeltas, say)
            sigs = [t for t in dict.fromkeys(uf.types)
                    if t.split("->")[0][0] == ch and set(t.replace("->", "")) <= NUMERIC]
            if not sigs:
                cells.append("")
                continue
            ok = [supported(lib, ctx, op, t) for t in sigs]
            cells.append("device" if all(ok) else "partial" if any(ok) else "fallback")
        rows.append((uf.__name__ if uf.__name__ == name else f"{name} ({uf.__name__})", cells))
    return rows


def markdown(rows):
    head = "| ufunc | " + " | ".join(c for c, _ in COLUMNS) + " |"
    out = [head, "|---" * (len(COLUMNS) + 1) + "|"]
    for name, cells in rows:
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    count = {k: sum(c == k for _, cs in rows for c in cs) for k in ("device", "partial", "fallback")}
    return ("\n".join(out) + f"\n\n(ufunc, dtype) pairs: {count['device']} on the device, "
            f"{count['partial']} partly, {count['fallback']} on NumPy's path.\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=os.path.join(ROOT, "build", "libnpvk.so"))
    ap.add_argument("--write")
    opts = ap.parse_args()
    lib = load(opts.lib)
    ctx = Handle()
    if lib.npvk_context_create(None, ctypes.byref(ctx)) != 0:
        sys.exit("npvk_context_create failed: no Vulkan device")
    text = markdown(coverage(lib, ctx))
    lib.npvk_context_release(ctx)
    mdblock.emit(text, opts.write, "coverage.py")


if __name__ == "__main__":
    main()
