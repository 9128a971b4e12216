#!/usr/bin/env bash
# The suite once more on Debian 12's own Mesa 22.3 lavapipe, which stays
# supported (install-mesa.sh keeps it in /opt/npvk/mesa-22.3 when it makes
# Mesa 25 the default): ctest's tests and the Python suite under Debian's
# NumPy, with the validation layer on, the loader told to use that driver
# only. Needs the build of scripts/build.sh. Where there is no stock copy
# (Debian 13, or NPVK_STOCK_MESA=1, whose default driver already is it), there
# is nothing to do.
set -euo pipefail
cd "$(dirname "$0")/.."
icd=/opt/npvk/mesa-22.3/lvp_icd.json
if [ ! -f "$icd" ]; then
  echo "test-stock-mesa: no stock Mesa 22.3 kept here: nothing to run"
  exit 0
fi
build_dir="${BUILD_DIR:-build}"
export VK_DRIVER_FILES="$icd" VK_ICD_FILENAMES="$icd"
# Kernels are cached per driver build anyway; a cache of its own keeps the
# default driver's runs independent of this one.
export NPVK_CACHE_DIR="$PWD/$build_dir/test-kernel-cache-mesa-22.3"
export NPVK_VALIDATION=1
driver=$("$build_dir/tools/npvk-info" | sed -n 's/^ *driver  *//p' | head -1)
echo "== test-stock-mesa: the suite on $driver =="
case "$driver" in
  *"Mesa 22."*) ;;
  *) echo "test-stock-mesa: $icd did not give Mesa 22.3's lavapipe"; exit 1 ;;
esac
status=0
ctest --test-dir "$build_dir" --output-on-failure -j"${JOBS:-2}" --timeout 600 -E '^pytest$' ||
  status=1
NUMPY_VERSIONS=system bash scripts/test-python.sh || status=1
exit $status
