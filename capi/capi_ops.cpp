// Operations: opcode queries and recording.
#include <vector>

#include "capi/capi_common.hpp"
#include "compile/iteration.hpp"
#include "compile/ops.hpp"

using namespace npvk;

extern "C" {

NPVK_API npvk_status npvk_op_get_info(npvk_op op, npvk_op_info *out) {
  return guarded([&] {
    require_out(out, "out");
    const OpInfo &info = op_info(op);
    npvk_op_info result{};
    result.struct_size = sizeof(npvk_op_info);
    result.nin = info.nin;
    result.nout = info.nout;
    result.implemented = info.implemented;
    result.name = info.name;
    copy_sized(out, result);
  });
}

NPVK_API npvk_status npvk_op_supported(npvk_context h, npvk_op op, const npvk_dtype *dtypes,
                                       uint32_t count, int *out) {
  return guarded([&] {
    require_out(out, "out");
    require(dtypes || count == 0, NPVK_ERR_INVALID_ARGUMENT, "dtypes is null");
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    ctx->check_usable();
    *out = ctx->supported(op, dtypes, count, nullptr) ? 1 : 0;
  });
}

NPVK_API npvk_status npvk_op_has_loop(npvk_op op, const npvk_dtype *dtypes, uint32_t count,
                                      int *out) {
  return guarded([&] {
    require_out(out, "out");
    require(dtypes || count == 0, NPVK_ERR_INVALID_ARGUMENT, "dtypes is null");
    const OpInfo &info = op_info(op);
    *out = info.implemented && op_has_loop(info, dtypes, count, nullptr) ? 1 : 0;
  });
}

NPVK_API npvk_status npvk_apply(npvk_context h, npvk_op op, uint32_t nin, const npvk_view *inputs,
                                uint32_t nout, const npvk_view *outputs) {
  return guarded([&] {
    require(nin + nout <= kMaxOperands && nout >= 1, NPVK_ERR_INVALID_ARGUMENT,
            "an operation has 1 to 4 operands and at least one output");
    require((inputs || nin == 0) && outputs, NPVK_ERR_INVALID_ARGUMENT, "operand array is null");
    auto ctx = get_context(h);
    std::vector<std::shared_ptr<View>> views;
    views.reserve(nin + nout);
    for (uint32_t k = 0; k < nin + nout; ++k)
      views.push_back(get_view(k < nin ? inputs[k] : outputs[k - nin]));
    std::vector<const View *> operands;
    operands.reserve(nin + nout);
    for (auto &v : views) operands.push_back(v.get());
    ContextLock lock(ctx->mutex());
    ctx->apply(op, operands, nin);
  });
}

NPVK_API npvk_status npvk_unary(npvk_context ctx, npvk_op op, npvk_view a, npvk_view out) {
  return npvk_apply(ctx, op, 1, &a, 1, &out);
}

NPVK_API npvk_status npvk_binary(npvk_context ctx, npvk_op op, npvk_view a, npvk_view b,
                                 npvk_view out) {
  npvk_view in[2] = {a, b};
  return npvk_apply(ctx, op, 2, in, 1, &out);
}

NPVK_API npvk_status npvk_reduce(npvk_context h, npvk_op op, npvk_view in, uint32_t naxes,
                                 const uint32_t *axes, npvk_view initial, npvk_view out) {
  return npvk_reduce_blocked(h, op, in, naxes, axes, initial, out, 0);
}

NPVK_API npvk_status npvk_reduce_blocked(npvk_context h, npvk_op op, npvk_view in, uint32_t naxes,
                                         const uint32_t *axes, npvk_view initial, npvk_view out,
                                         int64_t sum_block) {
  return guarded([&] {
    require(sum_block >= 0, NPVK_ERR_INVALID_ARGUMENT, "sum_block is negative");
    require(axes || naxes == 0, NPVK_ERR_INVALID_ARGUMENT, "axes is null");
    require(naxes <= NPVK_MAX_DIMS, NPVK_ERR_INVALID_ARGUMENT, "more axes than dimensions");
    auto ctx = get_context(h);
    std::shared_ptr<View> input = get_view(in), output = get_view(out), init;
    if (initial.id) init = get_view(initial);
    std::vector<uint32_t> axis_list(axes, axes + naxes);
    ContextLock lock(ctx->mutex());
    ctx->reduce(op, *input, axis_list, init.get(), *output, sum_block);
  });
}

NPVK_API npvk_status npvk_accumulate(npvk_context h, npvk_op op, npvk_view in, uint32_t axis,
                                     npvk_view out) {
  return guarded([&] {
    auto ctx = get_context(h);
    std::shared_ptr<View> input = get_view(in), output = get_view(out);
    ContextLock lock(ctx->mutex());
    ctx->accumulate(op, *input, axis, *output);
  });
}

NPVK_API npvk_status npvk_matmul(npvk_context h, npvk_view a, npvk_view b, npvk_view c) {
  return guarded([&] {
    auto ctx = get_context(h);
    std::shared_ptr<View> va = get_view(a), vb = get_view(b), vc = get_view(c);
    ContextLock lock(ctx->mutex());
    ctx->matmul(*va, *vb, *vc);
  });
}

}  // extern "C"
