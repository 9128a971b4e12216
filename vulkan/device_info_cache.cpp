#include "vulkan/device_info_cache.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "base/hash.hpp"
#include "vulkan/kernel_cache.hpp"
#include "vulkan/physical_device.hpp"

extern char **environ;

namespace npvk::vk {
namespace {

// Bumped when what is stored, or what the fingerprint covers, changes.
constexpr int kFormatVersion = 1;

// Variables read by the Vulkan loader (VK_*), Mesa and its drivers (MESA_*,
// LP_*, GALLIUM_*, RADV_*, ANV_*, ...), NVIDIA's driver (__GL_*, __NV_*),
// and the search paths of driver manifests (XDG_*, HOME).
bool shapes_the_device(const char *entry) {
  static const char *const prefixes[] = {
      "VK_",   "MESA", "LP_",    "GALLIUM_",     "RADV_", "ANV_", "TU_",
      "NVK_",  "PVR_", "DZN_",   "__GL_",        "__NV_", "NV_",  "XDG_",
      "HOME=", "DRI_", "LIBGL_", "CUDA_VISIBLE", "ZINK_"};
  for (const char *p : prefixes)
    if (std::strncmp(entry, p, std::strlen(p)) == 0) return true;
  return false;
}

void add_file(std::string &out, const std::string &path) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) {
    out += path + " -\n";
    return;
  }
  out += path + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + "\n";
}

// A manifest and the driver library it names (its "library_path").
void add_manifest(std::string &out, const std::string &path) {
  add_file(out, path);
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t key = text.find("\"library_path\"");
  if (key == std::string::npos) return;
  const size_t open = text.find('"', text.find(':', key));
  const size_t close = open == std::string::npos ? open : text.find('"', open + 1);
  if (close == std::string::npos) return;
  const std::string library = text.substr(open + 1, close - open - 1);
  if (!library.empty() && library[0] == '/')
    add_file(out, library);
  else
    out += "library " + library + "\n";  // found on the library path: the name is all
}

std::vector<std::string> sorted_entries(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (e->d_name[0] != '.') names.emplace_back(e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

void add_manifest_dir(std::string &out, const std::string &dir) {
  for (const std::string &name : sorted_entries(dir)) add_manifest(out, dir + "/" + name);
}

std::vector<std::string> split_paths(const char *list) {
  std::vector<std::string> parts;
  std::stringstream ss(list ? list : "");
  for (std::string part; std::getline(ss, part, ':');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

std::string blob_name(const std::string &fingerprint) {
  return "device-info-v" + std::to_string(kFormatVersion) + "-" + fingerprint;
}

}  // namespace

std::string device_fingerprint(const DeviceChoice &choice) {
  std::string text = "npvk device v" + std::to_string(kFormatVersion) + "\n";
  text += std::string(NPVK_VERSION_STRING) + " " + std::to_string(sizeof(npvk_device_info)) + "\n";
  try {
    text += "rank " + std::to_string(local_rank()) + "\n";
  } catch (...) {
    return "";
  }
  text += "selector " + choice.selector + "\nenv " + choice.env_selector + "\n";
  text += "validation " + std::to_string(choice.validation) + "\n";
  text +=
      "disabled " + std::to_string(choice.disabled.float64) + std::to_string(choice.disabled.int64);
  for (const std::string &u : choice.disabled.unknown) text += " " + u;
  text += "\n";
  std::vector<std::string> vars;
  for (char **e = environ; e && *e; ++e)
    if (shapes_the_device(*e)) vars.emplace_back(*e);
  std::sort(vars.begin(), vars.end());
  for (const std::string &v : vars) text += v + "\n";
  // The loader's manifest search (its documented default paths), and files
  // named by the variables above.
  std::vector<std::string> dirs = {"/etc/vulkan/icd.d", "/usr/local/etc/vulkan/icd.d",
                                   "/usr/share/vulkan/icd.d", "/usr/local/share/vulkan/icd.d"};
  const char *data_dirs = std::getenv("XDG_DATA_DIRS");
  for (const std::string &d : split_paths(data_dirs)) dirs.push_back(d + "/vulkan/icd.d");
  for (const std::string &d : split_paths(std::getenv("XDG_CONFIG_DIRS")))
    dirs.push_back(d + "/vulkan/icd.d");
  if (const char *home = std::getenv("HOME")) {
    dirs.push_back(std::string(home) + "/.local/share/vulkan/icd.d");
    dirs.push_back(std::string(home) + "/.config/vulkan/icd.d");
  }
  for (const std::string &d : dirs) add_manifest_dir(text, d);
  for (const char *var : {"VK_ICD_FILENAMES", "VK_DRIVER_FILES", "VK_ADD_DRIVER_FILES"})
    for (const std::string &f : split_paths(std::getenv(var))) {
      struct stat st{};
      if (stat(f.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        add_manifest_dir(text, f);
      else
        add_manifest(text, f);
    }
  // GPUs that come and go (a driver module loaded, a device passed through).
  for (const std::string &name : sorted_entries("/dev/dri")) text += "dri " + name + "\n";
  for (const std::string &name : sorted_entries("/dev"))
    if (name.rfind("nvidia", 0) == 0) text += "dev " + name + "\n";
  return hash128(text).hex();
}

bool load_device_info(const std::string &cache_dir, const std::string &fingerprint,
                      StoredDevice *out) {
  if (cache_dir.empty() || fingerprint.empty()) return false;
  KernelCache cache(cache_dir);
  const auto blob = cache.load_blob(blob_name(fingerprint));
  if (!blob || blob->size() != sizeof(npvk_device_info) + sizeof(uint64_t)) return false;
  std::memcpy(&out->info, blob->data(), sizeof out->info);
  std::memcpy(&out->make_ns, blob->data() + sizeof out->info, sizeof out->make_ns);
  return out->info.struct_size == sizeof(npvk_device_info);
}

void store_device_info(const std::string &cache_dir, const std::string &fingerprint,
                       const StoredDevice &device) {
  if (cache_dir.empty() || fingerprint.empty()) return;
  std::vector<uint8_t> bytes(sizeof device.info + sizeof device.make_ns);
  std::memcpy(bytes.data(), &device.info, sizeof device.info);
  std::memcpy(bytes.data() + sizeof device.info, &device.make_ns, sizeof device.make_ns);
  KernelCache cache(cache_dir);
  cache.store_blob(blob_name(fingerprint), bytes);
}

}  // namespace npvk::vk
