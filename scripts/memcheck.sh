#!/usr/bin/env bash
# Memory ownership check (not in CI: minutes under valgrind): runs valgrind's
# memcheck with full leak checking on the C example and on a NumPy program
# under npvk (Black-Scholes, small), from the build in ./build (BUILD_DIR).
# Fails on any memory error or definite leak; prints valgrind's summaries.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
out="$build_dir/memcheck"
mkdir -p "$out"
export NPVK_CACHE_DIR="$PWD/$build_dir/test-kernel-cache"
vg=(valgrind --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite --num-callers=40 --error-exitcode=99)
status=0
echo "memcheck: C example"
"${vg[@]}" --log-file="$out/c_example.log" "$build_dir/examples/npvk_example_c" || status=1
grep -E "ERROR SUMMARY|definitely lost|indirectly lost|possibly lost|still reachable" \
  "$out/c_example.log" | sed 's/^==[0-9]*== */memcheck: c: /'
# A NumPy program, for information: CPython and NumPy (without valgrind
# suppressions of their own) report blocks valgrind cannot see freed, and
# lavapipe keeps pointers in JIT-mapped memory (see tests/sanitize/lsan.supp).
# What counts here is a report whose stack passes through npvk's own code
# before any driver frame; the script lists those. PYTHONMALLOC=malloc shows
# valgrind every block. npvk's managed memory protects pages and handles the
# faults: valgrind delivers those SIGSEGVs to npvk's handler like the kernel.
echo "memcheck: Black-Scholes under npvk (informational)"
PYTHONMALLOC=malloc PYTHONPATH="$build_dir/python" valgrind --leak-check=full \
  --show-leak-kinds=definite --num-callers=40 --log-file="$out/python.log" \
  /usr/bin/python3 -m npvk examples/python/black_scholes.py --options 200000 --iterations 1 || true
grep -E "ERROR SUMMARY|definitely lost:|indirectly lost:|possibly lost:|still reachable:" \
  "$out/python.log" | sed 's/^==[0-9]*== */memcheck: python: /'
# Each report's first frame in a named library or in npvk's sources.
python3 - "$out/python.log" <<'PY'
import re, sys
blocks = re.split(r"\n==\d+== \n", open(sys.argv[1]).read())
ours = 0
for b in blocks:
    frames = re.findall(r"(?:at|by) 0x[0-9A-F]+: (.*)", b)
    first = next((f for f in frames if "vgpreload" not in f and "malloc" not in f), "")
    if "npvk::" in first or "npvk_" in first:
        ours += 1
        print("memcheck: python: npvk frame first:", first)
print(f"memcheck: python: {ours} reports start in npvk's code")
PY
exit $status
