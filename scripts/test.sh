#!/usr/bin/env bash
# The README's test command: installs dependencies, builds, and runs every test
# on the default Vulkan device (lavapipe without a GPU) with the Khronos
# validation layer on. Exits non-zero if any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
build_dir="${BUILD_DIR:-build}"
# Tests share one kernel cache under the build tree, never the user's.
export NPVK_CACHE_DIR="$PWD/$build_dir/test-kernel-cache"
export NPVK_VALIDATION=1
ctest --test-dir "$build_dir" --output-on-failure -j"${JOBS:-2}" --timeout 600
