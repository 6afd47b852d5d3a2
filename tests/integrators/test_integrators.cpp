// Integrators against analytic answers, parameterised over the registry.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <set>

#include "integrators/direct_forces.hpp"
#include "integrators/integrator.hpp"

namespace kanoko::integrators {
namespace {

/// x'' = -ω² x as y = [x, v]; exact x = cos ωt.
struct Harmonic {
  double omega = 2.0;
  void operator()(double /*t*/, const Eigen::VectorXd& y, Eigen::VectorXd& dydt) const {
    dydt[0] = y[1];
    dydt[1] = -omega * omega * y[0];
  }
};

double harmonic_error(const IntegratorInfo& info, int steps_per_period, int periods) {
  Harmonic h;
  auto stepper = info.create(h, 2);
  Eigen::VectorXd y(2);
  y << 1.0, 0.0;
  const double period = 2 * std::numbers::pi / h.omega;
  const double dt = period / steps_per_period;
  const int steps = steps_per_period * periods;
  for (int k = 0; k < steps; ++k) stepper->step(k * dt, dt, y);
  const double t = steps * dt;
  return std::hypot(y[0] - std::cos(h.omega * t), y[1] + h.omega * std::sin(h.omega * t));
}

/// Planar Kepler problem, GM = 1: y = [x, y, vx, vy].
void kepler(double /*t*/, const Eigen::VectorXd& s, Eigen::VectorXd& d) {
  const double r2 = s[0] * s[0] + s[1] * s[1];
  const double inv_r3 = 1.0 / (r2 * std::sqrt(r2));
  d[0] = s[2];
  d[1] = s[3];
  d[2] = -s[0] * inv_r3;
  d[3] = -s[1] * inv_r3;
}

double kepler_energy(const Eigen::VectorXd& s) {
  return 0.5 * (s[2] * s[2] + s[3] * s[3]) - 1.0 / std::hypot(s[0], s[1]);
}

/// Orbit with semi-major axis 1 and eccentricity e, started at pericentre.
Eigen::VectorXd kepler_start(double e) {
  Eigen::VectorXd s(4);
  s << 1.0 - e, 0.0, 0.0, std::sqrt((1.0 + e) / (1.0 - e));
  return s;
}

class RegistryTest : public ::testing::TestWithParam<IntegratorInfo> {};

TEST_P(RegistryTest, DescribesItself) {
  const auto& info = GetParam();
  EXPECT_FALSE(info.name.empty());
  EXPECT_GT(info.description.size(), 40U);
  EXPECT_GT(info.order, 0);
  EXPECT_GT(info.evaluations_per_step, 0);
  EXPECT_EQ(find_integrator(info.name), &*std::find_if(registry().begin(), registry().end(),
                                                        [&](const auto& e) { return e.name == info.name; }));
}

TEST_P(RegistryTest, CountsEvaluations) {
  const auto& info = GetParam();
  auto stepper = info.create(Harmonic{}, 2);
  Eigen::VectorXd y(2);
  y << 1.0, 0.0;
  for (int k = 0; k < 10; ++k) stepper->step(k * 0.01, 0.01, y);
  EXPECT_EQ(stepper->evaluations(), static_cast<std::uint64_t>(10 * info.evaluations_per_step));
}

TEST_P(RegistryTest, ObservedOrderMatchesDeclaredOrder) {
  // Halving dt twice: the error ratio should be 2^order (16 for RK4). We accept the observed
  // order within [order - 0.3, order + 1.0] (issue: "between 3.7 and 5.0" for RK4).
  const auto& info = GetParam();
  const double e1 = harmonic_error(info, 50, 2);
  const double e2 = harmonic_error(info, 100, 2);
  const double e3 = harmonic_error(info, 200, 2);
  const double order12 = std::log2(e1 / e2);
  const double order23 = std::log2(e2 / e3);
  EXPECT_GE(order12, info.order - 0.3);
  EXPECT_LE(order12, info.order + 1.0);
  EXPECT_GE(order23, info.order - 0.3);
  EXPECT_LE(order23, info.order + 1.0);
}

TEST_P(RegistryTest, KeplerOrbitConservesEnergyAndAngularMomentum) {
  // e = 0.5, 10 periods (period 2π for a = 1), 1600 steps per period, no friction.
  const auto& info = GetParam();
  auto stepper = info.create(kepler, 4);
  Eigen::VectorXd s = kepler_start(0.5);
  const double e0 = kepler_energy(s);
  const double l0 = s[0] * s[3] - s[1] * s[2];
  const int steps_per_period = 1600;
  const double dt = 2 * std::numbers::pi / steps_per_period;
  for (int k = 0; k < 10 * steps_per_period; ++k) stepper->step(k * dt, dt, s);
  constexpr double kRelativeEnergyTolerance = 1e-9;
  EXPECT_LE(std::abs((kepler_energy(s) - e0) / e0), kRelativeEnergyTolerance);
  EXPECT_LE(std::abs((s[0] * s[3] - s[1] * s[2] - l0) / l0), kRelativeEnergyTolerance);
  // Back at pericentre after whole periods.
  EXPECT_NEAR(s[0], 0.5, 1e-6);
  EXPECT_NEAR(s[1], 0.0, 1e-5);
}

TEST_P(RegistryTest, KeplerToleranceCatchesTooLargeAStep) {
  // The same check with 10x fewer steps per period must fail the tolerance: it can fail.
  const auto& info = GetParam();
  auto stepper = info.create(kepler, 4);
  Eigen::VectorXd s = kepler_start(0.5);
  const double e0 = kepler_energy(s);
  const int steps_per_period = 160;
  const double dt = 2 * std::numbers::pi / steps_per_period;
  for (int k = 0; k < 10 * steps_per_period; ++k) stepper->step(k * dt, dt, s);
  EXPECT_GT(std::abs((kepler_energy(s) - e0) / e0), 1e-9);
}

TEST_P(RegistryTest, DampedSpringMatchesAnalyticSolution) {
  // x'' = -k x - β x', underdamped: x = e^{-βt/2} (cos ωd t + (β / 2ωd) sin ωd t).
  const auto& info = GetParam();
  const double k = 4.0, beta = 0.6;
  auto f = [=](double, const Eigen::VectorXd& y, Eigen::VectorXd& d) {
    d[0] = y[1];
    d[1] = -k * y[0] - beta * y[1];
  };
  auto stepper = info.create(f, 2);
  Eigen::VectorXd y(2);
  y << 1.0, 0.0;
  const double dt = 0.001;
  double energy = 0.5 * k;
  for (int n = 0; n < 5000; ++n) {
    stepper->step(n * dt, dt, y);
    const double e = 0.5 * y[1] * y[1] + 0.5 * k * y[0] * y[0];
    ASSERT_LE(e, energy + 1e-15) << "energy must decrease monotonically with friction on (step " << n << ")";
    energy = e;
  }
  const double t = 5000 * dt;
  const double wd = std::sqrt(k - beta * beta / 4);
  const double exact = std::exp(-beta * t / 2) * (std::cos(wd * t) + beta / (2 * wd) * std::sin(wd * t));
  EXPECT_NEAR(y[0], exact, 1e-10);
}

INSTANTIATE_TEST_SUITE_P(Registry, RegistryTest, ::testing::ValuesIn(registry()),
                         [](const ::testing::TestParamInfo<IntegratorInfo>& p) { return p.param.name; });

TEST(Registry, NamesAreUniqueAndRk4IsThere) {
  const auto names = integrator_names();
  std::set<std::string> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), names.size());
  ASSERT_NE(find_integrator("rk4"), nullptr);
  EXPECT_EQ(find_integrator("rk4")->order, 4);
  EXPECT_EQ(find_integrator("nope"), nullptr);
}

TEST(DirectRepulsion, TwoBodiesInverseSquare) {
  Eigen::Matrix3Xd x(3, 2);
  x.col(0) << 0, 0, 0;
  x.col(1) << 2, 0, 0;
  Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, 2);
  add_repulsion_direct(x, 3.0, 0.0, f);
  EXPECT_DOUBLE_EQ(f(0, 0), -3.0 / 4.0);  // pushed away from body 1
  EXPECT_DOUBLE_EQ(f(0, 1), 3.0 / 4.0);
  EXPECT_EQ(f.row(1).squaredNorm() + f.row(2).squaredNorm(), 0.0);
}

TEST(DirectRepulsion, MatchesNaiveSumAndConservesMomentum) {
  std::srand(7);
  const Eigen::Matrix3Xd x = Eigen::Matrix3Xd::Random(3, 40);
  Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, 40);
  add_repulsion_direct(x, 0.5, 0.1, f);
  for (Eigen::Index i = 0; i < 40; ++i) {
    Eigen::Vector3d expected = Eigen::Vector3d::Zero();
    for (Eigen::Index j = 0; j < 40; ++j) {
      if (j == i) continue;
      const Eigen::Vector3d d = x.col(i) - x.col(j);
      expected += 0.5 * d / std::pow(d.squaredNorm() + 0.01, 1.5);
    }
    EXPECT_LT((f.col(i) - expected).norm(), 1e-12 * (1 + expected.norm()));
  }
  EXPECT_LT(f.rowwise().sum().norm(), 1e-12);
}

TEST(DirectRepulsion, CoincidentUnsoftenedBodiesAreSkipped) {
  Eigen::Matrix3Xd x = Eigen::Matrix3Xd::Zero(3, 2);
  Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, 2);
  add_repulsion_direct(x, 1.0, 0.0, f);
  EXPECT_TRUE(f.allFinite());
}

}  // namespace
}  // namespace kanoko::integrators
