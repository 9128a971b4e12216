// Stable 128-bit content hashes for cache keys (the same value in every run
// and on every machine, unlike std::hash).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace npvk {

struct Hash128 {
  uint64_t hi = 0, lo = 0;
  bool operator==(const Hash128 &o) const { return hi == o.hi && lo == o.lo; }
  std::string hex() const;
};

// Two FNV-1a 64 passes with different offset bases.
Hash128 hash128(const void *data, size_t size);
inline Hash128 hash128(const std::string &s) {
  return hash128(s.data(), s.size());
}
uint64_t fnv1a64(const void *data, size_t size, uint64_t basis = 0xcbf29ce484222325ull);

}  // namespace npvk
