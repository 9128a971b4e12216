// Interposition without LD_PRELOAD: npvk arrives as a library loaded late (a
// CPython extension), so the symbols other objects already bound cannot be
// overridden by link order. Instead, the GOT slots through which loaded ELF
// objects call a function (JUMP_SLOT and GLOB_DAT relocations) are rewritten
// to point at a replacement. Objects loaded later are patched by a rescan
// (the syscall guard rescans after each dlopen it intercepts).
#pragma once

#include <cstddef>

namespace npvk {

struct GotHook {
  const char *name;   // the symbol, unversioned
  void *replacement;  // what the patched slots call instead
};

// Patches every loaded object except those whose path contains one of
// `skip` (null-terminated list), now and at each got_patch_rescan(). Calling
// it again replaces the set of hooks. Thread-safe. Both return true when an
// object another thread is still loading was left for a later rescan.
bool got_patch_install(const GotHook *hooks, size_t count, const char *const *skip);
// Patches the objects loaded since the last scan.
bool got_patch_rescan();
// Puts every patched slot back as it was.
void got_patch_remove();
// How many slots are patched now (for tests and statistics).
size_t got_patch_slots();

}  // namespace npvk
