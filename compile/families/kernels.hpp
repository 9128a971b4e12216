// The standalone kernel families, made from their planned ops (the planning
// itself: compile/families/reduce/reduce_plan.hpp, compile/families/matmul/matmul_plan.hpp).
#pragma once

#include <memory>

#include "compile/families/family.hpp"
#include "compile/families/matmul/matmul_plan.hpp"
#include "compile/families/reduce/reduce_plan.hpp"

namespace npvk {

// A reduction (ReduceMode::PerThread or Workgroup, in one pass or two) or an
// accumulation (ReduceMode::Scan), after r.spec.mode.
std::shared_ptr<const StandaloneKernel> make_reduce_kernel(ReduceOp r);
std::shared_ptr<const StandaloneKernel> make_matmul_kernel(MatmulOp op);

}  // namespace npvk
