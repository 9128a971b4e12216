/*
 * npvk_ops.h - buffers, views and operations (elementwise ops,
 * reductions, scans and matrix products).
 * Part of npvk.h, which includes every part: include <npvk/npvk.h>.
 */
#ifndef NPVK_NPVK_OPS_H
#define NPVK_NPVK_OPS_H

#include "npvk_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- buffers ----------------------------------------------------------- */

/* Device memory of `size` bytes (device-local on a discrete GPU), zero-filled. */
NPVK_API npvk_status npvk_buffer_create(npvk_context ctx, uint64_t size, npvk_buffer *out);
/*
 * Use `size` bytes of host memory at `host` as a buffer's storage. Where the
 * device can import host memory (VK_EXT_external_memory_host) and `host` and
 * `size` meet its alignment, the device works on those pages directly
 * (zero-copy; see npvk_buffer_is_zero_copy). Otherwise npvk keeps a device copy
 * and transfers through the host pages.
 * Contract: between recording an operation on the buffer and the next
 * npvk_buffer_sync (or npvk_sync), the host must not touch the memory. After a
 * host write outside that window, call npvk_buffer_host_modified.
 * The memory must outlive the buffer and every view of it.
 */
NPVK_API npvk_status npvk_buffer_wrap_host(npvk_context ctx, void *host, uint64_t size,
                                           npvk_buffer *out);
/* Drops the handle. The memory lives on until no view and no pending
 * operation uses it. */
NPVK_API npvk_status npvk_buffer_release(npvk_buffer buf);
NPVK_API npvk_status npvk_buffer_size(npvk_buffer buf, uint64_t *out);
NPVK_API npvk_status npvk_buffer_is_zero_copy(npvk_buffer buf, int *out);
/* Copy host bytes in. Ordered after recorded work that uses the buffer. */
NPVK_API npvk_status npvk_buffer_write(npvk_buffer buf, uint64_t offset, const void *src,
                                       uint64_t size);
/* Runs the work that the buffer depends on, then copies bytes out. */
NPVK_API npvk_status npvk_buffer_read(npvk_buffer buf, uint64_t offset, void *dst, uint64_t size);
/* Runs the work the buffer depends on; a wrapped buffer's host memory is then
 * current. */
NPVK_API npvk_status npvk_buffer_sync(npvk_buffer buf);
/* A wrapped buffer's host memory was written by the host. */
NPVK_API npvk_status npvk_buffer_host_modified(npvk_buffer buf);

/* ---- views ------------------------------------------------------------- */

/*
 * A strided view of a buffer, as a NumPy array describes its data: the element
 * at index (i0, ..., i[ndim-1]) starts at byte
 *   offset + i0*strides[0] + ... + i[ndim-1]*strides[ndim-1].
 * Strides are in bytes and may be negative or zero; offset and strides must be
 * multiples of the itemsize. `strides` NULL means C-contiguous. ndim 0 is a
 * single element. Every element must lie inside the buffer.
 * The view keeps the buffer's memory alive.
 */
NPVK_API npvk_status npvk_view_create(npvk_buffer buf, uint64_t offset, npvk_dtype dtype,
                                      uint32_t ndim, const int64_t *shape, const int64_t *strides,
                                      npvk_view *out);
/* A 0-d view holding `value` (itemsize bytes of `dtype`) itself, not in a
 * buffer. As an input it broadcasts like a NumPy scalar and costs no memory
 * traffic. It cannot be an output. */
NPVK_API npvk_status npvk_view_create_scalar(npvk_context ctx, npvk_dtype dtype, const void *value,
                                             npvk_view *out);
NPVK_API npvk_status npvk_view_release(npvk_view view);

/* ---- operations -------------------------------------------------------- */

typedef struct npvk_op_info {
  uint32_t struct_size; /* sizeof(npvk_op_info) */
  uint32_t nin;
  uint32_t nout;
  uint32_t implemented; /* 0: recording it returns NPVK_ERR_UNSUPPORTED */
  const char *name;     /* NumPy's name: "add", "true_divide", "where", "cast" */
} npvk_op_info;

NPVK_API npvk_status npvk_op_get_info(npvk_op op, npvk_op_info *out);
/* 1 in `out` when npvk has a device loop of `op` for these dtypes on this
 * context's device, 0 otherwise. `dtypes` lists the inputs, then the outputs. */
NPVK_API npvk_status npvk_op_supported(npvk_context ctx, npvk_op op, const npvk_dtype *dtypes,
                                       uint32_t count, int *out);
/* 1 in `out` when npvk has a loop of `op` for these dtypes on a device with
 * every capability it uses (shaderFloat64 for float64 and for float32
 * transcendentals), whatever the device at hand: with npvk_op_supported, it
 * tells a loop the device lacks a feature for from one npvk does not have. */
NPVK_API npvk_status npvk_op_has_loop(npvk_op op, const npvk_dtype *dtypes, uint32_t count,
                                      int *out);

/*
 * Record `op` on inputs and outputs. Inputs broadcast to the output shape as in
 * NumPy (aligned at the last dimension; size-1 and missing dimensions repeat);
 * all outputs have the same shape. Dtypes must form one of the op's loops,
 * exactly (no implicit casts: use NPVK_OP_CAST). An output may alias an input
 * exactly (in place) but must not otherwise overlap one.
 */
NPVK_API npvk_status npvk_apply(npvk_context ctx, npvk_op op, uint32_t nin, const npvk_view *inputs,
                                uint32_t nout, const npvk_view *outputs);
/* Shorthands of npvk_apply. */
NPVK_API npvk_status npvk_unary(npvk_context ctx, npvk_op op, npvk_view a, npvk_view out);
NPVK_API npvk_status npvk_binary(npvk_context ctx, npvk_op op, npvk_view a, npvk_view b,
                                 npvk_view out);

/*
 * Reduce `in` along the `naxes` axes listed in `axes` with a binary op, as
 * NumPy's ufunc.reduce does: add, multiply, maximum, minimum, fmax, fmin,
 * logical_and, logical_or, logical_xor, bitwise_and, bitwise_or, bitwise_xor.
 * `out` has in's rank, extent 1 on each reduced axis and in's extent on the
 * others (NumPy's keepdims=True layout; any strides). The op must have a
 * (T, T) -> T loop for out's dtype T; each input element is cast to T first,
 * like reduce(..., dtype=T). `initial` (a scalar view of dtype T, or a zero
 * handle for none) is combined into every result, which it also is when no
 * element is reduced; without it a zero-size reduction takes the op's
 * identity, and is NPVK_ERR_INVALID_ARGUMENT for ops without one (maximum).
 * Integer results are exact. Float sums add in NumPy's order where NumPy's
 * loops make it plain, and give NumPy's bits there: a contiguous innermost
 * reduced run is summed by NumPy's pairwise_sum (whole here: NumPy 2.3 and
 * later without a cast; see npvk_reduce_blocked for blocks), and a reduction
 * whose innermost axis is kept adds the elements one by one in index order.
 * Other float sums are compensated, at least as accurate as NumPy's
 * (docs/accuracy.md). Float products are evaluated in a different order than
 * NumPy's. `out` must not overlap `in`.
 */
NPVK_API npvk_status npvk_reduce(npvk_context ctx, npvk_op op, npvk_view in, uint32_t naxes,
                                 const uint32_t *axes, npvk_view initial, npvk_view out);

/*
 * npvk_reduce, with a float sum's pairwise sums taken over blocks of
 * `sum_block` elements of each result's run, added in order to `initial`:
 * NumPy's order when its iterator hands the loop buffers of that size (NumPy
 * before 2.3, and every NumPy when the reduction casts; np.getbufsize() is
 * 8192 by default). 0: one pairwise sum over the whole run (npvk_reduce).
 */
NPVK_API npvk_status npvk_reduce_blocked(npvk_context ctx, npvk_op op, npvk_view in, uint32_t naxes,
                                         const uint32_t *axes, npvk_view initial, npvk_view out,
                                         int64_t sum_block);

/*
 * Accumulate `in` along `axis` with a binary op into `out`, as NumPy's
 * ufunc.accumulate does: out[..., 0, ...] = in[..., 0, ...] and each later
 * element combines the previous result with the next input. The ops and
 * dtypes are those of npvk_reduce; `out` has in's shape (any strides) and
 * may be `in` itself (same view) but must not otherwise overlap it. Each line
 * is scanned in order, so every result, float ones included, equals NumPy's.
 */
NPVK_API npvk_status npvk_accumulate(npvk_context ctx, npvk_op op, npvk_view in, uint32_t axis,
                                     npvk_view out);

/*
 * C = A @ B, as np.matmul: A is (..., m, k), B (..., k, n), C (..., m, n),
 * each of rank 2 or more (give a vector a size-1 dimension); A's and B's
 * batch dimensions broadcast to C's (aligned at the last). One dtype for all
 * three: int8-uint64, float32 or float64. Each element of C is a sum over k
 * in order (integers wrap, exactly as NumPy's); float results differ from a
 * BLAS's in rounding (within 2 k eps sum|a||b|). C must not overlap A or B.
 */
NPVK_API npvk_status npvk_matmul(npvk_context ctx, npvk_view a, npvk_view b, npvk_view c);

#ifdef __cplusplus
}
#endif

#endif /* NPVK_NPVK_OPS_H */
