// "No allocation per step after warm-up": the global operator new of this test program counts
// the allocations made while a test has switched counting on.
#include <gtest/gtest.h>

#include "integrators/forces/body_distributions.hpp"
#include "integrators/forces/forces.hpp"
#include "integrators/steppers/steppers.hpp"
#include "tests/support/allocation_counter.hpp"

namespace kanoko::integrators {
namespace KANOKO_UNITY_ID {

using test::allocations_in;

int* volatile g_sink = nullptr;  // keeps the compiler from eliding the allocation below

TEST(NoAllocation, CounterSeesAllocations) {
  EXPECT_EQ(allocations_in([] {
              g_sink = new int[100];
              delete[] g_sink;
            }),
            1U);
}

TEST(NoAllocation, RepulsionAfterWarmUp) {
  const Eigen::Matrix3Xd x = plummer_sphere(6'000, 3);
  for (Evaluator e : {Evaluator::Direct, Evaluator::BarnesHut}) {
    for (Multipole m : {Multipole::Monopole, Multipole::Quadrupole}) {
      RepulsionParams p;
      p.strength = 1;
      p.evaluator = e;
      p.multipole = m;
      ForceScratch scratch;
      Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, x.cols());
      add_repulsion(x, p, scratch, f);  // warm-up: the scratch takes its size
      Eigen::Matrix3Xd moved = x * 1.01;  // the next step's positions
      EXPECT_EQ(allocations_in([&] {
                  for (int k = 0; k < 3; ++k) add_repulsion(moved, p, scratch, f);
                }),
                0U)
          << to_string(e) << ", " << to_string(m);
    }
  }
}

TEST(NoAllocation, StepsAfterWarmUp) {
  // Every stepper driving the evaluation of every term (integrators::derivative), the tree
  // refitted within each step as the model does.
  const Eigen::Matrix3Xd x0 = plummer_sphere(3'000, 4);
  const auto n = x0.cols();
  ForceTerms terms;
  terms.mass = Eigen::VectorXd::LinSpaced(n, 1.0, 2.0);
  for (std::uint32_t i = 0; i + 1 < n; ++i) {
    terms.spring_edges.push_back({i, i + 1});
    terms.spring_length.push_back(0.05);
    terms.spring_k.push_back(1.0);
  }
  terms.repulsion.strength = 1e-4;
  terms.repulsion.evaluator = Evaluator::BarnesHut;
  for (std::uint32_t i = 0; i + 9 < n; i += 4) terms.pulls.push_back({i, i + 9, 0.5});
  terms.symmetric_pulls = true;
  terms.centre_strength = 0.1;
  terms.friction = 0.2;
  DerivativeScratch scratch;
  int evaluations_in_step = 0;
  auto f = [&](double, const Eigen::VectorXd& y, Eigen::VectorXd& d) {
    derivative(terms, y, evaluations_in_step++ > 0, scratch, d);
  };
  for (const auto& info : registry()) {
    Eigen::VectorXd y = Eigen::VectorXd::Zero(6 * n);
    y.head(3 * n) = Eigen::Map<const Eigen::VectorXd>(x0.data(), 3 * n);
    auto stepper = info.create(f, y.size(), StepperOptions{});
    evaluations_in_step = 0;
    stepper->step(0, 1e-3, y);
    EXPECT_EQ(allocations_in([&] {
                for (int k = 1; k < 4; ++k) {
                  evaluations_in_step = 0;
                  stepper->step(k * 1e-3, 1e-3, y);
                }
              }),
              0U)
        << info.name;
  }
}

}  // namespace
}  // namespace kanoko::integrators
