#!/usr/bin/env bash
# Compile shaders/math_f64.glsl inside a small compute shader with the npvk
# prelude (glslangValidator -V --target-env vulkan1.2), once with the default
# (fma-free) path and once with NPVK_F64_USE_FMA, then check that every double
# literal in math_f64.glsl reached the SPIR-V as the exact intended double.
# Needs: glslang-tools (Debian: apt-get install -y glslang-tools), python3.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="$here/../math_f64.glsl"
out="${BUILD_DIR:-$here/build}"
mkdir -p "$out"
command -v glslangValidator >/dev/null || { echo "glslangValidator not found (apt-get install -y glslang-tools)"; exit 2; }

for variant in default fma; do
  shader="$out/test_$variant.comp"
  {
    echo '#version 460'
    echo '#extension GL_EXT_shader_explicit_arithmetic_types : require'
    echo '#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require'
    echo '#extension GL_EXT_buffer_reference : require'
    [ "$variant" = fma ] && echo '#define NPVK_F64_USE_FMA'
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
  glslangValidator -V --target-env vulkan1.2 -o "$out/test_$variant.spv" "$shader" > "$out/glslang_$variant.log" 2>&1 \
    || { cat "$out/glslang_$variant.log"; echo "FAIL: $variant variant does not compile"; exit 1; }
  echo "ok: math_f64.glsl compiles ($variant variant) -> $out/test_$variant.spv"
done
python3 "$here/spirv_consts.py" "$src" "$out/test_default.spv"
