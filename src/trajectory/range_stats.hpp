// Statistics of a run over a time range [t0, t1]: what the viewer's timeline shows for a
// selected range, per body and in total. Bytes and messages come from the run's per-interval
// traffic section (the intervals overlapping the range, weighted by the overlap), the busy,
// communicating, idle (waiting) and no-state fractions are the one split (trace::split_time,
// docs/statistics.md) of the intervals overlapping the range, weighted by the overlap. No
// OpenSceneGraph here; the scene and tests use it alike.
#pragma once

#include <cstddef>
#include <vector>

namespace kanoko::trajectory {

class Reader;

/// One body's share of a range.
struct BodyRange {
  double bytes_sent = 0;
  double bytes_recv = 0;
  double msgs_sent = 0;
  double msgs_recv = 0;
  /// Fractions of the range's traced time (NaN when the run stores no such statistic).
  double busy = 0;
  double communicating = 0;
  double idle = 0;  ///< waiting
  double no_state = 0;
};

/// The range's statistics.
struct RangeStats {
  double t0_s = 0;
  double t1_s = 0;
  std::vector<BodyRange> bodies;  ///< one per body
  double bytes = 0;               ///< total over all pairs
  double messages = 0;
  std::size_t frames = 0;  ///< intervals (one frame each) that the fractions weigh
};

/// Statistics of [t0, t1] (swapped if given the other way round, clamped to the run). Intervals
/// are sampled evenly when more than `max_frames` fall in the range (the viewer keeps a frame's
/// work bounded on long runs).
[[nodiscard]] RangeStats range_statistics(const Reader& reader, double t0_s, double t1_s,
                                          std::size_t max_frames = 512);

/// Activity along the whole run in `bins` equal bins: bytes exchanged per bin (from the traffic
/// section) and the mean busy fraction over bodies (from up to `bins` sampled frames; NaN where
/// the run stores no busy statistic). For the timeline's strip.
struct Activity {
  std::vector<double> bytes;
  std::vector<double> busy;
  double max_bytes = 0;
};
[[nodiscard]] Activity run_activity(const Reader& reader, std::size_t bins);

}  // namespace kanoko::trajectory
