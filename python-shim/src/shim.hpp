// Shared state of the NumPy shim (the npvk._native extension). The shim uses
// only npvk's public C ABI; everything here is about NumPy.
#pragma once

#include <Python.h>
#include <npvk/npvk.h>

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>

namespace npvk_shim {

struct Settings {
  std::atomic<bool> enabled{false};
  // Arrays smaller than this stay on NumPy's own path (NPVK_MIN_BYTES).
  std::atomic<uint64_t> min_bytes{1u << 20};
  // The error state asks for a report of underflow, which the device does
  // not detect: every loop falls back (npvk/_errstate.py decides).
  std::atomic<bool> strict_errors{false};
  // The error state asks for 'raise', 'call' or 'log', or a warnings filter
  // turns RuntimeWarning into an error: the errors must surface at the op
  // itself, so each device op runs as it is recorded and reports then
  // (report_at_the_op). The same kernels as outside, so the same bits (a
  // fallback to NumPy's loops gave other last bits in sums).
  std::atomic<bool> sync_errors{false};
  // NumPy's promotion rules for Python and NumPy scalars (npvk/_numpy.py):
  // value-based casting (NumPy 1.x's default), NEP 50's weak Python scalars
  // and strong NumPy scalars (NumPy 2), or 1.x's 'weak_and_warn', whose
  // warnings only NumPy's own type resolution gives.
  enum class Promotion { Legacy, Weak, WeakAndWarn };
  std::atomic<Promotion> promotion{Promotion::Legacy};
  // NumPy 2.1 and later clip float arrays between two scalar bounds with a
  // loop of its own, which keeps x where x and a bound are zeros of opposite
  // sign (clip(-0.0, 0.0, 1.0) is -0.0; with array bounds, and in NumPy
  // before 2.1, it is 0.0). npvk's device loop is the array-bound one, so such
  // calls stay on NumPy's path (scalar_bounds_differ).
  std::atomic<bool> clip_scalar_bounds_keep_zeros{false};
  // NumPy 2.5's float16 nextafter returns y where x == y (as C's nextafter
  // and NumPy's float32/float64 loops do); before 2.5 it returned x, and so
  // does npvk's device loop, which differs only for zeros of opposite sign.
  // Under 2.5 those calls stay on NumPy's path.
  std::atomic<bool> half_nextafter_returns_y{false};
  // NumPy 2.1 and later, on CPUs with AVX-512, compute np.power(x, 0.5) for
  // float32/float64 with a scalar exponent as sqrt(x): -0.0 and -inf give
  // -0.0 and nan there, not C's pow results (0.0, inf) that npvk's device
  // loop gives. npvk/_numpy.py asks NumPy which it does; such calls stay on
  // NumPy's path where it is sqrt (x ** 0.5 is sqrt in every NumPy anyway).
  std::atomic<bool> power_half_is_sqrt_f4{false}, power_half_is_sqrt_f8{false};
};

// Whether a float clip with both bounds scalar (`low`, `high`) needs NumPy
// 2.1's scalar-bound loop: one of them is a zero.
bool clip_needs_numpy(double low, double high);
// The one instance, inline: read at every allocation and ufunc loop call.
inline Settings g_settings;
inline Settings &settings() {
  return g_settings;
}
// The error state's demands of a call that would go to the device
// (Settings::strict_errors, sync_errors; npvk/_errstate.py sets them at each
// change of the error state or the warnings filters).
bool strict_errors();
bool sync_errors();
void set_strict_errors(bool numpy_loops, bool at_the_op);
// Runs the queued work (only if the shim queued any since, with
// `only_if_queued`) and reports its FP errors; None, or null with an
// exception set.
PyObject *sync_and_report(bool only_if_queued);
// error_state.cpp: changes of NumPy's error state and the warnings filters.
PyObject *py_error_state_setup(PyObject *, PyObject *args);
PyObject *py_update_error_state(PyObject *, PyObject *);
PyObject *py_change_error_state(PyObject *, PyObject *args, PyObject *kwargs);
// device_binding.cpp: the managed context, bound on first use (an enabled
// process that has no device yet binds it here).
npvk_context context();
npvk_context bound_context();  // the context, or {0} before binding (no binding)
bool device_bound();
// enable(device=...): the device binding will use, checked now. 0, or -1 with
// an exception set; ignored once bound (npvk.enable() compares instead).
// Starts making the device that binding would make now, on a thread of its
// own (npvk_device_prepare_after); binding takes it over. The thread waits
// kPrepareDelayMs before it loads the driver, so that a process that only
// imports NumPy never does; the program's first array of managed_from()
// bytes or more starts it at once (prepare_binding_now).
void prepare_binding();
void prepare_binding_now();
int set_device_selector(const char *selector);
// Loop replacements need the device's capabilities: before binding they wait
// for it (true), after it they run at once.
bool replace_or_defer_loop(PyObject *ufunc, npvk_op op, const int *type_nums,
                           const npvk_dtype *dtypes, int count, std::string *error);
bool replace_or_defer_matmul_loop(PyObject *ufunc, int type_num, npvk_dtype dtype);
int deferred_loop_count();
void drop_deferred_loops();
npvk_status set_graph_dir_when_bound(const char *dir);
PyObject *py_bind(PyObject *, PyObject *);
PyObject *py_bound(PyObject *, PyObject *);
PyObject *py_make_device(PyObject *, PyObject *);
PyObject *py_select_device(PyObject *, PyObject *args);
PyObject *py_check_fault_handler(PyObject *, PyObject *);

// Counters by ufunc and reason, for npvk.stats().
void count_device_op();
uint64_t device_ops_counted();  // since the start or the last reset
uint64_t ops_queued();          // by count_device_op, never reset
void count_fallback(const char *ufunc, const char *reason);
// The same for a ufunc loop: the counter of `ufunc`'s calls that fell back
// for `reason`, for the process's lifetime (a loop keeps its last one: a
// reduction along a short axis calls it once per row). `ufunc` and `reason`
// must live as long as the process (loop slot names, string literals).
struct LoopCounter {
  const char *ufunc, *reason;
  std::atomic<uint64_t> count{0};
};
LoopCounter *loop_fallback_counter(const char *ufunc, const char *reason);
PyObject *counters_as_dict();  // new reference: {"ops_on_device": n, "ops_fallback": {...}}
void reset_counters();
PyObject *py_stats(PyObject *, PyObject *);        // npvk.stats() (counters.cpp)
PyObject *py_reset_stats(PyObject *, PyObject *);  // npvk.reset_stats()

// Reports floating-point exceptions that device work raised, through NumPy's
// own error handling (np.seterr / np.errstate decide: warn, raise, ignore...),
// named after the ufunc that raised them. The caller holds the GIL. Returns 0,
// or -1 with a Python exception set.
int report_fp_errors();
// The same from inside a ufunc loop, where no exception can be returned: an
// exception (a warning turned into an error) becomes the host's FP status
// instead, which NumPy checks right after the loop.
void report_fp_errors_from_loop();
// Under settings().sync_errors, right after a device op was recorded: runs it
// and reports its FP errors now, as NumPy would at the op. From a method or a
// whole call (0, or -1 with an exception set), and from a ufunc loop, where
// the errors become the host's FP status that NumPy checks after the loop.
int report_at_the_op();
void report_at_the_op_from_loop();
void remember_ufunc_name(npvk_op op, const char *name);
const char *remembered_ufunc_name(uint32_t op);  // NumPy's name of a replaced op, or null

// warning_sites.cpp: each device op's FP errors are reported at the Python
// line of the call that recorded it, once per call (its comment says how).
// The replaced ufuncs' calls are bracketed (GIL held); end_ufunc_call returns
// -1 with an exception set (a report at the op that raised).
void begin_ufunc_call();
int end_ufunc_call();
void note_recorded_op();          // from count_device_op, with or without the GIL
void note_pending_call_site();    // the running call's, before a report at the op (GIL)
bool take_fp_errors_of_thread();  // takes this thread's; whether some can be reported now
int report_taken_fp_errors();     // GIL held; 0, or -1 with an exception set
uint32_t take_all_fp_flags();     // taken and forgotten, OR-ed (reports at the op in a loop)
// error_state.cpp: reads the state again where warnings.filters was edited in
// place since the last scan (0, or -1 with an exception set). GIL held.
int refresh_if_filters_edited();

// allocator.cpp
PyObject *make_allocator_capsule();  // the NEP 49 handler
// Every allocation of this thread is managed, whatever its size (results that
// the device writes); returns the previous setting.
bool force_managed(bool on);

// ufunc_loops.cpp: replaces the loop of `ufunc` with this signature (NumPy
// type numbers, inputs then outputs) by a device loop of `op` on `dtypes`.
// Returns false when npvk has no such loop.
bool replace_loop(PyObject *ufunc, npvk_op op, const int *type_nums, const npvk_dtype *dtypes,
                  int count, std::string *error);
void restore_loops();
// Changes whenever loops are replaced or restored.
uint64_t replaced_loops_generation();
// The device op of the replaced loop (in_type, ..., in_type) -> (out_types[0], ...).
bool device_loop_for(PyObject *ufunc, int in_type, const int *out_types, int nout, npvk_op *op);
// matmul_loop.cpp: np.matmul's (T, T) -> T gufunc loop on the device.
bool replace_matmul_loop(PyObject *ufunc, int type_num, npvk_dtype dtype);
void restore_matmul_loops();
// ufunc_call.cpp: a whole N-d call on the device when NumPy would buffer it;
// *taken false (and null returned) when NumPy should run it.
PyObject *try_whole_call(PyObject *callable, PyObject *const *args, size_t nargsf,
                         PyObject *kwnames, bool *taken);
int replaced_loop_count();
// masked_call.cpp: a call with where= (the replaced ufuncs' vectorcall sends
// it here): recorded on the device whole, or run by NumPy with its loop
// calls handed straight to NumPy's original loops.
PyObject *masked_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames,
                      vectorcallfunc numpy_call);
// The thread (its thread pointer) running such a call on NumPy's path; read
// first in every replaced loop call, so a compare, not a thread_local (a call
// into the dynamic loader from an extension module).
inline std::atomic<void *> g_masked_host_thread{nullptr};
inline bool in_masked_host_call() {
  return g_masked_host_thread.load(std::memory_order_relaxed) == __builtin_thread_pointer();
}
// NumPy's original loop of `op` on `dtypes` and the data NumPy passes it;
// false when no replaced loop has that signature or it never ran.
bool original_loop(npvk_op op, const npvk_dtype *dtypes, int count, PyUFuncGenericFunction *fn,
                   void **data);

// host_replay.cpp: failed device work runs on the host through the original
// loops (registered at enable), reported once as a RuntimeWarning.
void install_host_loop();
int warn_failures();  // 0, or -1 with an exception set (warnings as errors)
void note_possible_failure();
bool failures_unreported();
void put_failure_stats(PyObject *dict);

// ufunc_methods.cpp: routes a NumPy method (ufunc.reduce, ufunc.accumulate,
// ndarray.copy, ndarray.astype) or C function (`function`: np.copyto's
// implementation) through `handler(self, args, kwargs)` first, which returns
// NotImplemented for calls NumPy should run. False when it cannot be patched.
bool patch_method(const char *name, PyObject *handler, PyObject *function);
void unpatch_methods();
// _native.reduce(op, array, in_dtype, result, out_dtype, axes, initial_bytes):
// records npvk_reduce; None, or the reason it could not.
// The cost model (src/cost_model.cpp).
PyObject *py_set_cost_model(PyObject *, PyObject *on);
// Gives the bound context the cost model's setting (install_host_loop calls it).
void apply_cost_model();
PyObject *py_cost_model(PyObject *, PyObject *measure);
// What a call is, as the runtime's placement weighs it (npvk_work_kind): a
// float sum along the axis memory is contiguous in, any other reduction or
// scan, or a product.
enum class CostedWork : uint32_t {
  StreamedSum = NPVK_WORK_STREAMED_SUM,
  OtherReduction = NPVK_WORK_REDUCTION,
  Product = NPVK_WORK_PRODUCT,
};
// The placement's reason ("cost model") where it runs `work` over `operands`
// on the host (queued work writing one ran first), else null.
const char *cost_model_reason(const void *const *operands, int count, uint64_t bytes,
                              CostedWork work);
// "cost model" for an elementwise loop call while the placement keeps
// running every flush on the host: NumPy runs it at once, unrecorded. Asked
// of calls that would be recorded otherwise (once per the answer's
// ask_every, under the context's lock); cost_model_bypassing() is the cheap
// part, for any call.
const char *elementwise_cost_reason();
const char *cost_model_bypassing();
bool cost_model_on();
PyObject *py_reduce_stays_on_host(PyObject *, PyObject *args);
PyObject *py_device_reduce(PyObject *, PyObject *args);
// _native.accumulate(op, array, in_dtype, result, out_dtype, axis): records
// npvk_accumulate; None, or the reason it could not.
PyObject *py_device_accumulate(PyObject *, PyObject *args);

// A view of an ndarray whose data lies in managed memory.
// array_state.cpp: what the runtime knows of an array's memory.
// Host arrays up to this size are uploaded rather than refusing a call.
constexpr npy_intp kMaxUpload = 1 << 20;
// Whether a host read (write) of the array's data would wait for queued device work.
bool host_waits(PyArrayObject *a, bool write);
// Whether the array's data is managed memory; *size (if given): its allocation's size.
bool managed(PyArrayObject *a, uint64_t *size = nullptr);
npvk_status managed_array_view(PyObject *array, npvk_dtype dtype, npvk_view *out);
// Why a recording call failed, as a fallback reason (null on success).
const char *status_reason(npvk_status st);
// The same for making a view of managed memory (not managed: "unmanaged operand").
const char *view_reason(npvk_status st);
// Releases the views; returns None (counting a device op) when `reason` is
// null, else the reason as a str.
PyObject *op_result(const char *reason, std::initializer_list<npvk_view> views);

// assign.cpp: `a[index] = value` through `handler(a, index, value) -> bool`
// first (True: recorded on the device), for managed arrays and basic indexes.
void patch_assignment(PyObject *handler);
void unpatch_assignment();
// _native.copy(src, src_dtype, dst, dst_dtype): records dst = src (cast,
// broadcast); None, or the reason not ("overlap": they share memory).
PyObject *py_device_copy(PyObject *, PyObject *args);
// _native.fill(dst, dst_dtype, value_bytes, value_dtype): dst[...] = value.
PyObject *py_device_fill(PyObject *, PyObject *args);

// where_ufunc.cpp: np.where(c, x, y) as a ufunc (new reference, or null
// with an exception set).
PyObject *where_ufunc();

// Observability (observe.cpp, callsite_report.cpp; docs/observability.md).
struct Observing {
  std::atomic<bool> any{false};     // either below: loops call note_loop
  std::atomic<bool> report{false};  // NPVK_REPORT: loops and syncs by call site
  std::atomic<bool> timing{false};  // NPVK_PROFILE: time NumPy's loops for fallbacks
};
Observing &observing();
// A loop call of `elements` elements ran on the device (reason null) or fell back.
void note_loop(const char *ufunc, const char *reason, int64_t elements);
void count_elements(bool device, int64_t elements);
// NumPy's loop, timed when profiling.
void run_original(PyUFuncGenericFunction original, char **args, const npy_intp *dims,
                  const npy_intp *steps, void *data);
int add_observe_functions(PyObject *module);  // 0, or -1 with an exception set
PyObject *py_report_begin(PyObject *, PyObject *prefixes);
PyObject *py_report_rows(PyObject *, PyObject *);
PyObject *py_report_end(PyObject *, PyObject *);
PyObject *py_report_site(PyObject *, PyObject *);
// At binding: the bound context tells the report where its flushes ran.
void install_flush_hook();

// buffer_access.cpp: make managed memory current before NumPy hands its
// address to code that cannot fault (buffer protocol, tofile).
void patch_buffer_access();
void unpatch_buffer_access();

}  // namespace npvk_shim
