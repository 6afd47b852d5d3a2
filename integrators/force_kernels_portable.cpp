// The portable kernels: one double per "vector", one target at a time. Compiled with the library's
// ordinary flags (-ffp-contract=off, so no fused multiply-add), they give the same bits as the SIMD
// kernels.
#include <cmath>

#include "integrators/force_kernels_impl.hpp"

namespace kanoko::integrators::detail {
namespace {

struct Scalar {
  using T = double;
  static constexpr std::size_t width = 1;
  static constexpr std::size_t pass = 1;
  static T load(const double* p) { return *p; }
  static void store(double* p, T v) { *p = v; }
  static T set1(double v) { return v; }
  static T add(T a, T b) { return a + b; }
  static T sub(T a, T b) { return a - b; }
  static T mul(T a, T b) { return a * b; }
  // `!=` is true for NaN, like the SIMD kernels' unordered not-equal compare.
  static T inv_sqrt_or_zero(T r2) { return r2 != 0.0 ? 1.0 / std::sqrt(r2) : 0.0; }
};

}  // namespace

const KernelTable& portable_kernels() {
  static const KernelTable table = make_table<Scalar>();
  return table;
}

}  // namespace kanoko::integrators::detail
