#include "op_table.hpp"

#include <algorithm>

#include "dtypes.hpp"

namespace npvk_test {
namespace {

using Dtypes = std::vector<npvk_dtype>;

Dtypes Join(std::initializer_list<Dtypes> parts) {
  Dtypes out;
  for (const Dtypes &p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// NumPy's "TT->T" (or "T->T") loops.
void Same(std::vector<Loop> &out, npvk_op op, uint32_t nin, const Dtypes &types) {
  for (npvk_dtype t : types) out.push_back({op, nin, Dtypes(nin + 1, t)});
}

// "TT->?" and "T->?".
void ToBool(std::vector<Loop> &out, npvk_op op, uint32_t nin, const Dtypes &types) {
  for (npvk_dtype t : types) {
    Dtypes d(nin, t);
    d.push_back(NPVK_BOOL);
    out.push_back({op, nin, d});
  }
}

std::vector<Loop> BuildTable() {
  // The table's dtype letters. Locals, not namespace-scope constants: the table may be built
  // while other translation units are still being initialised.
  const Dtypes ints = {NPVK_INT8, NPVK_INT16, NPVK_INT32, NPVK_INT64};
  const Dtypes uints = {NPVK_UINT8, NPVK_UINT16, NPVK_UINT32, NPVK_UINT64};
  const Dtypes floats = {NPVK_FLOAT32, NPVK_FLOAT64};
  const Dtypes all = Join({{NPVK_BOOL}, ints, uints, floats});  // "all": ? i u f
  const Dtypes iuf = Join({ints, uints, floats});               // i u f
  const Dtypes biu = Join({{NPVK_BOOL}, ints, uints});          // ? i u
  const Dtypes iu = Join({ints, uints});                        // i u

  std::vector<Loop> t;
  Same(t, NPVK_OP_ADD, 2, all);
  Same(t, NPVK_OP_SUBTRACT, 2, iuf);
  Same(t, NPVK_OP_MULTIPLY, 2, all);
  Same(t, NPVK_OP_TRUE_DIVIDE, 2, floats);
  for (npvk_dtype d : iu) t.push_back({NPVK_OP_TRUE_DIVIDE, 2, {d, d, NPVK_FLOAT64}});
  Same(t, NPVK_OP_FLOOR_DIVIDE, 2, iuf);
  Same(t, NPVK_OP_REMAINDER, 2, iuf);
  Same(t, NPVK_OP_FMOD, 2, iuf);
  for (npvk_dtype d : iuf) t.push_back({NPVK_OP_DIVMOD, 2, {d, d, d, d}});
  for (npvk_dtype d : floats) {
    t.push_back({NPVK_OP_MODF, 1, {d, d, d}});
    t.push_back({NPVK_OP_FREXP, 1, {d, d, NPVK_INT32}});
  }
  Same(t, NPVK_OP_NEGATIVE, 1, iuf);
  Same(t, NPVK_OP_POSITIVE, 1, iuf);
  Same(t, NPVK_OP_ABSOLUTE, 1, all);
  Same(t, NPVK_OP_FABS, 1, floats);
  Same(t, NPVK_OP_SQUARE, 1, iuf);
  Same(t, NPVK_OP_SQRT, 1, floats);
  Same(t, NPVK_OP_EXP, 1, floats);
  Same(t, NPVK_OP_LOG, 1, floats);
  Same(t, NPVK_OP_POWER, 2, iuf);
  Same(t, NPVK_OP_SIGN, 1, iuf);
  Same(t, NPVK_OP_CONJUGATE, 1, iuf);
  Same(t, NPVK_OP_RECIPROCAL, 1, iuf);
  Same(t, NPVK_OP_HEAVISIDE, 2, floats);
  Same(t, NPVK_OP_FLOAT_POWER, 2, floats);
  for (npvk_op op : {NPVK_OP_DEG2RAD, NPVK_OP_RAD2DEG, NPVK_OP_SPACING}) Same(t, op, 1, floats);
  Same(t, NPVK_OP_NEXTAFTER, 2, floats);
  for (npvk_op op : {NPVK_OP_CBRT, NPVK_OP_EXP2, NPVK_OP_EXPM1, NPVK_OP_LOG2, NPVK_OP_LOG10,
                     NPVK_OP_LOG1P, NPVK_OP_SIN, NPVK_OP_COS, NPVK_OP_TAN, NPVK_OP_ARCSIN,
                     NPVK_OP_ARCCOS, NPVK_OP_ARCTAN, NPVK_OP_SINH, NPVK_OP_COSH, NPVK_OP_TANH,
                     NPVK_OP_ARCSINH, NPVK_OP_ARCCOSH, NPVK_OP_ARCTANH}) {
    Same(t, op, 1, floats);
  }
  for (npvk_op op : {NPVK_OP_LOGADDEXP, NPVK_OP_LOGADDEXP2, NPVK_OP_ARCTAN2, NPVK_OP_HYPOT}) {
    Same(t, op, 2, floats);
  }
  t.push_back({NPVK_OP_LDEXP, 2, {NPVK_FLOAT32, NPVK_INT32, NPVK_FLOAT32}});
  t.push_back({NPVK_OP_LDEXP, 2, {NPVK_FLOAT32, NPVK_INT64, NPVK_FLOAT32}});
  t.push_back({NPVK_OP_LDEXP, 2, {NPVK_FLOAT64, NPVK_INT32, NPVK_FLOAT64}});
  t.push_back({NPVK_OP_LDEXP, 2, {NPVK_FLOAT64, NPVK_INT64, NPVK_FLOAT64}});
  Same(t, NPVK_OP_GCD, 2, iu);
  Same(t, NPVK_OP_LCM, 2, iu);
  for (npvk_op op : {NPVK_OP_MAXIMUM, NPVK_OP_MINIMUM, NPVK_OP_FMAX, NPVK_OP_FMIN}) {
    Same(t, op, 2, all);
  }
  Same(t, NPVK_OP_CLIP, 3, all);
  for (npvk_op op :
       {NPVK_OP_EQUAL, NPVK_OP_NOT_EQUAL, NPVK_OP_LESS, NPVK_OP_LESS_EQUAL, NPVK_OP_GREATER,
        NPVK_OP_GREATER_EQUAL, NPVK_OP_LOGICAL_AND, NPVK_OP_LOGICAL_OR, NPVK_OP_LOGICAL_XOR}) {
    ToBool(t, op, 2, all);
  }
  // NumPy 2's int64-with-uint64 comparisons (qQ->?, Qq->?).
  for (npvk_op op : {NPVK_OP_EQUAL, NPVK_OP_NOT_EQUAL, NPVK_OP_LESS, NPVK_OP_LESS_EQUAL,
                     NPVK_OP_GREATER, NPVK_OP_GREATER_EQUAL}) {
    t.push_back({op, 2, {NPVK_INT64, NPVK_UINT64, NPVK_BOOL}});
    t.push_back({op, 2, {NPVK_UINT64, NPVK_INT64, NPVK_BOOL}});
  }
  ToBool(t, NPVK_OP_LOGICAL_NOT, 1, all);
  for (npvk_op op : {NPVK_OP_BITWISE_AND, NPVK_OP_BITWISE_OR, NPVK_OP_BITWISE_XOR}) {
    Same(t, op, 2, biu);
  }
  Same(t, NPVK_OP_INVERT, 1, biu);
  Same(t, NPVK_OP_LEFT_SHIFT, 2, iu);
  Same(t, NPVK_OP_RIGHT_SHIFT, 2, iu);
  // NumPy 2 adds bool and integer floor, ceil and trunc (the input itself).
  for (npvk_op op : {NPVK_OP_FLOOR, NPVK_OP_CEIL, NPVK_OP_TRUNC}) Same(t, op, 1, all);
  Same(t, NPVK_OP_RINT, 1, floats);
  Same(t, NPVK_OP_COPYSIGN, 2, floats);
  for (npvk_op op : {NPVK_OP_ISNAN, NPVK_OP_ISINF, NPVK_OP_ISFINITE}) ToBool(t, op, 1, all);
  ToBool(t, NPVK_OP_SIGNBIT, 1, floats);
  for (npvk_dtype d : all) t.push_back({NPVK_OP_WHERE, 3, {NPVK_BOOL, d, d, d}});
  for (npvk_dtype from : all) {
    for (npvk_dtype to : all) t.push_back({NPVK_OP_CAST, 1, {from, to}});
  }
  return t;
}

const OpSignature kSignatures[NPVK_OP_COUNT] = {
    {"add", 2, 1},          {"subtract", 2, 1},      {"multiply", 2, 1},    {"true_divide", 2, 1},
    {"floor_divide", 2, 1}, {"remainder", 2, 1},     {"fmod", 2, 1},        {"divmod", 2, 2},
    {"negative", 1, 1},     {"positive", 1, 1},      {"absolute", 1, 1},    {"fabs", 1, 1},
    {"sign", 1, 1},         {"heaviside", 2, 1},     {"reciprocal", 1, 1},  {"square", 1, 1},
    {"sqrt", 1, 1},         {"cbrt", 1, 1},          {"power", 2, 1},       {"float_power", 2, 1},
    {"conjugate", 1, 1},    {"exp", 1, 1},           {"exp2", 1, 1},        {"expm1", 1, 1},
    {"log", 1, 1},          {"log2", 1, 1},          {"log10", 1, 1},       {"log1p", 1, 1},
    {"logaddexp", 2, 1},    {"logaddexp2", 2, 1},    {"sin", 1, 1},         {"cos", 1, 1},
    {"tan", 1, 1},          {"arcsin", 1, 1},        {"arccos", 1, 1},      {"arctan", 1, 1},
    {"arctan2", 2, 1},      {"hypot", 2, 1},         {"sinh", 1, 1},        {"cosh", 1, 1},
    {"tanh", 1, 1},         {"arcsinh", 1, 1},       {"arccosh", 1, 1},     {"arctanh", 1, 1},
    {"deg2rad", 1, 1},      {"rad2deg", 1, 1},       {"rint", 1, 1},        {"floor", 1, 1},
    {"ceil", 1, 1},         {"trunc", 1, 1},         {"copysign", 2, 1},    {"nextafter", 2, 1},
    {"spacing", 1, 1},      {"ldexp", 2, 1},         {"frexp", 1, 2},       {"modf", 1, 2},
    {"isnan", 1, 1},        {"isinf", 1, 1},         {"isfinite", 1, 1},    {"signbit", 1, 1},
    {"gcd", 2, 1},          {"lcm", 2, 1},           {"left_shift", 2, 1},  {"right_shift", 2, 1},
    {"bitwise_and", 2, 1},  {"bitwise_or", 2, 1},    {"bitwise_xor", 2, 1}, {"invert", 1, 1},
    {"logical_and", 2, 1},  {"logical_or", 2, 1},    {"logical_xor", 2, 1}, {"logical_not", 1, 1},
    {"equal", 2, 1},        {"not_equal", 2, 1},     {"less", 2, 1},        {"less_equal", 2, 1},
    {"greater", 2, 1},      {"greater_equal", 2, 1}, {"maximum", 2, 1},     {"minimum", 2, 1},
    {"fmax", 2, 1},         {"fmin", 2, 1},          {"clip", 3, 1},        {"where", 3, 1},
    {"cast", 1, 1},
};

}  // namespace

const OpSignature &Signature(npvk_op op) {
  return kSignatures[op];
}

const std::vector<Loop> &DocumentedLoops() {
  static const std::vector<Loop> kTable = BuildTable();
  return kTable;
}

const std::vector<Loop> &Float16Loops() {
  static const std::vector<Loop> kTable = [] {
    std::vector<Loop> t;
    for (const Loop &l : DocumentedLoops()) {
      if (l.op == NPVK_OP_FLOAT_POWER || l.op == NPVK_OP_CAST ||
          std::find(l.dtypes.begin(), l.dtypes.end(), NPVK_FLOAT32) == l.dtypes.end())
        continue;
      Loop h = l;
      std::replace(h.dtypes.begin(), h.dtypes.end(), NPVK_FLOAT32, NPVK_FLOAT16);
      t.push_back(h);
    }
    for (int d = 0; d < NPVK_DTYPE_COUNT; ++d) {
      const npvk_dtype other = static_cast<npvk_dtype>(d);
      t.push_back({NPVK_OP_CAST, 1, {NPVK_FLOAT16, other}});
      if (other != NPVK_FLOAT16) t.push_back({NPVK_OP_CAST, 1, {other, NPVK_FLOAT16}});
    }
    return t;
  }();
  return kTable;
}

std::vector<Loop> DocumentedLoops(npvk_op op) {
  std::vector<Loop> out;
  for (const Loop &l : DocumentedLoops()) {
    if (l.op == op) out.push_back(l);
  }
  return out;
}

bool IsDocumented(npvk_op op) {
  const std::vector<Loop> &t = DocumentedLoops();
  return std::any_of(t.begin(), t.end(), [op](const Loop &l) { return l.op == op; });
}

std::string LoopName(const Loop &loop) {
  std::string name = Signature(loop.op).name;
  if (loop.op == NPVK_OP_CAST) {
    return name + "_" + DtypeName(loop.dtypes[0]) + "_to_" + DtypeName(loop.dtypes[1]);
  }
  const npvk_dtype key = loop.op == NPVK_OP_WHERE ? loop.dtypes[1] : loop.dtypes[0];
  // ldexp's exponent, and the second input where the inputs differ (qQ->?).
  if (loop.op == NPVK_OP_LDEXP || (loop.op != NPVK_OP_WHERE && Signature(loop.op).nin == 2 &&
                                   loop.dtypes[1] != loop.dtypes[0]))
    return name + "_" + DtypeName(key) + "_" + DtypeName(loop.dtypes[1]);
  return name + "_" + DtypeName(key);
}

}  // namespace npvk_test
