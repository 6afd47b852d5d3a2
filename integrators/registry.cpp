#include "integrators/integrator.hpp"

namespace kanoko::integrators {

const std::vector<IntegratorInfo>& registry() {
  static const std::vector<IntegratorInfo> table = {
      {"rk4",
       "Classic fourth-order Runge-Kutta with a fixed step, as in the Kanoko paper. Four "
       "force evaluations per step; accurate and robust for the damped, forced systems Kanoko "
       "builds, not symplectic (energy drifts slowly without friction).",
       4, 4, make_rk4},
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
