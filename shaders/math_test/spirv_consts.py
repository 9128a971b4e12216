#!/usr/bin/env python3
"""1) Check that every double literal (..LF) in math_f64.glsl appears, as the
exactly intended double, among the 64-bit float OpConstants of the compiled
SPIR-V module (guards against a lossy literal parser in the GLSL compiler).
Also rejects double-looking literals without the LF suffix (GLSL would make
them single precision).
2) Check that every float64 add/sub/mul/div/negate in the module carries the
NoContraction decoration (i.e. `precise` reached every double operation, so
no driver may contract a*b+c into an fma or reassociate)."""
import re
import struct
import sys

src_path, spv_path = sys.argv[1], sys.argv[2]
src = open(src_path).read()
code = re.sub(r"//[^\n]*", "", src)
code = re.sub(r"/\*.*?\*/", "", code, flags=re.S)

num = re.compile(r"(?<![\w.])(\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)([A-Za-z]*)")
lits, bad = set(), []
for m in num.finditer(code):
    if m.group(2) == "LF":
        lits.add(float(m.group(1)))
    else:
        bad.append(m.group(0))
if bad:
    print("FAIL: floating literals without LF suffix:", bad[:10])
    sys.exit(1)

words = struct.unpack("<%dI" % (len(open(spv_path, "rb").read()) // 4), open(spv_path, "rb").read())
assert words[0] == 0x07230203
f64_types, consts = set(), set()
no_contraction, f64_arith = set(), []
i = 5
while i < len(words):
    wc, op = words[i] >> 16, words[i] & 0xFFFF
    if op == 22 and words[i + 2] == 64:          # OpTypeFloat 64
        f64_types.add(words[i + 1])
    elif op == 71 and words[i + 2] == 42:         # OpDecorate id NoContraction
        no_contraction.add(words[i + 1])
    elif op in (127, 129, 131, 133, 136) and words[i + 1] in f64_types:
        f64_arith.append(words[i + 2])            # OpFNegate/FAdd/FSub/FMul/FDiv
    elif op == 43 and words[i + 1] in f64_types:  # OpConstant
        lo, hi = words[i + 3], words[i + 4]
        consts.add(abs(struct.unpack("<d", struct.pack("<Q", lo | (hi << 32)))[0]))
    i += wc
# (--no-literals: a variant that legitimately drops some constants)
missing = [] if "--no-literals" in sys.argv else [v for v in lits if abs(v) not in consts]
if missing:
    print("FAIL: %d literal(s) not found exactly in SPIR-V: %s" % (len(missing), [repr(v) for v in missing[:10]]))
    sys.exit(1)
if "--no-literals" not in sys.argv:
    print("ok: all %d distinct double literals are exact in the SPIR-V (%d f64 constants)" % (len(lits), len(consts)))

unmarked = [r for r in f64_arith if r not in no_contraction]
if not f64_arith or unmarked:
    print("FAIL: %d of %d float64 arithmetic ops lack NoContraction (ids %s)"
          % (len(unmarked), len(f64_arith), unmarked[:10]))
    sys.exit(1)
print("ok: all %d float64 add/sub/mul ops are NoContraction (precise)" % len(f64_arith))
