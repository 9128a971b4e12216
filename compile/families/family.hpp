// Kernel families: each kind of kernel (elementwise, reduction, scan, matrix
// product) is one type that knows its key, its GLSL, how a planned kernel's
// dispatch arguments are bound and, for the standalone kinds, how the host
// replays it. The key, the code and the binding sit on one object (as on
// ArrayFire's JIT nodes), so the push-constant slots a generator reads and
// the ones the runtime fills cannot drift apart; the runtime handles every
// family through this interface, without branching on the kind.
#pragma once

#include <npvk/npvk.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compile/kernel_abi.hpp"

namespace npvk {

struct PlannedKernel;

// A slot index for the reduction's scratch memory in DispatchArgs::Access.
constexpr int kScratchSlot = -1;

// One dispatch of a kernel in device-neutral terms. The runtime resolves the
// pipeline from `key` (calling `source` only when it is not compiled yet),
// points push.meta and push.flags at its arenas, and turns `accesses` into
// barriers.
struct DispatchArgs {
  std::string key;
  std::function<std::string()> source;
  PushConstants push{};
  std::vector<int64_t> meta;  // the argument table
  uint32_t groups = 0;
  uint32_t flag_words = 1;  // FP exception words (one per fused op)
  struct Access {
    int slot;  // the planned kernel's slot, or kScratchSlot
    uint64_t lo, hi;
    bool write;
  };
  std::vector<Access> accesses;
};

// What binding needs to know of the device and of where memory is.
struct BindTarget {
  std::function<uint64_t(size_t slot)> address;  // a slot's device address, offset included
  uint64_t scratch_address = 0;                  // device address of the scratch buffer
  uint64_t scratch_offset = 0;                   // this kernel's region in it (bytes)
  uint64_t tables_address = 0;                   // the math library's constant tables
  uint64_t max_group_count = 1;                  // the device's limit per dispatch
  uint64_t preferred_groups = 1;                 // workgroups a grid-stride loop spreads over
  int64_t loop_budget = INT64_MAX;  // the most iterations one invocation's loop may run
};

// The host's loops (npvk_context_set_host_loop): NumPy's own under the shim.
struct HostLoop {
  npvk_host_loop_fn fn = nullptr;
  void *user = nullptr;
  bool has(npvk_op op, uint32_t nin, uint32_t nout, const npvk_dtype *dtypes) const {
    return fn && fn(user, op, nin, nout, dtypes, nullptr, 0, nullptr, nullptr) == 0;
  }
  void run(npvk_op op, uint32_t nin, uint32_t nout, const npvk_dtype *dtypes, char **args,
           int64_t count, const int64_t *steps, uint32_t *raised) const {
    fn(user, op, nin, nout, dtypes, args, count, steps, raised);
  }
};

// A recorded op that is a kernel of its own: a reduction, a scan or a matrix
// product. Its operands are the recorded op's (inputs, then outputs).
class StandaloneKernel {
 public:
  virtual ~StandaloneKernel() = default;
  // The kernel of the first (or only) pass, and its GLSL.
  virtual std::string key() const = 0;
  virtual std::string glsl() const = 0;
  // "add.reduce", "matmul": what a trace span or graph node is called.
  virtual std::string name() const = 0;
  // A line for npvk_context_last_kernel_graph (explain).
  virtual std::string describe() const = 0;
  // A graph cluster's label, and a trace span's arguments (JSON members).
  virtual std::string summary(int64_t elements) const = 0;
  virtual std::string trace_args(int64_t elements) const = 0;
  // Scratch memory its dispatches need (bytes, 256-aligned), 0 for none.
  virtual uint64_t scratch_bytes() const { return 0; }
  // NPVK_FP_IN_* flags that its raised exceptions carry.
  virtual uint32_t fp_context() const { return 0; }
  // Appends its dispatches; `kernel`'s slots are its operands.
  virtual void bind(const PlannedKernel &kernel, const BindTarget &target,
                    std::vector<DispatchArgs> &out) const = 0;
  // The host replay after a failed flush: whether the host can run it, and
  // running it on the operands' bytes. Returns the FP exceptions it raised.
  virtual bool replay_supported(const HostLoop &loop) const = 0;
  virtual uint32_t replay(const HostLoop &loop, uint8_t *const *bytes) const = 0;
};

}  // namespace npvk
