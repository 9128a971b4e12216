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
# Python itself keeps most of its memory until exit and frees some of it only
# through its own arenas: PYTHONMALLOC=malloc shows valgrind every block, and
# only definite leaks count (CPython's interned objects are still reachable).
# npvk's managed memory protects pages and handles the faults: valgrind
# delivers those SIGSEGVs to npvk's handler like the kernel does.
echo "memcheck: Black-Scholes under npvk"
PYTHONMALLOC=malloc PYTHONPATH="$build_dir/python" "${vg[@]}" --log-file="$out/python.log" \
  /usr/bin/python3 -m npvk examples/python/black_scholes.py --options 200000 --iterations 1 ||
  status=1
grep -E "ERROR SUMMARY|definitely lost|indirectly lost|possibly lost|still reachable" \
  "$out/python.log" | sed 's/^==[0-9]*== */memcheck: python: /'
exit $status
