#!/usr/bin/env bash
# The README's main command: installs dependencies, builds, installs npvk into
# ./install (PREFIX overrides), shows the Vulkan devices, and runs the main job
# on the default device.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
prefix="${PREFIX:-$PWD/install}"
cmake --install "${BUILD_DIR:-build}" --prefix "$prefix"
export LD_LIBRARY_PATH="$prefix/lib:$prefix/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
"$prefix/bin/npvk-info"
echo
echo "== main job: the C example through the installed library =="
"${BUILD_DIR:-build}/examples/npvk_example_c"
