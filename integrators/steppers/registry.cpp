#include "integrators/steppers/steppers.hpp"

namespace kanoko::integrators {

const std::vector<IntegratorInfo>& registry() {
  static const std::vector<IntegratorInfo> table = {
      {"rk4",
       "Classic fourth-order Runge-Kutta with a fixed step, as in the Kanoko paper. Four force "
       "evaluations per step; accurate and robust for the damped, forced systems Kanoko builds, "
       "not symplectic (without friction the energy drifts slowly).",
       4, 4, false, false,
       [](DerivativeFn f, Eigen::Index n, const StepperOptions&) { return make_rk4(std::move(f), n); }},
      {"verlet",
       "Velocity Verlet (kick-drift-kick), second order, one force evaluation per step. Symplectic "
       "when the forces depend on positions only: without friction the energy error stays bounded "
       "instead of drifting, the cheapest choice for long conservative runs. With friction the "
       "force at the end of a step uses a predicted velocity, which keeps second order.",
       2, 1, false, true,
       [](DerivativeFn f, Eigen::Index n, const StepperOptions&) { return make_velocity_verlet(std::move(f), n); }},
      {"dopri5",
       "Adaptive Dormand-Prince 5(4): fifth order with an embedded fourth-order error estimate, "
       "six force evaluations per accepted step (the last stage is reused). It chooses its own "
       "substeps to keep the error per step within 'tolerance' ([simulation]), never longer than "
       "dt and never across a step boundary, so the forcing intervals are respected exactly; set "
       "dt = interval to let it choose freely.",
       5, 6, true, false,
       [](DerivativeFn f, Eigen::Index n, const StepperOptions& o) { return make_dormand_prince(std::move(f), n, o); }},
  };
  return table;
}

const IntegratorInfo* find_integrator(const std::string& name) {
  for (const auto& e : registry()) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::vector<std::string> integrator_names() {
  std::vector<std::string> names;
  for (const auto& e : registry()) names.push_back(e.name);
  return names;
}

}  // namespace kanoko::integrators
