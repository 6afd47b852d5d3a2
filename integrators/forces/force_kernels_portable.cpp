// The portable kernels: one double per "vector", one target at a time. Compiled with the library's
// ordinary flags (-ffp-contract=off, so no multiply-add is fused unless written as std::fma), they
// give the same bits as the SIMD kernels (in double and in float).
#include <bit>
#include <cmath>
#include <cstdint>

#include "integrators/forces/force_kernels_impl.hpp"

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
  static T fmadd(T a, T b, T c) { return std::fma(a, b, c); }
  static T fnmadd(T a, T b, T c) { return std::fma(-a, b, c); }
  static T rsqrt_seed(T x) {
    return std::bit_cast<double>(std::uint64_t{0x5FE6EB50C7B537A9} - (std::bit_cast<std::uint64_t>(x) >> 1U));
  }
  static T zero_where_zero(T r2, T y) { return r2 != 0.0 ? y : 0.0; }
};

struct ScalarFloat {
  using T = float;
  static constexpr std::size_t width = 1;
  static constexpr std::size_t pass = 1;
  static T load(const float* p) { return *p; }
  static T set1(float v) { return v; }
  static T add(T a, T b) { return a + b; }
  static T sub(T a, T b) { return a - b; }
  static T mul(T a, T b) { return a * b; }
  static T fmadd(T a, T b, T c) { return std::fma(a, b, c); }
  static T fnmadd(T a, T b, T c) { return std::fma(-a, b, c); }
  static T rsqrt_seed(T x) {
    return std::bit_cast<float>(std::uint32_t{0x5F375A86} - (std::bit_cast<std::uint32_t>(x) >> 1U));
  }
  static T zero_where_zero(T r2, T y) { return r2 != 0.0F ? y : 0.0F; }
  static T max(T a, T b) { return a > b ? a : b; }
  static void store(float* p, T v) { *p = v; }
  static void add_to(double* p, T v) { *p += static_cast<double>(v); }
};

}  // namespace

const KernelTable& portable_kernels(KernelMath math) {
  static const KernelTable exact = make_table<Scalar, ScalarFloat, KernelMath::Exact>();
  static const KernelTable fast = make_table<Scalar, ScalarFloat, KernelMath::Fast>();
  return math == KernelMath::Exact ? exact : fast;
}

}  // namespace kanoko::integrators::detail
