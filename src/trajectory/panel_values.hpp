// What the inspect panels show about a body, computed once for both: the desktop inspect panel
// (src/scene/inspect.cpp) and the shared web page (src/share/) use the same labels, value format
// and speed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kanoko::trajectory {

/// The label shown for a statistic the simulator stores ("bytes sent (interval)"); others keep
/// their name.
[[nodiscard]] std::string_view stat_label(std::string_view name);

/// A statistic's value as the panel writes it: byte counts of 1 KiB and more in KiB, MiB, GiB or
/// TiB with 4 significant digits, anything else with 6 ("%.6g").
[[nodiscard]] std::string format_stat_value(std::string_view stat, double v);

class Reader;

/// Speed of body `body` at trace time t (scene units per trace second), from the stored
/// velocities of the frames around t, linearly interpolated.
[[nodiscard]] double body_speed(const Reader& reader, std::size_t body, double t_s);

}  // namespace kanoko::trajectory
