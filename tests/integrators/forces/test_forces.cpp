// The force evaluation over the terms of an interval (integrators/forces/forces.hpp): each term
// against its formula, their sum, purity (the same inputs give the same bits, whatever the
// scratch held before), the degenerate cases, and the energy account (mechanical energy, forcing
// and friction power) against the derivative it must match. The repulsion's own accuracy is in
// test_repulsion.cpp and test_barnes_hut.cpp; how the model builds the terms is in tests/models.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "integrators/forces/body_distributions.hpp"
#include "integrators/forces/forces.hpp"
#include "integrators/steppers/steppers.hpp"

namespace kanoko::integrators {
namespace KANOKO_UNITY_ID {

/// Two bodies of mass 2 at (0, 0, 0) and (2, 0, 0), at rest, with no term.
ForceTerms two_bodies() {
  ForceTerms t;
  t.mass = Eigen::VectorXd::Constant(2, 2.0);
  return t;
}

Eigen::VectorXd two_body_state() {
  Eigen::VectorXd y = Eigen::VectorXd::Zero(12);
  y.segment(3, 3) << 2, 0, 0;
  return y;
}

Eigen::VectorXd derivative_of(const ForceTerms& t, const Eigen::VectorXd& y) {
  DerivativeScratch scratch;
  Eigen::VectorXd d = Eigen::VectorXd::Constant(y.size(), 99.0);  // every entry must be written
  derivative(t, y, false, scratch, d);
  return d;
}

/// The acceleration of body i in dy/dt.
Eigen::Vector3d acceleration(const Eigen::VectorXd& d, Eigen::Index i) { return d.segment(d.size() / 2 + 3 * i, 3); }

bool bit_identical(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

TEST(ForceTerms, NoTermLeavesBodiesCoasting) {
  ForceTerms t = two_bodies();
  Eigen::VectorXd y = two_body_state();
  y.tail(6) << 1, 2, 3, 4, 5, 6;
  const Eigen::VectorXd d = derivative_of(t, y);
  EXPECT_EQ(d.head(6), y.tail(6));  // dx/dt = v
  EXPECT_EQ(d.tail(6).squaredNorm(), 0.0);
}

TEST(ForceTerms, SpringPullsTowardsItsNaturalLength) {
  ForceTerms t = two_bodies();
  t.spring_edges = {{0, 1}};
  t.spring_length = {1.0};
  t.spring_k = {3.0};
  const Eigen::VectorXd d = derivative_of(t, two_body_state());
  // Stretched by 1: a force of k · 1 = 3 on each, towards the other, over the mass 2.
  EXPECT_EQ(acceleration(d, 0), Eigen::Vector3d(1.5, 0, 0));
  EXPECT_EQ(acceleration(d, 1), Eigen::Vector3d(-1.5, 0, 0));
  t.spring_length = {3.0};  // compressed by 1: pushed apart
  EXPECT_EQ(acceleration(derivative_of(t, two_body_state()), 0), Eigen::Vector3d(-1.5, 0, 0));
}

TEST(ForceTerms, RepulsionIsInverseSquareOverMass) {
  ForceTerms t = two_bodies();
  t.repulsion.strength = 8.0;
  const Eigen::VectorXd d = derivative_of(t, two_body_state());
  EXPECT_DOUBLE_EQ(acceleration(d, 0).x(), -8.0 / 4.0 / 2.0);
  EXPECT_DOUBLE_EQ(acceleration(d, 1).x(), 8.0 / 4.0 / 2.0);
}

TEST(ForceTerms, PullsActOnTheSenderOrOnBothEnds) {
  ForceTerms t = two_bodies();
  t.pulls = {{0, 1, 1.5}};
  Eigen::VectorXd d = derivative_of(t, two_body_state());
  EXPECT_EQ(acceleration(d, 0), Eigen::Vector3d(0.75, 0, 0));  // towards the receiver, whatever the distance
  EXPECT_EQ(acceleration(d, 1), Eigen::Vector3d::Zero());      // the receiver is not pulled back
  t.symmetric_pulls = true;
  d = derivative_of(t, two_body_state());
  EXPECT_EQ(acceleration(d, 0), Eigen::Vector3d(0.75, 0, 0));
  EXPECT_EQ(acceleration(d, 1), Eigen::Vector3d(-0.75, 0, 0));
}

TEST(ForceTerms, CentrePullAndFriction) {
  ForceTerms t = two_bodies();
  t.centre_strength = 0.5;
  t.centre = Eigen::Vector3d(1, 0, 0);
  t.friction = 0.25;
  Eigen::VectorXd y = two_body_state();
  y.tail(6) << 4, 0, 0, 0, 8, 0;
  const Eigen::VectorXd d = derivative_of(t, y);
  // −c (x − centre) / m, then friction −β v independent of the mass.
  EXPECT_EQ(acceleration(d, 0), Eigen::Vector3d(0.25 - 1.0, 0, 0));
  EXPECT_EQ(acceleration(d, 1), Eigen::Vector3d(-0.25, -2.0, 0));
}

TEST(ForceTerms, AFixedForceActsWhateverTheStateAndDoesWork) {
  // The calibration probe's held repulsion: a force per body, the same at any position, which
  // the forcing power counts as the pulls' is.
  ForceTerms t = two_bodies();
  t.fixed_force.resize(3, 2);
  t.fixed_force.col(0) << 2, 0, 8;
  t.fixed_force.col(1) << -4, 6, 0;
  Eigen::VectorXd y = two_body_state();
  for (const double shift : {0.0, 5.0}) {
    y.head(6).array() += shift;
    const Eigen::VectorXd d = derivative_of(t, y);
    EXPECT_EQ(acceleration(d, 0), Eigen::Vector3d(1, 0, 4)) << shift;  // F / m, m = 2
    EXPECT_EQ(acceleration(d, 1), Eigen::Vector3d(-2, 3, 0)) << shift;
  }
  y.tail(6) << 1, 0, 0.25, 0, 0.5, 0;
  EXPECT_DOUBLE_EQ(forcing_power(t, y), 2 * 1 + 8 * 0.25 + 6 * 0.5);
  EXPECT_DOUBLE_EQ(mechanical_energy(t, y), kinetic_energy(t, y));  // no potential
}

TEST(ForceTerms, CoincidentBodiesGiveFiniteForces) {
  ForceTerms t = two_bodies();
  t.spring_edges = {{0, 1}};
  t.spring_length = {1.0};
  t.spring_k = {3.0};
  t.pulls = {{0, 1, 1.5}};
  t.repulsion.strength = 1.0;
  const Eigen::VectorXd d = derivative_of(t, Eigen::VectorXd::Zero(12));  // both at the origin
  EXPECT_TRUE(d.allFinite());
  EXPECT_EQ(d.squaredNorm(), 0.0);  // no direction for any of the three terms
}

/// 200 bodies with every term: springs along a chain, repulsion (Barnes–Hut when `tree`), pulls
/// in both directions, a centre pull, friction and unequal masses.
ForceTerms every_term(bool tree) {
  ForceTerms t;
  const Eigen::Index n = 200;
  t.mass = Eigen::VectorXd::LinSpaced(n, 1.0, 3.0);
  for (std::uint32_t i = 0; i + 1 < n; ++i) {
    t.spring_edges.push_back({i, i + 1});
    t.spring_length.push_back(0.1 + 0.001 * i);
    t.spring_k.push_back(2.0 + 0.01 * i);
  }
  t.repulsion.strength = 1e-3;
  t.repulsion.softening = 0.01;
  t.repulsion.evaluator = tree ? Evaluator::BarnesHut : Evaluator::Direct;
  for (std::uint32_t i = 0; i + 7 < n; i += 5) t.pulls.push_back({i, i + 7, 0.3 + 0.01 * i});
  t.pulls.push_back({150, 3, 2.0});
  t.centre_strength = 0.2;
  t.centre = Eigen::Vector3d(0.1, -0.2, 0.3);
  t.friction = 0.4;
  return t;
}

Eigen::VectorXd every_term_state(std::uint64_t seed) {
  const Eigen::Matrix3Xd x = plummer_sphere(200, seed);
  Eigen::VectorXd y(6 * 200);
  y.head(600) = Eigen::Map<const Eigen::VectorXd>(x.data(), 600);
  y.tail(600) = Eigen::Map<const Eigen::VectorXd>(plummer_sphere(200, seed + 1).data(), 600) * 0.1;
  return y;
}

TEST(ForceTerms, TheDerivativeIsTheSumOfItsTerms) {
  const ForceTerms all = every_term(false);
  const Eigen::VectorXd y = every_term_state(5);
  // Each term alone (masses and state kept), summed: the same accelerations to round-off.
  ForceTerms springs = two_bodies(), repulsion = two_bodies(), pulls = two_bodies(), centre = two_bodies();
  for (ForceTerms* t : {&springs, &repulsion, &pulls, &centre}) t->mass = all.mass;
  springs.spring_edges = all.spring_edges;
  springs.spring_length = all.spring_length;
  springs.spring_k = all.spring_k;
  repulsion.repulsion = all.repulsion;
  pulls.pulls = all.pulls;
  pulls.symmetric_pulls = all.symmetric_pulls;
  centre.centre_strength = all.centre_strength;
  centre.centre = all.centre;
  ForceTerms friction = two_bodies();
  friction.mass = all.mass;
  friction.friction = all.friction;
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(y.size());
  for (const ForceTerms* t : {&springs, &repulsion, &pulls, &centre, &friction}) sum.tail(600) += derivative_of(*t, y).tail(600);
  const Eigen::VectorXd d = derivative_of(all, y);
  EXPECT_EQ(d.head(600), y.tail(600));
  EXPECT_LT((d.tail(600) - sum.tail(600)).norm(), 1e-13 * sum.tail(600).norm());
  for (const ForceTerms* t : {&springs, &repulsion, &pulls, &centre, &friction}) {
    EXPECT_GT(derivative_of(*t, y).tail(600).norm(), 1e-3 * sum.tail(600).norm());  // each term counts
  }
}

TEST(ForceTerms, SameInputsSameBitsWhateverTheScratchHeld) {
  for (bool tree : {false, true}) {
    const ForceTerms t = every_term(tree);
    const Eigen::VectorXd y = every_term_state(7);
    const Eigen::VectorXd fresh = derivative_of(t, y);
    DerivativeScratch used;
    Eigen::VectorXd d(y.size());
    derivative(every_term(!tree), every_term_state(9), false, used, d);  // other terms, other state
    derivative(t, y, false, used, d);
    EXPECT_TRUE(bit_identical(d, fresh)) << tree;
    // Refitting the tree built at y itself changes nothing either.
    derivative(t, y, true, used, d);
    EXPECT_TRUE(bit_identical(d, fresh)) << tree;
  }
}

TEST(ForceTerms, AnEvaluationAtTheLastPositionsTakesItsRepulsion) {
  // A new interval (other pulls, springs, masses) at the same positions: the repulsion is the
  // last evaluation's, and the result is what a fresh evaluation gives. Other positions (by one
  // unit in the last place) or another law sum it again.
  for (bool tree : {false, true}) {
    const ForceTerms t = every_term(tree);
    ForceTerms next = t;
    next.pulls.push_back({4, 90, 1.5});
    next.spring_k[3] = 7.0;
    next.mass[11] = 9.0;
    Eigen::VectorXd y = every_term_state(13);
    DerivativeScratch scratch;
    Eigen::VectorXd d(y.size());
    EXPECT_FALSE(derivative(t, y, false, scratch, d)) << tree;
    y.tail(600) *= 0.5;  // velocities do not matter
    EXPECT_TRUE(derivative(next, y, false, scratch, d)) << tree;
    EXPECT_TRUE(bit_identical(d, derivative_of(next, y))) << tree;
    ForceTerms finer = next;
    finer.repulsion.softening *= 2;
    EXPECT_FALSE(derivative(finer, y, false, scratch, d)) << tree;
    EXPECT_TRUE(bit_identical(d, derivative_of(finer, y))) << tree;
    y[77] = std::nextafter(y[77], 1.0);
    EXPECT_FALSE(derivative(finer, y, false, scratch, d)) << tree;
    EXPECT_TRUE(bit_identical(d, derivative_of(finer, y))) << tree;
  }
}

TEST(ForceTerms, EnergyChangesAsForcingAndFrictionSay) {
  // dE/dt = forcing power − friction power (springs, repulsion and centre are conservative). Over
  // RK4 steps of h the change of E matches the trapezoidal integral of the two powers to O(h²);
  // a wrong sign or factor in any term of the account breaks it by O(1).
  for (bool symmetric : {false, true}) {
    ForceTerms t = every_term(false);
    t.symmetric_pulls = symmetric;
    Eigen::VectorXd y = every_term_state(11);
    DerivativeScratch scratch;
    auto stepper = make_rk4(
        [&](double, const Eigen::VectorXd& s, Eigen::VectorXd& d) { derivative(t, s, false, scratch, d); }, y.size());
    const double h = 1e-3;
    const double e0 = mechanical_energy(t, y);
    double put_in = 0, taken_out = 0;
    double forcing = forcing_power(t, y), friction = friction_power(t, y);
    for (int k = 0; k < 200; ++k) {
      stepper->step(k * h, h, y);
      const double forcing_after = forcing_power(t, y), friction_after = friction_power(t, y);
      put_in += 0.5 * h * (forcing + forcing_after);
      taken_out += 0.5 * h * (friction + friction_after);
      forcing = forcing_after;
      friction = friction_after;
    }
    EXPECT_GT(std::abs(put_in), 1e-3) << symmetric;
    EXPECT_GT(taken_out, 1e-3) << symmetric;
    EXPECT_NEAR(mechanical_energy(t, y) - e0, put_in - taken_out, 1e-5 * (std::abs(put_in) + taken_out)) << symmetric;
  }
}

TEST(ForceTerms, KineticEnergyAndFrictionPowerUseTheMasses) {
  ForceTerms t = two_bodies();
  t.mass << 2.0, 4.0;
  t.friction = 0.5;
  Eigen::VectorXd y = two_body_state();
  y.tail(6) << 1, 0, 0, 0, 2, 0;
  EXPECT_DOUBLE_EQ(kinetic_energy(t, y), 0.5 * (2 * 1 + 4 * 4));
  EXPECT_DOUBLE_EQ(friction_power(t, y), 0.5 * (2 * 1 + 4 * 4));
  EXPECT_DOUBLE_EQ(mechanical_energy(t, y), kinetic_energy(t, y));  // no potential without terms
}

}  // namespace
}  // namespace kanoko::integrators
