#include "reference_device.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "compile/kernel_abi.hpp"
#include "compile/math_tables.hpp"
#include "vulkan/compiler.hpp"

namespace npvk {
const char *embedded_shader(const char *name);  // generated from shaders/*.glsl
}

namespace npvk::bench {
namespace {

constexpr uint64_t kHugePage = 2u << 20;

std::string read_file(const std::string &path) {
  std::ifstream in(path);
  NPVK_REQUIRE(bool(in), NPVK_ERR_INVALID_ARGUMENT, "cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// shaderc runs without an includer in npvk: splice included files in, from
// the shader's own directory, else npvk's embedded shaders/ (as generated
// kernels have them). One level deep: the included files include nothing.
std::string with_includes(const std::string &source, const std::string &dir) {
  const std::string directive = "#include \"";
  std::istringstream in(source);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, directive.size(), directive) == 0) {
      const std::string name =
          line.substr(directive.size(), line.find('"', directive.size()) - directive.size());
      if (std::ifstream(dir + "/" + name)) {
        out += read_file(dir + "/" + name);
      } else {
        const char *text = embedded_shader(name.c_str());
        NPVK_REQUIRE(text != nullptr, NPVK_ERR_INVALID_ARGUMENT, "no shader " + name);
        out += text;
      }
    } else {
      out += line;
    }
    out += '\n';
  }
  return out;
}

}  // namespace

Array::Array(vk::Device &device, uint64_t elements) : device_(device), elements_(elements) {
  const npvk_device_info &info = device.info();
  const uint64_t bytes = std::max<uint64_t>(elements * sizeof(double), 8);
  if (info.host_memory_import && kHugePage % info.min_imported_host_pointer_alignment == 0) {
    host_bytes_ = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    // Over-map by a huge page to align the start, as interpose/managed_pages.cpp.
    void *raw = mmap(nullptr, host_bytes_ + kHugePage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    require(raw != MAP_FAILED, NPVK_ERR_OUT_OF_HOST_MEMORY, "mmap failed");
    const uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t at = (begin + kHugePage - 1) / kHugePage * kHugePage;
    if (at > begin) munmap(raw, at - begin);
    if (kHugePage - (at - begin))
      munmap(reinterpret_cast<void *>(at + host_bytes_), kHugePage - (at - begin));
    host_ = reinterpret_cast<void *>(at);
    madvise(host_, host_bytes_, MADV_HUGEPAGE);
    buffer_ = std::make_unique<vk::DeviceBuffer>(device, host_, host_bytes_);
  } else {
    buffer_ = std::make_unique<vk::DeviceBuffer>(device, bytes, vk::MemoryPlacement::DeviceLocal);
  }
}

Array::~Array() {
  buffer_.reset();
  if (host_) munmap(host_, host_bytes_);
}

void Array::upload(const std::vector<double> &values) {
  require(values.size() == elements_, NPVK_ERR_INVALID_ARGUMENT, "wrong element count");
  const uint64_t bytes = elements_ * sizeof(double);
  if (buffer_->mapped()) {
    std::memcpy(buffer_->mapped(), values.data(), bytes);
    return;
  }
  vk::DeviceBuffer staging(device_, bytes, vk::MemoryPlacement::HostVisible);
  std::memcpy(staging.mapped(), values.data(), bytes);
  device_.submit_and_wait([&](VkCommandBuffer cmd) {
    VkBufferCopy region{0, 0, bytes};
    device_.fn().vkCmdCopyBuffer(cmd, staging.handle(), buffer_->handle(), 1, &region);
  });
}

std::vector<double> Array::download() {
  std::vector<double> values(elements_);
  const uint64_t bytes = elements_ * sizeof(double);
  if (buffer_->mapped()) {
    std::memcpy(values.data(), buffer_->mapped(), bytes);
    return values;
  }
  vk::DeviceBuffer staging(device_, bytes, vk::MemoryPlacement::HostVisible);
  device_.submit_and_wait([&](VkCommandBuffer cmd) {
    VkBufferCopy region{0, 0, bytes};
    device_.fn().vkCmdCopyBuffer(cmd, buffer_->handle(), staging.handle(), 1, &region);
  });
  std::memcpy(values.data(), staging.mapped(), bytes);
  return values;
}

ReferenceDevice::ReferenceDevice(bool validation) {
  auto instance = std::make_unique<vk::Instance>(validation);
  const uint32_t index = instance->select(nullptr);
  device_ = std::make_unique<vk::Device>(std::move(instance), index);
  require(info().float64 && info().int64 && info().buffer_device_address, NPVK_ERR_UNSUPPORTED,
          "the device lacks float64, int64 or buffer device addresses");
  pipelines_ = std::make_unique<vk::PipelineFactory>(*device_, no_cache_, sizeof(PushConstants));
  executor_ = std::make_unique<vk::Executor>(*device_, pipelines_->layout());
  const std::vector<double> &tables = math_f64_table_data();
  tables_ = std::make_unique<vk::DeviceBuffer>(
      *device_, std::max<uint64_t>(tables.size() * sizeof(double), 8),
      vk::MemoryPlacement::HostVisible);
  std::memcpy(tables_->mapped(), tables.data(), tables.size() * sizeof(double));
}

ReferenceDevice::~ReferenceDevice() {
  for (VkPipeline p : created_) pipelines_->destroy(p);
}

VkPipeline ReferenceDevice::pipeline(const std::string &path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  VkPipeline p = pipelines_->create(vk::compile_glsl(with_includes(read_file(path), dir), path));
  created_.push_back(p);
  return p;
}

uint32_t ReferenceDevice::groups(uint64_t wanted) const {
  const uint64_t cap = info().type == NPVK_DEVICE_CPU ? 256 : info().max_workgroup_count_x;
  return uint32_t(std::clamp<uint64_t>(wanted, 1, cap));
}

std::vector<double> ReferenceDevice::run(std::vector<vk::Dispatch> &batch) {
  vk::BatchResult result = executor_->run(batch);
  std::vector<double> seconds;
  for (size_t i = 0; i + 1 < result.dispatch_ns.size(); i += 2)
    seconds.push_back(double(result.dispatch_ns[i + 1] - result.dispatch_ns[i]) * 1e-9);
  return seconds;
}

uint64_t ReferenceDevice::validation_messages() const {
  return device_->instance().validation_messages();
}

vk::Access access(const Array &array, bool write) {
  return {&array.buffer(), 0, array.elements() * sizeof(double), write};
}

}  // namespace npvk::bench
