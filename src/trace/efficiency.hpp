// The POP Centre of Excellence efficiency metrics of a run (load balance, communication
// efficiency, parallel efficiency) and its outlier entities, from per-entity computing,
// communicating and waiting time and traffic. One code path for `kanoko info` and the summary
// view: both fill EntityActivity rows and call compute_efficiency. docs/efficiency.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "src/trace/event.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::trace {

/// What one entity did during the window.
struct EntityActivity {
  double useful_s = 0;         ///< in computing states (POP's "useful" time)
  double communicating_s = 0;  ///< in communicating states
  double waiting_s = 0;        ///< in idle (waiting) states
  double bytes_sent = 0;
  double bytes_received = 0;
  std::uint64_t messages_sent = 0;
  std::uint64_t messages_received = 0;
};

/// The quantities examined for outliers, in report order.
enum class OutlierQuantity : std::uint8_t { Computing, Communicating, Waiting, BytesSent, BytesReceived };
inline constexpr std::size_t kOutlierQuantityCount = 5;
/// "computing", "communicating", "waiting", "bytes sent", "bytes received".
const char* quantity_name(OutlierQuantity q);
/// The quantity's value in an activity row.
double quantity_value(const EntityActivity& a, OutlierQuantity q);

/// One entity far from the others in one quantity.
struct Outlier {
  OutlierQuantity quantity = OutlierQuantity::Computing;
  EntityIndex entity = 0;
  double value = 0;
  double median = 0;  ///< of the quantity over all entities
  /// |value - median| in scaled MADs (1.4826 × the median absolute deviation); infinity when
  /// the MAD is 0 (most entities share the median exactly).
  double mads = 0;
  bool largest = false;  ///< listed by the spread rule (the clear maximum, ≥ kSpreadRatio × the median)
};

/// The POP metrics, as fractions (1 = 100 %). Meaningful only when `available`.
struct PopMetrics {
  bool available = false;
  std::string unavailable_reason;  ///< why not, when not available
  double runtime_s = 0;            ///< the window's length
  double mean_useful_s = 0;
  double max_useful_s = 0;
  double load_balance = 0;              ///< mean(useful) / max(useful)
  double communication_efficiency = 0;  ///< max(useful) / runtime
  double parallel_efficiency = 0;       ///< load_balance × communication_efficiency = mean(useful) / runtime
};

/// Everything compute_efficiency finds.
struct Efficiency {
  double from_s = 0;  ///< the window [from_s, to_s) actually used
  double to_s = 0;
  std::vector<EntityActivity> entities;  ///< by entity index
  PopMetrics metrics;
  /// By quantity (report order), each sorted by distance from the median, farthest first; at
  /// most kMaxOutliersPerQuantity per quantity.
  std::vector<Outlier> outliers;
  /// Outliers found beyond kMaxOutliersPerQuantity, per quantity (not listed).
  std::array<std::size_t, kOutlierQuantityCount> outliers_left_out{};
};

/// The outlier rule's constants (docs/efficiency.md).
inline constexpr double kOutlierMads = 3.0;             ///< scaled MADs from the median
inline constexpr double kOutlierMinDeparture = 0.10;    ///< and at least this share of the median
inline constexpr double kOutlierTimeFloor = 0.01;       ///< times: and at least this share of the runtime
inline constexpr double kSpreadRatio = 1.5;             ///< the maximum is listed when ≥ this × the median
inline constexpr double kLargestMargin = 0.01;          ///< and above the runner-up by this share of itself
inline constexpr std::size_t kOutlierMinEntities = 3;   ///< fewer entities: no outliers
inline constexpr std::size_t kMaxOutliersPerQuantity = 5;

/// The metrics and outliers of `entities` over the window [from_s, to_s). `has_states` says
/// whether the trace has any state at all (without, the metrics are unavailable: no time can be
/// told useful). Unavailable also: a window of no length, no entity, no computing time.
Efficiency compute_efficiency(std::vector<EntityActivity> entities, double from_s, double to_s, bool has_states);

/// The same from a timeline over [from_s, to_s) (default: the whole run). The window is widened
/// to whole bins (the bins touching it) and clamped to [begin_s, end_s]; Efficiency::from_s and
/// to_s say what was used. Traffic counts in the bin of its send time. Where states overlap
/// (nested states, threads folded into one entity), an entity's seconds in a bin are capped at
/// the bin's width: computing first, then communicating, then waiting.
Efficiency timeline_efficiency(const Timeline& tl, double from_s = -std::numeric_limits<double>::infinity(),
                               double to_s = std::numeric_limits<double>::infinity());

/// One line per metric ("load balance: 87.5 %"), or one line saying why they are unavailable.
std::vector<std::string> metric_lines(const PopMetrics& m);
/// "r2: computing 10 s, 2× the median (5 s), MAD 0" (names[i] is entity i's name).
std::string describe_outlier(const Outlier& o, const std::vector<std::string>& names);
/// "87.5 %" (one decimal).
std::string percent_text(double fraction);

}  // namespace kanoko::trace
