// python-shim/src/ asks the runtime where work runs through the C ABI
// (npvk_placement_decide); it may not include the runtime's placement.
#include "runtime/placement/placement.hpp"
