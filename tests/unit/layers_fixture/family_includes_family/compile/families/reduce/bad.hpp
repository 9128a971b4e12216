// Breaks one rule: a family's folder may not include another family's.
#include "compile/families/matmul/matmul_plan.hpp"
