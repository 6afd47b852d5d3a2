// How big a body is drawn: its radius from the run, grown with the cube root of its mass relative
// to the start. One definition for every view of a run: the desktop viewer (src/scene), the glTF
// export (src/export) and the shared page (src/share).
#pragma once

#include "src/trajectory/trajectory.hpp"

namespace kanoko::trajectory {

/// Mass ratios beyond this range are clamped so a body never vanishes or fills the screen.
inline constexpr double kMassRatioMin = 1e-3;
inline constexpr double kMassRatioMax = 1e3;

/// The body's radius as stored, or 0.1 when the run stores none (0 or less).
[[nodiscard]] double body_radius(const BodyInfo& b);

/// The drawn radius relative to the start for mass m when the body started with m0:
/// cbrt(m / m0), the ratio clamped to [kMassRatioMin, kMassRatioMax]; 1 when either mass is not a
/// positive finite number.
[[nodiscard]] double mass_ratio_scale(double m, double m0);

}  // namespace kanoko::trajectory
