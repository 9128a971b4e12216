// A Chrome/Perfetto trace (catapult JSON): host spans on one track, one span
// per device dispatch on another. Device timestamps come from the device's
// own clock; they are placed on the host clock at write time (see
// device_offset_ns in trace.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace npvk {

class Trace {
 public:
  struct Span {
    std::string name;
    std::string args;  // a JSON object's members, without braces ("" for none)
    int64_t begin_ns = 0, end_ns = 0;
  };
  // A flush's dispatches, on the device clock, with the host times that
  // bound them: they began after `host_submit_ns` and ended before `host_done_ns`.
  struct Batch {
    int64_t host_submit_ns = 0, host_done_ns = 0;
    std::vector<Span> dispatches;
  };

  explicit Trace(int64_t start_ns) : start_ns_(start_ns) {}
  void host_span(Span span);
  void device_batch(Batch batch);
  size_t dropped() const { return dropped_; }
  // Throws NPVK_ERR_INVALID_ARGUMENT when the file cannot be written.
  void write(const std::string &path) const;
  std::string json() const;

 private:
  // Bounds the memory a long traced run takes (about 100 bytes a span).
  static constexpr size_t kMaxSpans = 2'000'000;
  bool full();
  int64_t device_offset_ns() const;
  int64_t start_ns_;
  std::vector<Span> host_;
  std::vector<Batch> batches_;
  size_t spans_ = 0, dropped_ = 0;
};

// JSON string contents: quotes, backslashes and control characters escaped.
std::string json_escape(const std::string &text);

}  // namespace npvk
