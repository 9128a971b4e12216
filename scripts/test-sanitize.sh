#!/usr/bin/env bash
# The sanitizer stage of CI: builds npvk with ASan+UBSan (clang, into
# build-asan; ASAN_BUILD_DIR overrides) and runs, under them:
#   1. npvk_tests_core: the C++ tests of the ABI, lifetimes, errors, fusion,
#      threads, caches, wrapped memory and failure handling (tests/sanitize;
#      the per-op value suites add time, not code paths: build npvk_tests in
#      build-asan for those);
#   2. a short pytest selection (the shim, managed memory, fork, threads,
#      faults, stress), with the ASan runtime preloaded into python3;
#   3. each fuzz target over its corpus, then for FUZZ_SECONDS (default 30)
#      of new inputs.
# Prints one summary line; exits non-zero if any part failed.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash scripts/install-deps.sh
build_dir="${ASAN_BUILD_DIR:-build-asan}"
# -O1: the usual optimisation for ASan, and quicker to build than -O2.
mkdir -p "$build_dir"
CC=clang CXX=clang++ cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DNPVK_SANITIZE=ON -DNPVK_FUZZ=ON -DNPVK_BUILD_EXAMPLES=OFF > "$build_dir/configure.log" ||
  { cat "$build_dir/configure.log"; exit 1; }
cmake --build "$build_dir" -j"${JOBS:-2}" --target npvk_tests_core npvk_native fuzz_capi \
  fuzz_kernel_cache
source scripts/sanitize-env.sh "$build_dir"
# The SPIR-V of a kernel does not depend on how npvk was built: share the
# cache that scripts/test.sh filled (CI's first stage), if there is one.
if [ -d build/test-kernel-cache ]; then
  export NPVK_CACHE_DIR="${NPVK_CACHE_DIR:-$PWD/build/test-kernel-cache}"
else
  export NPVK_CACHE_DIR="${NPVK_CACHE_DIR:-$PWD/$build_dir/test-kernel-cache}"
fi
export NPVK_VALIDATION=1

failed=()
part() {  # part NAME COMMAND...: runs one part, remembering a failure
  local name=$1
  shift
  echo "sanitize: $name"
  local t0=$(date +%s)
  if "$@"; then
    echo "sanitize: $name passed in $(( $(date +%s) - t0 )) s"
  else
    echo "sanitize: $name FAILED (exit $?) after $(( $(date +%s) - t0 )) s"
    failed+=("$name")
  fi
}

# The fusion tests use small arrays, which are otherwise not fused.
# lavapipe stays loaded to the end: the Vulkan loader unloads the driver at
# vkDestroyInstance, and a block the driver keeps in its own globals (128
# bytes, realloc'ed in LLVM's part of it on some CPUs) then has no root that
# LeakSanitizer can scan and is reported from an "<unknown module>", which no
# suppression can name. Loaded, it is reachable, and lsan.supp still applies.
lavapipe=$(ls /usr/lib/*/libvulkan_lvp.so 2>/dev/null | head -n 1 || true)
part cpp env NPVK_FUSE_MIN_ELEMENTS=0 LD_PRELOAD="$NPVK_ASAN_RUNTIME${lavapipe:+:$lavapipe}" \
  "$build_dir/tests/sanitize/npvk_tests_core" --gtest_brief=1

# CPython never frees much of what it allocates (interned strings, static
# types, module state) by design, so LeakSanitizer would report thousands
# of objects at every exit: leaks are checked by the C++ tests and fuzzers,
# not here. PYTHONMALLOC=malloc sends Python's own small objects through
# ASan's allocator too.
# One of each kind of fault; the rest of test_faults.py repeats those paths.
python_tests=(
  tests/python/test_api.py
  tests/python/test_coherence.py
  tests/python/test_managed_pages.py
  "tests/python/test_faults.py::test_failed_flush_gives_numpy_results[compile:4]"
  "tests/python/test_faults.py::test_failed_flush_gives_numpy_results[submit:1]"
  "tests/python/test_faults.py::test_failed_flush_gives_numpy_results[device_lost:3]"
  "tests/python/test_faults.py::test_failed_allocation_falls_back[alloc:5]"
  "tests/python/test_faults.py::test_mirrored_memory[device_lost:1]"
  tests/python/test_stress.py
  tests/python/test_fork_threads.py
  tests/python/test_syscall_guard.py
)
part pytest env LD_PRELOAD="$NPVK_ASAN_RUNTIME" ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
  PYTHONMALLOC=malloc PYTHONPATH="$build_dir/python" PYTHONDONTWRITEBYTECODE=1 \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider "${python_tests[@]}"

part fuzz bash scripts/fuzz.sh "${FUZZ_SECONDS:-30}"

elapsed=$(( $(date +%s) - start ))
if [ ${#failed[@]} -eq 0 ]; then
  echo "sanitize: ASan+UBSan stage passed (cpp, pytest, fuzz) in $elapsed s"
else
  echo "sanitize: ASan+UBSan stage FAILED: ${failed[*]} ($elapsed s)"
  exit 1
fi
