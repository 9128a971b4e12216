#include "compile/view.hpp"

#include <numeric>
#include <string>

#include "base/error.hpp"
#include "compile/dtype.hpp"

namespace npvk {

// Every element of each starts at its offset modulo g, the gcd of all
// strides, so they never meet when those residues are at least an element
// apart.
bool views_interleave_apart(const View &a, const View &b) {
  int64_t g = 0;
  for (const View *v : {&a, &b})
    for (uint32_t d = 0; d < v->ndim; ++d)
      if (v->shape[d] > 1) g = std::gcd(g, v->strides[d] < 0 ? -v->strides[d] : v->strides[d]);
  if (g == 0) return false;  // single elements: the extents decided already
  int64_t sa = dtype_info(a.dtype).itemsize, sb = dtype_info(b.dtype).itemsize;
  int64_t d = ((int64_t(a.offset) - int64_t(b.offset)) % g + g) % g;  // a - b, modulo g
  return d >= sb && g - d >= sa;
}

}  // namespace npvk
