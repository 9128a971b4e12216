// glsl_compat.hpp -- just enough GLSL for C++ to compile shaders/math_f64.glsl
// unchanged (host-side checker only; never used by the runtime).
//
// Build with: g++ -std=c++20 -O2 -ffp-contract=off -Wno-literal-suffix
//   * -std=c++20: parenthesised aggregate init (GLSL struct constructors) and
//     well-defined two's-complement conversions/shifts.
//   * -ffp-contract=off: like GLSL `precise`, no a*b+c -> fma contraction.
//   * -Wno-literal-suffix: the GLSL double-literal suffix LF is provided as a
//     literal operator below (suffixes without '_' are "reserved").
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sys/types.h>

// NPVK_F64_TAB(i) reads npvk::math_f64_table_data() (shaders/math_f64_tables.cpp,
// linked in; build with -I<repo root>): the same data the runtime uploads.
#include "compile/math_tables.hpp"

// GLSL `precise` == NoContraction; the host build gets that from
// -ffp-contract=off (and no -ffast-math).
#define precise

typedef uint32_t uint;

// 1.5LF: GLSL double literal. Literals in math_f64.glsl carry >= 21
// significant digits (or are short exact values), so going through long
// double cannot double-round.
constexpr double operator""LF(long double v) { return static_cast<double>(v); }

inline int64_t doubleBitsToInt64(double x) { int64_t r; std::memcpy(&r, &x, 8); return r; }
inline uint64_t doubleBitsToUint64(double x) { uint64_t r; std::memcpy(&r, &x, 8); return r; }
inline double int64BitsToDouble(int64_t x) { double r; std::memcpy(&r, &x, 8); return r; }
inline double uint64BitsToDouble(uint64_t x) { double r; std::memcpy(&r, &x, 8); return r; }
inline uint floatBitsToUint(float x) { uint r; std::memcpy(&r, &x, 4); return r; }
inline float uintBitsToFloat(uint x) { float r; std::memcpy(&r, &x, 4); return r; }

inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline int clamp(int x, int lo, int hi) { return x < lo ? lo : (x > hi ? hi : x); }
// fma(): ::fma from <math.h> (correctly rounded, like GLSL fma on real hardware).
inline int findLSB(uint v) { return v ? __builtin_ctz(v) : -1; }
inline int findMSB(uint v) { return v ? 31 - __builtin_clz(v) : -1; }
inline uint64_t min(uint64_t a, uint64_t b) { return a < b ? a : b; }
inline uint64_t max(uint64_t a, uint64_t b) { return a > b ? a : b; }
// GLSL max/min on doubles (the callers handle NaN first).
inline double min(double a, double b) { return a < b ? a : b; }
inline double max(double a, double b) { return a > b ? a : b; }
