// The informational corners of the ABI: versions, status and dtype names, device queries.
#include <cstring>
#include <regex>
#include <thread>

#include "npvk_test_support.hpp"

namespace npvk_test {
namespace {

TEST(Api, AbiVersionAndVersionString) {
  EXPECT_EQ(npvk_abi_version(), static_cast<uint32_t>(NPVK_ABI_VERSION));
  const char *version = npvk_version_string();
  ASSERT_NE(version, nullptr);
  EXPECT_TRUE(std::regex_match(version, std::regex(R"(\d+\.\d+\.\d+)"))) << version;
}

TEST(Api, StatusStrings) {
  const std::pair<npvk_status, const char *> names[] = {
      {NPVK_SUCCESS, "NPVK_SUCCESS"},
      {NPVK_ERR_INVALID_ARGUMENT, "NPVK_ERR_INVALID_ARGUMENT"},
      {NPVK_ERR_INVALID_HANDLE, "NPVK_ERR_INVALID_HANDLE"},
      {NPVK_ERR_BAD_DTYPE, "NPVK_ERR_BAD_DTYPE"},
      {NPVK_ERR_SHAPE_MISMATCH, "NPVK_ERR_SHAPE_MISMATCH"},
      {NPVK_ERR_OUT_OF_BOUNDS, "NPVK_ERR_OUT_OF_BOUNDS"},
      {NPVK_ERR_UNSUPPORTED, "NPVK_ERR_UNSUPPORTED"},
      {NPVK_ERR_NO_DEVICE, "NPVK_ERR_NO_DEVICE"},
      {NPVK_ERR_OUT_OF_HOST_MEMORY, "NPVK_ERR_OUT_OF_HOST_MEMORY"},
      {NPVK_ERR_OUT_OF_DEVICE_MEMORY, "NPVK_ERR_OUT_OF_DEVICE_MEMORY"},
      {NPVK_ERR_DEVICE_LOST, "NPVK_ERR_DEVICE_LOST"},
      {NPVK_ERR_COMPILE, "NPVK_ERR_COMPILE"},
      {NPVK_ERR_VULKAN, "NPVK_ERR_VULKAN"},
      {NPVK_ERR_INTERNAL, "NPVK_ERR_INTERNAL"}};
  for (auto [status, name] : names) EXPECT_STREQ(npvk_status_string(status), name);
  // An unknown status still gives a string, not a crash.
  EXPECT_NE(npvk_status_string(static_cast<npvk_status>(999)), nullptr);
}

TEST(Api, DtypeInfoMatchesNumPy) {
  for (int d = 0; d < NPVK_DTYPE_COUNT; ++d) {
    const npvk_dtype dtype = static_cast<npvk_dtype>(d);
    const char *name = nullptr;
    uint32_t itemsize = 0;
    NPVK_ASSERT_OK(npvk_dtype_info(dtype, &name, &itemsize));
    ASSERT_NE(name, nullptr);
    EXPECT_STREQ(name, DtypeName(dtype));
    EXPECT_EQ(itemsize, Itemsize(dtype)) << name;
  }
}

TEST(Api, LastErrorMessageIsEmptyAfterNoFailure) {
  // "" if none: a fresh thread has had no failure.
  std::string message = "unset";
  std::thread([&] { message = npvk_last_error_message(); }).join();
  EXPECT_EQ(message, "");
}

TEST(Api, DevicesAreListedAndOneIsUsable) {
  uint32_t count = 0;
  NPVK_ASSERT_OK(npvk_device_count(&count));
  ASSERT_GE(count, 1u) << "the tests need a Vulkan device (lavapipe will do)";
  bool any_usable = false;
  for (uint32_t i = 0; i < count; ++i) {
    npvk_device_info info{};
    info.struct_size = sizeof(info);
    NPVK_ASSERT_OK(npvk_device_get_info(i, &info));
    EXPECT_EQ(info.index, i);
    EXPECT_GT(std::strlen(info.name), 0u);
    if (info.usable) {
      any_usable = true;
    } else {
      EXPECT_GT(std::strlen(info.unusable_reason), 0u) << info.name;
    }
  }
  EXPECT_TRUE(any_usable);
  uint32_t selected = count;
  NPVK_ASSERT_OK(npvk_device_select("0", &selected));
  EXPECT_EQ(selected, 0u);
}

class ApiContext : public NpvkTest {};

TEST_F(ApiContext, ContextDeviceInfoIsTheSelectedDevice) {
  npvk_device_info info{};
  info.struct_size = sizeof(info);
  NPVK_ASSERT_OK(npvk_context_device_info(ctx(), &info));
  EXPECT_TRUE(info.usable);
  EXPECT_TRUE(info.buffer_device_address);
  EXPECT_TRUE(info.int64);
  npvk_device_info listed{};
  listed.struct_size = sizeof(listed);
  NPVK_ASSERT_OK(npvk_device_get_info(info.index, &listed));
  EXPECT_STREQ(listed.name, info.name);
}

}  // namespace
}  // namespace npvk_test
