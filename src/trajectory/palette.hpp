// The colours Kanoko gives what it draws when nothing else colours it: a colour-blind-safe
// qualitative palette (Okabe–Ito), cycled. `kanoko simulate` colours body i with palette_colour(i);
// the viewer colours group g of a level of the hierarchy with palette_colour(g).
#pragma once

#include <array>
#include <cstddef>

namespace kanoko::trajectory {

/// Colour i of the palette (RGB 0..1), cycling every 8.
[[nodiscard]] std::array<float, 3> palette_colour(std::size_t i);

}  // namespace kanoko::trajectory
