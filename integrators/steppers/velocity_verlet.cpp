// Velocity Verlet (kick–drift–kick) for y = [q; v] with dq/dt = v and dv/dt = a(t, q, v):
//
//   v½ = v + h/2 a(t, q, v)
//   q' = q + h v½
//   v' = v½ + h/2 a(t + h, q', ṽ),   ṽ = v½ + h/2 a(t, q, v)  (an Euler prediction of v')
//
// When a does not depend on v this is the textbook method: symplectic, time-reversible, second
// order, energy error bounded instead of drifting. Kanoko's friction (−β v) does depend on v; the
// predicted ṽ is accurate to O(h²), which keeps the method second order with friction on at the
// price of the symplectic property (which a damped system has no use for). The acceleration at
// the end of a step is the one at the start of the next, so a step costs one evaluation.
#include <utility>

#include "integrators/steppers/steppers.hpp"
#include "src/base/check.hpp"

namespace kanoko::integrators {
namespace {

class VelocityVerlet final : public Stepper {
 public:
  VelocityVerlet(DerivativeFn f, Eigen::Index n) : f_(std::move(f)), half_(n / 2), dydt_(n), tmp_(n), a_(n / 2) {
    KANOKO_ASSERT(n % 2 == 0, "velocity Verlet needs y = [q; v] of even dimension");
  }

  void step(double t, double dt, Eigen::VectorXd& y) override {
    const Eigen::Index m = half_;
    if (!a_valid_) {
      stage(f_, t, y, dydt_);
      a_ = dydt_.tail(m);
      ++evaluations_;
    }
    const double h2 = 0.5 * dt;
    y.tail(m) += h2 * a_;                   // v½
    y.head(m) += dt * y.tail(m);            // q'
    tmp_.head(m) = y.head(m);
    tmp_.tail(m) = y.tail(m) + h2 * a_;     // ṽ
    stage(f_, t + dt, tmp_, dydt_);
    ++evaluations_;
    a_ = dydt_.tail(m);
    y.tail(m) += h2 * a_;                   // v'
    a_valid_ = true;
    ++steps_;
  }

  void restart() override { a_valid_ = false; }

  [[nodiscard]] std::uint64_t evaluations() const override { return evaluations_; }
  [[nodiscard]] std::uint64_t substeps() const override { return steps_; }
  [[nodiscard]] std::uint64_t rejected_substeps() const override { return 0; }

 private:
  DerivativeFn f_;
  Eigen::Index half_;
  Eigen::VectorXd dydt_, tmp_;
  Eigen::VectorXd a_;  ///< acceleration at the current state, when a_valid_
  bool a_valid_ = false;
  std::uint64_t evaluations_ = 0;
  std::uint64_t steps_ = 0;
};

}  // namespace

std::unique_ptr<Stepper> make_velocity_verlet(DerivativeFn f, Eigen::Index dimension) {
  return std::make_unique<VelocityVerlet>(std::move(f), dimension);
}

}  // namespace kanoko::integrators
