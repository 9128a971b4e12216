// GLSL for matrix products: a workgroup per 16 x 16 tile of C, staging
// tiles of A and B in shared memory (the plan: matmul_plan.hpp).
#include "compile/families/matmul/matmul_glsl.hpp"

#include <sstream>

#include "compile/dtype.hpp"
#include "compile/glsl_parts.hpp"
#include "compile/kernel_abi.hpp"

namespace npvk {

using namespace glsl;

// The push constants' slots are matmul_slot's (compile/kernel_abi.hpp); the
// argument table: the core strides of A, B and C (two each), then the batch
// shape and A's, B's and C's batch strides.
std::string generate_matmul_glsl(const MatmulOp &op) {
  auto slot = [](uint32_t i) { return "pc.operand[" + std::to_string(i) + "]"; };
  const DtypeInfo &d = dtype_info(op.dtype);
  const bool flt = d.kind == DtypeKind::Float;
  const std::string t = d.glsl_compute;
  const uint32_t rb = op.batch_rank();
  const int64_t tile = kMatmulTile;
  std::ostringstream out;
  emit_prologue(out, op.key(), {op.dtype});
  out << "shared " << t << " tile_a[" << tile << "][" << tile + 1 << "];\n"
      << "shared " << t << " tile_b[" << tile << "][" << tile + 1 << "];\n"
      << "void main() {\n"
      << "  Meta m = Meta(pc.meta);\n"
      << "  const uint64_t pa = " << slot(matmul_slot::kA) << ", pb = " << slot(matmul_slot::kB)
      << ", pc_ = " << slot(matmul_slot::kC) << ";\n"
      << "  const int64_t M = int64_t(" << slot(matmul_slot::kM) << "), K = int64_t("
      << slot(matmul_slot::kK) << "), N = int64_t(" << slot(matmul_slot::kN) << ");\n"
      << "  const uint64_t local = gl_WorkGroupID.x;\n"
      << "  const int lane = int(gl_LocalInvocationID.x);\n"
      << "  if (local < pc.count) {\n"
      << "    const int64_t item = int64_t(" << slot(matmul_slot::kFirstTile) << " + local);\n"
      << "    const int64_t tiles_m = (M + " << tile - 1 << "l) / " << tile << "l, tiles_n = (N + "
      << tile - 1 << "l) / " << tile << "l;\n"
      << "    const int64_t per_batch = tiles_m * tiles_n;\n"
      << "    const int64_t batch = item / per_batch, within = item - batch * per_batch;\n"
      << "    const int64_t i0 = (within / tiles_n) * " << tile << "l, j0 = (within % tiles_n) * "
      << tile << "l;\n"
      << "    int64_t oa = 0, ob = 0, oc = 0;\n";
  if (rb) {
    out << "    {\n      int64_t rest = batch;\n";
    for (int dim = int(rb) - 1; dim >= 0; --dim) {
      out << "      {\n";
      if (dim > 0)
        out << "        int64_t extent = m.v[" << 6 + dim << "];\n"
            << "        int64_t c = rest % extent;\n        rest /= extent;\n";
      else
        out << "        int64_t c = rest;\n";
      out << "        oa += c * m.v[" << 6 + rb + dim << "];\n"
          << "        ob += c * m.v[" << 6 + 2 * rb + dim << "];\n"
          << "        oc += c * m.v[" << 6 + 3 * rb + dim << "];\n      }\n";
    }
    out << "    }\n";
  }
  // Thread `lane` computes C[i0 + r][j0 + c] and C[i0 + r][j0 + c + 8].
  out << "    const int r = lane / 8, c = lane % 8;\n"
      << "    " << (flt ? "precise " : "") << t << " acc0 = " << t << "(0), acc1 = " << t
      << "(0);\n"
      << "    for (int64_t k0 = 0; k0 < K; k0 += " << tile << "l) {\n";
  // Each lane stages two elements of each tile (256 = 2 x 128).
  for (int half = 0; half < 2; ++half) {
    const std::string e = "(lane + " + std::to_string(half * 128) + ")";
    out << "      {\n"
        << "        const int er = " << e << " / " << tile << ", ec = " << e << " % " << tile
        << ";\n"
        << "        const int64_t ai = i0 + er, ak = k0 + ec;\n"
        // Branches, not ?: (which a compiler may turn into a select that
        // loads out of bounds too).
        << "        " << t << " va = " << t << "(0), vb = " << t << "(0);\n"
        << "        if (ai < M && ak < K) va = "
        << loaded_value(d, element_ref(d, "pa", "oa + ai * m.v[0] + ak * m.v[1]")) << ";\n"
        << "        const int64_t bk = k0 + er, bj = j0 + ec;\n"
        << "        if (bk < K && bj < N) vb = "
        << loaded_value(d, element_ref(d, "pb", "ob + bk * m.v[2] + bj * m.v[3]")) << ";\n"
        << "        tile_a[er][ec] = va;\n        tile_b[er][ec] = vb;\n"
        << "      }\n";
  }
  out << "      barrier();\n";
  // Unrolled: llvmpipe counts every loop iteration against its cap.
  for (int64_t kk = 0; kk < tile; ++kk)
    out << "      acc0 += tile_a[r][" << kk << "] * tile_b[" << kk << "][c];\n"
        << "      acc1 += tile_a[r][" << kk << "] * tile_b[" << kk << "][c + 8];\n";
  out << "      barrier();\n    }\n"
      << "    const int64_t i = i0 + r, j = j0 + c;\n"
      << "    if (i < M && j < N) " << element_ref(d, "pc_", "oc + i * m.v[4] + j * m.v[5]")
      << " = " << storage_value(d, "acc0") << ";\n"
      << "    if (i < M && j + 8 < N) "
      << element_ref(d, "pc_", "oc + i * m.v[4] + (j + 8) * m.v[5]") << " = "
      << storage_value(d, "acc1") << ";\n"
      << "  }\n}\n";
  return out.str();
}

}  // namespace npvk
