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
# npvk-info finds libnpvk through its run path: no LD_LIBRARY_PATH, as for a user.
"$prefix/bin/npvk-info"
pydir=$(ls -d "$prefix"/lib/python3*/dist-packages 2>/dev/null | head -n 1)
echo
echo "== main job: examples/python/black_scholes.py, plain NumPy =="
/usr/bin/python3 examples/python/black_scholes.py --options 1000000 --iterations 2
echo
echo "== the same program with NPVK=1 on the default device =="
# The install's dist-packages is a site directory here, so NPVK=1 takes effect
# through npvk-autoload.pth exactly as it does after a system-wide install.
NPVK=1 NPVK_STATS=1 /usr/bin/python3 -c "import site, sys, runpy; site.addsitedir('$pydir'); \
sys.argv = ['black_scholes.py', '--options', '1000000', '--iterations', '2']; \
runpy.run_path('examples/python/black_scholes.py', run_name='__main__')"
