#include "src/trajectory/spring_colour.hpp"

#include <algorithm>
#include <cmath>

namespace kanoko::trajectory {

namespace {

Rgb mix(const Rgb& a, const Rgb& b, float w) {
  return {a[0] * (1.0F - w) + b[0] * w, a[1] * (1.0F - w) + b[1] * w, a[2] * (1.0F - w) + b[2] * w};
}

}  // namespace

Rgb tension_colour(double length, double length0) {
  if (!(length0 > 0) || !std::isfinite(length)) return kSpringNeutral;
  const double strain = std::clamp((length / length0 - 1.0) / kFullTensionStrain, -1.0, 1.0);
  return mix(kSpringNeutral, strain < 0 ? kSpringCompressed : kSpringStretched, static_cast<float>(std::abs(strain)));
}

Rgb traffic_colour(double bytes, double max_bytes) {
  if (!(bytes > 0) || !(max_bytes > 0)) return kSpringNeutral;
  return mix(kSpringNeutral, kSpringTraffic, static_cast<float>(std::sqrt(std::min(bytes / max_bytes, 1.0))));
}

}  // namespace kanoko::trajectory
