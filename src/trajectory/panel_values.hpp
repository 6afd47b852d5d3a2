// What the inspect panels show about a body, computed once for both: the desktop inspect panel
// (src/scene/inspect.cpp) and the shared web page (src/share/) use the same labels, value format
// and speed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <optional>

#include <Eigen/Core>

#include "src/trace/time_split.hpp"

namespace kanoko::trajectory {

/// The label shown for a statistic the simulator stores ("bytes sent (interval)"); others keep
/// their name.
[[nodiscard]] std::string_view stat_label(std::string_view name);

/// True for the statistics that are fractions of the current interval (busy, communicating,
/// idle): shown as percentages.
[[nodiscard]] bool is_fraction_stat(std::string_view name);

/// The unit of a statistic the simulator stores, as a column name's suffix: "fraction" (of the
/// interval, 0..1) for busy, communicating and idle, "B" for byte counts, "" for the others
/// (message counts, mass and load have none).
[[nodiscard]] std::string_view stat_unit(std::string_view name);

/// A statistic's value as the panel writes it: the busy, communicating and idle (waiting)
/// fractions as percentages ("55.0 %"), byte counts in B ("512 B", 6 significant digits) or, from
/// 1 KiB on, in KiB, MiB, GiB or TiB with 4 significant digits, anything else with 6 ("%.6g").
[[nodiscard]] std::string format_stat_value(std::string_view stat, double v);

/// A byte count with its unit: "512 B", "2 KiB", "1.5 MiB" (format_stat_value's form for bytes).
[[nodiscard]] std::string format_bytes_text(double bytes);

class Reader;
struct Metadata;
struct FrameView;

/// The one split (trace::split_time, docs/statistics.md) of body `body`'s current interval at
/// frame `f`, as fractions of the interval: the stored busy, communicating and idle fractions and
/// the rest in no state. Nothing when the run stores no such statistics or the frame is in the
/// settling phase after the trace (no interval).
[[nodiscard]] std::optional<trace::TimeSplit> interval_split(const Metadata& meta, const FrameView& f, std::size_t body);
/// The same for column `body` of statistics laid out as a frame's (S × bodies) at frame time
/// `time_s`: an aggregate's (trajectory/hierarchy.hpp), whose fractions are its bodies' means.
[[nodiscard]] std::optional<trace::TimeSplit> interval_split(const Metadata& meta, double time_s,
                                                             const Eigen::Ref<const Eigen::MatrixXd>& stats, std::size_t body);

/// Speed of body `body` at trace time t (scene units per trace second), from the stored
/// velocities of the frames around t, linearly interpolated.
[[nodiscard]] double body_speed(const Reader& reader, std::size_t body, double t_s);

}  // namespace kanoko::trajectory
