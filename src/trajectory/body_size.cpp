#include "src/trajectory/body_size.hpp"

#include <algorithm>
#include <cmath>

namespace kanoko::trajectory {

double body_radius(const BodyInfo& b) { return b.radius > 0.0F ? static_cast<double>(b.radius) : 0.1; }

double mass_ratio_scale(double m, double m0) {
  if (!(m0 > 0) || !std::isfinite(m0) || !std::isfinite(m) || !(m > 0)) return 1.0;
  return std::cbrt(std::clamp(m / m0, kMassRatioMin, kMassRatioMax));
}

}  // namespace kanoko::trajectory
