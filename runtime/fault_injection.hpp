// Simulated failures for testing what npvk does when the device fails:
// NPVK_FAULT="kind:N[,kind:N...]" makes the N-th event of that kind (counted
// per process from 1) fail as the real failure would. npvk_fault_inject sets
// the same from a test. See docs/architecture.md, "Failure handling".
#pragma once

#include <cstdint>
#include <string>

namespace npvk::fault {

enum class Kind {
  Alloc,       // a device buffer is created or imported: out of device memory
  Compile,     // a kernel that is not in memory is built: shaderc fails
  Submit,      // a flush submits its batch: the queue submission fails
  DeviceLost,  // a flush submits its batch: the device is lost
  Count
};

// Replaces the whole plan and restarts the counts; "" or null: no faults.
// Throws NPVK_ERR_INVALID_ARGUMENT for a malformed spec.
void configure(const char *spec);
// Counts one event of `kind`; true when it is the one that must fail.
bool fire(Kind kind);
// Faults fired so far in this process.
uint64_t fired();
const char *kind_name(Kind kind);

}  // namespace npvk::fault
