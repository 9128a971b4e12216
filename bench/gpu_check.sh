#!/usr/bin/env bash
# One prepared check for a machine with a real GPU (written for an NVIDIA H200
# box without network). Run it from the repository root, or anywhere:
#
#     bash bench/gpu_check.sh            # results and logs in $OUT, else bench/results/
#
# Steps, each logged with its time and exit status; a failing step is recorded
# and the script goes on, so the benchmark runs even when a test fails:
#   1. unpack carried Vulkan loader .debs from .gl/ (if the folder exists)
#   2. show the GPU and the Vulkan devices (nvidia-smi, vulkaninfo, npvk-info)
#   3. configure and build into build-gpu/ (-j16)
#   4. ctest
#   5. pytest tests/python (if that folder exists)
#   6. bench/run --size large --runs 3 with what is left of the time budget
#      (BENCH_SIZE, BENCH_RUNS, TOTAL_S, BENCH_MIN and JOBS override the defaults)
#
# The whole script stays under TOTAL_S seconds (default 480): every step runs
# under `timeout`, and the benchmark gets the remaining time (--budget makes it
# stop starting runs; each round covers every program, so a cut keeps whole
# rounds). Exit status: 0 if every step passed, else 1 (see summary.txt).
set -u

cd "$(dirname "$0")/.." || exit 1
REPO=$(pwd)
START=$(date +%s)
TOTAL_S=${TOTAL_S:-480}
JOBS=${JOBS:-16}
PY=${PYTHON:-/usr/bin/python3}
SIZE=${BENCH_SIZE:-large}
RUNS=${BENCH_RUNS:-3}
BUILD=${BUILD_DIR:-build-gpu}
STAMP=$(date +%Y%m%d-%H%M%S)
DEST=${OUT:-$REPO/bench/results}/gpu-check-$STAMP
mkdir -p "$DEST"
SUMMARY=$DEST/summary.txt
FAILED=0
: >"$SUMMARY"

elapsed() { echo $(( $(date +%s) - START )); }
left() { echo $(( TOTAL_S - $(elapsed) )); }
note() { echo "[gpu_check +$(elapsed)s] $*" | tee -a "$SUMMARY"; }

# step NAME LIMIT_S COMMAND...: run under timeout, log to $DEST/NAME.log
step() {
  local name=$1 limit=$2
  shift 2
  if [ "$limit" -lt 10 ]; then
    note "SKIP $name: no time left ($(left)s of ${TOTAL_S}s)"
    FAILED=1
    return 1
  fi
  local shown="$*"
  shown=${shown//$'\n'/ }
  note "START $name (limit ${limit}s): ${shown:0:200}"
  local t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" >"$DEST/$name.log" 2>&1
  local rc=$?
  local dt=$(( $(date +%s) - t0 ))
  if [ $rc -eq 0 ]; then
    note "PASS  $name (${dt}s)"
  else
    [ $rc -eq 124 ] && note "TIMEOUT $name after ${dt}s" || note "FAIL  $name: exit $rc (${dt}s)"
    tail -n 30 "$DEST/$name.log" | sed 's/^/    /' | tee -a "$SUMMARY"
    FAILED=1
  fi
  return $rc
}

note "repo $REPO, results in $DEST, budget ${TOTAL_S}s, $(nproc) CPUs"
git -C "$REPO" rev-parse HEAD >"$DEST/git-commit.txt" 2>&1
git -C "$REPO" status --short >>"$DEST/git-commit.txt" 2>&1

# 1. Carried Vulkan loader packages
if [ -d .gl ]; then
  gl_unpack() {
    local f
    for f in .gl/*.deb; do
      [ -e "$f" ] || continue
      echo "dpkg -x $f /"
      dpkg -x "$f" / || return 1
    done
    ldconfig
  }
  step vulkan-debs 60 bash -c "$(declare -f gl_unpack); gl_unpack"
else
  note "no .gl folder: using the system's Vulkan loader"
fi

# 2. What hardware is there
show_devices() {
  command -v nvidia-smi >/dev/null && nvidia-smi || echo "nvidia-smi: not found"
  command -v vulkaninfo >/dev/null && vulkaninfo --summary || echo "vulkaninfo: not found"
  ls -l /usr/share/vulkan/icd.d /etc/vulkan/icd.d 2>/dev/null
  nproc
  free -g
  "$PY" -c 'import sys, numpy; print(sys.version); print("numpy", numpy.__version__)'
  "$PY" -c 'import numexpr; print("numexpr", numexpr.__version__)' || true
}
export PY
step devices 60 bash -c "$(declare -f show_devices); show_devices"

# Time left for a step, keeping RESERVE seconds for what follows, at most CAP.
limit() {  # limit CAP RESERVE
  local l=$(( $(left) - $2 ))
  [ "$l" -gt "$1" ] && l=$1
  echo "$l"
}
BENCH_MIN=${BENCH_MIN:-200}

# 3. Build (a separate build folder: a carried build/ may belong to another path)
step configure "$(limit 120 $((BENCH_MIN + 60)))" \
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$PY"
step build "$(limit 300 $((BENCH_MIN + 40)))" cmake --build "$BUILD" -j"$JOBS"
INFO=$(find "$BUILD" -maxdepth 3 -type f -name npvk-info -perm -u+x 2>/dev/null | head -n 1)
if [ -n "$INFO" ]; then
  step npvk-info 30 "$INFO"
else
  note "npvk-info not found in $BUILD"
fi

# 4. C++ tests. Kernels go to a cache inside the build folder, not the user's.
export NPVK_CACHE_DIR="$REPO/$BUILD/kernel-cache"
# The CTest entry "pytest" (added when tests/python exists) runs below on its own.
step ctest "$(limit 150 $((BENCH_MIN + 20)))" \
  ctest --test-dir "$BUILD" --output-on-failure -j8 --timeout 120 -E '^pytest$'

# 5. Python tests, if there are any
if [ -d tests/python ]; then
  step pytest "$(limit 120 "$BENCH_MIN")" \
    env PYTHONPATH="$REPO/$BUILD/python" PYTHONDONTWRITEBYTECODE=1 \
    "$PY" -m pytest -q -p no:cacheprovider tests/python
else
  note "no tests/python folder: pytest skipped"
fi

# 6. Benchmarks: whatever time is left, less a margin. --budget stops starting
# runs early enough for the last one (at most --timeout) to finish.
lim=$(( $(left) - 10 ))
budget=$(( lim - 100 ))
[ $budget -lt 20 ] && budget=20
step bench "$lim" "$PY" bench/run --size "$SIZE" --runs "$RUNS" --pythonpath "$REPO/$BUILD/python" \
  --python "$PY" --results-dir "$DEST" --budget "$budget" --timeout 90
cat "$DEST/bench.log" >>"$SUMMARY" 2>/dev/null

note "done in $(elapsed)s; failures: $FAILED; files in $DEST:"
ls -la "$DEST" | tee -a "$SUMMARY"
exit $FAILED
