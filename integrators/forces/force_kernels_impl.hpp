// Internal: the kernel bodies, written once over a small "vector of doubles" interface `V` and
// instantiated by force_kernels_portable.cpp, force_kernels_avx2.cpp and force_kernels_avx512.cpp.
// Include it only from those files. Everything here has internal linkage (an unnamed namespace):
// the files are compiled with different target flags, and a shared inline symbol could otherwise
// let the linker pick an AVX-512 copy for the portable path.
//
// `V` provides: type `T`, `width` (doubles per T), `pass` (vectors of targets kept in registers
// while the sources stream by), load/store/set1/add/sub/mul, inv_sqrt_or_zero(r2)
// = r2 ≠ 0 ? 1/√r2 : 0 (NaN stays NaN), fmadd(a, b, c) = a·b + c and fnmadd(a, b, c) = c − a·b
// rounded once (fused), each a single correctly rounded IEEE operation per lane; and two exact
// bit operations: rsqrt_seed(x), the integer 0x5FE6EB50C7B537A9 − (bits of x) / 2 read as a
// double (an estimate of 1/√x within 3.5 % for positive normal x), and zero_where_zero(r2, y)
// = r2 ≠ 0 ? y : 0 (NaN compares not-equal).
//
// Two kinds of kernels (KernelMath):
//   Exact  1/√r² as a correctly rounded √ and ÷, no fused multiply-add: the kernels of issue 4,
//          kept as the benchmark's baseline (Evaluator::BarnesHutV1).
//   Fast   1/√r² from the seed and two higher-order Newton steps built from FMAs (see
//          fast_inv_sqrt_or_zero), to round-off; the sums use FMAs. The square-root and division
//          unit is the bottleneck of the exact kernels; these use only the FMA pipes.
// Both are defined operation by operation, so each gives the same bits on every instruction set.
//
// The Fast tables add single-precision kernels for monopole cells (FloatCellKernel) and bodies
// (FloatBodyKernel), written over `F`, the same interface on floats (rsqrt_seed with the 32-bit
// constant 0x5F375A86), plus add_to(p, v): p[i] += (double) v[i] for the `width` lanes (exact
// conversion, one double add per lane), store, and max(a, b) = a > b ? a : b per lane.
#pragma once

#include <cstddef>

#include "integrators/forces/force_kernels.hpp"

// The loops over the vectors of one pass must be unrolled so that the targets and sums stay in
// registers (otherwise they live on the stack and every source costs a store and a reload).
#define KANOKO_UNROLL_PASS _Pragma("GCC unroll 8")

namespace kanoko::integrators::detail {
namespace {

/// 1/√r² (0 where r² = 0, NaN stays NaN) by KernelMath::Fast: the seed, two third-order Newton
/// steps and an ordinary one. With e = 1 − r² y², the exact correction is
/// y (1 − e)^{-1/2} = y (1 + e/2 + 3e²/8 + …): the seed's |e| ≤ 0.07 falls to about 2e-4 and 5e-12
/// after the three-term steps (residual 5e³/16), and to the rounding of the last FMA after the
/// two-term one (residual 3e²/8 ≈ 1e-23); e itself is computed with an FMA, so the result is
/// within about one ulp. Cells (kFull = false) stop after the third-order steps: their relative
/// error of 5e-12 is eight orders of magnitude below the multipole approximation's (≈ 3e-4 at
/// θ = 0.5). Exactly the same operations on every instruction set.
template <class V, bool kFull = true>
inline typename V::T fast_inv_sqrt_or_zero(typename V::T r2) {
  using T = typename V::T;
  const T one = V::set1(1.0);
  const T half = V::set1(0.5);
  const T c3_8 = V::set1(0.375);
  T y = V::rsqrt_seed(r2);
  for (int step = 0; step < 2; ++step) {
    const T e = V::fnmadd(V::mul(r2, y), y, one);
    y = V::fmadd(V::mul(y, e), V::fmadd(e, c3_8, half), y);
  }
  if constexpr (kFull) {
    const T e = V::fnmadd(V::mul(r2, y), y, one);
    y = V::fmadd(V::mul(y, half), e, y);
  }
  return V::zero_where_zero(r2, y);
}

/// 1/√r² in single precision (0 where r² = 0, NaN stays NaN): the float seed (|e| ≤ 0.07 as for
/// doubles), a third-order Newton step (|e| to about 1.1e-4) and an ordinary one (3e²/8 ≈ 5e-9,
/// below float's half ulp of 6e-8): within about one ulp.
template <class F>
inline typename F::T fast_inv_sqrt_or_zero_f32(typename F::T r2) {
  using T = typename F::T;
  const T one = F::set1(1.0F);
  const T half = F::set1(0.5F);
  T y = F::rsqrt_seed(r2);
  T e = F::fnmadd(F::mul(r2, y), y, one);
  y = F::fmadd(F::mul(y, e), F::fmadd(e, F::set1(0.375F), half), y);
  e = F::fnmadd(F::mul(r2, y), y, one);
  y = F::fmadd(F::mul(y, half), e, y);
  return F::zero_where_zero(r2, y);
}

/// Point sources in single precision, summed kFloatChunk sources at a time in float registers,
/// each chunk's sums then added to the double accumulators (in chunk order):
///   FloatCells   monopoles, Σ_c d (y³ m) and Σ_c m y, d = target − centre;
///   FloatBodies  bodies of charge 1, Σ_s d y³ and Σ_s y, each difference taken in two parts,
///                d = (hi_t − hi_s) + (lo_t − lo_s), so that it keeps the double offsets' digits
///                (about 48 bits of the group's extent) however close the two bodies are.
/// Returns the largest y met (bodies; 0 for cells), so that the caller can tell whether any
/// pair was too close for float (see barnes_hut.cpp).
template <class F, bool kPotential, class Sources>
float float_point_kernel(const FloatTargets& t, const Sources& s, float eps2_value, const Accumulators& acc) {
  using T = typename F::T;
  constexpr bool kCharged = requires { s.m; };
  constexpr bool kSplit = requires { s.lx; };  // FloatBodies; FloatCells have one part
  constexpr std::size_t kW = F::width;
  constexpr std::size_t kP = F::pass;
  const T eps2 = F::set1(eps2_value);
  T y_max = F::set1(0.0F);
  for (std::size_t b = 0; b < t.count; b += kW * kP) {
    T tx[kP], ty[kP], tz[kP], tlx[kP], tly[kP], tlz[kP];
    KANOKO_UNROLL_PASS
    for (std::size_t p = 0; p < kP; ++p) {
      const std::size_t o = b + p * kW;
      tx[p] = F::load(t.x + o);
      ty[p] = F::load(t.y + o);
      tz[p] = F::load(t.z + o);
      if constexpr (kSplit) {
        tlx[p] = F::load(t.lx + o);
        tly[p] = F::load(t.ly + o);
        tlz[p] = F::load(t.lz + o);
      }
    }
    for (std::size_t first = 0; first < s.count; first += kFloatChunk) {
      const std::size_t last = first + kFloatChunk < s.count ? first + kFloatChunk : s.count;
      T ax[kP], ay[kP], az[kP], ap[kP];
      KANOKO_UNROLL_PASS
      for (std::size_t p = 0; p < kP; ++p) {
        ax[p] = F::set1(0.0F);
        ay[p] = F::set1(0.0F);
        az[p] = F::set1(0.0F);
        ap[p] = F::set1(0.0F);
      }
      for (std::size_t j = first; j < last; ++j) {
        const T sx = F::set1(s.x[j]);
        const T sy = F::set1(s.y[j]);
        const T sz = F::set1(s.z[j]);
        T m{}, slx{}, sly{}, slz{};
        if constexpr (kCharged) m = F::set1(s.m[j]);
        if constexpr (kSplit) {
          slx = F::set1(s.lx[j]);
          sly = F::set1(s.ly[j]);
          slz = F::set1(s.lz[j]);
        }
        KANOKO_UNROLL_PASS
        for (std::size_t p = 0; p < kP; ++p) {
          T dx = F::sub(tx[p], sx);
          T dy = F::sub(ty[p], sy);
          T dz = F::sub(tz[p], sz);
          if constexpr (kSplit) {
            dx = F::add(dx, F::sub(tlx[p], slx));
            dy = F::add(dy, F::sub(tly[p], sly));
            dz = F::add(dz, F::sub(tlz[p], slz));
          }
          const T r2 = F::fmadd(dz, dz, F::fmadd(dy, dy, F::fmadd(dx, dx, eps2)));
          const T y = fast_inv_sqrt_or_zero_f32<F>(r2);
          T w = F::mul(F::mul(y, y), y);
          if constexpr (kCharged) w = F::mul(w, m);
          ax[p] = F::fmadd(dx, w, ax[p]);
          ay[p] = F::fmadd(dy, w, ay[p]);
          az[p] = F::fmadd(dz, w, az[p]);
          if constexpr (kPotential) {
            if constexpr (kCharged) {
              ap[p] = F::fmadd(m, y, ap[p]);
            } else {
              ap[p] = F::add(ap[p], y);
            }
          }
          if constexpr (kSplit) y_max = F::max(y_max, y);
        }
      }
      KANOKO_UNROLL_PASS
      for (std::size_t p = 0; p < kP; ++p) {
        const std::size_t o = b + p * kW;
        F::add_to(acc.x + o, ax[p]);
        F::add_to(acc.y + o, ay[p]);
        F::add_to(acc.z + o, az[p]);
        if constexpr (kPotential) F::add_to(acc.phi + o, ap[p]);
      }
    }
  }
  float lanes[kW];
  F::store(lanes, y_max);
  float largest = 0.0F;
  for (const float v : lanes) largest = v > largest ? v : largest;
  return largest;
}

/// Point sources: Σ_s d y³ m_s and Σ_s m_s y, where m_s is the cell's charge for CellSources
/// (monopoles) and 1 for BodySources (bodies, no multiply: the same bits as with m = 1).
template <class V, KernelMath kMath, bool kPotential, class Sources>
void point_kernel(const TargetBlock& t, const Sources& s, double eps2_value, const Accumulators& acc) {
  using T = typename V::T;
  constexpr bool kCharged = requires { s.m; };
  constexpr std::size_t kW = V::width;
  constexpr std::size_t kP = V::pass;
  const T eps2 = V::set1(eps2_value);
  for (std::size_t b = 0; b < t.count; b += kW * kP) {
    T tx[kP], ty[kP], tz[kP], ax[kP], ay[kP], az[kP], ap[kP];
    KANOKO_UNROLL_PASS
    for (std::size_t p = 0; p < kP; ++p) {
      const std::size_t o = b + p * kW;
      tx[p] = V::load(t.x + o);
      ty[p] = V::load(t.y + o);
      tz[p] = V::load(t.z + o);
      ax[p] = V::load(acc.x + o);
      ay[p] = V::load(acc.y + o);
      az[p] = V::load(acc.z + o);
      if constexpr (kPotential) ap[p] = V::load(acc.phi + o);
    }
    for (std::size_t j = 0; j < s.count; ++j) {
      const T sx = V::set1(s.x[j]);
      const T sy = V::set1(s.y[j]);
      const T sz = V::set1(s.z[j]);
      T m{};
      if constexpr (kCharged) m = V::set1(s.m[j]);
      KANOKO_UNROLL_PASS
        for (std::size_t p = 0; p < kP; ++p) {
        const T dx = V::sub(tx[p], sx);
        const T dy = V::sub(ty[p], sy);
        const T dz = V::sub(tz[p], sz);
        if constexpr (kMath == KernelMath::Exact) {
          const T r2 = V::add(V::add(V::add(V::mul(dx, dx), V::mul(dy, dy)), V::mul(dz, dz)), eps2);
          const T y = V::inv_sqrt_or_zero(r2);
          T w = V::mul(V::mul(y, y), y);
          if constexpr (kCharged) w = V::mul(w, m);
          ax[p] = V::add(ax[p], V::mul(dx, w));
          ay[p] = V::add(ay[p], V::mul(dy, w));
          az[p] = V::add(az[p], V::mul(dz, w));
          if constexpr (kPotential) {
            if constexpr (kCharged) {
              ap[p] = V::add(ap[p], V::mul(m, y));
            } else {
              ap[p] = V::add(ap[p], y);
            }
          }
        } else {
          const T r2 = V::fmadd(dz, dz, V::fmadd(dy, dy, V::fmadd(dx, dx, eps2)));
          const T y = fast_inv_sqrt_or_zero<V, !kCharged>(r2);
          T w = V::mul(V::mul(y, y), y);
          if constexpr (kCharged) w = V::mul(w, m);
          ax[p] = V::fmadd(dx, w, ax[p]);
          ay[p] = V::fmadd(dy, w, ay[p]);
          az[p] = V::fmadd(dz, w, az[p]);
          if constexpr (kPotential) {
            if constexpr (kCharged) {
              ap[p] = V::fmadd(m, y, ap[p]);
            } else {
              ap[p] = V::add(ap[p], y);
            }
          }
        }
      }
    }
    KANOKO_UNROLL_PASS
    for (std::size_t p = 0; p < kP; ++p) {
      const std::size_t o = b + p * kW;
      V::store(acc.x + o, ax[p]);
      V::store(acc.y + o, ay[p]);
      V::store(acc.z + o, az[p]);
      if constexpr (kPotential) V::store(acc.phi + o, ap[p]);
    }
  }
}

/// Σ_s d y³ and Σ_s y over bodies of charge 1.
template <class V, KernelMath kMath, bool kPotential>
void body_kernel(const TargetBlock& t, const BodySources& s, double eps2_value, const Accumulators& acc) {
  point_kernel<V, kMath, kPotential>(t, s, eps2_value, acc);
}

/// Cells as monopoles: Σ_c d (y³ m) and Σ_c m y.
template <class V, KernelMath kMath, bool kPotential>
void monopole_kernel(const TargetBlock& t, const CellSources& s, double eps2_value, const Accumulators& acc) {
  point_kernel<V, kMath, kPotential>(t, s, eps2_value, acc);
}

/// Cells as monopole + quadrupole. With u = r² + ε², y = u^{-1/2}, Q the second moments about the
/// centre and d = target − centre, the field of Σ_b G(d − s_b), G(r) = (|r|² + ε²)^{-1/2}, to
/// second order in s is
///   force / R     = d (m y³ + 7.5 (dᵀQd) y⁷ − 1.5 tr Q y⁵) − 3 y⁵ Q d
///   potential / R = m y + 1.5 (dᵀQd) y⁵ − 0.5 tr Q y³
/// (the full second-moment tensor rather than the traceless one, which keeps the softened case
/// exact to second order).
template <class V, KernelMath kMath, bool kPotential>
void quadrupole_kernel(const TargetBlock& t, const CellSources& s, double eps2_value, const Accumulators& acc) {
  using T = typename V::T;
  constexpr std::size_t kW = V::width;
  constexpr std::size_t kP = V::pass;
  const T eps2 = V::set1(eps2_value);
  const T c7_5 = V::set1(7.5);
  const T c1_5 = V::set1(1.5);
  const T c3 = V::set1(3.0);
  const T c0_5 = V::set1(0.5);
  for (std::size_t b = 0; b < t.count; b += kW * kP) {
    T tx[kP], ty[kP], tz[kP], ax[kP], ay[kP], az[kP], ap[kP];
    KANOKO_UNROLL_PASS
    for (std::size_t p = 0; p < kP; ++p) {
      const std::size_t o = b + p * kW;
      tx[p] = V::load(t.x + o);
      ty[p] = V::load(t.y + o);
      tz[p] = V::load(t.z + o);
      ax[p] = V::load(acc.x + o);
      ay[p] = V::load(acc.y + o);
      az[p] = V::load(acc.z + o);
      if constexpr (kPotential) ap[p] = V::load(acc.phi + o);
    }
    for (std::size_t j = 0; j < s.count; ++j) {
      const T sx = V::set1(s.x[j]);
      const T sy = V::set1(s.y[j]);
      const T sz = V::set1(s.z[j]);
      const T m = V::set1(s.m[j]);
      const T qxx = V::set1(s.qxx[j]);
      const T qxy = V::set1(s.qxy[j]);
      const T qxz = V::set1(s.qxz[j]);
      const T qyy = V::set1(s.qyy[j]);
      const T qyz = V::set1(s.qyz[j]);
      const T qzz = V::set1(s.qzz[j]);
      const T qtr = V::set1(s.qtr[j]);
      KANOKO_UNROLL_PASS
      for (std::size_t p = 0; p < kP; ++p) {
        const T dx = V::sub(tx[p], sx);
        const T dy = V::sub(ty[p], sy);
        const T dz = V::sub(tz[p], sz);
        T y;
        if constexpr (kMath == KernelMath::Exact) {
          y = V::inv_sqrt_or_zero(V::add(V::add(V::add(V::mul(dx, dx), V::mul(dy, dy)), V::mul(dz, dz)), eps2));
        } else {
          y = fast_inv_sqrt_or_zero<V, false>(V::fmadd(dz, dz, V::fmadd(dy, dy, V::fmadd(dx, dx, eps2))));
        }
        const T y2 = V::mul(y, y);
        const T y3 = V::mul(y2, y);
        const T y5 = V::mul(y3, y2);
        const T y7 = V::mul(y5, y2);
        const T qdx = V::add(V::add(V::mul(qxx, dx), V::mul(qxy, dy)), V::mul(qxz, dz));
        const T qdy = V::add(V::add(V::mul(qxy, dx), V::mul(qyy, dy)), V::mul(qyz, dz));
        const T qdz = V::add(V::add(V::mul(qxz, dx), V::mul(qyz, dy)), V::mul(qzz, dz));
        const T dqd = V::add(V::add(V::mul(dx, qdx), V::mul(dy, qdy)), V::mul(dz, qdz));
        const T radial = V::sub(V::add(V::mul(m, y3), V::mul(V::mul(c7_5, dqd), y7)), V::mul(V::mul(c1_5, qtr), y5));
        const T along_qd = V::mul(c3, y5);
        ax[p] = V::add(ax[p], V::sub(V::mul(dx, radial), V::mul(along_qd, qdx)));
        ay[p] = V::add(ay[p], V::sub(V::mul(dy, radial), V::mul(along_qd, qdy)));
        az[p] = V::add(az[p], V::sub(V::mul(dz, radial), V::mul(along_qd, qdz)));
        if constexpr (kPotential) {
          const T quad = V::sub(V::mul(V::mul(c1_5, dqd), y5), V::mul(V::mul(c0_5, qtr), y3));
          ap[p] = V::add(ap[p], V::add(V::mul(m, y), quad));
        }
      }
    }
    KANOKO_UNROLL_PASS
    for (std::size_t p = 0; p < kP; ++p) {
      const std::size_t o = b + p * kW;
      V::store(acc.x + o, ax[p]);
      V::store(acc.y + o, ay[p]);
      V::store(acc.z + o, az[p]);
      if constexpr (kPotential) V::store(acc.phi + o, ap[p]);
    }
  }
}

/// The table for `V` (and `F`, its float counterpart, for the Fast tables' float far field): each
/// entry chooses the potential variant from acc.phi once per call.
template <class V, class F, KernelMath kMath>
KernelTable make_table() {
  FloatCellKernel float_monopoles = nullptr;
  FloatBodyKernel float_bodies = nullptr;
  if constexpr (kMath == KernelMath::Fast) {
    float_monopoles = [](const FloatTargets& t, const FloatCells& s, float eps2, const Accumulators& acc) {
      if (acc.phi != nullptr) {
        float_point_kernel<F, true>(t, s, eps2, acc);
      } else {
        float_point_kernel<F, false>(t, s, eps2, acc);
      }
    };
    float_bodies = [](const FloatTargets& t, const FloatBodies& s, float eps2, const Accumulators& acc) {
      return acc.phi != nullptr ? float_point_kernel<F, true>(t, s, eps2, acc)
                                : float_point_kernel<F, false>(t, s, eps2, acc);
    };
  }
  return KernelTable{
      [](const TargetBlock& t, const BodySources& s, double eps2, const Accumulators& acc) {
        if (acc.phi != nullptr) {
          body_kernel<V, kMath, true>(t, s, eps2, acc);
        } else {
          body_kernel<V, kMath, false>(t, s, eps2, acc);
        }
      },
      [](const TargetBlock& t, const CellSources& s, double eps2, const Accumulators& acc) {
        if (acc.phi != nullptr) {
          monopole_kernel<V, kMath, true>(t, s, eps2, acc);
        } else {
          monopole_kernel<V, kMath, false>(t, s, eps2, acc);
        }
      },
      [](const TargetBlock& t, const CellSources& s, double eps2, const Accumulators& acc) {
        if (acc.phi != nullptr) {
          quadrupole_kernel<V, kMath, true>(t, s, eps2, acc);
        } else {
          quadrupole_kernel<V, kMath, false>(t, s, eps2, acc);
        }
      },
      float_monopoles,
      float_bodies,
  };
}

}  // namespace
}  // namespace kanoko::integrators::detail
