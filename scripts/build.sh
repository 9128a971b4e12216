#!/usr/bin/env bash
# Configures and builds npvk in ./build (BUILD_DIR overrides), 2 jobs by default.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
# Repeated builds (a second NumPy, the wheel, the sanitizer build) reuse
# objects through ccache where it is installed.
if command -v ccache > /dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER="${CMAKE_C_COMPILER_LAUNCHER:-ccache}"
  export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"
fi
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "$@"
cmake --build "$build_dir" -j"${JOBS:-2}"
