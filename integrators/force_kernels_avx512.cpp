// The AVX-512 kernels: 8 doubles per vector, two vectors of targets per pass. This file alone is
// compiled with -mavx512f; it runs only after the dispatcher has checked the CPU. No FMA: separate
// multiplies and adds keep the results identical to the portable kernels.
#include <immintrin.h>

#include "integrators/force_kernels_impl.hpp"

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
};

}  // namespace

const KernelTable& avx512_kernels() {
  static const KernelTable table = make_table<Avx512>();
  return table;
}

}  // namespace kanoko::integrators::detail
