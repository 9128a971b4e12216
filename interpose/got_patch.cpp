#include "interpose/got_patch.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace npvk {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
#else
#error "got_patch: unknown relocation types for this architecture"
#endif

using ObjectKey = std::pair<uintptr_t, std::string>;

struct PatchedSlot {
  ObjectKey object;
  void **slot;
  void *original;
  void *replacement;
};

struct Patcher {
  std::mutex mutex;
  std::vector<GotHook> hooks;
  std::vector<std::string> skip;
  std::vector<PatchedSlot> slots;
  std::set<ObjectKey> scanned;
  bool installed = false;
};

// Never destroyed: patched slots call into npvk until the process is gone.
Patcher &patcher() {
  static Patcher *p = new Patcher;
  return *p;
}

struct Object {
  ObjectKey key;
  uintptr_t base;
  const ElfW(Dyn) * dynamic;
};

int collect(struct dl_phdr_info *info, size_t, void *data) {
  auto *out = static_cast<std::vector<Object> *>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
    out->push_back(
        {{info->dlpi_addr, info->dlpi_name ? info->dlpi_name : ""},
         info->dlpi_addr,
         reinterpret_cast<const ElfW(Dyn) *>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr)});
    break;
  }
  return 0;
}

std::vector<Object> loaded_objects() {
  std::vector<Object> objects;
  dl_iterate_phdr(collect, &objects);
  return objects;
}

// The protection of every mapping now, from /proc/self/maps: slots are made
// writable for the store and then get exactly their old protection back,
// whatever RELRO or the loader did to them.
struct Mapping {
  uintptr_t start, end;
  int prot;
};

std::vector<Mapping> current_mappings() {
  std::vector<Mapping> maps;
  FILE *f = std::fopen("/proc/self/maps", "re");
  if (!f) return maps;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    unsigned long start = 0, end = 0;
    char perms[5] = {};
    if (std::sscanf(line, "%lx-%lx %4s", &start, &end, perms) != 3) continue;
    int prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
               (perms[2] == 'x' ? PROT_EXEC : 0);
    maps.push_back({start, end, prot});
  }
  std::fclose(f);
  return maps;
}

bool store(void **slot, void *value, const std::vector<Mapping> &maps) {
  auto at = reinterpret_cast<uintptr_t>(slot);
  auto it = std::upper_bound(maps.begin(), maps.end(), at,
                             [](uintptr_t a, const Mapping &m) { return a < m.start; });
  if (it == maps.begin()) return false;
  --it;
  if (at + sizeof(void *) > it->end) return false;
  if (it->prot & PROT_WRITE) {
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
    return true;
  }
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  void *start = reinterpret_cast<void *>(at & ~(page - 1));
  if (mprotect(start, page, it->prot | PROT_WRITE) != 0) return false;
  __atomic_store_n(slot, value, __ATOMIC_RELEASE);
  mprotect(start, page, it->prot);
  return true;
}

bool skipped(const Patcher &p, const std::string &name) {
  if (name.find("linux-vdso") != std::string::npos) return true;
  for (const std::string &s : p.skip)
    if (name.find(s) != std::string::npos) return true;
  return false;
}

// `maps`: read from /proc/self/maps at the first slot to store, if still
// empty. Most objects import none of the hooked functions, and the file is
// long in a process with many managed arrays (a dlopen each, in a test suite
// that imports many extension modules).
void patch_object(Patcher &p, const Object &object, std::vector<Mapping> &maps) {
  // glibc relocates the d_ptr entries of a loaded object's dynamic section in
  // place; a value below the load address is still an offset.
  auto address = [&](ElfW(Addr) v) { return v < object.base ? v + object.base : v; };
  const ElfW(Sym) *symtab = nullptr;
  const char *strtab = nullptr;
  const ElfW(Rela) *jmprel = nullptr, *rela = nullptr;
  size_t jmprel_size = 0, rela_size = 0, rela_ent = sizeof(ElfW(Rela));
  bool plt_is_rela = true;
  for (const ElfW(Dyn) *d = object.dynamic; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB:
        symtab = reinterpret_cast<const ElfW(Sym) *>(address(d->d_un.d_ptr));
        break;
      case DT_STRTAB:
        strtab = reinterpret_cast<const char *>(address(d->d_un.d_ptr));
        break;
      case DT_JMPREL:
        jmprel = reinterpret_cast<const ElfW(Rela) *>(address(d->d_un.d_ptr));
        break;
      case DT_PLTRELSZ:
        jmprel_size = d->d_un.d_val;
        break;
      case DT_PLTREL:
        plt_is_rela = d->d_un.d_val == DT_RELA;
        break;
      case DT_RELA:
        rela = reinterpret_cast<const ElfW(Rela) *>(address(d->d_un.d_ptr));
        break;
      case DT_RELASZ:
        rela_size = d->d_un.d_val;
        break;
      case DT_RELAENT:
        rela_ent = d->d_un.d_val;
        break;
      default:
        break;
    }
  }
  if (!symtab || !strtab || rela_ent < sizeof(ElfW(Rela))) return;
  auto scan = [&](const ElfW(Rela) *table, size_t bytes, size_t entry) {
    if (!table) return;
    for (size_t at = 0; at + sizeof(ElfW(Rela)) <= bytes; at += entry) {
      const auto *r =
          reinterpret_cast<const ElfW(Rela) *>(reinterpret_cast<const uint8_t *>(table) + at);
      uint32_t type = ELF64_R_TYPE(r->r_info);
      if (type != kJumpSlot && type != kGlobDat) continue;
      const ElfW(Sym) &sym = symtab[ELF64_R_SYM(r->r_info)];
      // A function the object defines itself is its own, not the C library's.
      if (sym.st_shndx != SHN_UNDEF || !sym.st_name) continue;
      const char *name = strtab + sym.st_name;
      for (const GotHook &hook : p.hooks) {
        if (std::strcmp(name, hook.name) != 0) continue;
        void **slot = reinterpret_cast<void **>(object.base + r->r_offset);
        void *old = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (old == hook.replacement) break;
        if (maps.empty()) maps = current_mappings();
        if (store(slot, hook.replacement, maps))
          p.slots.push_back({object.key, slot, old, hook.replacement});
        break;
      }
    }
  };
  if (plt_is_rela) scan(jmprel, jmprel_size, sizeof(ElfW(Rela)));
  scan(rela, rela_size, rela_ent);
}

// Whether the loader is done relocating the object. dl_iterate_phdr lists an
// object another thread is still loading; a slot patched before the loader
// processes it would be overwritten, or (a lazy JUMP_SLOT) get the load
// address added to our pointer. _dl_find_object only knows objects whose
// relocation is complete.
bool relocated(const Object &object) {
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 35)
  struct dl_find_object found;
  return _dl_find_object(const_cast<ElfW(Dyn) *>(object.dynamic), &found) == 0;
#else
  (void)object;
  return true;
#endif
}

// Returns whether an object was left for a later scan.
bool scan_locked(Patcher &p) {
  if (!p.installed) return false;
  bool deferred = false;
  std::vector<Object> objects = loaded_objects();
  std::vector<Mapping> maps;
  for (const Object &object : objects) {
    if (p.scanned.count(object.key)) continue;
    if (!relocated(object)) {
      deferred = true;
      continue;
    }
    p.scanned.insert(object.key);
    if (skipped(p, object.key.second)) continue;
    patch_object(p, object, maps);
  }
  return deferred;
}

void remove_locked(Patcher &p) {
  // Slots of objects unloaded since are gone with their pages.
  std::set<ObjectKey> live;
  for (const Object &object : loaded_objects()) live.insert(object.key);
  std::vector<Mapping> maps = current_mappings();
  // In reverse, so a slot patched twice ends with its first original. A slot
  // someone rewrote since (the loader, another interposer) keeps their value.
  for (auto it = p.slots.rbegin(); it != p.slots.rend(); ++it)
    if (live.count(it->object) && __atomic_load_n(it->slot, __ATOMIC_ACQUIRE) == it->replacement)
      store(it->slot, it->original, maps);
  p.slots.clear();
  p.scanned.clear();
  p.installed = false;
}

}  // namespace

bool got_patch_install(const GotHook *hooks, size_t count, const char *const *skip) {
  Patcher &p = patcher();
  std::lock_guard<std::mutex> guard(p.mutex);
  if (p.installed) remove_locked(p);
  p.hooks.assign(hooks, hooks + count);
  p.skip.clear();
  for (const char *const *s = skip; s && *s; ++s) p.skip.emplace_back(*s);
  p.installed = true;
  return scan_locked(p);
}

bool got_patch_rescan() {
  Patcher &p = patcher();
  std::lock_guard<std::mutex> guard(p.mutex);
  return scan_locked(p);
}

void got_patch_remove() {
  Patcher &p = patcher();
  std::lock_guard<std::mutex> guard(p.mutex);
  if (p.installed) remove_locked(p);
}

size_t got_patch_slots() {
  Patcher &p = patcher();
  std::lock_guard<std::mutex> guard(p.mutex);
  return p.slots.size();
}

}  // namespace npvk
