// The one definition of how an entity's time over a range splits into computing, communicating,
// waiting and no state (docs/statistics.md). Every statistic that reports the split (the
// simulator's per-interval fractions, the companion views, `kanoko info`, the summary, the range
// statistics) gets it from split_time, so the same trace and range give the same numbers
// everywhere.
#pragma once

#include <algorithm>

namespace kanoko::trace {

/// An entity's seconds over a range, split by the one definition; the parts add up to the range.
struct TimeSplit {
  double computing_s = 0;      ///< in computing states (plus no-state time when gaps count as computing)
  double communicating_s = 0;  ///< in communicating states (the cost of doing communication)
  double waiting_s = 0;        ///< in idle states: blocking MPI calls, collectives, explicit idle
  double no_state_s = 0;       ///< in no classified state: not traced, counted as nothing (not waiting)
  [[nodiscard]] double span_s() const { return computing_s + communicating_s + waiting_s + no_state_s; }
  /// Each part as a fraction of the range (0 for a range of no length).
  [[nodiscard]] double fraction(double part_s) const {
    const double span = span_s();
    return span > 0 ? part_s / span : 0.0;
  }
};

/// The split of a range of `span_s` seconds in which an entity spent `computing_s`,
/// `communicating_s` and `waiting_s` in classified states. Overlapping states (nested ones,
/// threads folded into one entity) can add up to more than the range: the excess is cut,
/// computing first, then communicating, then waiting (an excess within rounding, 1e-9 of the
/// span, is kept so that the pieces of a state still add up to its length). What remains of the
/// range is no-state time, or computing when `gaps_computing` (GapPolicy: the trace has states
/// but none of them computes, as SMPI without computing states).
[[nodiscard]] TimeSplit split_time(double computing_s, double communicating_s, double waiting_s, double span_s,
                                   bool gaps_computing);

/// `seconds` fitted into `room`: an excess beyond `slack` is cut (split_time's rule for each part).
[[nodiscard]] inline double fit_seconds(double seconds, double room, double slack) {
  return seconds > room + slack ? std::max(0.0, room) : std::max(0.0, seconds);
}

/// split_time(computing_s, c, w, span_s, false).computing_s for any c and w: computing is fitted
/// first, so it depends on nothing else. Inline, for loops over every entity of a bin.
[[nodiscard]] inline double computing_within(double computing_s, double span_s) {
  const double span = std::max(0.0, span_s);
  return fit_seconds(computing_s, span, 1e-9 * span);
}

}  // namespace kanoko::trace
