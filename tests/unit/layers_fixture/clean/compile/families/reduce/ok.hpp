// A family's folder may include its own files, what the families share and
// the rest of compile/.
#include "compile/dtype.hpp"
#include "compile/families/family.hpp"
#include "compile/families/reduce/reduce_plan.hpp"
