# Sourced by the sanitizer scripts: the run-time options of an NPVK_SANITIZE
# build in $1 (default build-asan). See docs/architecture.md, "Sanitizers".
_npvk_build="${1:-build-asan}"
_npvk_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Every report fails: UBSan aborts (the build says -fno-sanitize-recover),
# ASan's exit code is set; LSan reads the narrow suppressions of the driver's
# own leaks. detect_stack_use_after_return stays off: the fault handler runs
# flushes on a stack of its own through swapcontext, which that mode's fake
# stacks do not follow.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=23:strict_init_order=1:detect_stack_use_after_return=0:allow_user_segv_handler=1:handle_segv=1"
export LSAN_OPTIONS="suppressions=$_npvk_root/tests/sanitize/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$_npvk_root/tests/sanitize/ubsan.supp"
# An uninstrumented python3 loads the instrumented extension: the ASan
# runtime must come first in the process (LD_PRELOAD).
NPVK_ASAN_RUNTIME="$(cat "$_npvk_root/$_npvk_build/asan-runtime.txt")"
export NPVK_ASAN_RUNTIME
unset _npvk_build _npvk_root
