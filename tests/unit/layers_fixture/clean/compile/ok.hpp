// compile/ may include base/ and compile/, and a header beside it.
#include <vector>

#include "base/error.hpp"
#include "compile/dtype.hpp"
#include "ok_local.hpp"
