// The on-disk kernel cache: a second context finds the first one's kernels on disk and
// compiles nothing; a corrupted cache is detected, rebuilt, and never yields wrong results.
#include <filesystem>
#include <fstream>
#include <string>

#include "npvk_test_support.hpp"

namespace npvk_test {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed with everything in it at the end.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "npvk-cache-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  const fs::path &path() const { return path_; }

 private:
  fs::path path_;
};

std::vector<fs::path> FilesUnder(const fs::path &dir) {
  std::vector<fs::path> files;
  for (const auto &entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  return files;
}

// Damages a file two ways in turn: even files lose their second half, odd files get every
// 7th byte flipped (the header included), keeping their size.
void Corrupt(const fs::path &file, size_t index) {
  const auto size = fs::file_size(file);
  if (index % 2 == 0) {
    fs::resize_file(file, size / 2);
    return;
  }
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (size_t i = 0; i < bytes.size(); i += 7) bytes[i] = static_cast<char>(~bytes[i]);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

// Runs two ops whose kernels no other test shares a name with in a fresh directory, and
// checks their results: subtract and left_shift on uint16.
npvk_stats RunOps(npvk_context ctx) {
  const int64_t n = 300;
  std::vector<uint16_t> a(n), b(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<uint16_t>(i * 977);
    b[i] = static_cast<uint16_t>(i % 19);
  }
  Buffer a_buf = MakeBuffer(ctx, a), b_buf = MakeBuffer(ctx, b);
  Buffer d_buf = MakeBuffer(ctx, std::vector<uint16_t>(n, 0));
  Buffer s_buf = MakeBuffer(ctx, std::vector<uint16_t>(n, 0));
  View av = MakeView1D(a_buf, NPVK_UINT16, n), bv = MakeView1D(b_buf, NPVK_UINT16, n);
  View dv = MakeView1D(d_buf, NPVK_UINT16, n), sv = MakeView1D(s_buf, NPVK_UINT16, n);
  EXPECT_TRUE(IsOk(npvk_binary(ctx, NPVK_OP_SUBTRACT, av.get(), bv.get(), dv.get()), "subtract"));
  // Two flushes, so that the two ops are two kernels rather than one fused one.
  EXPECT_TRUE(IsOk(npvk_sync(ctx), "sync"));
  EXPECT_TRUE(IsOk(npvk_binary(ctx, NPVK_OP_LEFT_SHIFT, av.get(), bv.get(), sv.get()), "shift"));
  const std::vector<uint16_t> d = Read<uint16_t>(d_buf), s = Read<uint16_t>(s_buf);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(d[i], static_cast<uint16_t>(a[i] - b[i])) << "subtract at " << i;
    EXPECT_EQ(s[i], b[i] < 16 ? static_cast<uint16_t>(a[i] << b[i]) : 0) << "shift at " << i;
  }
  return GetStats(ctx);
}

TEST(DiskCache, SecondContextLoadsKernelsAndCorruptionIsRejected) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string cache_dir = dir.path().string();
  {
    OwnedContext first(0, cache_dir.c_str());
    ASSERT_NE(first.get().id, 0u);
    const npvk_stats s = RunOps(first.get());
    EXPECT_GE(s.kernels_compiled, 2u) << "a fresh cache directory has nothing to load";
    EXPECT_EQ(s.disk_cache_hits, 0u);
  }
  const std::vector<fs::path> files = FilesUnder(dir.path());
  ASSERT_FALSE(files.empty()) << "nothing was written to " << cache_dir;
  {
    OwnedContext second(0, cache_dir.c_str());
    ASSERT_NE(second.get().id, 0u);
    const npvk_stats s = RunOps(second.get());
    EXPECT_GE(s.disk_cache_hits, 2u);
    EXPECT_EQ(s.kernels_compiled, 0u);
    EXPECT_EQ(s.disk_cache_rejects, 0u);
  }
  const std::vector<fs::path> cached = FilesUnder(dir.path());
  for (size_t i = 0; i < cached.size(); ++i) Corrupt(cached[i], i);
  {
    OwnedContext third(0, cache_dir.c_str());
    ASSERT_NE(third.get().id, 0u);
    const npvk_stats s = RunOps(third.get());
    EXPECT_GT(s.disk_cache_rejects, 0u);
    EXPECT_GE(s.kernels_compiled, 1u) << "rejected entries are rebuilt";
  }
  {
    // The rebuilt entries are good again.
    OwnedContext fourth(0, cache_dir.c_str());
    ASSERT_NE(fourth.get().id, 0u);
    const npvk_stats s = RunOps(fourth.get());
    EXPECT_EQ(s.kernels_compiled, 0u);
    EXPECT_EQ(s.disk_cache_rejects, 0u);
  }
}

TEST(DiskCache, NoDiskCacheFlagWritesNothing) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  {
    OwnedContext ctx(NPVK_CONTEXT_NO_DISK_CACHE, dir.path().string().c_str());
    ASSERT_NE(ctx.get().id, 0u);
    const npvk_stats s = RunOps(ctx.get());
    EXPECT_EQ(s.disk_cache_hits, 0u);
  }
  EXPECT_TRUE(FilesUnder(dir.path()).empty());
}

// A flush whose kernels are all new builds them on several threads at once,
// and on a CPU device has each compiled to machine code there, by a dispatch
// of no workgroups (validation checks it). Three lengths keep the three ops
// in three kernels.
TEST(DiskCache, KernelsBuiltTogetherGiveTheirResults) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  OwnedContext ctx(0, dir.path().string().c_str());
  ASSERT_NE(ctx.get().id, 0u);
  const int64_t n = 500;
  std::vector<uint16_t> a(n);
  for (int64_t i = 0; i < n; ++i) a[i] = static_cast<uint16_t>(i * 131 + 7);
  Buffer a_buf = MakeBuffer(ctx.get(), a);
  std::vector<Buffer> outs;
  for (int k = 0; k < 3; ++k) outs.push_back(MakeBuffer(ctx.get(), std::vector<uint16_t>(n, 0)));
  const npvk_op ops[3] = {NPVK_OP_BITWISE_XOR, NPVK_OP_SUBTRACT, NPVK_OP_BITWISE_OR};
  const int64_t lengths[3] = {n, n - 1, n - 2};
  ASSERT_TRUE(IsOk(npvk_sync(ctx.get()), "sync"));
  for (int k = 0; k < 3; ++k) {
    View in = MakeView1D(a_buf, NPVK_UINT16, lengths[k]);
    View out = MakeView1D(outs[size_t(k)], NPVK_UINT16, lengths[k]);
    EXPECT_TRUE(IsOk(npvk_binary(ctx.get(), ops[k], in.get(), in.get(), out.get()), "op"));
  }
  const npvk_stats before = GetStats(ctx.get());
  ASSERT_TRUE(IsOk(npvk_sync(ctx.get()), "sync"));
  const npvk_stats after = GetStats(ctx.get());
  EXPECT_EQ(after.kernels_compiled - before.kernels_compiled, 3u);
  EXPECT_EQ(after.dispatches - before.dispatches, 3u);
  const std::vector<uint16_t> x = Read<uint16_t>(outs[0]), d = Read<uint16_t>(outs[1]),
                              o = Read<uint16_t>(outs[2]);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(x[i], 0) << "xor at " << i;
    EXPECT_EQ(d[i], 0) << "subtract at " << i;
    EXPECT_EQ(o[i], i < n - 2 ? a[i] : 0) << "or at " << i;
  }
}

}  // namespace
}  // namespace npvk_test
