// Dormand–Prince 5(4) (Dormand & Prince 1980; the coefficients of Hairer, Nørsett & Wanner,
// "Solving ODEs I", table 5.2): seven stages, the fifth-order solution is propagated (local
// extrapolation) and the embedded fourth-order one estimates the error. The last stage is the
// derivative at the new point and serves as the first stage of the next step (FSAL), so an accepted
// step costs six evaluations.
//
// Error control: err = RMS_i( e_i / (tol · max(1, |y_i|, |y'_i|)) ); a step is accepted when
// err ≤ 1 and the next step is h · clamp(0.9 err^{-1/5}, 0.2, 5) (never growing right after a
// rejection). Substeps are clipped so that step(t, dt) lands exactly on t + dt: the caller's step
// boundaries, and with them every forcing interval boundary, are never straddled.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "integrators/steppers/steppers.hpp"
#include "src/base/check.hpp"
#include "src/base/error.hpp"

namespace kanoko::integrators {
namespace {

// Nodes c_i, coupling a_ij, fifth-order weights b_i (= a_7j) and error weights e_i = b_i − b*_i.
constexpr double c2 = 1.0 / 5, c3 = 3.0 / 10, c4 = 4.0 / 5, c5 = 8.0 / 9;
constexpr double a21 = 1.0 / 5;
constexpr double a31 = 3.0 / 40, a32 = 9.0 / 40;
constexpr double a41 = 44.0 / 45, a42 = -56.0 / 15, a43 = 32.0 / 9;
constexpr double a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561, a54 = -212.0 / 729;
constexpr double a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247, a64 = 49.0 / 176,
                 a65 = -5103.0 / 18656;
constexpr double a71 = 35.0 / 384, a73 = 500.0 / 1113, a74 = 125.0 / 192, a75 = -2187.0 / 6784, a76 = 11.0 / 84;
constexpr double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920, e5 = -17253.0 / 339200, e6 = 22.0 / 525,
                 e7 = -1.0 / 40;

constexpr double kSafety = 0.9;
constexpr double kMinFactor = 0.2;
constexpr double kMaxFactor = 5.0;

class DormandPrince final : public Stepper {
 public:
  DormandPrince(DerivativeFn f, Eigen::Index n, const StepperOptions& options)
      : f_(std::move(f)), tolerance_(options.tolerance), k1_(n), k2_(n), k3_(n), k4_(n), k5_(n), k6_(n), k7_(n),
        tmp_(n), err_(n) {
    KANOKO_ASSERT(tolerance_ > 0, "the tolerance must be positive");
  }

  void step(double t, double dt, Eigen::VectorXd& y) override {
    const double t_end = t + dt;
    double h = h_next_ > 0 ? std::min(h_next_, dt) : dt;
    double now = t;
    bool rejected_last = false;
    while (now < t_end) {
      const double remaining = t_end - now;
      // Within a hair of the end counts as reaching it, so rounding never leaves a sliver step.
      const bool clipped = h >= remaining * (1.0 - 1e-10);
      if (clipped) h = remaining;
      const double err = attempt(now, h, y);
      if (err <= 1.0) {
        y = tmp_;  // the fifth-order solution
        std::swap(k1_, k7_);
        k1_valid_ = true;
        ++steps_;
        now = clipped ? t_end : now + h;
        const double factor =
            rejected_last ? std::min(1.0, growth(err)) : std::clamp(growth(err), kMinFactor, kMaxFactor);
        // A step shortened to land on t_end says nothing against the longer step planned before.
        h_next_ = clipped ? std::max(h_next_, h * factor) : h * factor;
        h = h_next_;
        rejected_last = false;
      } else {
        ++rejected_;
        h *= std::isfinite(err) ? std::max(kMinFactor, growth(err)) : kMinFactor;
        rejected_last = true;
        if (!(h > 1e-14 * std::max(1.0, std::abs(now)))) {
          throw RunError("adaptive step size underflow at t = " + std::to_string(now) +
                         ": the error cannot be controlled (a blow-up, or a tolerance too small)");
        }
      }
    }
  }

  void restart() override { k1_valid_ = false; }

  [[nodiscard]] std::uint64_t evaluations() const override { return evaluations_; }
  [[nodiscard]] std::uint64_t substeps() const override { return steps_; }
  [[nodiscard]] std::uint64_t rejected_substeps() const override { return rejected_; }

 private:
  static double growth(double err) { return err > 0 ? kSafety * std::pow(err, -0.2) : kMaxFactor; }

  /// One trial step of size h from (t, y): the candidate in tmp_, its derivative in k7_; returns
  /// the scaled error norm (NaN/∞ if the derivative is not finite).
  double attempt(double t, double h, const Eigen::VectorXd& y) {
    if (!k1_valid_) {
      stage(f_, t, y, k1_);
      ++evaluations_;
      k1_valid_ = true;
    }
    tmp_ = y + h * (a21 * k1_);
    stage(f_, t + c2 * h, tmp_, k2_);
    tmp_ = y + h * (a31 * k1_ + a32 * k2_);
    stage(f_, t + c3 * h, tmp_, k3_);
    tmp_ = y + h * (a41 * k1_ + a42 * k2_ + a43 * k3_);
    stage(f_, t + c4 * h, tmp_, k4_);
    tmp_ = y + h * (a51 * k1_ + a52 * k2_ + a53 * k3_ + a54 * k4_);
    stage(f_, t + c5 * h, tmp_, k5_);
    tmp_ = y + h * (a61 * k1_ + a62 * k2_ + a63 * k3_ + a64 * k4_ + a65 * k5_);
    stage(f_, t + h, tmp_, k6_);
    tmp_ = y + h * (a71 * k1_ + a73 * k3_ + a74 * k4_ + a75 * k5_ + a76 * k6_);
    stage(f_, t + h, tmp_, k7_);
    evaluations_ += 6;
    err_ = h * (e1 * k1_ + e3 * k3_ + e4 * k4_ + e5 * k5_ + e6 * k6_ + e7 * k7_);
    double sum = 0;
    for (Eigen::Index i = 0; i < y.size(); ++i) {
      const double scale = tolerance_ * std::max({1.0, std::abs(y[i]), std::abs(tmp_[i])});
      const double e = err_[i] / scale;
      sum += e * e;
    }
    return std::sqrt(sum / static_cast<double>(std::max<Eigen::Index>(1, y.size())));
  }

  DerivativeFn f_;
  double tolerance_;
  Eigen::VectorXd k1_, k2_, k3_, k4_, k5_, k6_, k7_, tmp_, err_;
  bool k1_valid_ = false;  ///< k1_ holds f at the current (t, y) (FSAL)
  double h_next_ = 0;      ///< proposed next substep; 0 before the first
  std::uint64_t evaluations_ = 0;
  std::uint64_t steps_ = 0;
  std::uint64_t rejected_ = 0;
};

}  // namespace

std::unique_ptr<Stepper> make_dormand_prince(DerivativeFn f, Eigen::Index dimension, const StepperOptions& options) {
  return std::make_unique<DormandPrince>(std::move(f), dimension, options);
}

}  // namespace kanoko::integrators
