/*
 * npvk_types.h - the basic types of npvk's C ABI: export and enum macros,
 * the ABI version, statuses, dtypes, opcodes and handles.
 * Part of npvk.h, which includes every part: include <npvk/npvk.h>.
 */
#ifndef NPVK_NPVK_TYPES_H
#define NPVK_NPVK_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define NPVK_API __declspec(dllexport)
#else
#define NPVK_API __attribute__((visibility("default")))
#endif

/* The enums that callers pass in are int-sized in C; in C++ they get int as
 * their fixed underlying type, so that any value a C caller passes (a bad
 * dtype, an unknown op) is a valid value to check rather than undefined
 * behaviour. The layout is the same either way. */
#if defined(__cplusplus)
#define NPVK_ENUM_INT : int
#else
#define NPVK_ENUM_INT
#endif

/* Bumped only on an incompatible change; additions keep the version. */
#define NPVK_ABI_VERSION 1
/* The largest rank a view may have (NumPy 1.x's NPY_MAXDIMS). */
#define NPVK_MAX_DIMS 32

typedef enum npvk_status NPVK_ENUM_INT {
  NPVK_SUCCESS = 0,
  NPVK_ERR_INVALID_ARGUMENT = 1, /* a null pointer, a bad flag, an unaligned view */
  NPVK_ERR_INVALID_HANDLE = 2,   /* released, unknown or wrong kind of handle */
  NPVK_ERR_BAD_DTYPE = 3,        /* not a dtype, or no loop of the op for these dtypes */
  NPVK_ERR_SHAPE_MISMATCH = 4,   /* operands do not broadcast to the output shape */
  NPVK_ERR_OUT_OF_BOUNDS = 5,    /* a view reaches outside its buffer */
  NPVK_ERR_UNSUPPORTED = 6,      /* declared but not implemented, or the device lacks it */
  NPVK_ERR_NO_DEVICE = 7,        /* no Vulkan driver, or no device matches NPVK_DEVICE */
  NPVK_ERR_OUT_OF_HOST_MEMORY = 8,
  NPVK_ERR_OUT_OF_DEVICE_MEMORY = 9,
  NPVK_ERR_DEVICE_LOST = 10, /* the context is unusable; release it and create another */
  NPVK_ERR_COMPILE = 11,     /* a kernel failed to compile (a bug in npvk: please report) */
  NPVK_ERR_VULKAN = 12,      /* another Vulkan failure; the message names the call */
  NPVK_ERR_INTERNAL = 13     /* a bug in npvk; the message says where */
} npvk_status;

typedef enum npvk_dtype NPVK_ENUM_INT {
  NPVK_BOOL = 0, /* one byte, 0 or 1, like NumPy's bool_ */
  NPVK_INT8 = 1,
  NPVK_INT16 = 2,
  NPVK_INT32 = 3,
  NPVK_INT64 = 4,
  NPVK_UINT8 = 5,
  NPVK_UINT16 = 6,
  NPVK_UINT32 = 7,
  NPVK_UINT64 = 8,
  NPVK_FLOAT16 = 9, /* elementwise ops and casts; reductions, scans and matmul are unsupported */
  NPVK_FLOAT32 = 10,
  NPVK_FLOAT64 = 11,
  NPVK_DTYPE_COUNT = 12
} npvk_dtype;

/*
 * One opcode per NumPy elementwise ufunc, plus WHERE (np.where) and CAST
 * (astype with casting='unsafe', C conversion rules). Values are stable.
 * npvk_op_info() tells the arity; npvk_op_supported() whether a loop exists.
 */
typedef enum npvk_op NPVK_ENUM_INT {
  /* arithmetic */
  NPVK_OP_ADD = 0,
  NPVK_OP_SUBTRACT = 1,
  NPVK_OP_MULTIPLY = 2,
  NPVK_OP_TRUE_DIVIDE = 3,
  NPVK_OP_FLOOR_DIVIDE = 4,
  NPVK_OP_REMAINDER = 5,
  NPVK_OP_FMOD = 6,
  NPVK_OP_DIVMOD = 7, /* two outputs */
  NPVK_OP_NEGATIVE = 8,
  NPVK_OP_POSITIVE = 9,
  NPVK_OP_ABSOLUTE = 10,
  NPVK_OP_FABS = 11,
  NPVK_OP_SIGN = 12,
  NPVK_OP_HEAVISIDE = 13,
  NPVK_OP_RECIPROCAL = 14,
  NPVK_OP_SQUARE = 15,
  NPVK_OP_SQRT = 16,
  NPVK_OP_CBRT = 17,
  NPVK_OP_POWER = 18,
  NPVK_OP_FLOAT_POWER = 19,
  NPVK_OP_CONJUGATE = 20,
  /* exponentials and logarithms */
  NPVK_OP_EXP = 21,
  NPVK_OP_EXP2 = 22,
  NPVK_OP_EXPM1 = 23,
  NPVK_OP_LOG = 24,
  NPVK_OP_LOG2 = 25,
  NPVK_OP_LOG10 = 26,
  NPVK_OP_LOG1P = 27,
  NPVK_OP_LOGADDEXP = 28,
  NPVK_OP_LOGADDEXP2 = 29,
  /* trigonometric and hyperbolic */
  NPVK_OP_SIN = 30,
  NPVK_OP_COS = 31,
  NPVK_OP_TAN = 32,
  NPVK_OP_ARCSIN = 33,
  NPVK_OP_ARCCOS = 34,
  NPVK_OP_ARCTAN = 35,
  NPVK_OP_ARCTAN2 = 36,
  NPVK_OP_HYPOT = 37,
  NPVK_OP_SINH = 38,
  NPVK_OP_COSH = 39,
  NPVK_OP_TANH = 40,
  NPVK_OP_ARCSINH = 41,
  NPVK_OP_ARCCOSH = 42,
  NPVK_OP_ARCTANH = 43,
  NPVK_OP_DEG2RAD = 44,
  NPVK_OP_RAD2DEG = 45,
  /* rounding and floating-point functions */
  NPVK_OP_RINT = 46,
  NPVK_OP_FLOOR = 47,
  NPVK_OP_CEIL = 48,
  NPVK_OP_TRUNC = 49,
  NPVK_OP_COPYSIGN = 50,
  NPVK_OP_NEXTAFTER = 51,
  NPVK_OP_SPACING = 52,
  NPVK_OP_LDEXP = 53,
  NPVK_OP_FREXP = 54, /* two outputs */
  NPVK_OP_MODF = 55,  /* two outputs */
  NPVK_OP_ISNAN = 56,
  NPVK_OP_ISINF = 57,
  NPVK_OP_ISFINITE = 58,
  NPVK_OP_SIGNBIT = 59,
  /* integer functions */
  NPVK_OP_GCD = 60,
  NPVK_OP_LCM = 61,
  NPVK_OP_LEFT_SHIFT = 62,
  NPVK_OP_RIGHT_SHIFT = 63,
  NPVK_OP_BITWISE_AND = 64,
  NPVK_OP_BITWISE_OR = 65,
  NPVK_OP_BITWISE_XOR = 66,
  NPVK_OP_INVERT = 67,
  /* logical */
  NPVK_OP_LOGICAL_AND = 68,
  NPVK_OP_LOGICAL_OR = 69,
  NPVK_OP_LOGICAL_XOR = 70,
  NPVK_OP_LOGICAL_NOT = 71,
  /* comparison */
  NPVK_OP_EQUAL = 72,
  NPVK_OP_NOT_EQUAL = 73,
  NPVK_OP_LESS = 74,
  NPVK_OP_LESS_EQUAL = 75,
  NPVK_OP_GREATER = 76,
  NPVK_OP_GREATER_EQUAL = 77,
  NPVK_OP_MAXIMUM = 78,
  NPVK_OP_MINIMUM = 79,
  NPVK_OP_FMAX = 80,
  NPVK_OP_FMIN = 81,
  NPVK_OP_CLIP = 82, /* three inputs: x, lo, hi */
  /* not ufuncs */
  NPVK_OP_WHERE = 83, /* three inputs: condition (bool), x, y */
  NPVK_OP_CAST = 84,  /* one input of any dtype; output of any dtype */
  NPVK_OP_COUNT = 85
} npvk_op;

/* Opaque handles. Zero is never a valid handle. */
typedef struct npvk_context {
  uint64_t id;
} npvk_context;
typedef struct npvk_buffer {
  uint64_t id;
} npvk_buffer;
typedef struct npvk_view {
  uint64_t id;
} npvk_view;

#ifdef __cplusplus
}
#endif

#endif /* NPVK_NPVK_TYPES_H */
