// Every NPVK_* environment variable of the runtime, parsed in one place.
// option_table() below documents them all, with the ones the Python package
// and the set-up scripts read; docs/settings.md and the README's list are
// generated from it (tools/npvk_settings.cpp; ctest -R settings_docs).
//
// A context takes its own snapshot when it is created (Options::
// from_environment()), so a program or a test that changes the environment
// between contexts gets what it set; process-wide code (the syscall guard,
// page aliasing, fault injection) reads process_options(), parsed once at its
// first use.
//
// Parsing never fails: a malformed value is read as it always was (a number
// through strtoull/strtoll, so "abc" reads as 0 and is then clamped, "12x"
// as 12), and the consumers that reject a value (NPVK_FAULT,
// NPVK_DEVICE_MEMORY_BUDGET, NPVK_DISABLE_FEATURES) say so on stderr and go
// on with the default. Parsing prints nothing itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace npvk {

// NPVK_PAGE_ALIAS.
enum class PageAlias {
  Auto,    // unset or any other value: once the program runs more than one thread
  Never,   // "0"
  Always,  // "1"
};

// NPVK_PREPARE_DEVICE: whether the device is made ahead, on a thread of its
// own. One rule for C and Python.
enum class PrepareDevice {
  Asked,   // unset or any other value: where the program asks (npvk_device_prepare)
  Never,   // "0": npvk_device_prepare does nothing
  Always,  // "1": also npvk.enable() (the Python package) makes it ahead
};

// NPVK_DISABLE_FEATURES=float64,int64 (test-only): shader features reported
// as absent although the driver has them.
struct DisabledFeatures {
  bool float64 = false;
  bool int64 = false;
  std::vector<std::string> unknown;  // names that are neither, in order (warned about)
};

struct Options {
  // --- read by a context when it is created (its snapshot) ---

  // NPVK_VALIDATION: any non-empty value but "0" enables the Vulkan
  // validation layer (as NPVK_CONTEXT_VALIDATION does). Default off.
  bool validation = false;
  // NPVK_DEVICE: an index or a name fragment choosing the device when the
  // caller names none. Unset or empty (the default): the best device.
  std::string device;
  // NPVK_DISABLE_FEATURES: see DisabledFeatures. Default: none.
  DisabledFeatures disable_features;
  // The kernel cache's directory: NPVK_CACHE_DIR if non-empty, else
  // $XDG_CACHE_HOME/npvk, else $HOME/.cache/npvk, else "" (no disk cache).
  std::string cache_dir;
  // NPVK_MAX_WORKGROUPS: workgroups per dispatch at most, max(1,
  // strtoull(value)); set but not a number reads as 1. Unset: the device's
  // limit (256 on a CPU driver).
  std::optional<uint64_t> max_workgroups;
  // NPVK_LOOP_BUDGET: the most elements one kernel invocation loops over
  // (llvmpipe ends a loop nest after 65535 iterations), max(1,
  // strtoll(value)). Unset: 32768 on llvmpipe, else 2^40 (unlimited).
  std::optional<int64_t> loop_budget;
  // NPVK_FUSE_MIN_ELEMENTS: the fewest elements a fused kernel is built for,
  // strtoull(value) (no clamp; not a number reads as 0). Unset: 65536.
  std::optional<uint64_t> fuse_min_elements;
  // NPVK_FUSION: "0" runs one kernel per op; anything else or unset fuses.
  bool fusion = true;
  // NPVK_GRAPH: a directory that gets each flush's graph (Graphviz dot). The
  // value as given: only unset or empty means none ("0" names a directory
  // here; the Python package treats "0" as off and never passes it on).
  std::string graph_dir;
  // NPVK_PREPARE_DEVICE: see PrepareDevice. Default Asked.
  PrepareDevice prepare_device = PrepareDevice::Asked;
  // NPVK_ZERO_COPY: "0" mirrors every wrapped host buffer instead of
  // importing its pages; anything else or unset imports where possible.
  bool zero_copy = true;
  // NPVK_VECTOR_ACCESS: "1" has contiguous elementwise kernels take 4
  // elements per invocation through vector loads and stores (off by
  // default: no gain measured on lavapipe, and a 4x larger kernel body).
  bool vector_access = false;
  // NPVK_DEBUG_KERNEL_DIR: every generated kernel source is dumped there as
  // <hash>.generated, and a <hash>.glsl there replaces it. Unset: off. Set
  // but empty names the root directory, as it always did (paths are
  // dir + "/" + file).
  std::optional<std::string> debug_kernel_dir;
  // NPVK_DEVICE_MEMORY_BUDGET: device bytes mirrored buffers may hold, as
  // text ("512M", "2G", "4096"); parse_byte_count() reads it, and a value it
  // rejects is reported and ignored. Unset: the heap's budget or size.
  std::optional<std::string> device_memory_budget;
  // NPVK_TRACE: a Chrome trace file, traced from context creation and
  // written at its release. "" (unset, empty or "0"): no trace.
  std::string trace_path;
  // NPVK_PROFILE, at a context's release: "1" prints the text report on
  // stderr, any other value names a JSON file. "" (unset, empty or "0"): none.
  std::string profile;

  // --- process-wide (read through process_options()) ---

  // NPVK_SYSCALL_GUARD: "0" leaves system calls unguarded (diagnosis only);
  // anything else or unset installs the guard with managed memory.
  bool syscall_guard = true;
  // NPVK_PAGE_ALIAS: see PageAlias. Default Auto.
  PageAlias page_alias = PageAlias::Auto;
  // NPVK_HUGE_PAGES: "0" leaves managed mappings of 2 MiB and more without
  // MADV_HUGEPAGE; anything else or unset asks for transparent huge pages.
  bool huge_pages = true;
  // NPVK_HOST_THREADS: threads for NumPy's loops when a flush runs on the
  // host (runtime/host/host_workers.hpp), the flushing thread's included,
  // max(1, strtoll(value)). Unset, empty or 0: one per core of the process's
  // affinity mask.
  int host_threads = 0;
  // NPVK_FAULT="kind:N[,kind:N...]": simulated failures (runtime/
  // fault_injection.hpp), parsed there at the first event; a malformed spec
  // is reported and ignored. Unset or empty: none.
  std::string fault;

  // Reads the environment now. Never throws, prints nothing.
  static Options from_environment();
};

// The environment as it was at the first call, for process-wide code.
// Thread-safe; never destroyed (exit handlers may read it).
const Options &process_options();

// "512M", "2G", "4096", "512MB": bytes with an optional binary K/M/G suffix
// (and an optional B after it), as NPVK_DEVICE_MEMORY_BUDGET takes them.
// False, leaving *out as it was, for anything else (a sign, a fraction,
// another suffix, an overflow).
bool parse_byte_count(const char *text, uint64_t *out);
inline bool parse_byte_count(const std::string &text, uint64_t *out) {
  return parse_byte_count(text.c_str(), out);
}

// One environment variable, for documentation and npvk-info.
struct OptionInfo {
  const char *name;           // "NPVK_FUSION"
  const char *default_value;  // what unset means
  const char *meaning;        // one line
  const char *read_by;        // "context", "process", "python", "npvk-info", joined by ", "
  bool in_readme = false;     // also in the README's short list (what a user sets)
};

// Every variable npvk reads: those of Options, the standard ones the cache
// directory falls back on, the ones the Python package reads itself and the
// set-up scripts' own. The one source of docs/settings.md and the README's
// list: tools/npvk_settings prints them, ctest -R settings_docs compares.
const std::vector<OptionInfo> &option_table();

}  // namespace npvk
