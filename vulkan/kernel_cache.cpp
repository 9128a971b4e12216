#include "vulkan/kernel_cache.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "base/options.hpp"

namespace npvk::vk {
namespace {

constexpr char kMagic[8] = {'N', 'P', 'V', 'K', 'C', 'A', 'C', '1'};

struct EntryHeader {
  char magic[8];
  uint64_t key_hi, key_lo;  // what the entry claims to be
  uint64_t payload_size;
  uint64_t payload_checksum;
};

bool make_dirs(const std::string &path) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    std::string prefix = path.substr(0, pos);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  struct stat st{};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && access(path.c_str(), W_OK) == 0;
}

}  // namespace

std::string default_cache_dir() {
  return Options::from_environment().cache_dir;
}

KernelCache::KernelCache(std::string dir) : dir_(std::move(dir)) {
  if (!dir_.empty() && !make_dirs(dir_)) dir_.clear();
}

std::optional<std::vector<uint8_t>> KernelCache::read_entry(const std::string &path,
                                                            const Hash128 &key) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;  // a plain miss
  EntryHeader h{};
  std::vector<uint8_t> payload;
  bool ok = bool(in.read(reinterpret_cast<char *>(&h), sizeof h)) &&
            std::memcmp(h.magic, kMagic, sizeof kMagic) == 0 && h.key_hi == key.hi &&
            h.key_lo == key.lo && h.payload_size < (1ull << 31);
  if (ok) {
    payload.resize(h.payload_size);
    ok = bool(in.read(reinterpret_cast<char *>(payload.data()), std::streamsize(payload.size()))) &&
         in.peek() == std::char_traits<char>::eof() &&
         fnv1a64(payload.data(), payload.size()) == h.payload_checksum;
  }
  if (!ok) {
    ++rejects_;
    std::remove(path.c_str());
    return std::nullopt;
  }
  return payload;
}

void KernelCache::write_entry(const std::string &path, const Hash128 &key, const void *data,
                              size_t size) {
  EntryHeader h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.key_hi = key.hi;
  h.key_lo = key.lo;
  h.payload_size = size;
  h.payload_checksum = fnv1a64(data, size);
  // Write beside, then rename: readers in other processes never see half a file.
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;  // a cache that cannot be written is only slower
    out.write(reinterpret_cast<const char *>(&h), sizeof h);
    out.write(static_cast<const char *>(data), std::streamsize(size));
    if (!out) {
      std::remove(tmp.c_str());
      return;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) std::remove(tmp.c_str());
}

std::optional<std::vector<uint32_t>> KernelCache::load_spirv(const Hash128 &key) {
  if (!enabled()) return std::nullopt;
  auto bytes = read_entry(dir_ + "/" + key.hex() + ".spv", key);
  if (!bytes) return std::nullopt;
  const uint32_t kSpirvMagic = 0x07230203;
  if (bytes->size() % 4 != 0 || bytes->size() < 20 ||
      *reinterpret_cast<const uint32_t *>(bytes->data()) != kSpirvMagic) {
    ++rejects_;
    return std::nullopt;
  }
  std::vector<uint32_t> words(bytes->size() / 4);
  std::memcpy(words.data(), bytes->data(), bytes->size());
  return words;
}

void KernelCache::store_spirv(const Hash128 &key, const std::vector<uint32_t> &spirv) {
  if (enabled()) write_entry(dir_ + "/" + key.hex() + ".spv", key, spirv.data(), spirv.size() * 4);
}

std::optional<std::vector<uint8_t>> KernelCache::load_blob(const std::string &name) {
  if (!enabled()) return std::nullopt;
  return read_entry(dir_ + "/" + name + ".bin", hash128(name));
}

void KernelCache::store_blob(const std::string &name, const std::vector<uint8_t> &data) {
  if (enabled()) write_entry(dir_ + "/" + name + ".bin", hash128(name), data.data(), data.size());
}

}  // namespace npvk::vk
