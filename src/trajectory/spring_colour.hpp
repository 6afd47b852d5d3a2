// The colour scales of the springs, one definition for every view of a run: the desktop viewer
// (src/scene) draws them, the web page (src/share) gets them as tables sampled from these
// functions, with the legend.
#pragma once

#include <array>

namespace kanoko::trajectory {

/// Linear RGB in [0, 1].
using Rgb = std::array<float, 3>;

/// A spring without tension or traffic (the desktop's spring grey).
inline constexpr Rgb kSpringNeutral{0.56F, 0.60F, 0.68F};
/// The busiest spring of the interval (the communication flashes share the hue).
inline constexpr Rgb kSpringTraffic{1.0F, 0.55F, 0.1F};
inline constexpr Rgb kSpringCompressed{0.25F, 0.5F, 1.0F};
inline constexpr Rgb kSpringStretched{1.0F, 0.3F, 0.2F};
/// Strain (relative length change) at which the tension colour saturates.
inline constexpr double kFullTensionStrain = 0.25;

/// Colour of a spring whose length is `length` and was `length0` at the start: grey when
/// unchanged, towards blue when compressed and red when stretched (saturating at ±25%).
[[nodiscard]] Rgb tension_colour(double length, double length0);

/// Colour of a spring that carries `bytes` in the current interval when the busiest spring
/// carries `max_bytes`: neutral grey without traffic, towards orange (square-root scale).
[[nodiscard]] Rgb traffic_colour(double bytes, double max_bytes);

}  // namespace kanoko::trajectory
