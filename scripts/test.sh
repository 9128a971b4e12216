#!/usr/bin/env bash
# The README's test command: installs dependencies, builds, and runs every test
# on the default Vulkan device (lavapipe without a GPU) with the Khronos
# validation layer on: ctest's C++, C, Fortran and install tests, then the
# Python suite under each NumPy (scripts/test-python.sh: Debian's, and two
# NumPy 2.x from PyPI with npvk's wheel). Exits non-zero if any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
build_dir="${BUILD_DIR:-build}"
# Tests share one kernel cache under the build tree, never the user's.
export NPVK_CACHE_DIR="$PWD/$build_dir/test-kernel-cache"
export NPVK_VALIDATION=1
status=0
# ctest's "pytest" is the Python suite under Debian's NumPy, which
# test-python.sh runs itself (printing pytest's summary).
ctest --test-dir "$build_dir" --output-on-failure -j"${JOBS:-2}" --timeout 600 -E '^pytest$' ||
  status=1
bash scripts/test-python.sh || status=1
# Other libraries' own tests, a quick selection, plain / NPVK=1 / NPVK_MIN_BYTES=0
# (tests/libraries/run.py; the full selection is run without --quick).
/usr/bin/python3 tests/libraries/run.py --quick --summary --build-dir "$build_dir" \
  --cache-dir "$NPVK_CACHE_DIR" --out-dir "$build_dir/library-tests" || status=1
exit $status
