#!/usr/bin/env bash
# Configures and builds npvk in ./build (BUILD_DIR overrides), 2 jobs by default.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "$@"
cmake --build "$build_dir" -j"${JOBS:-2}"
