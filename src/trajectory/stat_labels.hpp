// How the per-body statistics a run stores are named and written for people: the desktop inspect
// panel (src/scene/inspect.cpp) and the shared web page (src/share/) show the same labels.
#pragma once

#include <string>
#include <string_view>

namespace kanoko::trajectory {

/// The label shown for a statistic the simulator stores ("bytes sent (interval)"); others keep
/// their name.
[[nodiscard]] std::string_view stat_label(std::string_view name);

/// A statistic's value as the panel writes it: byte counts of 1 KiB and more in KiB, MiB, GiB or
/// TiB with 4 significant digits, anything else with 6 ("%.6g").
[[nodiscard]] std::string format_stat_value(std::string_view stat, double v);

}  // namespace kanoko::trajectory
