// NPVK_REPORT: per call site of the user's code (the innermost Python frame
// outside NumPy and npvk), which ufunc loops ran on the device, which fell
// back (and why), which the device recorded but a flush then ran on the host
// (the cost model, or a failed device), and the host syncs the site caused.
// Nothing here runs unless npvk.enable() turned the report on, so the cost is
// otherwise one relaxed load per loop call.
#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

using Site = std::pair<std::string, int>;  // file, line

struct Counts {
  uint64_t calls = 0, elements = 0;
};

// Where a loop call's work ran, and why not on the device: the report's
// placement and reason columns.
struct Outcome {
  const char *placement;
  const char *reason;  // "" for the device
};
constexpr Outcome kOnDevice{"device", ""};

std::mutex g_mutex;
std::vector<std::string> g_skip_prefixes;  // NumPy's and npvk's package directories
// (site, ufunc, placement, reason) and (site, sync reason).
std::map<std::tuple<Site, std::string, std::string, std::string>, Counts> g_loops;
std::map<std::pair<Site, std::string>, uint64_t> g_syncs;

// Loop calls recorded for the device whose flush has not run yet, by the
// serial of the op they recorded (npvk_context_last_op): the flush hook
// settles them where the flush ran.
std::map<uint64_t, std::map<std::pair<Site, std::string>, Counts>> g_unsettled;
// The last flushes, for a call whose op a flush ran before the call was
// noted (the queue was full at its recording, or a row merged into it).
std::deque<npvk_flush_info> g_recent_flushes;
constexpr size_t kRecentFlushes = 64;

Outcome outcome_of(uint32_t placement) {
  switch (placement) {
    case NPVK_FLUSH_HOST_COST:
      return {"host", "cost model"};
    case NPVK_FLUSH_HOST_RECOVERED:
      return {"host", "device failure"};
    case NPVK_FLUSH_LOST:
      return {"lost", "device failure"};
    default:
      return kOnDevice;
  }
}

void add_loop(const Site &site, const std::string &ufunc, Outcome outcome, const Counts &counts) {
  Counts &c = g_loops[{site, ufunc, outcome.placement, outcome.reason}];
  c.calls += counts.calls;
  c.elements += counts.elements;
}

// Runs with npvk's lock held: nothing here may call npvk.
void on_flush(const npvk_flush_info *info, void *) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const Outcome outcome = outcome_of(info->placement);
  auto end = g_unsettled.upper_bound(info->last_op);
  for (auto it = g_unsettled.begin(); it != end; ++it)
    for (const auto &[key, counts] : it->second)
      add_loop(key.first, key.second, it->first >= info->first_op ? outcome : kOnDevice, counts);
  g_unsettled.erase(g_unsettled.begin(), end);
  g_recent_flushes.push_back(*info);
  if (g_recent_flushes.size() > kRecentFlushes) g_recent_flushes.pop_front();
}

// With g_mutex held: a device call whose op is `serial`.
void note_device_call(const Site &site, const std::string &ufunc, uint64_t serial,
                      int64_t elements) {
  const Counts one{1, uint64_t(elements)};
  for (const npvk_flush_info &f : g_recent_flushes)
    if (serial >= f.first_op && serial <= f.last_op) {
      add_loop(site, ufunc, outcome_of(f.placement), one);
      return;
    }
  const bool flushed = !g_recent_flushes.empty() && serial <= g_recent_flushes.back().last_op;
  if (serial == 0 || flushed) {  // no serial, or a flush too long ago
    add_loop(site, ufunc, kOnDevice, one);
    return;
  }
  Counts &c = g_unsettled[serial][{site, ufunc}];
  c.calls += 1;
  c.elements += uint64_t(elements);
}
// The last site a loop call on this thread came from: a sync on a thread
// that released the GIL (NumPy runs long loops that way) cannot look at its
// Python frames, and is charged to that site.
thread_local Site t_last_site{"(no Python frame)", 0};

bool skipped(const char *file) {
  for (const std::string &prefix : g_skip_prefixes)
    if (std::strncmp(file, prefix.c_str(), prefix.size()) == 0) return true;
  return false;
}

// The caller holds the GIL.
Site current_site() {
  PyFrameObject *frame = PyEval_GetFrame();
  Py_XINCREF(frame);
  Site site{"(no Python frame)", 0};
  while (frame) {
    PyCodeObject *code = PyFrame_GetCode(frame);
    const char *file = PyUnicode_AsUTF8(code->co_filename);
    const bool found = file && !skipped(file);
    if (found) site = {file, PyFrame_GetLineNumber(frame)};
    Py_DECREF(code);
    if (found) break;
    PyFrameObject *back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
  if (PyErr_Occurred()) PyErr_Clear();
  return site;
}

const char *sync_reason_name(uint32_t reason) {
  switch (reason) {
    case NPVK_SYNC_FAULT:
      return "fault";
    case NPVK_SYNC_EXPLICIT:
      return "explicit";
    case NPVK_SYNC_FORK:
      return "fork";
    case NPVK_SYNC_EXIT:
      return "exit";
    default:
      return "other";
  }
}

// Runs with npvk's lock held, inside the fault handler for faults: nothing
// here may call npvk, and the garbage collector must not run (a finalizer
// freeing an array would call npvk_managed_free).
void on_sync(uint32_t reason, void *) {
  Site site = t_last_site;
  // After finalization (the exit sync runs from the C library's atexit)
  // PyGILState_Check says yes without a thread state to look at.
  if (Py_IsInitialized() && PyGILState_Check()) {
    const int collecting = PyGC_Disable();
    site = current_site();
    if (collecting) PyGC_Enable();
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  ++g_syncs[{site, sync_reason_name(reason)}];
}

}  // namespace

Observing &observing() {
  static Observing o;
  return o;
}

void note_loop(const char *ufunc, const char *reason, int64_t elements) {
  count_elements(reason == nullptr, elements);
  if (!observing().report.load(std::memory_order_relaxed)) return;
  PyGILState_STATE gil = PyGILState_Ensure();
  t_last_site = current_site();
  PyGILState_Release(gil);
  uint64_t serial = 0;
  if (!reason && device_bound() && npvk_context_last_op(context(), &serial) != NPVK_SUCCESS)
    serial = 0;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!reason) {
    note_device_call(t_last_site, ufunc, serial, elements);
    return;
  }
  add_loop(t_last_site, ufunc, {"fallback", reason}, {1, uint64_t(elements)});
}

void install_flush_hook() {
  if (observing().report.load() && device_bound())
    npvk_context_set_flush_hook(context(), on_flush, nullptr);
}

PyObject *py_report_begin(PyObject *, PyObject *prefixes) {
  PyObject *seq = PySequence_Fast(prefixes, "report_begin expects a list of path prefixes");
  if (!seq) return nullptr;
  std::vector<std::string> skip;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); ++i) {
    const char *p = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i));
    if (!p) {
      Py_DECREF(seq);
      return nullptr;
    }
    skip.emplace_back(p);
  }
  Py_DECREF(seq);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_skip_prefixes = std::move(skip);
  }
  npvk_managed_set_sync_hook(on_sync, nullptr);
  observing().report = true;
  observing().any = true;
  install_flush_hook();  // or at binding
  Py_RETURN_NONE;
}

// A sync that releases the GIL (npvk.sync) cannot look at the frames when it
// happens; the caller names its site first.
PyObject *py_report_site(PyObject *, PyObject *) {
  if (observing().report.load(std::memory_order_relaxed)) t_last_site = current_site();
  Py_RETURN_NONE;
}

// Before the rows are read at exit: the queued work runs, so that each
// recorded call is reported where it ran. That is no sync of the program's
// (the exit's own comes later and finds nothing queued).
PyObject *py_report_end(PyObject *, PyObject *) {
  npvk_managed_set_sync_hook(nullptr, nullptr);
  if (device_bound()) {
    Py_BEGIN_ALLOW_THREADS npvk_managed_flush();
    Py_END_ALLOW_THREADS npvk_context_set_flush_hook(context(), nullptr, nullptr);
  }
  observing().report = false;
  observing().any = observing().timing.load();
  Py_RETURN_NONE;
}

// [(file, line, ufunc, placement, reason, calls, elements)] and
// [(file, line, sync reason, count)]. Calls whose flush has not run yet are
// on the device's rows.
PyObject *py_report_rows(PyObject *, PyObject *) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto loop_rows = g_loops;
  for (const auto &[serial, calls] : g_unsettled)
    for (const auto &[key, counts] : calls) {
      Counts &c = loop_rows[{key.first, key.second, kOnDevice.placement, kOnDevice.reason}];
      c.calls += counts.calls;
      c.elements += counts.elements;
    }
  PyObject *loops = PyList_New(0), *syncs = PyList_New(0);
  for (const auto &[key, counts] : loop_rows) {
    const auto &[site, ufunc, placement, reason] = key;
    PyObject *row = Py_BuildValue(
        "(sisssKK)", site.first.c_str(), site.second, ufunc.c_str(), placement.c_str(),
        reason.c_str(), (unsigned long long)counts.calls, (unsigned long long)counts.elements);
    PyList_Append(loops, row);
    Py_DECREF(row);
  }
  for (const auto &[key, count] : g_syncs) {
    PyObject *row = Py_BuildValue("(sisK)", key.first.first.c_str(), key.first.second,
                                  key.second.c_str(), (unsigned long long)count);
    PyList_Append(syncs, row);
    Py_DECREF(row);
  }
  return Py_BuildValue("(NN)", loops, syncs);
}

}  // namespace npvk_shim
