#include "base/hash.hpp"

#include <cstdio>

namespace npvk {

uint64_t fnv1a64(const void *data, size_t size, uint64_t basis) {
  const auto *p = static_cast<const unsigned char *>(data);
  uint64_t h = basis;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

Hash128 hash128(const void *data, size_t size) {
  return {fnv1a64(data, size), fnv1a64(data, size, 0x84222325cbf29ce4ull ^ size)};
}

std::string Hash128::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(hi),
                static_cast<unsigned long long>(lo));
  return buf;
}

}  // namespace npvk
