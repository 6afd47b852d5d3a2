// The AVX-512 kernels: 8 doubles per vector, two vectors of targets per pass. This file alone is
// compiled with -mavx512f; it runs only after the dispatcher has checked the CPU. FMAs appear only
// where the kernels ask for them (fmadd, fnmadd; -ffp-contract=off fuses nothing else), so the
// results are identical to the portable kernels'.
#include <immintrin.h>

#include "integrators/forces/force_kernels_impl.hpp"

namespace kanoko::integrators::detail {
namespace {

struct Avx512 {
  using T = __m512d;
  static constexpr std::size_t width = 8;
  static constexpr std::size_t pass = 2;
  static T load(const double* p) { return _mm512_loadu_pd(p); }
  static void store(double* p, T v) { _mm512_storeu_pd(p, v); }
  static T set1(double v) { return _mm512_set1_pd(v); }
  static T add(T a, T b) { return _mm512_add_pd(a, b); }
  static T sub(T a, T b) { return _mm512_sub_pd(a, b); }
  static T mul(T a, T b) { return _mm512_mul_pd(a, b); }
  // Lanes where r² = 0 are masked off (zeroed); NaN compares unordered-not-equal. (The zero-masked
  // square root also avoids GCC 12's false "may be used uninitialized" in _mm512_sqrt_pd.)
  static T inv_sqrt_or_zero(T r2) {
    const __mmask8 nonzero = _mm512_cmp_pd_mask(r2, _mm512_setzero_pd(), _CMP_NEQ_UQ);
    return _mm512_maskz_div_pd(nonzero, _mm512_set1_pd(1.0), _mm512_maskz_sqrt_pd(nonzero, r2));
  }
  static T fmadd(T a, T b, T c) { return _mm512_fmadd_pd(a, b, c); }
  static T fnmadd(T a, T b, T c) { return _mm512_fnmadd_pd(a, b, c); }
  static T rsqrt_seed(T x) {
    // (The zero-masked shift, with every lane selected, avoids the same GCC 12 false warning.)
    const __m512i bits = _mm512_maskz_srli_epi64(0xFF, _mm512_castpd_si512(x), 1);
    return _mm512_castsi512_pd(_mm512_sub_epi64(_mm512_set1_epi64(0x5FE6EB50C7B537A9), bits));
  }
  static T zero_where_zero(T r2, T y) {
    return _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(r2, _mm512_setzero_pd(), _CMP_NEQ_UQ), y);
  }
};

/// 16 floats per vector, one vector of targets per pass (a block of kTargetBlock).
struct Avx512Float {
  using T = __m512;
  static constexpr std::size_t width = 16;
  static constexpr std::size_t pass = 1;
  static T load(const float* p) { return _mm512_loadu_ps(p); }
  static T set1(float v) { return _mm512_set1_ps(v); }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static T sub(T a, T b) { return _mm512_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm512_mul_ps(a, b); }
  static T fmadd(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static T fnmadd(T a, T b, T c) { return _mm512_fnmadd_ps(a, b, c); }
  static T rsqrt_seed(T x) {
    const __m512i bits = _mm512_maskz_srli_epi32(0xFFFF, _mm512_castps_si512(x), 1);
    return _mm512_castsi512_ps(_mm512_sub_epi32(_mm512_set1_epi32(0x5F375A86), bits));
  }
  static T zero_where_zero(T r2, T y) {
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(r2, _mm512_setzero_ps(), _CMP_NEQ_UQ), y);
  }
  // (Zero-masked with every lane selected, for the same GCC 12 false warning.)
  static void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  // (Zero-masked with every lane selected, for the same GCC 12 false warning.)
  static T max(T a, T b) { return _mm512_maskz_max_ps(0xFFFF, a, b); }
  static void add_to(double* p, T v) {
    const __m512d as_pd = _mm512_castps_pd(v);
    const __m512d lo = _mm512_maskz_cvtps_pd(0xFF, _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, as_pd, 0)));
    const __m512d hi = _mm512_maskz_cvtps_pd(0xFF, _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, as_pd, 1)));
    _mm512_storeu_pd(p, _mm512_add_pd(_mm512_loadu_pd(p), lo));
    _mm512_storeu_pd(p + 8, _mm512_add_pd(_mm512_loadu_pd(p + 8), hi));
  }
};

}  // namespace

const KernelTable& avx512_kernels(KernelMath math) {
  static const KernelTable exact = make_table<Avx512, Avx512Float, KernelMath::Exact>();
  static const KernelTable fast = make_table<Avx512, Avx512Float, KernelMath::Fast>();
  return math == KernelMath::Exact ? exact : fast;
}

}  // namespace kanoko::integrators::detail
