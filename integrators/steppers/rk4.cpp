#include <utility>

#include "integrators/steppers/steppers.hpp"

namespace kanoko::integrators {
namespace {

class Rk4 final : public Stepper {
 public:
  Rk4(DerivativeFn f, Eigen::Index n) : f_(std::move(f)), k1_(n), k2_(n), k3_(n), k4_(n), tmp_(n) {}

  void step(double t, double dt, Eigen::VectorXd& y) override {
    const double half = 0.5 * dt;
    stage(f_, t, y, k1_);
    tmp_ = y + half * k1_;
    stage(f_, t + half, tmp_, k2_);
    tmp_ = y + half * k2_;
    stage(f_, t + half, tmp_, k3_);
    tmp_ = y + dt * k3_;
    stage(f_, t + dt, tmp_, k4_);
    y += (dt / 6.0) * (k1_ + 2.0 * k2_ + 2.0 * k3_ + k4_);
    evaluations_ += 4;
    ++steps_;
  }

  // Every step starts from a fresh evaluation: nothing is cached between steps.
  void restart() override {}

  [[nodiscard]] std::uint64_t evaluations() const override { return evaluations_; }
  [[nodiscard]] std::uint64_t substeps() const override { return steps_; }
  [[nodiscard]] std::uint64_t rejected_substeps() const override { return 0; }

 private:
  DerivativeFn f_;
  Eigen::VectorXd k1_, k2_, k3_, k4_, tmp_;
  std::uint64_t evaluations_ = 0;
  std::uint64_t steps_ = 0;
};

}  // namespace

std::unique_ptr<Stepper> make_rk4(DerivativeFn f, Eigen::Index dimension) {
  return std::make_unique<Rk4>(std::move(f), dimension);
}

}  // namespace kanoko::integrators
