// The informational corners of the ABI: versions, status and dtype names, device queries.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>
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

TEST(Api, LocalRankNamesTheLauncherVariableThatSetIt) {
  ScopedEnv ompi("OMPI_COMM_WORLD_LOCAL_RANK", nullptr), mpich("MPI_LOCALRANKID", nullptr),
      slurm("SLURM_LOCALID", "3"), own("NPVK_LOCAL_RANK", "1");
  int64_t rank = -2;
  const char *variable = nullptr;
  NPVK_ASSERT_OK(npvk_device_local_rank(&rank, &variable));
  EXPECT_EQ(rank, 3);  // Slurm's comes before npvk's own
  ASSERT_NE(variable, nullptr);
  EXPECT_STREQ(variable, "SLURM_LOCALID");
  {
    ScopedEnv bad("MPI_LOCALRANKID", "x");
    EXPECT_EQ(npvk_device_local_rank(&rank, &variable), NPVK_ERR_NO_DEVICE);
  }
  ScopedEnv no_slurm("SLURM_LOCALID", nullptr), no_own("NPVK_LOCAL_RANK", nullptr);
  NPVK_ASSERT_OK(npvk_device_local_rank(&rank, &variable));
  EXPECT_EQ(rank, -1);
  EXPECT_EQ(variable, nullptr);
}

TEST(Api, DeviceForARankIsTheLocalRankChoice) {
  ScopedEnv device("NPVK_DEVICE", "local-rank"), ompi("OMPI_COMM_WORLD_LOCAL_RANK", nullptr),
      mpich("MPI_LOCALRANKID", nullptr), slurm("SLURM_LOCALID", nullptr);
  uint32_t count = 0;
  NPVK_ASSERT_OK(npvk_device_count(&count));
  for (int64_t rank : {-1, 0, 1, 2, 5}) {
    uint32_t for_rank = count, selected = count;
    NPVK_ASSERT_OK(npvk_device_select_for_rank(rank, &for_rank));
    ScopedEnv own("NPVK_LOCAL_RANK", rank < 0 ? nullptr : std::to_string(rank).c_str());
    NPVK_ASSERT_OK(npvk_device_select(nullptr, &selected));
    EXPECT_EQ(for_rank, selected) << "rank " << rank;
  }
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

// npvk_device_prepare: the next context takes the device made ahead when it
// would choose the same; otherwise it makes its own, as without it.
uint64_t device_prepared(npvk_context ctx) {
  npvk_stats stats{};
  stats.struct_size = sizeof stats;
  EXPECT_EQ(npvk_context_get_stats(ctx, &stats), NPVK_SUCCESS);
  return stats.device_prepared;
}

TEST(PreparedDevice, TheNextContextTakesIt) {
  NPVK_ASSERT_OK(npvk_device_prepare(nullptr));
  NPVK_ASSERT_OK(npvk_device_prepare(nullptr));  // under way: nothing more
  npvk_context first{0}, second{0};
  NPVK_ASSERT_OK(npvk_context_create(nullptr, &first));
  EXPECT_EQ(device_prepared(first), 1u);
  NPVK_ASSERT_OK(npvk_context_create(nullptr, &second));
  EXPECT_EQ(device_prepared(second), 0u);
  NPVK_EXPECT_OK(npvk_context_release(first));
  NPVK_EXPECT_OK(npvk_context_release(second));
}

TEST(PreparedDevice, AContextThatChoosesOtherwiseMakesItsOwn) {
  npvk_context_options options{};
  options.struct_size = sizeof options;
  options.device = "0";
  NPVK_ASSERT_OK(npvk_device_prepare(&options));
  options.device = "no-such-device";
  npvk_context ctx{0};
  EXPECT_EQ(npvk_context_create(&options, &ctx), NPVK_ERR_NO_DEVICE);
  EXPECT_NE(std::string(npvk_last_error_message()).find("no-such-device"), std::string::npos)
      << npvk_last_error_message();
  NPVK_ASSERT_OK(npvk_context_create(nullptr, &ctx));
  EXPECT_EQ(device_prepared(ctx), 0u);
  NPVK_EXPECT_OK(npvk_context_release(ctx));
}

TEST(PreparedDevice, EndFreesAnUntakenDevice) {
  NPVK_ASSERT_OK(npvk_device_prepare(nullptr));
  NPVK_ASSERT_OK(npvk_device_prepare_end());
  NPVK_ASSERT_OK(npvk_device_prepare_end());
  npvk_context ctx{0};
  NPVK_ASSERT_OK(npvk_context_create(nullptr, &ctx));
  EXPECT_EQ(device_prepared(ctx), 0u);
  NPVK_EXPECT_OK(npvk_context_release(ctx));
}

// A delayed start: the delay here is ten minutes, so that a test that
// waited it out would fail by the suite's timeout rather than pass slowly.
constexpr uint32_t kTenMinutesMs = 600000;

void expect_the_next_context_takes_it() {
  npvk_context ctx{0};
  NPVK_ASSERT_OK(npvk_context_create(nullptr, &ctx));
  EXPECT_EQ(device_prepared(ctx), 1u);
  NPVK_EXPECT_OK(npvk_context_release(ctx));
}

TEST(PreparedDevice, AContextEndsADelayedStartAndTakesTheDevice) {
  NPVK_ASSERT_OK(npvk_device_prepare_after(nullptr, kTenMinutesMs));
  expect_the_next_context_takes_it();
}

TEST(PreparedDevice, PrepareEndsADelayedStart) {
  NPVK_ASSERT_OK(npvk_device_prepare_after(nullptr, kTenMinutesMs));
  NPVK_ASSERT_OK(npvk_device_prepare(nullptr));  // now, without the rest of the delay
  expect_the_next_context_takes_it();
}

TEST(PreparedDevice, EndCancelsADelayedStartThatMadeNothing) {
  NPVK_ASSERT_OK(npvk_device_prepare_after(nullptr, kTenMinutesMs));
  const auto start = std::chrono::steady_clock::now();
  NPVK_ASSERT_OK(npvk_device_prepare_end());
  // Cancelled, not waited out (a functional bound, far above any machine's).
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::minutes(1));
  npvk_context ctx{0};
  NPVK_ASSERT_OK(npvk_context_create(nullptr, &ctx));
  EXPECT_EQ(device_prepared(ctx), 0u);
  NPVK_EXPECT_OK(npvk_context_release(ctx));
}

TEST(PreparedDevice, BadOptionsAreErrors) {
  npvk_context_options options{};
  EXPECT_EQ(npvk_device_prepare(&options), NPVK_ERR_INVALID_ARGUMENT);  // no struct_size
  options.struct_size = sizeof options;
  options.flags = 1u << 30;
  EXPECT_EQ(npvk_device_prepare(&options), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(npvk_device_prepare_after(&options, 10), NPVK_ERR_INVALID_ARGUMENT);
  NPVK_EXPECT_OK(npvk_device_prepare_end());
}

}  // namespace
}  // namespace npvk_test
