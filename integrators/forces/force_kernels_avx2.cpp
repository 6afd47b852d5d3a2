// The AVX2 kernels: 4 doubles per vector, two vectors of targets per pass. This file alone is
// compiled with -mavx2 -mfma; it runs only after the dispatcher has checked the CPU. FMAs appear
// only where the kernels ask for them (fmadd, fnmadd; -ffp-contract=off fuses nothing else), so the
// results are identical to the portable kernels'.
#include <immintrin.h>

#include "integrators/forces/force_kernels_impl.hpp"

namespace kanoko::integrators::detail {
namespace {

struct Avx2 {
  using T = __m256d;
  static constexpr std::size_t width = 4;
  static constexpr std::size_t pass = 2;
  static T load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, T v) { _mm256_storeu_pd(p, v); }
  static T set1(double v) { return _mm256_set1_pd(v); }
  static T add(T a, T b) { return _mm256_add_pd(a, b); }
  static T sub(T a, T b) { return _mm256_sub_pd(a, b); }
  static T mul(T a, T b) { return _mm256_mul_pd(a, b); }
  // 1/√0 = ∞ is masked to 0; NaN compares unordered-not-equal, so it stays NaN.
  static T inv_sqrt_or_zero(T r2) {
    const T nonzero = _mm256_cmp_pd(r2, _mm256_setzero_pd(), _CMP_NEQ_UQ);
    return _mm256_and_pd(_mm256_div_pd(_mm256_set1_pd(1.0), _mm256_sqrt_pd(r2)), nonzero);
  }
  static T fmadd(T a, T b, T c) { return _mm256_fmadd_pd(a, b, c); }
  static T fnmadd(T a, T b, T c) { return _mm256_fnmadd_pd(a, b, c); }
  static T rsqrt_seed(T x) {
    const __m256i bits = _mm256_srli_epi64(_mm256_castpd_si256(x), 1);
    return _mm256_castsi256_pd(_mm256_sub_epi64(_mm256_set1_epi64x(0x5FE6EB50C7B537A9), bits));
  }
  static T zero_where_zero(T r2, T y) {
    return _mm256_and_pd(y, _mm256_cmp_pd(r2, _mm256_setzero_pd(), _CMP_NEQ_UQ));
  }
};

/// 8 floats per vector, two vectors of targets per pass.
struct Avx2Float {
  using T = __m256;
  static constexpr std::size_t width = 8;
  static constexpr std::size_t pass = 2;
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static T set1(float v) { return _mm256_set1_ps(v); }
  static T add(T a, T b) { return _mm256_add_ps(a, b); }
  static T sub(T a, T b) { return _mm256_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm256_mul_ps(a, b); }
  static T fmadd(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static T fnmadd(T a, T b, T c) { return _mm256_fnmadd_ps(a, b, c); }
  static T rsqrt_seed(T x) {
    const __m256i bits = _mm256_srli_epi32(_mm256_castps_si256(x), 1);
    return _mm256_castsi256_ps(_mm256_sub_epi32(_mm256_set1_epi32(0x5F375A86), bits));
  }
  static T zero_where_zero(T r2, T y) { return _mm256_and_ps(y, _mm256_cmp_ps(r2, _mm256_setzero_ps(), _CMP_NEQ_UQ)); }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static T max(T a, T b) { return _mm256_max_ps(a, b); }
  static void add_to(double* p, T v) {
    const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
    const __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
    _mm256_storeu_pd(p, _mm256_add_pd(_mm256_loadu_pd(p), lo));
    _mm256_storeu_pd(p + 4, _mm256_add_pd(_mm256_loadu_pd(p + 4), hi));
  }
};

}  // namespace

const KernelTable& avx2_kernels(KernelMath math) {
  static const KernelTable exact = make_table<Avx2, Avx2Float, KernelMath::Exact>();
  static const KernelTable fast = make_table<Avx2, Avx2Float, KernelMath::Fast>();
  return math == KernelMath::Exact ? exact : fast;
}

}  // namespace kanoko::integrators::detail
