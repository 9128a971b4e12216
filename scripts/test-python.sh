#!/usr/bin/env bash
# The Python suite (tests/python) under each NumPy npvk supports, one pytest
# run each, validation layer on. Each run ends with pytest's summary line,
# after a line naming the NumPy and Python it ran under.
#
#   NUMPY_VERSIONS="system newest older mirrored"   (the default)
#     system  Debian's python3 and NumPy, with the CMake build's package
#             (build/python; scripts/build.sh makes it)
#     mirrored  system again with NPVK_ZERO_COPY=0: device copies of every
#             array, the memory path of discrete GPUs, on lavapipe
#     newest  the newest NumPy 2.x on PyPI, in a venv with npvk's wheel
#     older   an older NumPy 2.x in a venv with the wheel: 2.0 where the
#             Python has its wheels (3.9-3.12), else 2.1
#     X.Y.Z   that NumPy, in a venv with the wheel
#
# The wheel is built once (pip wheel ., scikit-build-core) into
# $BUILD_DIR/wheel; the venvs live in $BUILD_DIR/venvs. Extra pytest
# arguments pass through: scripts/test-python.sh -x -k float16
# Exits non-zero if any run failed.
set -uo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
python=/usr/bin/python3
versions=(${NUMPY_VERSIONS:-system newest older mirrored})
export NPVK_CACHE_DIR="${NPVK_CACHE_DIR:-$PWD/$build_dir/test-kernel-cache}"
export NPVK_VALIDATION=1 PYTHONDONTWRITEBYTECODE=1
pytest_args=(-q -p no:cacheprovider tests/python "$@")
# Tests run on PYTEST_WORKERS processes (pytest-xdist; default 2, the cores
# here): about 3x faster than one, since a test spends much of its time in
# waits (kernel compiles, subprocesses, syncs) that the other process fills.
# 1 runs them in one process, in file order.
workers="${PYTEST_WORKERS:-2}"

pip_spec() {  # the pip requirement of a version word
  case "$1" in
    newest) echo "numpy<3" ;;
    older)
      if "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 13) else 1)'; then
        echo "numpy==2.1.*"
      else
        echo "numpy==2.0.*"
      fi ;;
    *) echo "numpy==$1" ;;
  esac
}

wheel=""
build_wheel() {
  [ -n "$wheel" ] && return 0
  local builder="$build_dir/venvs/wheel-builder"
  [ -x "$builder/bin/pip" ] || "$python" -m venv "$builder" || return 1
  rm -rf "$build_dir/wheel"
  echo "test-python: building the wheel into $build_dir/wheel"
  "$builder/bin/pip" wheel -q --no-deps -w "$build_dir/wheel" . || return 1
  wheel=$(ls "$build_dir"/wheel/npvk-*.whl)
}

status=0
summaries=()
for v in "${versions[@]}"; do
  mode=""
  if [ "$v" = system ]; then
    run=(env PYTHONPATH="$PWD/$build_dir/python" "$python")
  elif [ "$v" = mirrored ]; then
    run=(env PYTHONPATH="$PWD/$build_dir/python" NPVK_ZERO_COPY=0 "$python")
    mode=", NPVK_ZERO_COPY=0"
  else
    build_wheel || { echo "test-python: the wheel did not build"; exit 1; }
    venv="$build_dir/venvs/numpy-$v"
    if [ ! -x "$venv/bin/python" ]; then
      "$python" -m venv "$venv" &&
        "$venv/bin/pip" install -q "$(pip_spec "$v")" pytest pytest-xdist hypothesis ||
        { echo "test-python: no venv for NumPy $v"; status=1; continue; }
    fi
    "$venv/bin/pip" install -q --force-reinstall --no-deps "$wheel" || { status=1; continue; }
    run=(env -u PYTHONPATH "$venv/bin/python")
  fi
  label=$("${run[@]}" -c 'import sys, numpy; print(f"numpy {numpy.__version__}, python {sys.version.split()[0]}")')$mode
  echo "== test-python: the Python suite under $label =="
  parallel=()
  if [ "$workers" -gt 1 ] && "${run[@]}" -c "import xdist" 2> /dev/null; then
    parallel=(-n "$workers")
  fi
  "${run[@]}" -m pytest "${parallel[@]}" "${pytest_args[@]}"
  rc=$?
  [ $rc -eq 0 ] || status=1
  summaries+=("test-python: $label: pytest exit $rc")
done
printf '%s\n' "${summaries[@]}"
exit $status
