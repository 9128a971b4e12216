#include "base/options.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace npvk {
namespace {

// Set and exactly "0".
bool is_zero(const char *v) {
  return v && std::strcmp(v, "0") == 0;
}

// Set, non-empty and not "0".
bool is_on(const char *v) {
  return v && *v && !is_zero(v);
}

DisabledFeatures parse_disabled_features(const char *spec) {
  DisabledFeatures out;
  std::string rest = spec ? spec : "";
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string name = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    if (name == "float64")
      out.float64 = true;
    else if (name == "int64")
      out.int64 = true;
    else if (!name.empty())
      out.unknown.push_back(name);
  }
  return out;
}

std::string resolve_cache_dir() {
  if (const char *d = std::getenv("NPVK_CACHE_DIR"); d && *d) return d;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/npvk";
  if (const char *h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/npvk";
  return "";
}

// Unset, empty and "0" read as "" (off).
std::string path_or_off(const char *v) {
  return is_on(v) ? std::string(v) : std::string();
}

}  // namespace

Options Options::from_environment() {
  Options o;
  o.validation = is_on(std::getenv("NPVK_VALIDATION"));
  if (const char *v = std::getenv("NPVK_DEVICE")) o.device = v;
  o.disable_features = parse_disabled_features(std::getenv("NPVK_DISABLE_FEATURES"));
  o.cache_dir = resolve_cache_dir();
  // The numbers: strtoull/strtoll with no check of the rest, as always.
  if (const char *v = std::getenv("NPVK_MAX_WORKGROUPS"))
    o.max_workgroups = std::max<uint64_t>(1, std::strtoull(v, nullptr, 10));
  if (const char *v = std::getenv("NPVK_LOOP_BUDGET"))
    o.loop_budget = std::max<int64_t>(1, std::strtoll(v, nullptr, 10));
  if (const char *v = std::getenv("NPVK_FUSE_MIN_ELEMENTS"))
    o.fuse_min_elements = std::strtoull(v, nullptr, 10);
  o.fusion = !is_zero(std::getenv("NPVK_FUSION"));
  if (const char *v = std::getenv("NPVK_GRAPH")) o.graph_dir = v;
  o.zero_copy = !is_zero(std::getenv("NPVK_ZERO_COPY"));
  const char *prepare = std::getenv("NPVK_PREPARE_DEVICE");
  if (is_zero(prepare))
    o.prepare_device = PrepareDevice::Never;
  else if (prepare && std::strcmp(prepare, "1") == 0)
    o.prepare_device = PrepareDevice::Always;
  o.vector_access = is_on(std::getenv("NPVK_VECTOR_ACCESS"));
  if (const char *v = std::getenv("NPVK_DEBUG_KERNEL_DIR")) o.debug_kernel_dir = v;
  if (const char *v = std::getenv("NPVK_DEVICE_MEMORY_BUDGET")) o.device_memory_budget = v;
  o.trace_path = path_or_off(std::getenv("NPVK_TRACE"));
  o.profile = path_or_off(std::getenv("NPVK_PROFILE"));

  o.syscall_guard = !is_zero(std::getenv("NPVK_SYSCALL_GUARD"));
  o.huge_pages = !is_zero(std::getenv("NPVK_HUGE_PAGES"));
  if (const char *v = std::getenv("NPVK_HOST_THREADS"); v && *v && !is_zero(v))
    o.host_threads = int(std::clamp<long long>(std::strtoll(v, nullptr, 10), 1, 1024));
  const char *alias = std::getenv("NPVK_PAGE_ALIAS");
  if (is_zero(alias))
    o.page_alias = PageAlias::Never;
  else if (alias && std::strcmp(alias, "1") == 0)
    o.page_alias = PageAlias::Always;
  if (const char *v = std::getenv("NPVK_FAULT")) o.fault = v;
  return o;
}

const Options &process_options() {
  // A magic static: thread-safe. Never destroyed: managed memory's exit
  // handler and late page faults may still read it.
  static const Options *options = new Options(Options::from_environment());
  return *options;
}

bool parse_byte_count(const char *text, uint64_t *out) {
  char *end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text || errno != 0 || *text == '-') return false;
  unsigned shift = 0;
  switch (std::toupper(static_cast<unsigned char>(*end))) {
    case 'K':
      shift = 10;
      break;
    case 'M':
      shift = 20;
      break;
    case 'G':
      shift = 30;
      break;
    case '\0':
      break;
    default:
      return false;
  }
  if (shift && *++end == 'B') ++end;  // "512MB" reads as meant
  if (*end != '\0' || value > (UINT64_MAX >> shift)) return false;
  *out = uint64_t(value) << shift;
  return true;
}

const std::vector<OptionInfo> &option_table() {
  // docs/settings.md and the README's list are printed from this table
  // (tools/npvk_settings.cpp); ctest -R settings_docs checks them.
  static const std::vector<OptionInfo> *table = new std::vector<OptionInfo>{
      {"NPVK", "unset (off)",
       "anything but empty or 0 enables npvk in every Python program that imports NumPy", "python",
       true},
      {"NPVK_MIN_BYTES", "1048576 (1 MiB)",
       "arrays smaller than this stay on NumPy's path; 0 accelerates everything supported; not "
       "an integer is an error. Derived from it: arrays of NPVK_MIN_BYTES/8 bytes and more get "
       "managed memory (the first binds the device), and so do those from min(NPVK_MIN_BYTES/8, "
       "max(4 KiB, NPVK_MIN_BYTES/256)) bytes (4 KiB at the default) while the program sends "
       "work to the device; smaller arrays are never managed",
       "python", true},
      {"NPVK_COST_MODEL", "on",
       "0: recorded elementwise work always runs on the device; otherwise each flush runs where "
       "it is estimated faster, the device or NumPy's own loops (not with NPVK_MIN_BYTES=0)",
       "python", true},
      {"NPVK_STATS", "unset (off)",
       "anything but empty or 0 prints a one-line summary of what ran where at exit", "python",
       true},
      {"NPVK_REPORT", "unset (off)",
       "a CSV file written at exit: per call site, ops on the device, fallbacks and why, host "
       "syncs",
       "python", true},
      {"NPVK_PROFILE", "unset (off)",
       "1 prints where the time went on stderr, any other value but 0 names a JSON file; "
       "written at exit (Python) or at a context's release (C)",
       "python, context", true},
      {"NPVK_TRACE", "unset (off)",
       "a Chrome trace file (chrome://tracing, Perfetto) of the context's work, traced from its "
       "creation and written at its release; 0 is off",
       "context", true},
      {"NPVK_GRAPH", "unset (off)",
       "a directory that gets each flush's graph as Graphviz dot (and SVG from Python when dot "
       "is installed)",
       "python, context", true},
      {"NPVK_DEVICE",
       "local-rank: of the usable devices of the best type (discrete, integrated, virtual, then "
       "CPU), the one at the local rank modulo their count; the first without a rank",
       "the device by index, case-insensitive name fragment or local-rank, when the caller "
       "names none",
       "context, npvk_device_select, npvk-info", true},
      {"NPVK_LOCAL_RANK", "unset (no rank)",
       "the local rank for local-rank where OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID and "
       "SLURM_LOCALID are unset; npvk.dask sets it to a worker's slot",
       "context, npvk_device_select, npvk-info", true},
      {"NPVK_CACHE_DIR", "$XDG_CACHE_HOME/npvk, else $HOME/.cache/npvk",
       "where compiled kernels and the pipeline cache are kept", "context", true},
      {"XDG_CACHE_HOME", "unset",
       "the kernel cache is $XDG_CACHE_HOME/npvk when NPVK_CACHE_DIR is unset", "context"},
      {"HOME", "(the user's)",
       "the kernel cache is $HOME/.cache/npvk when neither NPVK_CACHE_DIR nor XDG_CACHE_HOME is "
       "set; with none of the three there is no disk cache",
       "context"},
      {"NPVK_VALIDATION", "unset (off)",
       "anything but empty or 0 enables the Khronos validation layer; messages are printed and "
       "counted",
       "context", true},
      {"NPVK_FUSION", "on", "0: one kernel per op instead of fused kernels", "context", true},
      {"NPVK_FUSE_MIN_ELEMENTS", "65536", "ops over fewer elements are not fused", "context"},
      {"NPVK_LOOP_BUDGET", "32768 on llvmpipe, else unlimited (2^40)",
       "the most elements one kernel invocation loops over (at least 1)", "context"},
      {"NPVK_MAX_WORKGROUPS", "256 on CPU devices, else the device limit",
       "workgroups per dispatch at most (at least 1)", "context"},
      {"NPVK_PREPARE_DEVICE",
       "the device is made ahead only where the program asks "
       "(npvk_device_prepare); npvk.enable() does not",
       "1: npvk.enable() also makes the device ahead, on a thread of its own, 50 ms after it (off "
       "by default: its loading of the driver slowed the program's own imports about as much as "
       "it saved); 0: npvk_device_prepare does nothing either",
       "npvk_device_prepare, python"},
      {"NPVK_ZERO_COPY", "on",
       "0 keeps a device copy of every wrapped host buffer even where the device could use the "
       "pages in place",
       "context", true},
      {"NPVK_DEVICE_MEMORY_BUDGET", "VK_EXT_memory_budget's figure, else the device-local heap",
       "the most device memory (bytes, K/M/G suffix) device copies of host arrays may hold; a "
       "value that is not a byte count is reported and ignored",
       "context", true},
      {"NPVK_VECTOR_ACCESS", "off",
       "1: contiguous elementwise kernels read and write 4 elements per invocation as vectors "
       "where the operands are aligned",
       "context"},
      {"NPVK_DEBUG_KERNEL_DIR", "unset (off)",
       "every generated kernel is written to DIR/HASH.generated, and a DIR/HASH.glsl "
       "replaces it",
       "context"},
      {"NPVK_DISABLE_FEATURES", "none",
       "for tests: float64, int64 or both, comma-separated, are reported absent and not enabled",
       "context"},
      {"NPVK_HUGE_PAGES", "on",
       "0: managed arrays of 2 MiB and more get no MADV_HUGEPAGE (steadier first writes in a "
       "guest whose balloon reports free memory; slower flushes after)",
       "process"},
      {"NPVK_HOST_THREADS", "one per usable core",
       "threads that run NumPy's elementwise loops when a flush runs on the host (1: the "
       "flushing thread alone); npvk-info prints the count",
       "process", true},
      {"NPVK_PAGE_ALIAS", "private until a second thread starts, then shared",
       "1: every managed array is two shared mappings; 0: one private mapping each", "process"},
      {"NPVK_STOCK_MESA", "unset (install Mesa 25's lavapipe on Debian 12)",
       "1: scripts/install-deps.sh (and so run-main.sh and test.sh) keeps Debian 12's Mesa 22.3 "
       "as the default driver instead of installing Mesa 25's lavapipe from bookworm-backports",
       "scripts/install-deps.sh"},
      {"NPVK_SYSCALL_GUARD", "on",
       "0 leaves system calls on managed memory unguarded (they can fail with EFAULT); for "
       "diagnosis",
       "process"},
      {"NPVK_FAULT", "none",
       "for tests: kind:N[,...] makes the N-th alloc, compile, submit or device_lost event fail; "
       "a malformed spec is reported and ignored",
       "process"},
  };
  return *table;
}

}  // namespace npvk
