// Where the FP errors of deferred device work are reported: at the Python
// line of the call that recorded the op, once per call, as NumPy does.
//
// NumPy checks the FP status after each ufunc call and warns once per
// category with PyErr_WarnEx(..., 1): the innermost Python frame names the
// file, line and module, and its globals hold the once-per-location registry.
// npvk runs the op later, so the call site is kept when a call records device
// work: the frame's code object, instruction offset and globals (never the
// frame, which would keep the call's arrays alive), the line computed only
// when a warning is given (PyCode_Addr2Line). The runtime hands out errors per
// op serial (npvk_context_take_op_fp_errors); a call's ops are this thread's
// ops after the previous call's last serial, so each call keeps only its last
// serial, and the ops it split into (chunks, rows) warn once together.
//
// A call is noted when it ends, with the GIL held: the replaced ufuncs'
// vectorcall entry brackets every call through it (begin/end_ufunc_call);
// work recorded outside one (ufunc methods, NumPy's own C paths into a
// replaced loop) is noted at once, taking the GIL where a loop runs without.
#include <algorithm>
#include <cstring>
#include <deque>
#include <vector>

#include "numpy_api.hpp"
#include "shim.hpp"
// After Python.h: PyFrameObject::f_globals, before Python 3.11.
#if PY_VERSION_HEX < 0x030B0000
#include <frameobject.h>
#endif

namespace npvk_shim {

struct CallSite {
  uint64_t last_serial = 0;     // its ops: the thread's after the previous site's
  PyObject *code = nullptr;     // strong; null where no Python frame ran
  PyObject *globals = nullptr;  // strong
  int lasti = 0;                // the call's instruction, in bytes (PyFrame_GetLasti)
  int lineno = -1;              // before Python 3.11: the line, taken at once
  uint32_t reported = 0;        // categories warned so far, 4 bits per method
};

namespace {

// Per thread, as NumPy's error state and the runtime's take are. One
// constant-initialised object (a thread-local access from an extension module
// is a call into the dynamic loader; the counters are read at every ufunc
// call), its lists made at first use and never freed (a thread's last few
// code objects stay alive after it ends).
struct Lists {
  std::deque<CallSite> sites;           // by last_serial
  std::vector<npvk_op_fp_error> taken;  // not reported yet
};
struct ThreadSites {
  int calls = 0;          // replaced-ufunc calls running
  uint64_t recorded = 0;  // device ops recorded (count_device_op)
  uint64_t sited = 0;     // `recorded` when the last site was noted
  uint64_t seen_epoch = UINT64_MAX, ran_through = 0;
  // A report runs Python code (showwarning, a seterrcall callback) that may
  // call ufuncs: no site may go while one runs, nor a second report start.
  bool reporting = false;
  Lists *lists = nullptr;
  Lists &l() {
    if (!lists) lists = new Lists;
    return *lists;
  }
};
thread_local ThreadSites t_state;
constexpr size_t kPruneEvery = 64;

// Whether `globals` are an npvk module's: its Python wrappers (reductions,
// np.where, products) call into the shim, and NumPy, in their place, would
// have warned at the frame that called them. The last other module's globals
// are remembered (held, so that no other dict can take their address).
bool own_module(PyObject *globals) {
  static PyObject *last_foreign = nullptr;
  if (globals == last_foreign) return false;
  PyObject *name = PyDict_GetItemString(globals, "__name__");  // borrowed
  const char *text = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : nullptr;
  if (!text) PyErr_Clear();
  if (text && std::strncmp(text, "npvk", 4) == 0 && (text[4] == '\0' || text[4] == '.'))
    return true;
  Py_INCREF(globals);
  Py_XSETREF(last_foreign, globals);
  return false;
}

#if PY_VERSION_HEX < 0x030B0000
PyObject *PyFrame_GetGlobals(PyFrameObject *f) {  // 3.11's
  Py_INCREF(f->f_globals);
  return f->f_globals;
}
#endif

// The innermost Python frame outside npvk into `site`. GIL held.
void capture_frame(CallSite *site) {
  PyFrameObject *f = PyEval_GetFrame();  // borrowed
  Py_XINCREF(f);
  while (f) {
    PyObject *globals = PyFrame_GetGlobals(f);
    if (!own_module(globals)) {
      site->code = reinterpret_cast<PyObject *>(PyFrame_GetCode(f));
#if PY_VERSION_HEX >= 0x030B0000
      site->lasti = PyFrame_GetLasti(f);
#else
      site->lineno = PyFrame_GetLineNumber(f);  // no PyFrame_GetLasti before 3.11
#endif
      site->globals = globals;
      Py_DECREF(f);
      return;
    }
    Py_DECREF(globals);
    PyFrameObject *back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
}

void drop_site(CallSite &site) {
  Py_CLEAR(site.code);
  Py_CLEAR(site.globals);
}

// Moves this thread's new errors into its list; no GIL needed. Every ufunc
// loop call asks: while no context noted an exception since this thread last
// took, there is nothing to take and the context's lock is not worth it (a
// NumPy reduction along a short axis calls a loop per row).
void take(ThreadSites &t, bool even_without_errors) {
  const uint64_t epoch = npvk_fp_error_epoch();
  if (!even_without_errors && (epoch == 0 || epoch == t.seen_epoch)) return;
  const npvk_context ctx = bound_context();
  if (!ctx.id) return;
  npvk_op_fp_error errors[64];
  uint32_t count = 0;
  do {
    if (npvk_context_take_op_fp_errors(ctx, errors, 64, &count, &t.ran_through) != NPVK_SUCCESS)
      return;
    t.l().taken.insert(t.l().taken.end(), errors, errors + count);
  } while (count == 64);
  t.seen_epoch = epoch;
}

// Forgets the sites of calls whose ops have all run and been reported. GIL held.
void prune(Lists &l, uint64_t ran_through) {
  uint64_t keep_from = ran_through + 1;
  for (const npvk_op_fp_error &e : l.taken)
    if (e.serial) keep_from = std::min(keep_from, e.serial);
  while (!l.sites.empty() && l.sites.front().last_serial < keep_from) {
    drop_site(l.sites.front());
    l.sites.pop_front();
  }
}

// The site of the op `serial`; null where it has none (yet: `*later`).
CallSite *site_of(Lists &l, uint64_t serial, bool *later) {
  *later = false;
  if (serial == 0) return nullptr;
  auto it = std::lower_bound(l.sites.begin(), l.sites.end(), serial,
                             [](const CallSite &s, uint64_t v) { return s.last_serial < v; });
  if (it != l.sites.end()) return &*it;
  *later = true;
  return nullptr;
}

// Whether the thread holds errors that can be reported now: those of noted
// calls (they come in the order the ops ran), and outside a call any (an op
// recorded by a path that notes no site: the current frame is the best guess).
bool reportable(ThreadSites &t) {
  if (!t.lists || t.lists->taken.empty()) return false;
  if (t.calls == 0 || t.recorded == t.sited) return true;
  const uint64_t first = t.lists->taken.front().serial;
  return first == 0 || (!t.lists->sites.empty() && first <= t.lists->sites.back().last_serial);
}

void note_call_site(ThreadSites &t) {
  t.sited = t.recorded;
  // The shim records into one context; npvk_context_last_op's handle lookup
  // cost more than the rest of the note.
  const uint64_t serial = npvk_thread_last_op();
  if (serial == 0) return;
  Lists &l = t.l();
  // Every op of the call merged into an earlier call's (rows): that call's.
  if (!l.sites.empty() && l.sites.back().last_serial >= serial) return;
  // A call that raised may have recorded work all the same.
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  const bool raised = PyErr_Occurred() != nullptr;
  if (raised) PyErr_Fetch(&type, &value, &traceback);
  CallSite site;
  site.last_serial = serial;
  capture_frame(&site);
  l.sites.push_back(site);
  if (l.sites.size() % kPruneEvery == 0 && !t.reporting) {
    // Calls whose ops ran without errors would otherwise pile up.
    take(t, true);
    prune(l, t.ran_through);
  }
  if (raised) PyErr_Restore(type, value, traceback);
}

}  // namespace

void begin_ufunc_call() {
  ++t_state.calls;
}

int end_ufunc_call() {
  ThreadSites &t = t_state;
  --t.calls;
  if (t.recorded == t.sited) return 0;
  note_call_site(t);
  if (PyErr_Occurred()) return 0;  // the call raised; its error goes on
  // warnings.filters edited in place (no hooked function saw it) to turn
  // RuntimeWarning into an error: from now on at the op, this call's included.
  const bool at_the_op = sync_errors();
  if (refresh_if_filters_edited() < 0) return -1;
  return !at_the_op && sync_errors() ? report_at_the_op() : 0;
}

void note_recorded_op() {
  ThreadSites &t = t_state;
  ++t.recorded;
  if (t.calls) return;  // noted when the call ends
  PyGILState_STATE gil = PyGILState_Ensure();
  note_call_site(t);
  // The caller reports at the op if that is now needed (end_ufunc_call).
  if (refresh_if_filters_edited() < 0) PyErr_WriteUnraisable(nullptr);
  PyGILState_Release(gil);
}

void note_pending_call_site() {
  ThreadSites &t = t_state;
  if (t.recorded != t.sited) note_call_site(t);
}

bool take_fp_errors_of_thread() {
  ThreadSites &t = t_state;
  take(t, false);
  return reportable(t);
}

uint32_t take_all_fp_flags() {
  ThreadSites &t = t_state;
  take(t, false);
  uint32_t flags = 0;
  if (!t.lists) return 0;
  for (const npvk_op_fp_error &e : t.lists->taken) flags |= e.flags;
  t.lists->taken.clear();
  return flags;
}

int report_taken_fp_errors() {
  ThreadSites &t = t_state;
  if (t.reporting || !reportable(t)) return 0;
  Lists &l = *t.lists;
  t.reporting = true;
  std::vector<npvk_op_fp_error> taken;
  taken.swap(l.taken);  // what the warnings' own calls take goes after it
  // In the order the ops ran, one report per call and method: the errors of
  // its ops together (they are adjacent), less what an earlier flush of the
  // same call reported.
  constexpr uint32_t kMethod = NPVK_FP_IN_REDUCE | NPVK_FP_IN_ACCUMULATE;
  std::vector<npvk_op_fp_error> kept;
  int r = 0;
  size_t i = 0;
  while (i < taken.size() && r == 0) {
    bool later = false;
    CallSite *site = site_of(l, taken[i].serial, &later);
    size_t end = i + 1;
    for (bool other_later;
         site && end < taken.size() && site_of(l, taken[end].serial, &other_later) == site;)
      ++end;
    if (later && t.calls && t.recorded != t.sited) {
      kept.push_back(taken[i++]);  // the running call's: reported once it is noted
      continue;
    }
    uint32_t by_method[3] = {};
    const uint32_t first_op = taken[i].op;
    for (; i < end; ++i) {
      const uint32_t f = taken[i].flags;
      by_method[(f & NPVK_FP_IN_REDUCE) ? 1 : (f & NPVK_FP_IN_ACCUMULATE) ? 2 : 0] |= f & ~kMethod;
    }
    for (int method = 0; method < 3 && r == 0; ++method) {
      uint32_t categories = by_method[method];
      if (site) {
        categories &= ~(site->reported >> (4 * method)) & 0xf;
        site->reported |= categories << (4 * method);
      }
      if (!categories) continue;
      const char *name = remembered_ufunc_name(first_op);
      if (method == 1) name = "reduce";  // NumPy names them after the method
      if (method == 2) name = "accumulate";
      r = give_fp_errors(name ? name : "ufunc", int(categories), site);
    }
  }
  kept.insert(kept.end(), taken.begin() + ptrdiff_t(i), taken.end());
  kept.insert(kept.end(), l.taken.begin(), l.taken.end());
  l.taken.swap(kept);
  t.reporting = false;
  prune(l, t.ran_through);
  return r;
}

int warn_at(const CallSite *site, const char *message) {
  if (!site || !site->code) return PyErr_WarnEx(PyExc_RuntimeWarning, message, 1);
  // What PyErr_WarnEx(..., 1) takes from the frame (Python's setup_context).
  PyObject *filename = PyObject_GetAttrString(site->code, "co_filename");
  if (!filename) return -1;
  const int lineno =
      site->lineno >= 0
          ? site->lineno
          : PyCode_Addr2Line(reinterpret_cast<PyCodeObject *>(site->code), site->lasti);
  PyObject *module = PyDict_GetItemString(site->globals, "__name__");  // borrowed
  if (module && module != Py_None && !PyUnicode_Check(module)) module = nullptr;
  if (module)
    Py_INCREF(module);
  else
    module = PyUnicode_FromString("<string>");
  PyObject *registry = PyDict_GetItemString(site->globals, "__warningregistry__");  // borrowed
  if (registry) {
    Py_INCREF(registry);
  } else {
    registry = PyDict_New();
    if (registry && PyDict_SetItemString(site->globals, "__warningregistry__", registry) < 0)
      Py_CLEAR(registry);
  }
  PyObject *text = PyUnicode_FromString(message);
  int r = -1;
  if (module && registry && text)
    r = PyErr_WarnExplicitObject(PyExc_RuntimeWarning, text, filename, lineno, module, registry);
  Py_XDECREF(text);
  Py_XDECREF(registry);
  Py_XDECREF(module);
  Py_DECREF(filename);
  return r;
}

}  // namespace npvk_shim
