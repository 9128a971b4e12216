// Where a context's time goes (NPVK_PROFILE), and the host spans of a trace
// (NPVK_TRACE). Phases nest (a flush inside a record, a flush inside a host
// sync); each phase's exclusive time leaves out the phases nested in it, so
// the exclusive times add up to the time spent inside npvk, never more.
// Callers hold the context lock, which also guards the profiler.
#pragma once

#include <npvk/npvk.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/trace.hpp"

namespace npvk {

enum class Phase : uint32_t {
  Record,
  Flush,
  Plan,
  Compile,
  Execute,
  ToDevice,
  ToHost,
  SyncFault,
  SyncExplicit,
  SyncFork,
  SyncExit,
  Count
};

class Profiler {
 public:
  // Times one phase for as long as it lives; `name` (a string that outlives
  // the scope) names the trace span, by default the phase's name.
  class Scope {
   public:
    Scope(Profiler &p, Phase phase, const char *name = nullptr) : p_(p) { p_.enter(phase, name); }
    ~Scope() { p_.leave(); }
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;
    bool tracing() const { return p_.trace_ != nullptr; }
    // The span's arguments as JSON object members; set them only when tracing().
    void set_args(std::string args) { p_.stack_.back().args = std::move(args); }

   private:
    Profiler &p_;
  };

  static int64_t now_ns();  // steady_clock, the host clock of traces
  npvk_profile snapshot() const;
  void reset();

  void trace_begin();
  // Stops tracing; writes the trace to `path` unless it is empty.
  void trace_end(const std::string &path);
  Trace *trace() { return trace_.get(); }
  // NPVK_TRACE=path: traced from context creation, written at release or exit.
  // trace_from_options takes Options::trace_path ("": no trace);
  // trace_from_environment reads NPVK_TRACE now.
  void trace_from_options(const std::string &path);
  void trace_from_environment();
  void finish_environment_trace();

 private:
  struct Frame {
    Phase phase;
    const char *name;
    int64_t start_ns, child_ns;
    std::string args;
  };
  void enter(Phase phase, const char *name);
  void leave();

  std::vector<Frame> stack_;
  int64_t exclusive_ns_[size_t(Phase::Count)] = {};
  int64_t inclusive_ns_[size_t(Phase::Count)] = {};
  std::unique_ptr<Trace> trace_;
  std::string environment_trace_path_;
};

// The profile of one context as JSON (keys as npvk_profile and npvk_stats),
// and as the text report NPVK_PROFILE=1 prints.
std::string profile_json(const npvk_stats &stats, const npvk_profile &profile);
std::string profile_text(const npvk_stats &stats, const npvk_profile &profile);
// NPVK_PROFILE: "1" prints the text report on stderr, anything else but "0"
// names a JSON file. Called when a context is released. report_profile takes
// Options::profile ("": none); report_profile_from_environment reads
// NPVK_PROFILE now.
void report_profile(const std::string &where, const npvk_stats &stats, const npvk_profile &profile);
void report_profile_from_environment(const npvk_stats &stats, const npvk_profile &profile);

}  // namespace npvk
