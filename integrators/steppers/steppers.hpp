// ODE steppers as a small registry of self-describing entries (REBOUND's integrator table). They
// step any first-order system dy/dt = f(t, y), so they are tested on analytic ODEs alone; each
// calls f as often as its method needs (REBOUND 5's rule).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/base/interrupt.hpp"

namespace kanoko::integrators {

/// dy/dt = f(t, y). Writes into `dydt` (already sized like y); must not resize it.
using DerivativeFn = std::function<void(double t, const Eigen::VectorXd& y, Eigen::VectorXd& dydt)>;

/// One stage of a stepper: throws Interrupted if a signal arrived, else evaluates f. Steppers call
/// f only through this, so that a signal stops a large model between stages, not steps.
inline void stage(const DerivativeFn& f, double t, const Eigen::VectorXd& y, Eigen::VectorXd& dydt) {
  check_interrupt();
  f(t, y, dydt);
}

/// Settings of a stepper that some methods use.
struct StepperOptions {
  /// Adaptive methods only: the error allowed per step, relative to max(|y_i|, 1) in every
  /// component (an RMS norm over components, as in Hairer, Nørsett & Wanner).
  double tolerance = 1e-6;
};

/// A stepper bound to one derivative function, with its scratch buffers allocated once.
class Stepper {
 public:
  virtual ~Stepper() = default;
  /// Advances y from t to exactly t + dt. Fixed-step methods take one step of dt; adaptive methods
  /// take as many substeps as their error control needs, never crossing t + dt. No allocation.
  virtual void step(double t, double dt, Eigen::VectorXd& y) = 0;
  /// Forgets derivatives cached from earlier steps. Call it whenever f changes discontinuously
  /// (a new forcing interval) or y is changed from outside, before the next step().
  virtual void restart() = 0;
  /// Derivative evaluations made so far.
  [[nodiscard]] virtual std::uint64_t evaluations() const = 0;
  /// Steps taken so far (accepted substeps for adaptive methods).
  [[nodiscard]] virtual std::uint64_t substeps() const = 0;
  /// Substeps rejected by the error control so far (0 for fixed-step methods).
  [[nodiscard]] virtual std::uint64_t rejected_substeps() const = 0;
};

/// One registry entry.
struct IntegratorInfo {
  std::string name;         ///< used in mapping files and on the command line
  std::string description;  ///< one paragraph, shown by --help
  int order = 0;            ///< global order of accuracy
  /// Derivative evaluations per step once running (methods that reuse the last evaluation of a
  /// step, like Verlet and Dormand–Prince, need one more on the first step after a restart).
  int evaluations_per_step = 0;
  bool adaptive = false;  ///< chooses its own substeps within each step() (uses the tolerance)
  /// Requires y = [q; q'] with the first half of f(t, y) equal to the second half of y.
  bool second_order_only = false;
  /// Creates a stepper for a system of dimension `dimension`.
  std::function<std::unique_ptr<Stepper>(DerivativeFn f, Eigen::Index dimension, const StepperOptions& options)>
      create;
};

/// All registered integrators, in a fixed order.
const std::vector<IntegratorInfo>& registry();
/// The entry with this name, or nullptr.
const IntegratorInfo* find_integrator(const std::string& name);
/// Names of all entries (for messages and suggestions).
std::vector<std::string> integrator_names();

/// The classic fourth-order Runge–Kutta stepper (the paper's choice).
std::unique_ptr<Stepper> make_rk4(DerivativeFn f, Eigen::Index dimension);
/// Velocity Verlet (kick–drift–kick) for y = [q; v]; symplectic when the force does not depend on v.
std::unique_ptr<Stepper> make_velocity_verlet(DerivativeFn f, Eigen::Index dimension);
/// Adaptive Dormand–Prince 5(4) with error control to `options.tolerance`.
std::unique_ptr<Stepper> make_dormand_prince(DerivativeFn f, Eigen::Index dimension, const StepperOptions& options);

}  // namespace kanoko::integrators
