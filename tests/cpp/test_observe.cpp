// Observability through the C ABI: profile, trace, flush graphs and the last
// kernel (docs/observability.md).
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "npvk_test_support.hpp"

namespace npvk_test {
namespace {

std::string Slurp(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string TempPath(const char *name) {
  return (::testing::TempDir() + "npvk-observe-" + std::to_string(getpid()) + "-") + name;
}

size_t Count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class Observe : public NpvkTest {
 protected:
  // y = (x * 2 + 1) with the temporary released before the flush, then synced.
  void RunSmallProgram() {
    const int64_t n = 4096;
    Buffer xb = MakeBuffer(ctx(), std::vector<double>(size_t(n), 1.5));
    Buffer yb = MakeBuffer(ctx(), std::vector<double>(size_t(n), 0.0));
    View x = MakeView1D(xb, NPVK_FLOAT64, n), y = MakeView1D(yb, NPVK_FLOAT64, n);
    {
      Buffer tb = MakeBuffer(ctx(), std::vector<double>(size_t(n), 0.0));
      View t = MakeView1D(tb, NPVK_FLOAT64, n);
      View two = MakeScalar(ctx(), 2.0), one = MakeScalar(ctx(), 1.0);
      NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_MULTIPLY, x.get(), two.get(), t.get()));
      NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, t.get(), one.get(), y.get()));
    }
    EXPECT_EQ(Read<double>(yb)[0], 4.0);
  }
};

TEST_F(Observe, ProfilePartsAddUpAndGrow) {
  npvk_profile before{};
  before.struct_size = sizeof before;
  NPVK_ASSERT_OK(npvk_context_get_profile(ctx(), &before));
  RunSmallProgram();
  npvk_profile p{};
  p.struct_size = sizeof p;
  NPVK_ASSERT_OK(npvk_context_get_profile(ctx(), &p));
  EXPECT_EQ(p.struct_size, sizeof p);
  EXPECT_GT(p.record_seconds, before.record_seconds);
  EXPECT_GT(p.execute_seconds, before.execute_seconds);
  EXPECT_GT(p.flush_seconds, before.flush_seconds);
  const double parts = p.record_seconds + p.plan_seconds + p.compile_seconds + p.execute_seconds +
                       p.flush_seconds + p.to_device_seconds + p.to_host_seconds + p.sync_seconds;
  EXPECT_NEAR(parts, p.accounted_seconds, 1e-6);

  const std::string path = TempPath("profile.json");
  NPVK_ASSERT_OK(npvk_context_write_profile(ctx(), path.c_str()));
  const std::string json = Slurp(path);
  for (const char *key : {"\"seconds\"", "\"record\"", "\"compile\"", "\"execute\"",
                          "\"device_seconds\"", "\"transfers\"", "\"kernels\""})
    EXPECT_NE(json.find(key), std::string::npos) << key << " in " << json;
  std::remove(path.c_str());
}

TEST_F(Observe, TraceHasNestedHostSpansAndDeviceSpans) {
  NPVK_ASSERT_OK(npvk_context_trace_begin(ctx()));
  RunSmallProgram();
  const std::string path = TempPath("trace.json");
  NPVK_ASSERT_OK(npvk_context_trace_end(ctx(), path.c_str()));
  const std::string trace = Slurp(path);
  std::remove(path.c_str());
  ASSERT_EQ(trace.rfind("{\"displayTimeUnit\"", 0), 0u) << trace;
  EXPECT_EQ(Count(trace, "\"name\":\"record\""), 2u) << trace;
  EXPECT_GE(Count(trace, "\"name\":\"flush\""), 1u);
  EXPECT_GE(Count(trace, "\"name\":\"execute\""), 1u);
  EXPECT_GE(Count(trace, "\"name\":\"plan\""), 1u);
  if (GetStats(ctx()).dispatches > 0) {
    npvk_device_info info{};
    info.struct_size = sizeof info;
    NPVK_ASSERT_OK(npvk_context_device_info(ctx(), &info));
    if (info.timestamps) {
      EXPECT_GE(Count(trace, "\"tid\":2,"), 1u) << trace;
    }
  }
  // Ended: a second end writes nothing and is no error.
  NPVK_EXPECT_OK(npvk_context_trace_end(ctx(), nullptr));
}

TEST_F(Observe, GraphPerFlushMarksKernelsAndContraction) {
  const std::string dir = TempPath("graphs");
  ASSERT_EQ(system(("mkdir -p '" + dir + "'").c_str()), 0);
  NPVK_ASSERT_OK(npvk_context_set_graph_dir(ctx(), dir.c_str()));
  RunSmallProgram();
  NPVK_ASSERT_OK(npvk_context_set_graph_dir(ctx(), nullptr));
  const std::string dot = Slurp(dir + "/flush-000000.dot");
  EXPECT_EQ(dot.rfind("digraph flush_", 0), 0u) << dot;
  EXPECT_EQ(Count(dot, "{"), Count(dot, "}")) << dot;
  EXPECT_NE(dot.find("subgraph cluster_k0"), std::string::npos) << dot;
  EXPECT_NE(dot.find("multiply"), std::string::npos) << dot;
  EXPECT_NE(dot.find("op0 -> "), std::string::npos) << dot;
  EXPECT_NE(dot.find("[shape=plaintext, label=\"2\"]"), std::string::npos) << dot;
  // The fusion tests' environment fuses small work: the temporary is contracted.
  if (GetStats(ctx()).stores_contracted > 0) {
    EXPECT_NE(dot.find("style=dashed"), std::string::npos) << dot;
  }
  ASSERT_EQ(system(("rm -rf '" + dir + "'").c_str()), 0);
}

TEST_F(Observe, LastKernelSourceAndGraph) {
  RunSmallProgram();
  size_t length = 0;
  NPVK_ASSERT_OK(npvk_context_last_kernel_source(ctx(), nullptr, 0, &length));
  ASSERT_GT(length, 100u);
  std::string source(length + 1, 'x');
  NPVK_ASSERT_OK(npvk_context_last_kernel_source(ctx(), source.data(), source.size(), &length));
  EXPECT_EQ(source.rfind("#version 460", 0), 0u);
  EXPECT_EQ(source[length], '\0');
  char small[8];
  NPVK_ASSERT_OK(npvk_context_last_kernel_graph(ctx(), small, sizeof small, &length));
  EXPECT_EQ(std::string(small).size(), sizeof small - 1);
  std::string graph(length + 1, '\0');
  NPVK_ASSERT_OK(npvk_context_last_kernel_graph(ctx(), graph.data(), graph.size(), &length));
  EXPECT_NE(graph.find("add(s"), std::string::npos) << graph;
}

// A reduction is a kernel of its own: its passes are device spans, its record
// a host span, and explain describes it.
TEST_F(Observe, ReductionsAreTracedAndExplained) {
  const int64_t n = 1 << 16;
  Buffer xb = MakeBuffer(ctx(), std::vector<double>(size_t(n), 0.5));
  Buffer totalb = MakeBuffer(ctx(), std::vector<double>(1));
  View x = MakeView1D(xb, NPVK_FLOAT64, n), total = MakeView(totalb, NPVK_FLOAT64, {1});
  const uint32_t axis = 0;
  NPVK_ASSERT_OK(npvk_context_trace_begin(ctx()));
  NPVK_ASSERT_OK(npvk_reduce(ctx(), NPVK_OP_ADD, x.get(), 1, &axis, npvk_view{0}, total.get()));
  EXPECT_EQ(Read<double>(totalb)[0], 0.5 * double(n));
  const std::string path = TempPath("reduce.json");
  NPVK_ASSERT_OK(npvk_context_trace_end(ctx(), path.c_str()));
  const std::string trace = Slurp(path);
  std::remove(path.c_str());
  EXPECT_NE(trace.find("\"op\":\"add.reduce\""), std::string::npos) << trace;
  npvk_device_info info{};
  info.struct_size = sizeof info;
  NPVK_ASSERT_OK(npvk_context_device_info(ctx(), &info));
  if (info.timestamps) {
    EXPECT_NE(trace.find("\"name\":\"add.reduce"), std::string::npos) << trace;
  }
  size_t length = 0;
  std::string graph(256, '\0');
  NPVK_ASSERT_OK(npvk_context_last_kernel_graph(ctx(), graph.data(), graph.size(), &length));
  EXPECT_EQ(graph.rfind("add.reduce, float64 -> float64: 1 result of 65536", 0), 0u) << graph;
  NPVK_ASSERT_OK(npvk_context_last_kernel_source(ctx(), nullptr, 0, &length));
  EXPECT_GT(length, 100u);
}

TEST_F(Observe, FlushHookNamesEachFlushsOpsAndWhereTheyRan) {
  std::vector<npvk_flush_info> flushes;
  auto hook = [](const npvk_flush_info *info, void *user) {
    static_cast<std::vector<npvk_flush_info> *>(user)->push_back(*info);
  };
  NPVK_ASSERT_OK(npvk_context_set_flush_hook(ctx(), hook, &flushes));
  const int64_t n = 4096;
  Buffer xb = MakeBuffer(ctx(), std::vector<double>(size_t(n), 1.5));
  View x = MakeView1D(xb, NPVK_FLOAT64, n);
  View two = MakeScalar(ctx(), 2.0);
  uint64_t before = 0, first = 0, second = 0;
  NPVK_ASSERT_OK(npvk_context_last_op(ctx(), &before));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_MULTIPLY, x.get(), two.get(), x.get()));
  NPVK_ASSERT_OK(npvk_context_last_op(ctx(), &first));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, x.get(), two.get(), x.get()));
  NPVK_ASSERT_OK(npvk_context_last_op(ctx(), &second));
  EXPECT_GT(first, before);
  EXPECT_EQ(second, first + 1);
  EXPECT_TRUE(flushes.empty());  // nothing ran yet
  EXPECT_EQ(Read<double>(xb)[0], 5.0);
  ASSERT_EQ(flushes.size(), 1u);
  EXPECT_EQ(flushes[0].struct_size, sizeof(npvk_flush_info));
  EXPECT_EQ(flushes[0].placement, uint32_t(NPVK_FLUSH_DEVICE));
  EXPECT_EQ(flushes[0].first_op, first);
  EXPECT_EQ(flushes[0].last_op, second);
  NPVK_ASSERT_OK(npvk_context_set_flush_hook(ctx(), nullptr, nullptr));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, x.get(), two.get(), x.get()));
  EXPECT_EQ(Read<double>(xb)[0], 7.0);
  EXPECT_EQ(flushes.size(), 1u);  // removed
}

TEST_F(Observe, BadHandlesAndArguments) {
  npvk_context bad{12345};
  npvk_profile p{};
  p.struct_size = sizeof p;
  size_t length = 0;
  EXPECT_EQ(npvk_context_get_profile(bad, &p), NPVK_ERR_INVALID_HANDLE);
  EXPECT_EQ(npvk_context_get_profile(ctx(), nullptr), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(npvk_context_trace_begin(bad), NPVK_ERR_INVALID_HANDLE);
  EXPECT_EQ(npvk_context_trace_end(bad, nullptr), NPVK_ERR_INVALID_HANDLE);
  EXPECT_EQ(npvk_context_set_graph_dir(bad, nullptr), NPVK_ERR_INVALID_HANDLE);
  uint64_t serial = 0;
  EXPECT_EQ(npvk_context_last_op(bad, &serial), NPVK_ERR_INVALID_HANDLE);
  EXPECT_EQ(npvk_context_last_op(ctx(), nullptr), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(npvk_context_set_flush_hook(bad, nullptr, nullptr), NPVK_ERR_INVALID_HANDLE);
  EXPECT_EQ(npvk_context_write_profile(bad, nullptr), NPVK_ERR_INVALID_HANDLE);
  EXPECT_EQ(npvk_context_last_kernel_source(bad, nullptr, 0, &length), NPVK_ERR_INVALID_HANDLE);
  EXPECT_EQ(npvk_context_last_kernel_graph(ctx(), nullptr, 0, nullptr), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(npvk_context_last_kernel_graph(ctx(), nullptr, 4, &length), NPVK_ERR_INVALID_ARGUMENT);
  NPVK_ASSERT_OK(npvk_context_trace_begin(ctx()));
  EXPECT_EQ(npvk_context_trace_end(ctx(), "/nonexistent-dir/trace.json"),
            NPVK_ERR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace npvk_test
