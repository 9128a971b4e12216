// libFuzzer target: the on-disk kernel cache loader (vulkan/kernel_cache.cpp)
// and the layout check that a loaded SPIR-V entry meets next
// (vulkan/reflection.cpp), fed corrupt files. A file is either the input
// as it is, or a well-formed header (right magic, key and checksum) around
// the input, so that damaged payloads get past the checksum as a file that
// was written by a buggy or hostile writer would.
//
// Input: byte 0 picks the shape of the file and the loader, the rest is the
// file (or the payload).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/hash.hpp"
#include "compile/kernel_spec.hpp"
#include "vulkan/kernel_cache.hpp"
#include "vulkan/reflection.hpp"

namespace {

const std::string &cache_dir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/npvk-fuzz-cache-XXXXXX";
    const char *d = mkdtemp(tmpl);
    if (!d) std::abort();
    return std::string(d);
  }();
  return dir;
}

void write_file(const std::string &path, const void *data, size_t size) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
}

// The layout of vulkan/kernel_cache.cpp's EntryHeader.
std::vector<uint8_t> well_formed(const npvk::Hash128 &key, const uint8_t *payload, size_t size,
                                 uint8_t damage) {
  struct {
    char magic[8] = {'N', 'P', 'V', 'K', 'C', 'A', 'C', '1'};
    uint64_t key_hi, key_lo, payload_size, payload_checksum;
  } h;
  h.key_hi = key.hi;
  h.key_lo = key.lo;
  h.payload_size = size;
  h.payload_checksum = npvk::fnv1a64(payload, size);
  // Damage one header field on purpose, now and then.
  if (damage == 1) h.payload_size += 1;
  if (damage == 2) h.payload_size = ~0ull;
  if (damage == 3) h.payload_size = size ? size - 1 : 0;
  if (damage == 4) h.key_lo ^= 1;
  std::vector<uint8_t> out(sizeof h + size);
  std::memcpy(out.data(), &h, sizeof h);
  if (size) std::memcpy(out.data() + sizeof h, payload, size);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  data++;
  size--;
  npvk::vk::KernelCache cache(cache_dir());
  const npvk::Hash128 key = npvk::hash128("fuzz-kernel");
  const bool blob = mode & 1;
  const std::string name = "pipelines-fuzz";
  const npvk::Hash128 file_key = blob ? npvk::hash128(name) : key;
  const std::string path = cache_dir() + "/" + (blob ? name + ".bin" : key.hex() + ".spv");
  if ((mode >> 1) % 4 == 0) {
    write_file(path, data, size);
  } else {
    std::vector<uint8_t> file = well_formed(file_key, data, size, uint8_t((mode >> 3) % 8));
    write_file(path, file.data(), file.size());
  }
  if (blob) {
    (void)cache.load_blob(name);
  } else if (auto spirv = cache.load_spirv(key)) {
    // What Context::spirv_for does with a cache hit before trusting it.
    using npvk::PushConstants;
    static const npvk::vk::PushLayout layout{
        sizeof(PushConstants),
        {offsetof(PushConstants, operand), offsetof(PushConstants, meta),
         offsetof(PushConstants, count), offsetof(PushConstants, tables),
         offsetof(PushConstants, flags)}};
    try {
      npvk::vk::check_push_layout(*spirv, layout);
    } catch (const npvk::Error &) {
    }
  }
  std::remove(path.c_str());
  return 0;
}
