#include "interpose/fault_handler.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/tracked_mutex.hpp"
#include "interpose/managed_memory.hpp"

namespace npvk {
namespace {

struct sigaction g_previous_segv {};
struct sigaction g_previous_bus {};

bool is_write_fault(void *ucontext) {
#if defined(__x86_64__)
  // Bit 1 of the page-fault error code: the access was a write.
  return (static_cast<ucontext_t *>(ucontext)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
  (void)ucontext;
  return true;  // unknown: treat as a write, which is always safe
#endif
}

// While this thread runs the handler npvk found installed before it: the
// frame of pass_on that called it (stacks grow down, so a call from inside
// that handler runs below it). A frame, not a flag: a handler that leaves
// by siglongjmp never clears it, and the next fault then runs above it.
thread_local const void *t_passing_frame = nullptr;

void pass_on(int sig, siginfo_t *info, void *ucontext) {
  const struct sigaction &prev = sig == SIGBUS ? g_previous_bus : g_previous_segv;
  const char here = 0;
  if (t_passing_frame && static_cast<const void *>(&here) < t_passing_frame) {
    // The previous handler raised the signal again, and it came back here:
    // it chains to npvk (Python's faulthandler, enabled after npvk, restores
    // the handler it found, npvk's, and raises; npvk re-installed later, over
    // it, calls it as the previous one). Passing it on again would loop
    // forever, printing its report each time. End the chain instead: the
    // default action, as the last handler in it would take.
    signal(sig, SIG_DFL);
    return;
  }
  struct PassingOn {
    explicit PassingOn(const void *frame) { t_passing_frame = frame; }
    ~PassingOn() { t_passing_frame = nullptr; }
  } passing(&here);
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
    prev.sa_sigaction(sig, info, ucontext);
  } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN && prev.sa_handler) {
    prev.sa_handler(sig);
  } else {
    // Returning re-executes the faulting access, which now kills the process
    // with the usual signal, as if npvk were not there.
    signal(sig, SIG_DFL);
  }
}

// Resolving a fault may flush, and a flush may compile kernels (shaderc, the
// driver's LLVM): far more stack than a signal stack has, and the signal
// stack may be someone else's small one (Python's faulthandler installs
// its own). So the work runs on a large stack of this thread's own, with a
// guard page below it, entered with swapcontext.
constexpr size_t kResolveStackSize = 16u << 20;

struct FaultWork {
  ManagedMemory *mm = nullptr;
  void *addr = nullptr;
  bool write = false;
  bool ours = false;
  ucontext_t caller, worker;
  uint8_t *stack = nullptr;  // lowest usable byte; a guard page below
};
thread_local FaultWork t_work;

void resolve_on_own_stack() {
  FaultWork &w = t_work;
  try {
    w.ours = w.mm->handle_fault(w.addr, w.write);
  } catch (const std::exception &e) {
    // The data cannot be made current: stopping beats computing on stale data.
    std::fprintf(stderr, "npvk: cannot make managed memory current after a fault: %s\n", e.what());
    std::abort();
  }
}

bool resolve(ManagedMemory *mm, void *addr, bool write) {
  FaultWork &w = t_work;
  if (!w.stack) {
    // mmap is async-signal-safe; the stack lives as long as the thread.
    const size_t page = 4096;
    void *p = mmap(nullptr, kResolveStackSize + page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return mm->handle_fault(addr, write);  // best effort
    mprotect(p, page, PROT_NONE);
    w.stack = static_cast<uint8_t *>(p) + page;
  }
  w.mm = mm;
  w.addr = addr;
  w.write = write;
  w.ours = false;
  // Asynchronous signals wait until the thread is back on this stack. One
  // arriving while it runs on the worker stack (or switches back: setcontext
  // restores the mask before the stack pointer) with SA_ONSTACK, as Python's
  // SIGINT handler has, would start at the top of the alternate stack, over
  // this handler's frame, since the thread is not on that stack at the time
  // (found by test_stress.py::test_sigint_during_flushes). Faults stay
  // deliverable. Both contexts keep the mask; it is restored here.
  sigset_t async_signals, before;
  sigfillset(&async_signals);
  for (int sync_sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP})
    sigdelset(&async_signals, sync_sig);
  pthread_sigmask(SIG_BLOCK, &async_signals, &before);
  getcontext(&w.worker);
  w.worker.uc_stack.ss_sp = w.stack;
  w.worker.uc_stack.ss_size = kResolveStackSize;
  w.worker.uc_link = &w.caller;
  makecontext(&w.worker, resolve_on_own_stack, 0);
  swapcontext(&w.caller, &w.worker);
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return w.ours;
}

void on_fault(int sig, siginfo_t *info, void *ucontext) {
  int saved_errno = errno;
  ManagedMemory *mm = ManagedMemory::instance();
  // A fault while this thread holds npvk's lock is not a host access to
  // managed memory but a bug in npvk; handling it would deadlock.
  bool ours = false;
  if (mm && info && info->si_code > 0 && TrackedMutex::held_by_this_thread() == 0)
    ours = resolve(mm, info->si_addr, is_write_fault(ucontext));
  errno = saved_errno;
  if (!ours) pass_on(sig, info, ucontext);
}

void ensure_alternate_stack() {
  stack_t current{};
  if (sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return;
  // Resolving a fault runs a flush, so the stack must be roomy.
  const size_t size = 1 << 20;
  stack_t st{};
  st.ss_sp = std::malloc(size);  // lives as long as the thread; never freed
  st.ss_size = size;
  if (st.ss_sp) sigaltstack(&st, nullptr);
}

bool installed(int sig) {
  struct sigaction current {};
  sigaction(sig, nullptr, &current);
  return (current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_fault;
}

void install(int sig, struct sigaction *previous) {
  if (installed(sig)) return;
  struct sigaction sa {};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, previous);
}

}  // namespace

void install_fault_handler() {
  ensure_alternate_stack();
  install(SIGSEGV, &g_previous_segv);
  install(SIGBUS, &g_previous_bus);
}

void ensure_fault_handler() {
  if (!installed(SIGSEGV) || !installed(SIGBUS)) install_fault_handler();
}

}  // namespace npvk
