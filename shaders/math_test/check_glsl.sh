#!/usr/bin/env bash
# Compile shaders/math_f64.glsl inside a small compute shader with the npvk
# prelude (glslangValidator -V --target-env vulkan1.2 --spirv-val), with the
# default (fma-free) path, with NPVK_F64_USE_FMA, and with the prelude that
# compile/families/elementwise/elementwise_glsl.cpp emits, then check that every double
# literal in math_f64.glsl reached the SPIR-V as the exact intended double.
# Needs: glslang-tools (Debian: apt-get install -y glslang-tools), python3.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="$here/../math_f64.glsl"
out="${BUILD_DIR:-$here/build}"
mkdir -p "$out"
command -v glslangValidator >/dev/null || { echo "glslangValidator not found (apt-get install -y glslang-tools)"; exit 2; }

# default/fma: the prelude npvk documents; codegen: the one compile/families/elementwise/elementwise_glsl.cpp
# currently emits (no explicit _int64 line, 8/16-bit storage extensions).
for variant in default fma codegen; do
  shader="$out/test_$variant.comp"
  {
    echo '#version 460'
    if [ "$variant" = codegen ]; then
      echo '#extension GL_EXT_buffer_reference : require'
      echo '#extension GL_EXT_shader_explicit_arithmetic_types : require'
      echo '#extension GL_EXT_shader_8bit_storage : require'
      echo '#extension GL_EXT_shader_16bit_storage : require'
    else
      echo '#extension GL_EXT_shader_explicit_arithmetic_types : require'
      echo '#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require'
      echo '#extension GL_EXT_buffer_reference : require'
    fi
    [ "$variant" = fma ] && echo '#define NPVK_F64_USE_FMA'
    # the table buffer's address comes in a push constant, as in npvk kernels
    echo 'layout(push_constant, std430) uniform Push { uint64_t tables; } pc;'
    echo '#define NPVK_F64_TABLES pc.tables'
    cat "$src"
    cat <<'GLSL'
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer InD { double a[]; } in_d;
layout(std430, set = 0, binding = 1) buffer InD2 { double b[]; } in_d2;
layout(std430, set = 0, binding = 2) buffer OutD { double o[]; } out_d;
layout(std430, set = 0, binding = 3) buffer InF { float fa[]; } in_f;
layout(std430, set = 0, binding = 4) buffer OutF { float fo[]; } out_f;
void main() {
    uint i = gl_GlobalInvocationID.x;
    double x = in_d.a[i];
    double y = in_d2.b[i];
    out_d.o[5u * i + 0u] = npvk_exp_f64(x);
    out_d.o[5u * i + 1u] = npvk_log_f64(x);
    out_d.o[5u * i + 2u] = npvk_pow_f64(x, y);
    out_d.o[5u * i + 3u] = npvk_fmod_f64(x, y);
    out_f.fo[i] = npvk_fmod_f32(in_f.fa[2u * i], in_f.fa[2u * i + 1u]);
}
GLSL
  } > "$shader"
  glslangValidator -V --target-env vulkan1.2 --spirv-val -o "$out/test_$variant.spv" "$shader" > "$out/glslang_$variant.log" 2>&1 \
    || { cat "$out/glslang_$variant.log"; echo "FAIL: $variant variant does not compile"; exit 1; }
  echo "ok: math_f64.glsl compiles ($variant variant) -> $out/test_$variant.spv"
done
# A shader that only uses npvk_fmod_f32 must not need Float64/Int64.
shader="$out/test_f32only.comp"
{
  echo '#version 460'
  echo '#extension GL_EXT_shader_explicit_arithmetic_types : require'
  echo '#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require'
  echo '#extension GL_EXT_buffer_reference : require'
  echo '#define NPVK_F64_TABLES uint64_t(gl_GlobalInvocationID.x)  // never used: no table function is called'
  cat "$src"
  echo 'layout(local_size_x = 64) in;'
  echo 'layout(std430, binding = 0) buffer F { float f[]; } buf;'
  echo 'void main() { uint i = gl_GlobalInvocationID.x; buf.f[3u*i] = npvk_fmod_f32(buf.f[3u*i+1u], buf.f[3u*i+2u]); }'
} > "$shader"
glslangValidator -V --target-env vulkan1.2 --spirv-val -o "$out/test_f32only.spv" "$shader" > "$out/glslang_f32only.log" 2>&1 \
  || { cat "$out/glslang_f32only.log"; echo "FAIL: f32-only shader does not compile"; exit 1; }
python3 - "$out/test_f32only.spv" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
w = struct.unpack("<%dI" % (len(b) // 4), b)
caps, i = set(), 5
while i < len(w):
    if w[i] & 0xFFFF == 17:   # OpCapability
        caps.add(w[i + 1])
    i += w[i] >> 16
bad = caps & {10, 11}        # Float64, Int64
if bad:
    print("FAIL: npvk_fmod_f32-only shader needs capabilities %s" % sorted(bad)); sys.exit(1)
print("ok: a shader using only npvk_fmod_f32 needs neither Float64 nor Int64")
PY
# Every other public function, so the NoContraction and literal checks see all of them.
shader="$out/test_ext.comp"
{
  echo '#version 460'
  echo '#extension GL_EXT_shader_explicit_arithmetic_types : require'
  echo '#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require'
  echo '#extension GL_EXT_buffer_reference : require'
  echo 'layout(push_constant, std430) uniform Push { uint64_t tables; } pc;'
  echo '#define NPVK_F64_TABLES pc.tables'
  cat "$src"
  cat <<'GLSL'
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer InD { double a[]; } in_d;
layout(std430, set = 0, binding = 1) buffer InD2 { double b[]; } in_d2;
layout(std430, set = 0, binding = 2) buffer OutD { double o[]; } out_d;
void main() {
    uint i = gl_GlobalInvocationID.x;
    double x = in_d.a[i];
    double y = in_d2.b[i];
    uint k = 25u * i;
    out_d.o[k + 0u] = npvk_exp2_f64(x);
    out_d.o[k + 1u] = npvk_expm1_f64(x);
    out_d.o[k + 2u] = npvk_log2_f64(x);
    out_d.o[k + 3u] = npvk_log10_f64(x);
    out_d.o[k + 4u] = npvk_log1p_f64(x);
    out_d.o[k + 5u] = npvk_cbrt_f64(x);
    out_d.o[k + 6u] = npvk_sin_f64(x);
    out_d.o[k + 7u] = npvk_cos_f64(x);
    out_d.o[k + 8u] = npvk_tan_f64(x);
    out_d.o[k + 9u] = npvk_asin_f64(x);
    out_d.o[k + 10u] = npvk_acos_f64(x);
    out_d.o[k + 11u] = npvk_atan_f64(x);
    out_d.o[k + 12u] = npvk_sinh_f64(x);
    out_d.o[k + 13u] = npvk_cosh_f64(x);
    out_d.o[k + 14u] = npvk_tanh_f64(x);
    out_d.o[k + 15u] = npvk_asinh_f64(x);
    out_d.o[k + 16u] = npvk_acosh_f64(x);
    out_d.o[k + 17u] = npvk_atanh_f64(x);
    out_d.o[k + 18u] = npvk_atan2_f64(x, y);
    out_d.o[k + 19u] = npvk_hypot_f64(x, y);
    out_d.o[k + 20u] = npvk_logaddexp_f64(x, y);
    out_d.o[k + 21u] = npvk_logaddexp2_f64(x, y);
    out_d.o[k + 22u] = npvk_f64_powi(x, 5);
    out_d.o[k + 23u] = npvk_f64_powi(x, -3);
    out_d.o[k + 24u] = npvk_f64_pow_half(x);
}
GLSL
} > "$shader"
glslangValidator -V --target-env vulkan1.2 --spirv-val -o "$out/test_ext.spv" "$shader" > "$out/glslang_ext.log" 2>&1 \
  || { cat "$out/glslang_ext.log"; echo "FAIL: ext shader does not compile"; exit 1; }
echo "ok: math_f64.glsl compiles with every function called -> $out/test_ext.spv"
python3 "$here/spirv_consts.py" "$src" "$out/test_ext.spv"
python3 "$here/spirv_consts.py" "$src" "$out/test_default.spv" --no-literals
python3 "$here/spirv_consts.py" "$src" "$out/test_fma.spv" --no-literals
