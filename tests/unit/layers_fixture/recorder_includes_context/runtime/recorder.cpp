// The recorder reaching back into its owner: the check must reject it.
#include "runtime/context.hpp"
