// The far field in single precision (integrators/forces/barnes_hut.cpp, float_far_field_fits):
//   * the float kernel's 1/√r² and sums are within a few float ulps of the exact values over the
//     whole range the evaluator lets it see, and give the same bits on every instruction set;
//   * summed in float, the monopoles change the double sums by parts in 10⁷, also far from the
//     origin (the offsets from the group's centre keep float's relative precision there);
//   * where float could not hold the numbers (very large or very small systems), at small θ and
//     for quadrupoles, the far field stays in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "integrators/forces/body_distributions.hpp"
#include "integrators/forces/force_kernels.hpp"
#include "integrators/forces/repulsion.hpp"

namespace kanoko::integrators {
namespace {

/// Current evaluator and barnes-hut-v1 on the same tree and lists (same group size, no refit):
/// they differ only in the kernels (the fast double kernels, with the float far field, against
/// the exact double kernels).
RepulsionParams same_lists(Evaluator evaluator, double theta = 0.5) {
  RepulsionParams p;
  p.strength = 1.0;
  p.evaluator = evaluator;
  p.theta = theta;
  p.group_size = 384;
  p.reuse_tree = false;
  p.threads = 1;
  return p;
}

struct Evaluation {
  Eigen::Matrix3Xd force;
  bool float_far_field = false;
};

Evaluation evaluate(const Eigen::Matrix3Xd& x, const RepulsionParams& p) {
  ForceScratch scratch;
  Evaluation e{Eigen::Matrix3Xd::Zero(3, x.cols()), false};
  add_repulsion(x, p, scratch, e.force);
  e.float_far_field = scratch.stats().float_far_field;
  return e;
}

/// Per body, |a − b| / |b|, sorted.
std::vector<double> relative_differences(const Eigen::Matrix3Xd& a, const Eigen::Matrix3Xd& b) {
  std::vector<double> d(static_cast<std::size_t>(a.cols()));
  for (Eigen::Index i = 0; i < a.cols(); ++i) d[static_cast<std::size_t>(i)] = (a.col(i) - b.col(i)).norm() / b.col(i).norm();
  std::sort(d.begin(), d.end());
  return d;
}

TEST(FloatFarField, ChangesTheDoubleSumsByPartsInTenMillionAlsoFarFromTheOrigin) {
  // Measured (Plummer, 20k bodies): median 4e-8, largest 1.2e-6 near the origin and 10⁶ scale
  // lengths away alike. Float coordinates taken from the origin instead of the group's centre
  // lose 10⁶ × float's precision there (the check fails without the offsets).
  const Eigen::Matrix3Xd near_origin = plummer_sphere(20'000, 17);
  for (double shift : {0.0, 1e6}) {
    const Eigen::Matrix3Xd x = near_origin.colwise() + Eigen::Vector3d(shift, -0.5 * shift, 0.25 * shift);
    const Evaluation fast = evaluate(x, same_lists(Evaluator::BarnesHut));
    const Evaluation exact = evaluate(x, same_lists(Evaluator::BarnesHutV1));
    ASSERT_TRUE(fast.float_far_field);
    ASSERT_FALSE(exact.float_far_field);
    const std::vector<double> d = relative_differences(fast.force, exact.force);
    const double median = d[d.size() / 2];
    const double largest = d.back();
    std::printf("shift %g: median %.3g, largest %.3g\n", shift, median, largest);
    EXPECT_GT(largest, 0.0) << "the far field was summed in float";
    EXPECT_LE(median, 3e-7) << "shift " << shift;
    EXPECT_LE(largest, 2e-5) << "shift " << shift;
  }
}

TEST(FloatFarField, StaysInDoubleWhereFloatCannotHoldTheNumbers) {
  const Eigen::Matrix3Xd unit = plummer_sphere(4000, 5);
  EXPECT_TRUE(evaluate(unit, same_lists(Evaluator::BarnesHut)).float_far_field);
  RepulsionParams quadrupole = same_lists(Evaluator::BarnesHut);
  quadrupole.multipole = Multipole::Quadrupole;
  EXPECT_FALSE(evaluate(unit, quadrupole).float_far_field) << "quadrupoles";
  EXPECT_FALSE(evaluate(unit, same_lists(Evaluator::BarnesHut, 0.01)).float_far_field) << "theta 0.01";
  // Scaled by 10²⁰, float would overflow r²; by 10⁻²⁰, y³; 10¹² and 10⁻¹² are outside the margins
  // float_far_field_fits keeps (float would still give parts in 10⁷ there). In double the
  // fast kernels agree with the exact ones to the fast cell kernels' 5e-12 (float would be 1e-7).
  for (double scale : {1e20, 1e12, 1e-12, 1e-20}) {
    const Eigen::Matrix3Xd x = unit * scale;
    const Evaluation fast = evaluate(x, same_lists(Evaluator::BarnesHut));
    const Evaluation exact = evaluate(x, same_lists(Evaluator::BarnesHutV1));
    EXPECT_FALSE(fast.float_far_field) << "scale " << scale;
    ASSERT_TRUE(fast.force.allFinite()) << "scale " << scale;
    EXPECT_LE(relative_differences(fast.force, exact.force).back(), 1e-10) << "scale " << scale;
  }
}

/// The float kernel on one target at distance r from a unit cell, for every instruction set.
struct OneCell {
  double force = 0;  ///< x component of m d y³ with the cell at the origin, the target at (r, 0, 0)
  double potential = 0;
};

OneCell one_cell(const detail::KernelTable& kernels, float r) {
  std::vector<float> tx(detail::kTargetBlock, 0.0F), zero(detail::kTargetBlock, 0.0F);
  tx[0] = r;
  const float cx = 0.0F, cy = 0.0F, cz = 0.0F, m = 1.0F;
  std::vector<double> ax(detail::kTargetBlock, 0.0), ay(ax), az(ax), phi(ax);
  kernels.float_monopoles({tx.data(), zero.data(), zero.data(), detail::kTargetBlock}, {&cx, &cy, &cz, &m, 1}, 0.0F,
                          {ax.data(), ay.data(), az.data(), phi.data()});
  return {ax[0], phi[0]};
}

TEST(FloatFarField, InverseSquareRootWithinAFewUlpsOverTheWholeRangeOnEveryInstructionSet) {
  // Distances over [1e-9, 1e9] (the range float_far_field_fits allows), 64 per octave: force
  // 1/r² and potential 1/r within 4 float ulps (2⁻²¹ relative), the same bits for every SIMD table.
  const detail::KernelTable& portable = detail::portable_kernels(detail::KernelMath::Fast);
  ASSERT_NE(portable.float_monopoles, nullptr);
  ASSERT_EQ(detail::portable_kernels(detail::KernelMath::Exact).float_monopoles, nullptr);
  std::vector<const detail::KernelTable*> others;
  if (simd_supported(Simd::Avx2)) others.push_back(&detail::avx2_kernels(detail::KernelMath::Fast));
  if (simd_supported(Simd::Avx512)) others.push_back(&detail::avx512_kernels(detail::KernelMath::Fast));
  const double tolerance = std::ldexp(1.0, -21);
  double worst_force = 0, worst_potential = 0;
  for (double log2r = std::log2(1e-9); log2r <= std::log2(1e9); log2r += 1.0 / 64) {
    const auto r = static_cast<float>(std::exp2(log2r));
    const double exact_r = r;
    const OneCell c = one_cell(portable, r);
    worst_force = std::max(worst_force, std::abs(c.force * exact_r * exact_r - 1.0));
    worst_potential = std::max(worst_potential, std::abs(c.potential * exact_r - 1.0));
    for (const detail::KernelTable* t : others) {
      const OneCell s = one_cell(*t, r);
      ASSERT_EQ(s.force, c.force) << "r = " << r;
      ASSERT_EQ(s.potential, c.potential) << "r = " << r;
    }
  }
  std::printf("worst relative error: force %.3g, potential %.3g (float ulp %.3g)\n", worst_force, worst_potential,
              std::ldexp(1.0, -23));
  EXPECT_LE(worst_force, tolerance);
  EXPECT_LE(worst_potential, tolerance);
  EXPECT_EQ(one_cell(portable, 0.0F).force, 0.0) << "r² = 0 gives 0";
}

}  // namespace
}  // namespace kanoko::integrators
