// The on-disk kernel cache: SPIR-V per kernel source, and the driver's
// VkPipelineCache blob. Every file carries a checksum; a corrupt or foreign
// entry is reported as a miss (and counted), then rebuilt and overwritten.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/hash.hpp"

namespace npvk::vk {

class KernelCache {
 public:
  // `dir` empty: the cache is off. The directory is created if needed; if
  // that fails the cache is off.
  explicit KernelCache(std::string dir);
  bool enabled() const { return !dir_.empty(); }
  const std::string &dir() const { return dir_; }

  std::optional<std::vector<uint32_t>> load_spirv(const Hash128 &key);
  void store_spirv(const Hash128 &key, const std::vector<uint32_t> &spirv);
  // Blobs tagged by a name (e.g. the pipeline cache of one driver).
  std::optional<std::vector<uint8_t>> load_blob(const std::string &name);
  void store_blob(const std::string &name, const std::vector<uint8_t> &data);

  uint64_t rejects() const { return rejects_; }

 private:
  std::optional<std::vector<uint8_t>> read_entry(const std::string &path, const Hash128 &key);
  void write_entry(const std::string &path, const Hash128 &key, const void *data, size_t size);
  std::string dir_;
  std::atomic<uint64_t> rejects_{0};  // loads may run on several threads
};

// NPVK_CACHE_DIR, else $XDG_CACHE_HOME/npvk, else $HOME/.cache/npvk, read
// now (Options::cache_dir, which a context's snapshot holds already).
std::string default_cache_dir();

}  // namespace npvk::vk
