// ODE steppers as a small registry of self-describing entries (REBOUND's integrator table). They
// step any first-order system dy/dt = f(t, y), so they are tested on analytic ODEs alone.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kanoko::integrators {

/// dy/dt = f(t, y). Writes into `dydt` (already sized like y); must not resize it.
using DerivativeFn = std::function<void(double t, const Eigen::VectorXd& y, Eigen::VectorXd& dydt)>;

/// A stepper bound to one derivative function, with its scratch buffers allocated once.
class Stepper {
 public:
  virtual ~Stepper() = default;
  /// Advances y from t to t + dt in place. No allocation.
  virtual void step(double t, double dt, Eigen::VectorXd& y) = 0;
  /// Derivative evaluations made so far.
  [[nodiscard]] virtual std::uint64_t evaluations() const = 0;
};

/// One registry entry.
struct IntegratorInfo {
  std::string name;         ///< used in mapping files and on the command line
  std::string description;  ///< one paragraph, shown by --help
  int order = 0;            ///< global order of accuracy
  int evaluations_per_step = 0;
  /// Creates a stepper for a system of dimension `dimension`.
  std::function<std::unique_ptr<Stepper>(DerivativeFn f, Eigen::Index dimension)> create;
};

/// All registered integrators, in a fixed order.
const std::vector<IntegratorInfo>& registry();
/// The entry with this name, or nullptr.
const IntegratorInfo* find_integrator(const std::string& name);
/// Names of all entries (for messages and suggestions).
std::vector<std::string> integrator_names();

/// The classic fourth-order Runge–Kutta stepper (the paper's choice).
std::unique_ptr<Stepper> make_rk4(DerivativeFn f, Eigen::Index dimension);

}  // namespace kanoko::integrators
