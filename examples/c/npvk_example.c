/*
 * npvk_example.c: a damped square root over 1000 points through npvk's C ABI.
 *
 *   y = a*x + b
 *   f = where(y > 0, sqrt(max(y, 0)) * exp(-k*x), 0)
 *
 * i.e. NumPy's
 *   y = a * x + b
 *   f = np.where(y > 0, np.sqrt(np.maximum(y, 0)) * np.exp(-k * x), 0.0)
 *
 * The result is checked against a plain C loop. Exit status: 0 on success, 1 on
 * an npvk error, a mismatch or a Vulkan validation message, 77 when the device
 * cannot run float64 (the code CTest reads as "skipped").
 *
 * Build: cc npvk_example.c $(pkg-config --cflags --libs npvk) -lm
 */
#include <math.h>
#include <npvk/npvk.h>
#include <stdio.h>
#include <stdlib.h>

enum { kN = 1000, kSkip = 77 };

static const double kA = 2.0, kB = 1.0, kK = 0.25;

/* Every npvk call returns a status; on failure the message says what went wrong. */
#define CHECK(call)                                                          \
  do {                                                                       \
    npvk_status check_status_ = (call);                                      \
    if (check_status_ != NPVK_SUCCESS) {                                     \
      fprintf(stderr, "npvk_example: %s failed: %s: %s\n", #call,            \
              npvk_status_string(check_status_), npvk_last_error_message()); \
      goto done;                                                             \
    }                                                                        \
  } while (0)

static double reference(double x) {
  double y = kA * x + kB;
  return y > 0.0 ? sqrt(fmax(y, 0.0)) * exp(-kK * x) : 0.0;
}

int main(void) {
  int rc = 1;
  npvk_context ctx = {0};
  static double x[kN], f[kN];
  for (int i = 0; i < kN; ++i) x[i] = -5.0 + 10.0 * i / (kN - 1);

  /* NULL options: the device comes from NPVK_DEVICE or npvk's default choice,
   * and validation from NPVK_VALIDATION. */
  CHECK(npvk_context_create(NULL, &ctx));

  npvk_device_info device = {.struct_size = sizeof(npvk_device_info)};
  CHECK(npvk_context_device_info(ctx, &device));
  /* Some GPUs have no float64 at all; ask instead of failing in npvk_apply. */
  npvk_dtype sqrt_f64[] = {NPVK_FLOAT64, NPVK_FLOAT64};
  int have_f64 = 0;
  CHECK(npvk_op_supported(ctx, NPVK_OP_SQRT, sqrt_f64, 2, &have_f64));
  if (!have_f64) {
    printf("npvk_example: skipped: %s has no float64\n", device.name);
    rc = kSkip;
    goto done;
  }

  const uint64_t bytes = sizeof(x);
  const int64_t shape[] = {kN};
  npvk_buffer xb, yb, eb, mb;
  CHECK(npvk_buffer_create(ctx, bytes, &xb));
  CHECK(npvk_buffer_create(ctx, bytes, &yb));
  CHECK(npvk_buffer_create(ctx, bytes, &eb));
  CHECK(npvk_buffer_create(ctx, kN, &mb)); /* bool is one byte */
  CHECK(npvk_buffer_write(xb, 0, x, bytes));

  npvk_view xv, yv, ev, mv, a, b, minus_k, zero;
  CHECK(npvk_view_create(xb, 0, NPVK_FLOAT64, 1, shape, NULL, &xv));
  CHECK(npvk_view_create(yb, 0, NPVK_FLOAT64, 1, shape, NULL, &yv));
  CHECK(npvk_view_create(eb, 0, NPVK_FLOAT64, 1, shape, NULL, &ev));
  CHECK(npvk_view_create(mb, 0, NPVK_BOOL, 1, shape, NULL, &mv));
  /* Scalars broadcast like NumPy scalars and need no buffer. */
  const double minus_k_value = -kK, zero_value = 0.0;
  CHECK(npvk_view_create_scalar(ctx, NPVK_FLOAT64, &kA, &a));
  CHECK(npvk_view_create_scalar(ctx, NPVK_FLOAT64, &kB, &b));
  CHECK(npvk_view_create_scalar(ctx, NPVK_FLOAT64, &minus_k_value, &minus_k));
  CHECK(npvk_view_create_scalar(ctx, NPVK_FLOAT64, &zero_value, &zero));

  /* Recording is lazy: nothing runs on the device until npvk_buffer_read. In
   * place (an output that is exactly an input) saves buffers. */
  CHECK(npvk_binary(ctx, NPVK_OP_MULTIPLY, xv, a, yv));       /* y = a*x */
  CHECK(npvk_binary(ctx, NPVK_OP_ADD, yv, b, yv));            /* y += b */
  CHECK(npvk_binary(ctx, NPVK_OP_GREATER, yv, zero, mv));     /* m = y > 0 */
  CHECK(npvk_binary(ctx, NPVK_OP_MAXIMUM, yv, zero, yv));     /* y = max(y, 0) */
  CHECK(npvk_unary(ctx, NPVK_OP_SQRT, yv, yv));               /* y = sqrt(y) */
  CHECK(npvk_binary(ctx, NPVK_OP_MULTIPLY, xv, minus_k, ev)); /* e = -k*x */
  CHECK(npvk_unary(ctx, NPVK_OP_EXP, ev, ev));                /* e = exp(e) */
  CHECK(npvk_binary(ctx, NPVK_OP_MULTIPLY, yv, ev, yv));      /* y *= e */
  const npvk_view where_in[] = {mv, yv, zero};
  CHECK(npvk_apply(ctx, NPVK_OP_WHERE, 3, where_in, 1, &ev)); /* e = where(m, y, 0) */
  CHECK(npvk_buffer_read(eb, 0, f, bytes));

  /* exp is within 1 ULP of glibc's (docs/ops.md) and the compiler may fuse
   * a*x + b, so compare with a tolerance instead of bit for bit. */
  double max_error = 0.0, sum = 0.0;
  int bad = 0;
  for (int i = 0; i < kN; ++i) {
    double want = reference(x[i]);
    double error = fabs(f[i] - want);
    if (!(error <= 1e-13 * fmax(1.0, fabs(want)))) {
      if (bad++ < 5)
        fprintf(stderr, "mismatch at x=%.17g: npvk %.17g, C %.17g\n", x[i], f[i], want);
    }
    if (error > max_error) max_error = error;
    sum += f[i];
  }

  npvk_stats stats = {.struct_size = sizeof(npvk_stats)};
  CHECK(npvk_context_get_stats(ctx, &stats));
  printf("npvk_example: %d points on %s: sum %.12f, max |error| %.3g, %llu dispatches, %s\n", kN,
         device.name, sum, max_error, (unsigned long long)stats.dispatches,
         bad ? "MISMATCH" : "ok");
  if (stats.validation_messages != 0) {
    fprintf(stderr, "npvk_example: %llu Vulkan validation messages\n",
            (unsigned long long)stats.validation_messages);
    goto done;
  }
  if (bad) {
    fprintf(stderr, "npvk_example: %d of %d points differ from the C loop\n", bad, kN);
    goto done;
  }
  rc = 0;

done:
  /* Releasing the context releases its buffers and views too. */
  if (ctx.id != 0 && npvk_context_release(ctx) != NPVK_SUCCESS) {
    fprintf(stderr, "npvk_example: npvk_context_release: %s\n", npvk_last_error_message());
    rc = 1;
  }
  return rc;
}
