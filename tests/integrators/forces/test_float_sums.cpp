// The far field and the near bodies in single precision (integrators/forces/barnes_hut.cpp,
// float_sums_fit, kFloatNearMaxY):
//   * the float kernels' 1/√r² and sums are within a few float ulps of the exact values over the
//     whole range the evaluator lets them see, and give the same bits on every instruction set;
//   * summed in float, the monopoles and bodies change the double sums by parts in 10⁷, also far
//     from the origin (the offsets from the group's centre keep float's relative precision there);
//   * two close bodies keep the digits of their difference (the offsets in two float parts);
//   * a group with a pair closer than float's range allows is summed again in double;
//   * where float could not hold the numbers (very large or very small systems) and at small θ
//     the sums stay in double; quadrupoles keep the far field in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "integrators/forces/body_distributions.hpp"
#include "integrators/forces/force_kernels.hpp"
#include "integrators/forces/repulsion.hpp"

namespace kanoko::integrators {
namespace KANOKO_UNITY_ID {

/// Current evaluator and barnes-hut-v1 on the same tree and lists (same group size, no refit):
/// they differ only in the kernels (the float sums and the fast double kernels, against the exact
/// double kernels).
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
  bool float_near_field = false;
  std::uint64_t near_field_in_double = 0;
};

Evaluation evaluate(const Eigen::Matrix3Xd& x, const RepulsionParams& p) {
  ForceScratch scratch;
  Evaluation e{Eigen::Matrix3Xd::Zero(3, x.cols())};
  add_repulsion(x, p, scratch, e.force);
  e.float_far_field = scratch.stats().float_far_field;
  e.float_near_field = scratch.stats().float_near_field;
  e.near_field_in_double = scratch.stats().near_field_in_double;
  return e;
}

/// Per body, |a − b| / |b|, sorted.
std::vector<double> relative_differences(const Eigen::Matrix3Xd& a, const Eigen::Matrix3Xd& b) {
  std::vector<double> d(static_cast<std::size_t>(a.cols()));
  for (Eigen::Index i = 0; i < a.cols(); ++i) d[static_cast<std::size_t>(i)] = (a.col(i) - b.col(i)).norm() / b.col(i).norm();
  std::sort(d.begin(), d.end());
  return d;
}

TEST(FloatSums, ChangeTheDoubleSumsByPartsInTenMillionAlsoFarFromTheOrigin) {
  // Measured (Plummer, 20k bodies): median 4.8e-8, largest 1.8e-6 near the origin and 10⁶ scale lengths away alike.
  // Float coordinates taken from the origin instead of the group's centre lose 10⁶ × float's
  // precision there (the check fails without the offsets).
  const Eigen::Matrix3Xd near_origin = plummer_sphere(20'000, 17);
  for (double shift : {0.0, 1e6}) {
    const Eigen::Matrix3Xd x = near_origin.colwise() + Eigen::Vector3d(shift, -0.5 * shift, 0.25 * shift);
    const Evaluation fast = evaluate(x, same_lists(Evaluator::BarnesHut));
    const Evaluation exact = evaluate(x, same_lists(Evaluator::BarnesHutV1));
    ASSERT_TRUE(fast.float_far_field);
    ASSERT_TRUE(fast.float_near_field);
    EXPECT_EQ(fast.near_field_in_double, 0U);
    ASSERT_FALSE(exact.float_far_field);
    ASSERT_FALSE(exact.float_near_field);
    const std::vector<double> d = relative_differences(fast.force, exact.force);
    const double median = d[d.size() / 2];
    const double largest = d.back();
    std::printf("shift %g: median %.3g, largest %.3g\n", shift, median, largest);
    EXPECT_GT(largest, 0.0) << "the sums were taken in float";
    EXPECT_LE(median, 3e-7) << "shift " << shift;
    EXPECT_LE(largest, 2e-5) << "shift " << shift;
  }
}

TEST(FloatSums, StayInDoubleWhereFloatCannotHoldTheNumbers) {
  const Eigen::Matrix3Xd unit = plummer_sphere(4000, 5);
  const Evaluation at_unit_scale = evaluate(unit, same_lists(Evaluator::BarnesHut));
  EXPECT_TRUE(at_unit_scale.float_far_field);
  EXPECT_TRUE(at_unit_scale.float_near_field);
  RepulsionParams quadrupole = same_lists(Evaluator::BarnesHut);
  quadrupole.multipole = Multipole::Quadrupole;
  const Evaluation with_quadrupoles = evaluate(unit, quadrupole);
  EXPECT_FALSE(with_quadrupoles.float_far_field) << "quadrupoles";
  EXPECT_TRUE(with_quadrupoles.float_near_field) << "quadrupoles keep the bodies in float";
  const Evaluation small_theta = evaluate(unit, same_lists(Evaluator::BarnesHut, 0.01));
  EXPECT_FALSE(small_theta.float_far_field) << "theta 0.01";
  EXPECT_FALSE(small_theta.float_near_field) << "theta 0.01";
  // Scaled by 10²⁰, float would overflow r²; by 10⁻²⁰, y³; 10¹² and 10⁻¹² are outside the margins
  // float_sums_fit keeps (float would still give parts in 10⁷ there). In double the fast kernels
  // agree with the exact ones to the fast cell kernels' 5e-12 (float would be 1e-7).
  for (double scale : {1e20, 1e12, 1e-12, 1e-20}) {
    const Eigen::Matrix3Xd x = unit * scale;
    const Evaluation fast = evaluate(x, same_lists(Evaluator::BarnesHut));
    const Evaluation exact = evaluate(x, same_lists(Evaluator::BarnesHutV1));
    EXPECT_FALSE(fast.float_far_field) << "scale " << scale;
    EXPECT_FALSE(fast.float_near_field) << "scale " << scale;
    ASSERT_TRUE(fast.force.allFinite()) << "scale " << scale;
    EXPECT_LE(relative_differences(fast.force, exact.force).back(), 1e-10) << "scale " << scale;
  }
}

/// The Fast tables of the SIMD instruction sets this CPU has (to compare with the portable one).
std::vector<const detail::KernelTable*> simd_fast_tables() {
  std::vector<const detail::KernelTable*> tables;
  if (simd_supported(Simd::Avx2)) tables.push_back(&detail::avx2_kernels(detail::KernelMath::Fast));
  if (simd_supported(Simd::Avx512)) tables.push_back(&detail::avx512_kernels(detail::KernelMath::Fast));
  return tables;
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
  kernels.float_monopoles({tx.data(), zero.data(), zero.data(), nullptr, nullptr, nullptr, detail::kTargetBlock},
                          {&cx, &cy, &cz, &m, 1}, 0.0F, {ax.data(), ay.data(), az.data(), phi.data()});
  return {ax[0], phi[0]};
}

/// The float body kernel on one target at (1 + r, 0, 0) from a body at (1, 0, 0), both written
/// as two float parts (as the evaluator does with offsets from the group's centre), so that r may
/// be far below float's precision at 1. Also returns the kernel's largest y.
struct OneBody {
  double force = 0;
  double potential = 0;
  float y_max = 0;
};

OneBody one_body(const detail::KernelTable& kernels, double r) {
  const double target = 1.0 + r;  // exact for the r the test uses
  std::vector<float> tx(detail::kTargetBlock, 0.0F), tlx(tx), zero(tx);
  tx[0] = static_cast<float>(target);
  tlx[0] = static_cast<float>(target - static_cast<double>(tx[0]));
  for (std::size_t k = 1; k < detail::kTargetBlock; ++k) tx[k] = 1.0F;  // padding at the source: y = 0
  const float sx = 1.0F, sy = 0.0F, sz = 0.0F, slx = 0.0F, sly = 0.0F, slz = 0.0F;
  std::vector<double> ax(detail::kTargetBlock, 0.0), ay(ax), az(ax), phi(ax);
  const float y_max = kernels.float_bodies(
      {tx.data(), zero.data(), zero.data(), tlx.data(), zero.data(), zero.data(), detail::kTargetBlock},
      {&sx, &sy, &sz, &slx, &sly, &slz, 1}, 0.0F, {ax.data(), ay.data(), az.data(), phi.data()});
  return {ax[0], phi[0], y_max};
}

TEST(FloatSums, InverseSquareRootWithinAFewUlpsOverTheWholeRangeOnEveryInstructionSet) {
  // Distances over [1e-9, 1e9] (the range float_sums_fit allows), 64 per octave: force
  // 1/r² and potential 1/r within 4 float ulps (2⁻²¹ relative), the same bits for every SIMD table.
  const detail::KernelTable& portable = detail::portable_kernels(detail::KernelMath::Fast);
  ASSERT_NE(portable.float_monopoles, nullptr);
  ASSERT_EQ(detail::portable_kernels(detail::KernelMath::Exact).float_monopoles, nullptr);
  const std::vector<const detail::KernelTable*> others = simd_fast_tables();
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

TEST(FloatSums, TwoCloseBodiesKeepTheDigitsOfTheirDifferenceOnEveryInstructionSet) {
  // Separations from 2⁻³⁸ to 2 at one unit from the group's centre, where float alone resolves
  // only 6e-8: with the second float parts, force 1/r² and potential 1/r within 2⁻²¹ relative,
  // the same bits for every SIMD table, and the kernel reports y = 1/r. (Without the second
  // parts, the force at r = 2⁻³⁰ would be 0 and at r = 1e-6 off by 6 %.)
  const detail::KernelTable& portable = detail::portable_kernels(detail::KernelMath::Fast);
  ASSERT_NE(portable.float_bodies, nullptr);
  ASSERT_EQ(detail::portable_kernels(detail::KernelMath::Exact).float_bodies, nullptr);
  const std::vector<const detail::KernelTable*> others = simd_fast_tables();
  const double tolerance = std::ldexp(1.0, -21);
  double worst_force = 0, worst_potential = 0;
  for (double log2r = -38; log2r <= 1; log2r += 1.0 / 16) {
    const double r = (1.0 + std::exp2(log2r)) - 1.0;  // the separation as the target holds it
    const OneBody b = one_body(portable, r);
    worst_force = std::max(worst_force, std::abs(b.force * r * r - 1.0));
    worst_potential = std::max(worst_potential, std::abs(b.potential * r - 1.0));
    EXPECT_LE(std::abs(static_cast<double>(b.y_max) * r - 1.0), tolerance) << "r = " << r;
    for (const detail::KernelTable* t : others) {
      const OneBody o = one_body(*t, r);
      ASSERT_EQ(o.force, b.force) << "r = " << r;
      ASSERT_EQ(o.potential, b.potential) << "r = " << r;
      ASSERT_EQ(o.y_max, b.y_max) << "r = " << r;
    }
  }
  std::printf("worst relative error: force %.3g, potential %.3g\n", worst_force, worst_potential);
  EXPECT_LE(worst_force, tolerance);
  EXPECT_LE(worst_potential, tolerance);
  const OneBody same = one_body(portable, 0.0);
  EXPECT_EQ(same.force, 0.0) << "r² = 0 gives 0";
  EXPECT_EQ(same.y_max, 0.0F);
}

/// A Plummer sphere moved `shift` scale lengths away, with `pairs` of its bodies each given a
/// companion at `separation` (in a direction that varies from pair to pair).
Eigen::Matrix3Xd with_close_pairs(Eigen::Index bodies, Eigen::Index pairs, double separation, double shift) {
  const Eigen::Matrix3Xd sphere = plummer_sphere(static_cast<std::size_t>(bodies), 23);
  Eigen::Matrix3Xd x(3, bodies + pairs);
  x.leftCols(bodies) = sphere.colwise() + Eigen::Vector3d(shift, -0.5 * shift, 0.25 * shift);
  for (Eigen::Index k = 0; k < pairs; ++k) {
    const Eigen::Index i = k * (bodies / pairs);
    const double a = 0.7 * static_cast<double>(k);
    x.col(bodies + k) = x.col(i) + separation * Eigen::Vector3d(std::cos(a), std::sin(a), 0.3).normalized();
  }
  return x;
}

TEST(FloatSums, CloseBodiesFeelEachOtherAsInDouble) {
  // Pairs 1e-6 and 1e-9 scale lengths apart, whose mutual force dominates theirs, 10⁶ scale
  // lengths from the origin: the float sums agree with the exact double kernels to parts in 10⁷
  // on those bodies (measured 2.6e-7 and 1.0e-7). With the offsets in one float part, a difference of 1e-6
  // between offsets of order 1 would be off by 6 % and one of 1e-9 would vanish.
  constexpr Eigen::Index kBodies = 6000, kPairs = 40;
  for (double separation : {1e-6, 1e-9}) {
    const Eigen::Matrix3Xd x = with_close_pairs(kBodies, kPairs, separation, 1e6);
    const Evaluation fast = evaluate(x, same_lists(Evaluator::BarnesHut));
    const Evaluation exact = evaluate(x, same_lists(Evaluator::BarnesHutV1));
    ASSERT_TRUE(fast.float_near_field);
    EXPECT_EQ(fast.near_field_in_double, 0U) << "1/r = " << 1.0 / separation << " is within float's range";
    double worst = 0;
    for (Eigen::Index k = 0; k < kPairs; ++k) {
      for (const Eigen::Index i : {k * (kBodies / kPairs), kBodies + k}) {
        worst = std::max(worst, (fast.force.col(i) - exact.force.col(i)).norm() / exact.force.col(i).norm());
      }
    }
    std::printf("separation %g: worst relative difference on the pairs %.3g\n", separation, worst);
    EXPECT_LE(worst, 1e-6) << "separation " << separation;
  }
}

TEST(FloatSums, AGroupWithAPairTooCloseForFloatIsSummedInDouble) {
  // With ε = 0, pairs 1e-13 apart (1/r = 1e13, past kFloatNearMaxY = 2⁴⁰ ≈ 1.1e12, where y³ would
  // overflow float): their groups are summed in double, so their forces agree with the exact
  // kernels as the fast double kernels do (about one ulp), and every force is finite.
  constexpr Eigen::Index kBodies = 6000, kPairs = 3;
  const Eigen::Matrix3Xd x = with_close_pairs(kBodies, kPairs, 1e-13, 0.0);
  const Evaluation fast = evaluate(x, same_lists(Evaluator::BarnesHut));
  const Evaluation exact = evaluate(x, same_lists(Evaluator::BarnesHutV1));
  ASSERT_TRUE(fast.float_near_field);
  EXPECT_GE(fast.near_field_in_double, 1U);
  EXPECT_LE(fast.near_field_in_double, 2U * kPairs) << "only the groups of the pairs";
  ASSERT_TRUE(fast.force.allFinite());
  for (Eigen::Index k = 0; k < kPairs; ++k) {
    for (const Eigen::Index i : {k * (kBodies / kPairs), kBodies + k}) {
      EXPECT_LE((fast.force.col(i) - exact.force.col(i)).norm() / exact.force.col(i).norm(), 1e-12) << "body " << i;
    }
  }
  // A softening above 2⁻⁴⁰ keeps every pair within float's range.
  RepulsionParams softened = same_lists(Evaluator::BarnesHut);
  softened.softening = 1e-6;
  EXPECT_EQ(evaluate(x, softened).near_field_in_double, 0U);
}

}  // namespace
}  // namespace kanoko::integrators
