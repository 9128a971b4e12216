#include "runtime/profile.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "base/error.hpp"
#include "base/options.hpp"

namespace npvk {
namespace {

const char *const kPhaseNames[] = {"record",          "flush",       "plan",       "compile",
                                   "execute",         "to_device",   "to_host",    "sync (fault)",
                                   "sync (explicit)", "sync (fork)", "sync (exit)"};
static_assert(sizeof kPhaseNames / sizeof *kPhaseNames == size_t(Phase::Count),
              "a name for every phase");

double seconds(int64_t ns) {
  return double(ns) * 1e-9;
}

}  // namespace

int64_t Profiler::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Profiler::enter(Phase phase, const char *name) {
  stack_.push_back(Frame{phase, name, now_ns(), 0, {}});
}

void Profiler::leave() {
  Frame &f = stack_.back();
  const int64_t end = now_ns(), elapsed = end - f.start_ns;
  exclusive_ns_[size_t(f.phase)] += elapsed - f.child_ns;
  inclusive_ns_[size_t(f.phase)] += elapsed;
  if (trace_)
    trace_->host_span(
        {f.name ? f.name : kPhaseNames[size_t(f.phase)], std::move(f.args), f.start_ns, end});
  stack_.pop_back();
  if (!stack_.empty()) stack_.back().child_ns += elapsed;
}

npvk_profile Profiler::snapshot() const {
  auto ex = [&](Phase p) { return seconds(exclusive_ns_[size_t(p)]); };
  auto in = [&](Phase p) { return seconds(inclusive_ns_[size_t(p)]); };
  npvk_profile p{};
  p.struct_size = sizeof p;
  p.record_seconds = ex(Phase::Record);
  p.plan_seconds = ex(Phase::Plan);
  p.compile_seconds = ex(Phase::Compile);
  p.execute_seconds = ex(Phase::Execute);
  p.flush_seconds = ex(Phase::Flush);
  p.to_device_seconds = ex(Phase::ToDevice);
  p.to_host_seconds = ex(Phase::ToHost);
  p.sync_seconds =
      ex(Phase::SyncFault) + ex(Phase::SyncExplicit) + ex(Phase::SyncFork) + ex(Phase::SyncExit);
  int64_t total = 0;
  for (int64_t ns : exclusive_ns_) total += ns;
  p.accounted_seconds = seconds(total);
  p.sync_fault_seconds = in(Phase::SyncFault);
  p.sync_explicit_seconds = in(Phase::SyncExplicit);
  p.sync_fork_seconds = in(Phase::SyncFork);
  p.sync_exit_seconds = in(Phase::SyncExit);
  return p;
}

void Profiler::reset() {
  // Open scopes keep running; only what they add after this counts.
  for (int64_t &ns : exclusive_ns_) ns = 0;
  for (int64_t &ns : inclusive_ns_) ns = 0;
}

void Profiler::trace_begin() {
  trace_ = std::make_unique<Trace>(now_ns());
}

void Profiler::trace_end(const std::string &path) {
  std::unique_ptr<Trace> trace = std::move(trace_);
  if (trace && !path.empty()) trace->write(path);
}

void Profiler::trace_from_environment() {
  trace_from_options(Options::from_environment().trace_path);
}

void Profiler::trace_from_options(const std::string &path) {
  if (path.empty()) return;
  environment_trace_path_ = path;
  trace_begin();
}

void Profiler::finish_environment_trace() {
  if (environment_trace_path_.empty() || !trace_) return;
  std::string path;
  path.swap(environment_trace_path_);
  trace_end(path);
}

std::string profile_json(const npvk_stats &s, const npvk_profile &p) {
  char buf[2048];
  std::snprintf(
      buf, sizeof buf,
      "{\"seconds\":{\"record\":%.9f,\"plan\":%.9f,\"compile\":%.9f,\"execute\":%.9f,"
      "\"flush_other\":%.9f,\"to_device\":%.9f,\"to_host\":%.9f,\"host_sync\":%.9f,"
      "\"accounted\":%.9f},\"device_seconds\":%.9f,"
      "\"host_sync_seconds\":{\"fault\":%.9f,\"explicit\":%.9f,\"fork\":%.9f,\"exit\":%.9f},"
      "\"counts\":{\"ops_recorded\":%llu,\"rows_merged\":%llu,\"flushes\":%llu,"
      "\"dispatches\":%llu,\"ops_fused\":%llu,\"stores_contracted\":%llu,"
      "\"bytes_contracted\":%llu},"
      "\"kernels\":{\"compiled\":%llu,\"memory_cache_hits\":%llu,\"disk_cache_hits\":%llu,"
      "\"disk_cache_rejects\":%llu,\"pipelines_created\":%llu},"
      "\"transfers\":{\"bytes_to_device\":%llu,\"bytes_to_host\":%llu}}",
      p.record_seconds, p.plan_seconds, p.compile_seconds, p.execute_seconds, p.flush_seconds,
      p.to_device_seconds, p.to_host_seconds, p.sync_seconds, p.accounted_seconds, s.device_seconds,
      p.sync_fault_seconds, p.sync_explicit_seconds, p.sync_fork_seconds, p.sync_exit_seconds,
      (unsigned long long)s.ops_recorded, (unsigned long long)s.rows_merged,
      (unsigned long long)s.flushes, (unsigned long long)s.dispatches,
      (unsigned long long)s.ops_fused, (unsigned long long)s.stores_contracted,
      (unsigned long long)s.bytes_contracted, (unsigned long long)s.kernels_compiled,
      (unsigned long long)s.kernel_cache_hits, (unsigned long long)s.disk_cache_hits,
      (unsigned long long)s.disk_cache_rejects, (unsigned long long)s.pipelines_created,
      (unsigned long long)s.bytes_to_device, (unsigned long long)s.bytes_to_host);
  return buf;
}

std::string profile_text(const npvk_stats &s, const npvk_profile &p) {
  char buf[2048];
  std::snprintf(
      buf, sizeof buf,
      "npvk profile (time inside npvk: %.3f s)\n"
      "  recording        %9.3f s  %llu ops (%llu folded rows)\n"
      "  fusion planning  %9.3f s  %llu flushes, %llu dispatches, %llu ops fused\n"
      "  compilation      %9.3f s  %llu compiled, %llu from disk, %llu memory cache hits\n"
      "  execution        %9.3f s  (device timestamps: %.3f s)\n"
      "  flush, other     %9.3f s\n"
      "  to device        %9.3f s  %llu bytes\n"
      "  to host          %9.3f s  %llu bytes\n"
      "  host syncs       %9.3f s\n",
      p.accounted_seconds, p.record_seconds, (unsigned long long)s.ops_recorded,
      (unsigned long long)s.rows_merged, p.plan_seconds, (unsigned long long)s.flushes,
      (unsigned long long)s.dispatches, (unsigned long long)s.ops_fused, p.compile_seconds,
      (unsigned long long)s.kernels_compiled, (unsigned long long)s.disk_cache_hits,
      (unsigned long long)s.kernel_cache_hits, p.execute_seconds, s.device_seconds, p.flush_seconds,
      p.to_device_seconds, (unsigned long long)s.bytes_to_device, p.to_host_seconds,
      (unsigned long long)s.bytes_to_host, p.sync_seconds);
  return buf;
}

void report_profile_from_environment(const npvk_stats &stats, const npvk_profile &profile) {
  report_profile(Options::from_environment().profile, stats, profile);
}

void report_profile(const std::string &where, const npvk_stats &stats,
                    const npvk_profile &profile) {
  if (where.empty()) return;
  if (where == "1") {
    std::fputs(profile_text(stats, profile).c_str(), stderr);
    return;
  }
  std::ofstream out(where, std::ios::trunc);
  out << profile_json(stats, profile) << "\n";
}

}  // namespace npvk
