// The syscall safety net. The kernel does not fault on a protected user
// buffer: write(fd, device_owned_array, n) fails with EFAULT, and read() into
// it as well. So the C library's I/O entry points (the read/write, pread/
// pwrite, readv/writev, preadv/pwritev, send/recv families and fread/fwrite)
// are interposed in every loaded object (got_patch.hpp) with wrappers that
// make managed memory in the user's buffer current first: readable for what
// the call sends, writable for what it receives. dlsym and dlvsym lookups of
// those names (ctypes) return the wrappers as well.
#pragma once

namespace npvk {

// Patches the loaded objects (all but the C library, the loader, Vulkan
// drivers and layers, LLVM, and npvk itself), and objects loaded later.
void install_syscall_guard();
// Restores every patched slot.
void remove_syscall_guard();
// Patches the objects loaded since a dlopen the guard could not follow
// (cheap when there was none).
void rescan_syscall_guard();
void rescan_syscall_guard_later();

}  // namespace npvk
