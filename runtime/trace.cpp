#include "runtime/trace.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>

#include "base/error.hpp"

namespace npvk {

std::string json_escape(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

bool Trace::full() {
  if (spans_ < kMaxSpans) return false;
  ++dropped_;
  return true;
}

void Trace::host_span(Span span) {
  if (full()) return;
  ++spans_;
  host_.push_back(std::move(span));
}

void Trace::device_batch(Batch batch) {
  if (full()) return;
  spans_ += batch.dispatches.size();
  batches_.push_back(std::move(batch));
}

int64_t Trace::device_offset_ns() const {
  // Every dispatch ran between its batch's submission and the end of the
  // wait, so the offset from the device clock to the host clock lies in
  // [lo, hi]. A device whose timestamps already are the host's monotonic
  // clock (lavapipe) gives a range that holds 0; otherwise the tightest lower
  // bound over all batches places each batch as early as it can have run.
  int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  for (const Batch &b : batches_) {
    if (b.dispatches.empty()) continue;
    int64_t first = b.dispatches.front().begin_ns, last = b.dispatches.front().end_ns;
    for (const Span &d : b.dispatches) {
      first = std::min(first, d.begin_ns);
      last = std::max(last, d.end_ns);
    }
    lo = std::max(lo, b.host_submit_ns - first);
    hi = std::min(hi, b.host_done_ns - last);
  }
  if (lo == std::numeric_limits<int64_t>::min()) return 0;
  return lo <= 0 && 0 <= hi ? 0 : lo;
}

namespace {

void append_event(std::string &out, const Trace::Span &s, int tid, int64_t shift_ns) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,",
                tid, double(s.begin_ns + shift_ns) / 1e3,
                double(std::max<int64_t>(s.end_ns - s.begin_ns, 0)) / 1e3);
  out += buf;
  out += "\"name\":\"" + json_escape(s.name) + "\",\"cat\":\"";
  out += tid == 1 ? "host" : "device";
  out += "\"";
  if (!s.args.empty()) out += ",\"args\":{" + s.args + "}";
  out += "},\n";
}

}  // namespace

std::string Trace::json() const {
  std::string out =
      "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
      "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"npvk\"}},\n"
      "{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":\"host\"}},\n"
      "{\"ph\":\"M\",\"pid\":1,\"tid\":2,\"name\":\"thread_name\","
      "\"args\":{\"name\":\"device (timestamp queries)\"}},\n";
  for (const Span &s : host_) append_event(out, s, 1, -start_ns_);
  const int64_t device_shift = device_offset_ns() - start_ns_;
  for (const Batch &b : batches_)
    for (const Span &s : b.dispatches) append_event(out, s, 2, device_shift);
  char tail[96];
  std::snprintf(tail, sizeof tail,
                "{\"ph\":\"M\",\"pid\":1,\"name\":\"npvk_dropped_spans\","
                "\"args\":{\"count\":%zu}}\n]}\n",
                dropped_);
  return out + tail;
}

void Trace::write(const std::string &path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  NPVK_REQUIRE(bool(out), NPVK_ERR_INVALID_ARGUMENT, "cannot write the trace to " + path);
  out << json();
  NPVK_REQUIRE(bool(out), NPVK_ERR_INVALID_ARGUMENT, "cannot write the trace to " + path);
}

}  // namespace npvk
