#!/usr/bin/env bash
# Installs every Debian package npvk needs to build, test and run (Debian 12
# or 13), then the default driver (install-mesa.sh: on Debian 12, Mesa 25's
# lavapipe from bookworm-backports). Safe to re-run; skips apt-get entirely
# when everything is present.
set -euo pipefail

# clang's sanitizer runtimes come in a package named after Debian's default
# clang: 14 on Debian 12, 19 on Debian 13.
debian_major=$(cut -d. -f1 /etc/debian_version 2>/dev/null || echo 12)
case "$debian_major" in
  12) clang_rt=libclang-rt-14-dev ;;
  *) clang_rt=libclang-rt-19-dev ;;
esac

packages=(
  build-essential cmake pkg-config git gfortran
  libvulkan-dev libvulkan1 vulkan-validationlayers mesa-vulkan-drivers vulkan-tools
  libshaderc-dev glslang-dev spirv-tools libspirv-cross-c-shared-dev
  libmimalloc-dev libgtest-dev libgmock-dev libbenchmark-dev libboost-dev
  python3 python3-dev python3-numpy python3-pytest python3-pytest-xdist python3-hypothesis
  python3-numexpr
  # the sanitizer stage (scripts/test-sanitize.sh): clang with its ASan,
  # UBSan and libFuzzer runtimes, and valgrind for the memory-ownership check
  clang "$clang_rt" valgrind
  # venvs with NumPy versions from PyPI (scripts/test-python.sh), and the wheel
  python3-venv python3-pip
  # other libraries' own test suites (tests/libraries/run.py) and the library
  # examples (examples/python/libraries): Debian's packages ship their tests
  python3-scipy python3-pandas python3-dask python3-skimage python3-sklearn python3-matplotlib
  # one device per Dask worker and per MPI rank (tests/python/test_dask.py)
  python3-distributed python3-mpi4py openmpi-bin
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
else
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
bash "$(dirname "$0")/install-mesa.sh"
