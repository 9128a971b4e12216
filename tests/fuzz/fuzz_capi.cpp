// libFuzzer target: the C ABI driven by a byte-coded program. Each input is
// a sequence of calls (create buffers, wrap host memory, make views with
// random shapes, strides, offsets and dtypes, apply random ops, sync, read,
// write, release) on handles that may be live, released, of the wrong kind
// or forged. npvk must answer every call with a status, never crash, never
// touch memory outside what it was given (ASan), and leave the context
// usable: the input's last step syncs and must succeed.
//
// One context serves every input (creating one costs a Vulkan instance);
// ops and dtypes come from small sets so that the kernels to compile stay
// few and the disk cache makes later runs fast.
#include <npvk/npvk.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

struct Reader {
  const uint8_t *p;
  size_t n;
  bool empty() const { return n == 0; }
  uint8_t u8() {
    if (!n) return 0;
    --n;
    return *p++;
  }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | u8();
    return v;
  }
};

npvk_context g_ctx{0};

npvk_context context() {
  if (!g_ctx.id) {
    npvk_context_options o{};
    o.struct_size = sizeof o;
    if (npvk_context_create(&o, &g_ctx) != NPVK_SUCCESS) {
      std::fprintf(stderr, "fuzz_capi: no context: %s\n", npvk_last_error_message());
      std::abort();
    }
  }
  return g_ctx;
}

const npvk_dtype kDtypes[] = {NPVK_BOOL,    NPVK_INT32,     NPVK_UINT8,
                              NPVK_INT64,   NPVK_FLOAT32,   NPVK_FLOAT64,
                              NPVK_FLOAT16, npvk_dtype(12), npvk_dtype(-1)};
const npvk_op kOps[] = {
    NPVK_OP_ADD,          NPVK_OP_MULTIPLY,       NPVK_OP_NEGATIVE, NPVK_OP_SQRT,
    NPVK_OP_LESS,         NPVK_OP_WHERE,          NPVK_OP_CAST,     NPVK_OP_DIVMOD,
    NPVK_OP_FLOOR_DIVIDE, npvk_op(NPVK_OP_COUNT), npvk_op(1000)};

uint32_t itemsize(npvk_dtype d) {
  uint32_t size = 1;
  npvk_dtype_info(d, nullptr, &size);
  return size;
}

struct Program {
  Reader in;
  std::vector<npvk_buffer> buffers;  // live and released alike
  std::vector<npvk_view> views;
  std::vector<void *> host_memory;  // wrapped: must outlive its buffers

  template <typename H>
  H pick(const std::vector<H> &pool) {
    uint8_t b = in.u8();
    if (b == 255) return H{in.u64()};  // forged
    if (b == 254) return H{0};
    if (pool.empty()) return H{uint64_t(b)};
    return pool[b % pool.size()];
  }
  npvk_dtype dtype() { return kDtypes[in.u8() % (sizeof kDtypes / sizeof kDtypes[0])]; }
  npvk_view any_view() {
    // A buffer handle passed as a view is the wrong kind.
    if (in.u8() == 253 && !buffers.empty()) return npvk_view{buffers[0].id};
    return pick(views);
  }

  void create_buffer() {
    npvk_buffer b{};
    uint64_t size = uint64_t(in.u8()) * 8;
    if (in.u8() == 0) size = in.u64();  // absurd sizes must fail cleanly
    if (npvk_buffer_create(context(), size, &b) == NPVK_SUCCESS) buffers.push_back(b);
  }
  void wrap_host() {
    const size_t pages = 1 + in.u8() % 2;
    void *mem = std::aligned_alloc(4096, pages * 4096);
    if (!mem) return;
    std::memset(mem, 0, pages * 4096);
    host_memory.push_back(mem);
    // Sometimes an unaligned start or size: then npvk mirrors instead of importing.
    uint64_t skew = in.u8() % 3 == 0 ? 8 : 0;
    npvk_buffer b{};
    if (npvk_buffer_wrap_host(context(), static_cast<char *>(mem) + skew, pages * 4096 - skew,
                              &b) == NPVK_SUCCESS)
      buffers.push_back(b);
  }
  void create_view() {
    npvk_buffer b = pick(buffers);
    npvk_dtype d = dtype();
    const int64_t item = itemsize(d);
    uint32_t ndim = in.u8() % 5;
    if (ndim == 4 && in.u8() == 0) ndim = NPVK_MAX_DIMS + 1;
    int64_t shape[NPVK_MAX_DIMS + 1], strides[NPVK_MAX_DIMS + 1];
    for (uint32_t k = 0; k < ndim; ++k) {
      shape[k] = int64_t(in.u8() % 10) - 1;  // -1 must be refused
      if (k >= 4) shape[k] = 1;
      uint8_t s = in.u8();
      strides[k] = (s & 1) ? int64_t(int8_t(s)) : int64_t(int8_t(s)) / 2 * item;
    }
    uint64_t offset = uint64_t(in.u8()) * ((in.u8() & 1) ? 1 : item);
    if (in.u8() == 0) offset = in.u64();
    const bool contiguous = in.u8() & 1;
    npvk_view v{};
    if (npvk_view_create(b, offset, d, ndim, ndim ? shape : nullptr,
                         contiguous || !ndim ? nullptr : strides, &v) == NPVK_SUCCESS)
      views.push_back(v);
  }
  void create_scalar() {
    uint64_t value = in.u64();
    npvk_view v{};
    if (npvk_view_create_scalar(context(), dtype(), &value, &v) == NPVK_SUCCESS) views.push_back(v);
  }
  void apply() {
    npvk_op op = kOps[in.u8() % (sizeof kOps / sizeof kOps[0])];
    npvk_op_info info{};
    info.struct_size = sizeof info;
    uint32_t nin = 1, nout = 1;
    if (npvk_op_get_info(op, &info) == NPVK_SUCCESS) {
      nin = info.nin;
      nout = info.nout;
    }
    if (in.u8() == 0) {  // wrong arity
      nin = in.u8() % 5;
      nout = in.u8() % 3;
    }
    npvk_view operands[8];
    for (uint32_t k = 0; k < nin + nout; ++k) operands[k] = any_view();
    npvk_apply(context(), op, nin, nin ? operands : nullptr, nout, nout ? operands + nin : nullptr);
  }
  void read_or_write(bool write) {
    npvk_buffer b = pick(buffers);
    uint8_t host[512];
    std::memset(host, in.u8(), sizeof host);
    uint64_t offset = uint64_t(in.u8()) * 4;
    uint64_t size = in.u8() % (sizeof host + 1);
    if (in.u8() == 0) offset = in.u64();
    if (write)
      npvk_buffer_write(b, offset, host, size);
    else
      npvk_buffer_read(b, offset, host, size);
  }
  void query() {
    npvk_buffer b = pick(buffers);
    uint64_t size = 0;
    int zero_copy = 0;
    switch (in.u8() % 4) {
      case 0:
        npvk_buffer_size(b, &size);
        break;
      case 1:
        npvk_buffer_is_zero_copy(b, &zero_copy);
        break;
      case 2:
        npvk_buffer_sync(b);
        break;
      case 3:
        npvk_buffer_host_modified(b);
        break;
    }
  }
  void release() {
    if (in.u8() & 1)
      npvk_view_release(any_view());
    else
      npvk_buffer_release(pick(buffers));
  }

  void run() {
    for (int step = 0; step < 48 && !in.empty(); ++step) {
      switch (in.u8() % 11) {
        case 0:
          create_buffer();
          break;
        case 1:
          wrap_host();
          break;
        case 2:
        case 3:
          create_view();
          break;
        case 4:
          create_scalar();
          break;
        case 5:
        case 6:
          apply();
          break;
        case 7:
          npvk_sync(context());
          break;
        case 8:
          read_or_write(in.u8() & 1);
          break;
        case 9:
          query();
          break;
        case 10:
          release();
          break;
      }
    }
    // Nothing may leak into the next input: release everything (twice is
    // fine, it is a status), then the queued work must run.
    for (npvk_view v : views) npvk_view_release(v);
    for (npvk_buffer b : buffers) npvk_buffer_release(b);
    if (npvk_sync(context()) != NPVK_SUCCESS) {
      std::fprintf(stderr, "fuzz_capi: the context is broken: %s\n", npvk_last_error_message());
      std::abort();
    }
    for (void *m : host_memory) std::free(m);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Program program{{data, size}, {}, {}, {}};
  program.run();
  return 0;
}
