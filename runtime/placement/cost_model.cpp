#include "runtime/placement/cost_model.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <utility>

#include "compile/dtype.hpp"
#include "compile/ops.hpp"

namespace npvk {
namespace {

enum class Work { Cheap, Math, Power };

// What an op costs beyond moving its bytes. A power with a scalar integer
// (or one-half) exponent has code of its own on the device (products), but
// NumPy's loop is the general pow for every exponent but 2.
Work device_work(const KernelSpec &spec) {
  const OpInfo &info = op_info(spec.op);
  if (!info.math_f64 || !is_float(spec.operands[0].dtype)) return Work::Cheap;
  if (spec.op == NPVK_OP_POWER || spec.op == NPVK_OP_FLOAT_POWER)
    return spec.exponent.kind == FixedExponent::None ? Work::Power : Work::Cheap;
  return Work::Math;
}

Work host_work(const KernelSpec &spec) {
  const OpInfo &info = op_info(spec.op);
  if (!info.math_f64 || !is_float(spec.operands[0].dtype)) return Work::Cheap;
  if (spec.op == NPVK_OP_POWER || spec.op == NPVK_OP_FLOAT_POWER) return Work::Power;
  return Work::Math;
}

double work_ns(Work w, double math_ns, double pow_ns) {
  return w == Work::Math ? math_ns : w == Work::Power ? pow_ns : 0.0;
}

// In the file's name: a change of how the figures are measured makes every
// kept file stale. 2: power and exp measured on buffers a page apart (version
// 1's host power was NumPy's scalar loop, 5-10x too slow, on this machine).
// 3: the costs of narrow (1- and 2-byte) element accesses and of a dispatch
// on the device.
constexpr int kFiguresVersion = 3;

std::string params_path(const std::string &dir, const std::string &device_key) {
  return dir + "/cost-model-v" + std::to_string(kFiguresVersion) + "-" + device_key + ".txt";
}

// An in-place step (`x += 1`: its output slot is one of its inputs) after
// a kernel's first costs the device about what a standalone add of its
// elements does, whatever the kernel's bytes: it computes its operands' FP classes per element
// (tainted steps, docs/architecture.md "FP exceptions"), and a chain of them reads and writes one
// slot. Priced by bytes alone, 200 steps of `x += 1.0` over 3e5 float64 (two threads' time-step
// loop) were estimated at 2 ms on lavapipe and took 60; NumPy took 30.
double in_place_step_ns(const CostParams &p, const PlannedKernel &k) {
  double ns = 0;
  bool first = true;  // the kernel's bytes price one already
  for (const FusedKernelSpec::Step &st : k.spec.steps) {
    const uint32_t nin = st.op.nin;
    const uint32_t count = nin + st.op.nout;
    bool in_place = false;
    for (uint32_t o = nin; o < count && !in_place; ++o)
      for (uint32_t i = 0; i < nin && !in_place; ++i) in_place = st.slot[i] == st.slot[o];
    if (!in_place || std::exchange(first, false)) continue;
    const double itemsize = dtype_info(st.op.operands[nin].dtype).itemsize;
    ns += double(k.space.count) * 3 * itemsize * p.device_ns_per_byte;
  }
  return ns;
}

}  // namespace

CostEstimate estimate_costs(const CostParams &p, const std::vector<RecordedOp> &ops,
                            const std::vector<PlannedKernel> &kernels) {
  CostEstimate e;
  e.device_ns = p.device_flush_ns;
  for (const PlannedKernel &k : kernels) {
    double bytes = 0;
    for (size_t s = 0; s < k.slots.size(); ++s) {
      const SlotBinding &b = k.slots[s];
      if (!b.view || b.view->scalar) continue;
      const double extent = double(b.hi - b.lo);
      if (b.read) bytes += extent;
      if (b.written && k.spec.slots[s].stored) bytes += extent;
    }
    e.device_ns += p.device_dispatch_ns + bytes * p.device_ns_per_byte;
    double narrow_accesses = 0;
    for (size_t s = 0; s < k.slots.size(); ++s) {
      const SlotBinding &b = k.slots[s];
      if (!b.view || b.view->scalar || dtype_info(k.spec.slots[s].dtype).itemsize >= 4) continue;
      narrow_accesses += double(b.read) + double(b.written && k.spec.slots[s].stored);
    }
    e.device_ns += narrow_accesses * double(k.space.count) * p.device_narrow_ns;
    for (size_t i : k.ops)
      e.device_ns += double(ops[i].space.count) *
                     work_ns(device_work(ops[i].spec), p.device_math_ns, p.device_pow_ns);
    if (!k.standalone) e.device_ns += in_place_step_ns(p, k);
  }
  for (const RecordedOp &op : ops) {
    double bytes = 0;
    for (size_t k = 0; k < op.operands.size(); ++k)
      if (!op.operands[k].scalar) bytes += double(op.hi[k] - op.lo[k]);
    e.host_ns +=
        bytes * p.host_ns_per_byte +
        double(op.space.count) * work_ns(host_work(op.spec), p.host_math_ns, p.host_pow_ns);
  }
  return e;
}

bool load_cost_params(const std::string &dir, const std::string &device_key, CostParams *out) {
  if (dir.empty()) return false;
  std::ifstream in(params_path(dir, device_key));
  if (!in) return false;
  CostParams p;
  std::string name;
  double value = 0;
  int seen = 0;
  while (in >> name >> value) {
    double *field = name == "device_flush_ns"      ? &p.device_flush_ns
                    : name == "device_ns_per_byte" ? &p.device_ns_per_byte
                    : name == "device_math_ns"     ? &p.device_math_ns
                    : name == "device_pow_ns"      ? &p.device_pow_ns
                    : name == "device_narrow_ns"   ? &p.device_narrow_ns
                    : name == "device_dispatch_ns" ? &p.device_dispatch_ns
                    : name == "host_ns_per_byte"   ? &p.host_ns_per_byte
                    : name == "host_math_ns"       ? &p.host_math_ns
                    : name == "host_pow_ns"        ? &p.host_pow_ns
                                                   : nullptr;
    if (!field || !(value >= 0)) return false;
    *field = value;
    ++seen;
  }
  if (seen != 9) return false;
  p.measured = true;
  *out = p;
  return true;
}

void save_cost_params(const std::string &dir, const std::string &device_key, const CostParams &p) {
  if (dir.empty()) return;
  // Written whole under another name, then renamed: a reader never sees half.
  const std::string path = params_path(dir, device_key),
                    tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp);
    if (!out) return;
    out.precision(6);
    out << "device_flush_ns " << p.device_flush_ns << "\n"
        << "device_ns_per_byte " << p.device_ns_per_byte << "\n"
        << "device_math_ns " << p.device_math_ns << "\n"
        << "device_pow_ns " << p.device_pow_ns << "\n"
        << "device_narrow_ns " << p.device_narrow_ns << "\n"
        << "device_dispatch_ns " << p.device_dispatch_ns << "\n"
        << "host_ns_per_byte " << p.host_ns_per_byte << "\n"
        << "host_math_ns " << p.host_math_ns << "\n"
        << "host_pow_ns " << p.host_pow_ns << "\n";
    if (!out) return;
  }
  std::rename(tmp.c_str(), path.c_str());
}

}  // namespace npvk
