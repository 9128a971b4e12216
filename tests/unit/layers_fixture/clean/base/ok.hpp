// base/ may include itself and the standard library.
#include <vector>

#include "base/error.hpp"
