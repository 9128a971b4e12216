// NPVK_REPORT: per call site of the user's code (the innermost Python frame
// outside NumPy and npvk), which ufunc loops ran on the device and which fell
// back (and why), and the host syncs the site caused. Nothing here runs
// unless npvk.enable() turned the report on, so the cost is otherwise one
// relaxed load per loop call.
#include <cstring>
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

std::mutex g_mutex;
std::vector<std::string> g_skip_prefixes;  // NumPy's and npvk's package directories
// (site, ufunc, reason or "" for the device) and (site, sync reason).
std::map<std::tuple<Site, std::string, std::string>, Counts> g_loops;
std::map<std::pair<Site, std::string>, uint64_t> g_syncs;
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
  std::lock_guard<std::mutex> lock(g_mutex);
  Counts &c = g_loops[{t_last_site, ufunc, reason ? reason : ""}];
  ++c.calls;
  c.elements += uint64_t(elements);
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
  Py_RETURN_NONE;
}

// A sync that releases the GIL (npvk.sync) cannot look at the frames when it
// happens; the caller names its site first.
PyObject *py_report_site(PyObject *, PyObject *) {
  if (observing().report.load(std::memory_order_relaxed)) t_last_site = current_site();
  Py_RETURN_NONE;
}

PyObject *py_report_end(PyObject *, PyObject *) {
  npvk_managed_set_sync_hook(nullptr, nullptr);
  observing().report = false;
  observing().any = observing().timing.load();
  Py_RETURN_NONE;
}

// [(file, line, ufunc, reason or None for the device, calls, elements)] and
// [(file, line, sync reason, count)].
PyObject *py_report_rows(PyObject *, PyObject *) {
  std::lock_guard<std::mutex> lock(g_mutex);
  PyObject *loops = PyList_New(0), *syncs = PyList_New(0);
  for (const auto &[key, counts] : g_loops) {
    const auto &[site, ufunc, reason] = key;
    PyObject *row =
        Py_BuildValue("(siszKK)", site.first.c_str(), site.second, ufunc.c_str(),
                      reason.empty() ? nullptr : reason.c_str(), (unsigned long long)counts.calls,
                      (unsigned long long)counts.elements);
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
