#!/usr/bin/env bash
# Runs the libFuzzer targets of an NPVK_FUZZ build for a bounded time each:
#   scripts/fuzz.sh [seconds per target, default 30]
# New inputs that raise coverage are kept in build-asan/fuzz-corpus/<target>
# (the committed seeds in tests/fuzz/corpus are only read). A crash leaves
# build-asan/fuzz-artifacts/crash-*; reproduce it with
#   build-asan/tests/fuzz/fuzz_<target> <file>
# and make it a regression test (tests/cpp, or a file in tests/fuzz/corpus).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${ASAN_BUILD_DIR:-build-asan}"
seconds="${1:-30}"
source scripts/sanitize-env.sh "$build_dir"
export NPVK_CACHE_DIR="$PWD/$build_dir/test-kernel-cache"
status=0
for target in capi kernel_cache; do
  corpus="$build_dir/fuzz-corpus/$target"
  mkdir -p "$corpus" "$build_dir/fuzz-artifacts"
  echo "fuzz: $target for ${seconds} s"
  # libFuzzer's link puts libstdc++ before the shared ASan runtime.
  if ! LD_PRELOAD="$NPVK_ASAN_RUNTIME" "$build_dir/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=30 \
      -rss_limit_mb=4096 -max_len=512 -print_final_stats=1 \
      -artifact_prefix="$build_dir/fuzz-artifacts/" "$corpus" "tests/fuzz/corpus/$target" \
      > "$build_dir/fuzz-$target.log" 2>&1; then
    echo "fuzz: $target FAILED (see $build_dir/fuzz-$target.log)"
    tail -40 "$build_dir/fuzz-$target.log"
    status=1
  fi
  grep -E "^stat::number_of_executed_units|^stat::new_units_added|^Done" \
    "$build_dir/fuzz-$target.log" | sed "s/^/fuzz: $target: /" || true
done
exit $status
