#include "runtime/fault_injection.hpp"

#include <npvk/npvk.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "base/error.hpp"
#include "base/options.hpp"

namespace npvk::fault {
namespace {

constexpr size_t kKinds = size_t(Kind::Count);
constexpr const char *kNames[kKinds] = {"alloc", "compile", "submit", "device_lost"};

struct Plan {
  std::mutex mutex;
  bool loaded = false;        // NPVK_FAULT read (lazily: the first event)
  uint64_t target[kKinds]{};  // 0: never
  uint64_t seen[kKinds]{};
  uint64_t fired = 0;
};

Plan &plan() {
  static Plan *p = new Plan;  // never destroyed: events may come during exit
  return *p;
}

void parse(Plan &p, const char *spec) {
  uint64_t target[kKinds]{};
  std::string s = spec ? spec : "";
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    size_t colon = item.find(':');
    std::string name = item.substr(0, colon);
    size_t k = 0;
    while (k < kKinds && name != kNames[k]) ++k;
    char *num_end = nullptr;
    const char *num = colon == std::string::npos ? "" : item.c_str() + colon + 1;
    unsigned long long n = std::strtoull(num, &num_end, 10);
    NPVK_REQUIRE(
        k < kKinds && *num && *num_end == 0 && n > 0, NPVK_ERR_INVALID_ARGUMENT,
        "bad fault '" + item +
            "': expected kind:N with kind alloc, compile, submit or device_lost and N >= 1");
    target[k] = n;
  }
  std::memcpy(p.target, target, sizeof target);
  std::memset(p.seen, 0, sizeof p.seen);
  p.loaded = true;
}

}  // namespace

void configure(const char *spec) {
  Plan &p = plan();
  std::lock_guard<std::mutex> lock(p.mutex);
  parse(p, spec);
}

bool fire(Kind kind) {
  Plan &p = plan();
  std::lock_guard<std::mutex> lock(p.mutex);
  if (!p.loaded) {
    try {
      parse(p, process_options().fault.c_str());
    } catch (const Error &e) {
      // A typo must not break the program it was meant to test.
      std::fprintf(stderr, "npvk: NPVK_FAULT ignored: %s\n", e.what());
      p.loaded = true;
    }
  }
  const size_t k = size_t(kind);
  if (p.target[k] == 0 || ++p.seen[k] != p.target[k]) return false;
  ++p.fired;
  return true;
}

uint64_t fired() {
  Plan &p = plan();
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.fired;
}

const char *kind_name(Kind kind) {
  return kNames[size_t(kind)];
}

}  // namespace npvk::fault
