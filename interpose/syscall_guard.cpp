#include "interpose/syscall_guard.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/options.hpp"
#include "base/tracked_mutex.hpp"
#include "interpose/got_patch.hpp"
#include "interpose/managed_memory.hpp"

namespace npvk {
namespace {

// Makes the managed memory in [p, p+n) current before the kernel touches it.
// Never throws, keeps errno, and does nothing on a thread inside npvk (a
// driver or npvk itself doing I/O while it holds the lock, or a signal
// handler that interrupted it), which would deadlock.
void guard(const void *p, size_t n, bool write) {
  if (!p || !n) return;
  ManagedMemory *mm = ManagedMemory::instance();
  // The thread-local lock count comes second: a thread's first access to it
  // may allocate, and this may run in a signal handler.
  if (!mm || !mm->any_restricted() || TrackedMutex::held_by_this_thread() != 0) return;
  int saved = errno;
  try {
    mm->syscall_access(p, n, write);
  } catch (...) {
    // The data cannot be made current; the call then fails as it would
    // without npvk (EFAULT), which beats stale data.
  }
  errno = saved;
}

void guard_iov(const struct iovec *iov, long count, bool write) {
  if (!iov) return;
  for (long i = 0; i < count; ++i) guard(iov[i].iov_base, iov[i].iov_len, write);
}

void guard_msg(const struct msghdr *msg, bool write) {
  if (!msg) return;
  guard_iov(msg->msg_iov, long(msg->msg_iovlen), write);
  guard(msg->msg_control, msg->msg_controllen, write);
  if (write) guard(msg->msg_name, msg->msg_namelen, write);
}

size_t product(size_t a, size_t b) {
  size_t n = 0;
  return __builtin_mul_overflow(a, b, &n) ? SIZE_MAX : n;
}

// One entry per wrapped function: its original, resolved once at install.
enum Fn {
  kWrite,
  kRead,
  kPwrite,
  kPread,
  kPwrite64,
  kPread64,
  kReadv,
  kWritev,
  kPreadv,
  kPwritev,
  kPreadv64,
  kPwritev64,
  kPreadv2,
  kPwritev2,
  kPreadv64v2,
  kPwritev64v2,
  kSend,
  kSendto,
  kSendmsg,
  kSendmmsg,
  kRecv,
  kRecvfrom,
  kRecvmsg,
  kRecvmmsg,
  kFwrite,
  kFread,
  kFwriteUnlocked,
  kFreadUnlocked,
  kReadChk,
  kPreadChk,
  kPread64Chk,
  kRecvChk,
  kRecvfromChk,
  kFreadChk,
  kFreadUnlockedChk,
  kCount
};
void *g_real[kCount];

template <typename F>
F real(Fn f) {
  return reinterpret_cast<F>(g_real[f]);
}

std::atomic<bool> g_installed{false};

}  // namespace
}  // namespace npvk

using npvk::guard;
using npvk::guard_iov;
using npvk::guard_msg;
using npvk::product;
using npvk::real;
namespace n = npvk;

// The wrappers. Each one has the signature of the function it stands in for,
// guards the buffers, and calls the original.
extern "C" {

#define NPVK_WRAP(fn, ret, params, guards, args)                     \
  __attribute__((visibility("hidden"))) ret npvk_guard_##fn params { \
    guards;                                                          \
    return real<ret(*) params>(n::k##fn) args;                       \
  }

// clang-format off
NPVK_WRAP(Write, ssize_t, (int fd, const void *b, size_t c), guard(b, c, false), (fd, b, c))
NPVK_WRAP(Read, ssize_t, (int fd, void *b, size_t c), guard(b, c, true), (fd, b, c))
NPVK_WRAP(Pwrite, ssize_t, (int fd, const void *b, size_t c, off_t o),
          guard(b, c, false), (fd, b, c, o))
NPVK_WRAP(Pread, ssize_t, (int fd, void *b, size_t c, off_t o), guard(b, c, true), (fd, b, c, o))
NPVK_WRAP(Pwrite64, ssize_t, (int fd, const void *b, size_t c, off64_t o),
          guard(b, c, false), (fd, b, c, o))
NPVK_WRAP(Pread64, ssize_t, (int fd, void *b, size_t c, off64_t o),
          guard(b, c, true), (fd, b, c, o))
NPVK_WRAP(Readv, ssize_t, (int fd, const struct iovec *v, int k),
          guard_iov(v, k, true), (fd, v, k))
NPVK_WRAP(Writev, ssize_t, (int fd, const struct iovec *v, int k),
          guard_iov(v, k, false), (fd, v, k))
NPVK_WRAP(Preadv, ssize_t, (int fd, const struct iovec *v, int k, off_t o),
          guard_iov(v, k, true), (fd, v, k, o))
NPVK_WRAP(Pwritev, ssize_t, (int fd, const struct iovec *v, int k, off_t o),
          guard_iov(v, k, false), (fd, v, k, o))
NPVK_WRAP(Preadv64, ssize_t, (int fd, const struct iovec *v, int k, off64_t o),
          guard_iov(v, k, true), (fd, v, k, o))
NPVK_WRAP(Pwritev64, ssize_t, (int fd, const struct iovec *v, int k, off64_t o),
          guard_iov(v, k, false), (fd, v, k, o))
NPVK_WRAP(Preadv2, ssize_t, (int fd, const struct iovec *v, int k, off_t o, int f),
          guard_iov(v, k, true), (fd, v, k, o, f))
NPVK_WRAP(Pwritev2, ssize_t, (int fd, const struct iovec *v, int k, off_t o, int f),
          guard_iov(v, k, false), (fd, v, k, o, f))
NPVK_WRAP(Preadv64v2, ssize_t, (int fd, const struct iovec *v, int k, off64_t o, int f),
          guard_iov(v, k, true), (fd, v, k, o, f))
NPVK_WRAP(Pwritev64v2, ssize_t, (int fd, const struct iovec *v, int k, off64_t o, int f),
          guard_iov(v, k, false), (fd, v, k, o, f))
NPVK_WRAP(Send, ssize_t, (int fd, const void *b, size_t c, int f),
          guard(b, c, false), (fd, b, c, f))
NPVK_WRAP(Sendto, ssize_t,
          (int fd, const void *b, size_t c, int f, const struct sockaddr *a, socklen_t l),
          guard(b, c, false),
          (fd, b, c, f, a, l))
NPVK_WRAP(Sendmsg, ssize_t, (int fd, const struct msghdr *m, int f),
          guard_msg(m, false), (fd, m, f))
NPVK_WRAP(Sendmmsg, int, (int fd, struct mmsghdr *m, unsigned k, int f),
          for (unsigned i = 0; m && i < k; ++i) guard_msg(&m[i].msg_hdr, false), (fd, m, k, f))
NPVK_WRAP(Recv, ssize_t, (int fd, void *b, size_t c, int f), guard(b, c, true), (fd, b, c, f))
NPVK_WRAP(Recvfrom, ssize_t, (int fd, void *b, size_t c, int f, struct sockaddr *a, socklen_t *l),
          guard(b, c, true), (fd, b, c, f, a, l))
NPVK_WRAP(Recvmsg, ssize_t, (int fd, struct msghdr *m, int f), guard_msg(m, true), (fd, m, f))
NPVK_WRAP(Recvmmsg, int, (int fd, struct mmsghdr *m, unsigned k, int f, struct timespec *t),
          for (unsigned i = 0; m && i < k; ++i) guard_msg(&m[i].msg_hdr, true), (fd, m, k, f, t))
NPVK_WRAP(Fwrite, size_t, (const void *b, size_t s, size_t k, FILE *f),
          guard(b, product(s, k), false), (b, s, k, f))
NPVK_WRAP(Fread, size_t, (void *b, size_t s, size_t k, FILE *f),
          guard(b, product(s, k), true), (b, s, k, f))
NPVK_WRAP(FwriteUnlocked, size_t, (const void *b, size_t s, size_t k, FILE *f),
          guard(b, product(s, k), false), (b, s, k, f))
NPVK_WRAP(FreadUnlocked, size_t, (void *b, size_t s, size_t k, FILE *f),
          guard(b, product(s, k), true), (b, s, k, f))
NPVK_WRAP(ReadChk, ssize_t, (int fd, void *b, size_t c, size_t l),
          guard(b, c, true), (fd, b, c, l))
NPVK_WRAP(PreadChk, ssize_t, (int fd, void *b, size_t c, off_t o, size_t l),
          guard(b, c, true), (fd, b, c, o, l))
NPVK_WRAP(Pread64Chk, ssize_t, (int fd, void *b, size_t c, off64_t o, size_t l),
          guard(b, c, true), (fd, b, c, o, l))
NPVK_WRAP(RecvChk, ssize_t, (int fd, void *b, size_t c, size_t l, int f),
          guard(b, c, true), (fd, b, c, l, f))
NPVK_WRAP(RecvfromChk, ssize_t,
          (int fd, void *b, size_t c, size_t l, int f, struct sockaddr *a, socklen_t *al),
          guard(b, c, true),
          (fd, b, c, l, f, a, al))
NPVK_WRAP(FreadChk, size_t, (void *b, size_t l, size_t s, size_t k, FILE *f),
          guard(b, product(s, k), true), (b, l, s, k, f))
NPVK_WRAP(FreadUnlockedChk, size_t, (void *b, size_t l, size_t s, size_t k, FILE *f),
          guard(b, product(s, k), true), (b, l, s, k, f))
// clang-format on

#undef NPVK_WRAP

__attribute__((visibility("hidden"))) void *npvk_real_dlopen = nullptr;

// A dlopen through a path: the same wherever it is called from, so the
// wrapper may call it and patch the new objects right away.
__attribute__((visibility("hidden"))) void *npvk_dlopen_and_rescan(const char *file, int mode) {
  void *handle = reinterpret_cast<void *(*)(const char *, int)>(npvk_real_dlopen)(file, mode);
  int saved = errno;
  if (handle && npvk::got_patch_rescan()) npvk::rescan_syscall_guard_later();
  errno = saved;
  return handle;
}

// A bare library name (or one with $ORIGIN) is searched along the caller's
// RPATH/RUNPATH: the caller must stay the object that called dlopen, so that
// call jumps on to the real dlopen and its objects are patched at the next
// rescan (rescan_syscall_guard).
__attribute__((visibility("hidden"))) int npvk_dlopen_keeps_caller(const char *file) {
  if (!file || (std::strchr(file, '/') && !std::strchr(file, '$'))) return 0;
  npvk::rescan_syscall_guard_later();
  return 1;
}

// dlsym and dlvsym: a function pointer looked up at run time (ctypes'
// CDLL(None).write) bypasses every patched slot, so a lookup that finds the
// original of a guarded function gets its wrapper instead. Other names, and
// RTLD_NEXT (relative to the caller; an interposer looking for the next
// `write` must not get a wrapper that calls it again), go on to the real
// function with the caller's return address intact.
__attribute__((visibility("hidden"))) void *npvk_real_dlsym = nullptr;
__attribute__((visibility("hidden"))) void *npvk_real_dlvsym = nullptr;

__attribute__((visibility("hidden"))) int npvk_dlsym_may_wrap(void *handle, const char *name);
__attribute__((visibility("hidden"))) void *npvk_dlsym_wrapped(void *handle, const char *name);
__attribute__((visibility("hidden"))) void *npvk_dlvsym_wrapped(void *handle, const char *name,
                                                                const char *version);

#if defined(__x86_64__)
__attribute__((visibility("hidden"))) void *npvk_guard_dlsym(void *handle, const char *name);
__attribute__((visibility("hidden"))) void *npvk_guard_dlvsym(void *handle, const char *name,
                                                              const char *version);
asm(R"(
  .pushsection .text, "ax", @progbits
  .p2align 4
  .type npvk_guard_dlsym, @function
npvk_guard_dlsym:
  push %rdi
  push %rsi
  sub $8, %rsp
  call npvk_dlsym_may_wrap
  add $8, %rsp
  pop %rsi
  pop %rdi
  test %eax, %eax
  jnz npvk_dlsym_wrapped
  jmp *npvk_real_dlsym(%rip)
  .size npvk_guard_dlsym, .-npvk_guard_dlsym

  .p2align 4
  .type npvk_guard_dlvsym, @function
npvk_guard_dlvsym:
  push %rdi
  push %rsi
  push %rdx
  call npvk_dlsym_may_wrap
  pop %rdx
  pop %rsi
  pop %rdi
  test %eax, %eax
  jnz npvk_dlvsym_wrapped
  jmp *npvk_real_dlvsym(%rip)
  .size npvk_guard_dlvsym, .-npvk_guard_dlvsym
  .popsection
)");

__attribute__((visibility("hidden"))) void *npvk_guard_dlopen(const char *file, int mode);
asm(R"(
  .pushsection .text, "ax", @progbits
  .p2align 4
  .type npvk_guard_dlopen, @function
npvk_guard_dlopen:
  push %rdi
  push %rsi
  sub $8, %rsp
  call npvk_dlopen_keeps_caller
  add $8, %rsp
  pop %rsi
  pop %rdi
  test %eax, %eax
  jz npvk_dlopen_and_rescan
  jmp *npvk_real_dlopen(%rip)
  .size npvk_guard_dlopen, .-npvk_guard_dlopen
  .popsection
)");
#endif

}  // extern "C"

namespace npvk {
namespace {

std::atomic<bool> g_rescan_pending{false};

// Never patched: the C library and the loader (the wrappers call into them),
// the Vulkan loader, drivers, layers and LLVM (their I/O runs inside npvk's
// flushes), and npvk itself.
const char *const kSkip[] = {"/libc.so",  "/ld-linux", "/libvulkan",    "/libVkLayer",
                             "/libLLVM",  "/libnpvk",  "/npvk/_native", "/libstdc++",
                             "/libgcc_s", "/libm.so",  nullptr};

struct Entry {
  const char *name;
  Fn fn;
  void *wrapper;
};

#define NPVK_ENTRY(sym, fn) \
  { sym, k##fn, reinterpret_cast<void *>(npvk_guard_##fn) }
const Entry kEntries[] = {
    NPVK_ENTRY("write", Write),
    NPVK_ENTRY("read", Read),
    NPVK_ENTRY("pwrite", Pwrite),
    NPVK_ENTRY("pread", Pread),
    NPVK_ENTRY("pwrite64", Pwrite64),
    NPVK_ENTRY("pread64", Pread64),
    NPVK_ENTRY("readv", Readv),
    NPVK_ENTRY("writev", Writev),
    NPVK_ENTRY("preadv", Preadv),
    NPVK_ENTRY("pwritev", Pwritev),
    NPVK_ENTRY("preadv64", Preadv64),
    NPVK_ENTRY("pwritev64", Pwritev64),
    NPVK_ENTRY("preadv2", Preadv2),
    NPVK_ENTRY("pwritev2", Pwritev2),
    NPVK_ENTRY("preadv64v2", Preadv64v2),
    NPVK_ENTRY("pwritev64v2", Pwritev64v2),
    NPVK_ENTRY("send", Send),
    NPVK_ENTRY("sendto", Sendto),
    NPVK_ENTRY("sendmsg", Sendmsg),
    NPVK_ENTRY("sendmmsg", Sendmmsg),
    NPVK_ENTRY("recv", Recv),
    NPVK_ENTRY("recvfrom", Recvfrom),
    NPVK_ENTRY("recvmsg", Recvmsg),
    NPVK_ENTRY("recvmmsg", Recvmmsg),
    NPVK_ENTRY("fwrite", Fwrite),
    NPVK_ENTRY("fread", Fread),
    NPVK_ENTRY("fwrite_unlocked", FwriteUnlocked),
    NPVK_ENTRY("fread_unlocked", FreadUnlocked),
    NPVK_ENTRY("__read_chk", ReadChk),
    NPVK_ENTRY("__pread_chk", PreadChk),
    NPVK_ENTRY("__pread64_chk", Pread64Chk),
    NPVK_ENTRY("__recv_chk", RecvChk),
    NPVK_ENTRY("__recvfrom_chk", RecvfromChk),
    NPVK_ENTRY("__fread_chk", FreadChk),
    NPVK_ENTRY("__fread_unlocked_chk", FreadUnlockedChk),
};
#undef NPVK_ENTRY

const Entry *guarded_entry(const char *name) {
  if (!name) return nullptr;
  for (const Entry &e : kEntries)
    if (std::strcmp(name, e.name) == 0) return &e;
  return nullptr;
}

// The wrapper where `f`, found for `name`, is what the wrapper itself calls;
// anything else (another object's own `write`, or the C library's behind an
// LD_PRELOAD interposer) is returned as found.
void *wrapped(const char *name, void *f) {
  const Entry *e = f ? guarded_entry(name) : nullptr;
  return e && g_installed.load(std::memory_order_acquire) && f == g_real[e->fn] ? e->wrapper : f;
}

int find_main_program(struct dl_phdr_info *info, size_t, void *data) {
  auto *f = static_cast<uintptr_t *>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && *f >= start && *f < start + ph.p_memsz) *f = 0;
  }
  return 1;  // the main program comes first
}

// The definition a call would reach: the global one, so that an LD_PRELOAD
// interposer stays in the chain. But a non-PIE program that takes a
// function's address makes its own PLT entry the canonical address, and
// calling that would come back through the patched slot: then the C
// library's own definition.
void *original(const char *name) {
  void *f = dlsym(RTLD_DEFAULT, name);
  auto at = reinterpret_cast<uintptr_t>(f);
  if (!f) return nullptr;
  dl_iterate_phdr(find_main_program, &at);
  if (at != 0) return f;
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  return libc ? dlsym(libc, name) : nullptr;
}

}  // namespace

void rescan_syscall_guard_later() {
  g_rescan_pending.store(true, std::memory_order_relaxed);
}

void install_syscall_guard() {
  // Off only to show what the guard prevents (tests, diagnosis).
  if (!process_options().syscall_guard) return;
  std::vector<GotHook> hooks;
  for (const Entry &e : kEntries) {
    if (!g_real[e.fn]) g_real[e.fn] = original(e.name);
    if (g_real[e.fn]) hooks.push_back({e.name, e.wrapper});
  }
#if defined(__x86_64__)
  if (!npvk_real_dlopen) npvk_real_dlopen = original("dlopen");
  if (npvk_real_dlopen) hooks.push_back({"dlopen", reinterpret_cast<void *>(npvk_guard_dlopen)});
  if (!npvk_real_dlsym) npvk_real_dlsym = original("dlsym");
  if (npvk_real_dlsym) hooks.push_back({"dlsym", reinterpret_cast<void *>(npvk_guard_dlsym)});
  if (!npvk_real_dlvsym) npvk_real_dlvsym = original("dlvsym");
  if (npvk_real_dlvsym) hooks.push_back({"dlvsym", reinterpret_cast<void *>(npvk_guard_dlvsym)});
#endif
  g_rescan_pending.store(false, std::memory_order_relaxed);
  if (got_patch_install(hooks.data(), hooks.size(), kSkip)) rescan_syscall_guard_later();
  g_installed.store(true, std::memory_order_release);
}

void remove_syscall_guard() {
  if (!g_installed.exchange(false)) return;
  got_patch_remove();
}

void rescan_syscall_guard() {
  if (!g_installed.load(std::memory_order_acquire)) return;
  if (!g_rescan_pending.exchange(false, std::memory_order_relaxed)) return;
  if (got_patch_rescan()) rescan_syscall_guard_later();
}

}  // namespace npvk

extern "C" {

__attribute__((visibility("hidden"))) int npvk_dlsym_may_wrap(void *handle, const char *name) {
  return handle != RTLD_NEXT && npvk::guarded_entry(name) != nullptr;
}

__attribute__((visibility("hidden"))) void *npvk_dlsym_wrapped(void *handle, const char *name) {
  void *f = reinterpret_cast<void *(*)(void *, const char *)>(npvk_real_dlsym)(handle, name);
  return npvk::wrapped(name, f);
}

__attribute__((visibility("hidden"))) void *npvk_dlvsym_wrapped(void *handle, const char *name,
                                                                const char *version) {
  void *f = reinterpret_cast<void *(*)(void *, const char *, const char *)>(npvk_real_dlvsym)(
      handle, name, version);
  return npvk::wrapped(name, f);
}

}  // extern "C"
