// The dtype-level pieces of generated GLSL: embedded shader text, loads,
// stores and scalars, the shader templates a kernel includes, and the
// prologue every kernel starts with.
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "base/error.hpp"
#include "compile/dtype.hpp"
#include "compile/glsl_parts.hpp"
#include "compile/ops.hpp"

namespace npvk {

const char *embedded_shader(const char *name);  // generated from shaders/*.glsl

namespace glsl {

std::string shader_text(const char *name) {
  const char *text = embedded_shader(name);
  NPVK_REQUIRE(text != nullptr, NPVK_ERR_INTERNAL, std::string("missing embedded shader ") + name);
  return text;
}

// The compute type an op's loop works in, which is its first input's.
const DtypeInfo &loop_type(const KernelSpec &s) {
  return dtype_info(s.operands[0].dtype);
}

// The compute type of the op's result (the first output).
const DtypeInfo &result_type(const KernelSpec &s) {
  return dtype_info(s.operands[s.nin].dtype);
}

// A scalar slot's value from its 64 bits.
std::string scalar_load(const DtypeInfo &d, const std::string &bits) {
  switch (d.dtype) {
    case NPVK_BOOL:
      return "(" + bits + " != 0ul)";
    case NPVK_FLOAT16:
      return "npvk_half_to_float(uint(" + bits + "))";
    case NPVK_FLOAT32:
      return "uintBitsToFloat(uint(" + bits + "))";
    case NPVK_FLOAT64:
      return "uint64BitsToDouble(" + bits + ")";
    case NPVK_UINT64:
      return bits;
    default:
      return std::string(d.glsl_compute) + "(" + bits + ")";
  }
}

std::string vector_type(const DtypeInfo &d) {
  const std::string t = d.glsl_storage;
  if (t == "double") return "f64vec" + std::to_string(kVectorWidth);
  if (t == "float") return "vec" + std::to_string(kVectorWidth);
  if (t == "int") return "ivec" + std::to_string(kVectorWidth);
  if (t == "uint") return "uvec" + std::to_string(kVectorWidth);
  // int8_t -> i8vec4, uint64_t -> u64vec4, ...
  const bool is_unsigned = t[0] == 'u';
  const std::string bits = t.substr(is_unsigned ? 4 : 3, t.size() - (is_unsigned ? 6 : 5));
  return std::string(is_unsigned ? "u" : "i") + bits + "vec" + std::to_string(kVectorWidth);
}

std::string vector_ref(const DtypeInfo &d, const std::string &base, const std::string &offset) {
  return std::string("RefV_") + d.suffix + "(" + base + " + uint64_t(" + offset + ") * " +
         std::to_string(d.itemsize) + "ul).v";
}

std::string element_ref(const DtypeInfo &d, const std::string &base, const std::string &offset) {
  return std::string("Ref_") + d.suffix + "(" + base + " + uint64_t(" + offset + ") * " +
         std::to_string(d.itemsize) + "ul).v";
}

void emit_int_template(std::ostringstream &out, const char *type, bool is_signed, int bits) {
  out << "#define NPVK_T " << type << "\n#define NPVK_SIGNED " << (is_signed ? 1 : 0)
      << "\n#define NPVK_BITS " << bits << "\n"
      << shader_text("ops_int.glsl") << "\n#undef NPVK_T\n#undef NPVK_SIGNED\n#undef NPVK_BITS\n";
}

void emit_float_template(std::ostringstream &out, bool f64, bool divmod) {
  if (f64) {
    out << "#define NPVK_F double\n#define NPVK_U uint64_t\n"
           "#define NPVK_TO_BITS(x) doubleBitsToUint64(x)\n"
           "#define NPVK_FROM_BITS(x) uint64BitsToDouble(x)\n"
           "#define NPVK_SIGN_MASK 0x8000000000000000ul\n"
           "#define NPVK_EXP_MASK 0x7ff0000000000000ul\n"
           "#define NPVK_FMOD npvk_fmod_f64\n";
  } else {
    out << "#define NPVK_F float\n#define NPVK_U uint\n"
           "#define NPVK_TO_BITS(x) floatBitsToUint(x)\n"
           "#define NPVK_FROM_BITS(x) uintBitsToFloat(x)\n"
           "#define NPVK_SIGN_MASK 0x80000000u\n"
           "#define NPVK_EXP_MASK 0x7f800000u\n"
           "#define NPVK_FMOD npvk_fmod_f32\n";
  }
  out << shader_text("ops_float.glsl") << "\n";
  if (divmod) out << shader_text("ops_float_divmod.glsl") << "\n";
  out << "#undef NPVK_F\n#undef NPVK_U\n#undef NPVK_TO_BITS\n#undef NPVK_FROM_BITS\n"
         "#undef NPVK_SIGN_MASK\n#undef NPVK_EXP_MASK\n#undef NPVK_FMOD\n";
}

void Templates::add(const KernelSpec &op) {
  const DtypeInfo &loop = loop_type(op);
  math_f64 = math_f64 || uses_math_f64(op);
  for (uint32_t k = 0; k < op.count(); ++k)
    if (op.operands[k].dtype == NPVK_FLOAT16) {
      half = true;
      float_type[0] = true;  // the half helpers use the float32 ones
    }
  const OpInfo &row = op_info(op.op);
  if (row.gen == OpGen::Cast) {
    const npvk_dtype from = op.operands[0].dtype, to = op.operands[1].dtype;
    half_f64 = half_f64 || (from == NPVK_FLOAT64 && to == NPVK_FLOAT16) ||
               (from == NPVK_FLOAT16 && to == NPVK_FLOAT64);
  }
  if (loop.kind == DtypeKind::Float) {
    const int f64 = loop.dtype == NPVK_FLOAT64;
    float_type[f64] = true;
    divmod[f64] = divmod[f64] || row.float_divmod;
  } else if (loop.kind != DtypeKind::Bool) {
    ints.emplace(loop.glsl_compute, loop.kind == DtypeKind::Signed, loop.itemsize == 8 ? 64 : 32);
  }
}

void Templates::emit(std::ostringstream &out) const {
  // The math library reads its constant tables from a buffer: a dynamically
  // indexed GLSL constant array is copied into every invocation's private
  // memory on some drivers (lavapipe), which costs more than the math.
  if (math_f64)
    out << "#define NPVK_F64_TABLES pc.tables\n" << shader_text("math_f64.glsl") << "\n";
  for (int f64 = 0; f64 < 2; ++f64)
    if (float_type[f64]) emit_float_template(out, f64 != 0, divmod[f64]);
  if (half)
    out << (half_f64 ? "#define NPVK_HALF_F64\n" : "") << shader_text("ops_half.glsl") << "\n";
  for (const auto &t : ints)
    emit_int_template(out, std::get<0>(t).c_str(), std::get<1>(t), std::get<2>(t));
}

void emit_prologue(std::ostringstream &out, const std::string &key,
                   const std::set<npvk_dtype> &stored, bool vectors) {
  out << "#version 460\n// npvk kernel " << key << "\n"
      << "#extension GL_EXT_buffer_reference : require\n"
         "#extension GL_EXT_shader_explicit_arithmetic_types : require\n"
         "#extension GL_EXT_shader_8bit_storage : require\n"
         "#extension GL_EXT_shader_16bit_storage : require\n"
         "#extension GL_KHR_shader_subgroup_basic : require\n"
      << "layout(local_size_x = " << kWorkgroupSize << ") in;\n";
  for (npvk_dtype d : stored) {
    const DtypeInfo &di = dtype_info(d);
    out << "layout(buffer_reference, std430, buffer_reference_align = " << di.itemsize
        << ") buffer Ref_" << di.suffix << " { " << di.glsl_storage << " v; };\n";
    if (vectors)
      out << "layout(buffer_reference, std430, buffer_reference_align = "
          << di.itemsize * kVectorWidth << ") buffer RefV_" << di.suffix << " { " << vector_type(di)
          << " v; };\n";
  }
  out << "layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Meta "
         "{ int64_t v[]; };\n"
      << "layout(push_constant, std430) uniform Push {\n  uint64_t operand[" << kPushSlots
      << "];\n  uint64_t meta;\n  uint64_t count;\n  uint64_t tables;\n  uint64_t flags;\n} pc;\n"
      << "layout(buffer_reference, std430, buffer_reference_align = 4) buffer FpFlags { uint v; "
         "};\n";
}

std::string storage_value(const DtypeInfo &d, const std::string &r) {
  if (d.dtype == NPVK_FLOAT16) return "uint16_t(npvk_float_to_half_bits(" + r + "))";
  return d.kind == DtypeKind::Bool ? "uint8_t(" + r + " ? 1 : 0)"
                                   : std::string(d.glsl_storage) + "(" + r + ")";
}

// A stored element as a loop reads it, in its compute type.
std::string loaded_value(const DtypeInfo &d, const std::string &stored) {
  if (d.kind == DtypeKind::Bool) return "(" + stored + " != uint8_t(0))";
  if (d.dtype == NPVK_FLOAT16) return "npvk_half_to_float(uint(" + stored + "))";
  return std::string(d.glsl_compute) + "(" + stored + ")";
}

}  // namespace glsl
}  // namespace npvk
