#include "src/trace/efficiency.hpp"

#include "src/base/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <utility>

namespace kanoko::trace {
namespace {

/// 1.4826 × MAD estimates the standard deviation of normally distributed values.
constexpr double kMadScale = 1.4826;

bool is_time(OutlierQuantity q) {
  return q == OutlierQuantity::Computing || q == OutlierQuantity::Communicating || q == OutlierQuantity::Waiting;
}

/// The median of `v` (the mean of the two middle values for an even count); reorders `v`.
double median_of(std::vector<double>& v) {
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

/// The outliers of one quantity, farthest first, all of them.
std::vector<Outlier> quantity_outliers(const std::vector<EntityActivity>& rows, OutlierQuantity q, double runtime_s) {
  std::vector<Outlier> out;
  if (rows.size() < kOutlierMinEntities) return out;
  std::vector<double> values(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) values[i] = quantity_value(rows[i], q);
  std::vector<double> scratch = values;
  const double median = median_of(scratch);
  for (double& v : scratch) v = std::abs(v - median);
  const double sigma = kMadScale * median_of(scratch);
  // A departure must matter as well as stand out: a tenth of the median, and for times a
  // hundredth of the runtime, so that rounding noise on a balanced run is never an outlier.
  const double floor = std::max(kOutlierMinDeparture * std::abs(median), is_time(q) ? kOutlierTimeFloor * runtime_s : 0.0);
  const auto departure = [&](std::size_t i) { return std::abs(values[i] - median); };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double d = departure(i);
    if (d > kOutlierMads * sigma && d > floor) {
      out.push_back({q, static_cast<EntityIndex>(i), values[i], median,
                     sigma > 0 ? d / sigma : std::numeric_limits<double>::infinity(), false});
    }
  }
  // The spread rule: a single largest value far above the median (a ramp of loads has no outlier
  // by the MAD, but its maximum is what sets the runtime).
  // It must be clear of the runner-up, else naming one of two near-equal maxima misleads.
  const auto top = static_cast<std::size_t>(std::max_element(values.begin(), values.end()) - values.begin());
  double second = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != top) second = std::max(second, values[i]);
  }
  const bool clear = values[top] - second >= kLargestMargin * values[top];
  const bool listed = std::any_of(out.begin(), out.end(), [&](const Outlier& o) { return o.entity == top; });
  if (clear && !listed && median > 0 && values[top] >= kSpreadRatio * median && departure(top) > floor) {
    out.push_back({q, static_cast<EntityIndex>(top), values[top], median,
                   sigma > 0 ? departure(top) / sigma : std::numeric_limits<double>::infinity(), true});
  }
  std::sort(out.begin(), out.end(), [&](const Outlier& a, const Outlier& b) {
    const double da = std::abs(a.value - a.median);
    const double db = std::abs(b.value - b.median);
    return da != db ? da > db : a.entity < b.entity;
  });
  return out;
}

PopMetrics pop_metrics(const std::vector<EntityActivity>& rows, double runtime_s, bool has_states) {
  PopMetrics m;
  m.runtime_s = runtime_s;
  if (rows.empty()) {
    m.unavailable_reason = "the trace has no entities";
    return m;
  }
  if (!has_states) {
    m.unavailable_reason = "the trace has no states, so no time can be told useful (computing) or not";
    return m;
  }
  if (!(runtime_s > 0)) {
    m.unavailable_reason = "the run has no length (it ends where it starts)";
    return m;
  }
  double sum = 0;
  for (const EntityActivity& a : rows) {
    sum += a.useful_s;
    m.max_useful_s = std::max(m.max_useful_s, a.useful_s);
  }
  m.mean_useful_s = sum / static_cast<double>(rows.size());
  if (!(m.max_useful_s > 0)) {
    m.unavailable_reason = "no time is spent in a computing state";
    return m;
  }
  m.available = true;
  m.load_balance = m.mean_useful_s / m.max_useful_s;
  m.communication_efficiency = m.max_useful_s / runtime_s;
  m.parallel_efficiency = m.load_balance * m.communication_efficiency;
  return m;
}

/// A number in at most `digits` significant digits ("10", "2.5", "0.125").
std::string short_number(double v, int digits = 3) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string quantity_text(double v, OutlierQuantity q) {
  if (is_time(q)) return (std::abs(v) >= 1e4 ? short_number(v, 9) : short_number(v, 4)) + " s";
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB"};
  std::size_t unit = 0;
  while (std::abs(v) >= 1e4 && unit + 1 < std::size(kUnits)) {
    v /= 1e3;
    ++unit;
  }
  return short_number(v, 4) + " " + kUnits[unit];
}

}  // namespace

const char* quantity_name(OutlierQuantity q) {
  switch (q) {
    case OutlierQuantity::Computing: return "computing";
    case OutlierQuantity::Communicating: return "communicating";
    case OutlierQuantity::Waiting: return "waiting";
    case OutlierQuantity::BytesSent: return "bytes sent";
    case OutlierQuantity::BytesReceived: return "bytes received";
  }
  return "?";
}

double quantity_value(const EntityActivity& a, OutlierQuantity q) {
  switch (q) {
    case OutlierQuantity::Computing: return a.useful_s;
    case OutlierQuantity::Communicating: return a.communicating_s;
    case OutlierQuantity::Waiting: return a.waiting_s;
    case OutlierQuantity::BytesSent: return a.bytes_sent;
    case OutlierQuantity::BytesReceived: return a.bytes_received;
  }
  return 0;
}

Efficiency compute_efficiency(std::vector<EntityActivity> entities, double from_s, double to_s, bool has_states) {
  Efficiency out;
  out.from_s = from_s;
  out.to_s = std::max(from_s, to_s);
  out.entities = std::move(entities);
  const double runtime_s = out.to_s - out.from_s;
  out.metrics = pop_metrics(out.entities, runtime_s, has_states);
  for (std::size_t k = 0; k < kOutlierQuantityCount; ++k) {
    std::vector<Outlier> found = quantity_outliers(out.entities, static_cast<OutlierQuantity>(k), runtime_s);
    if (found.size() > kMaxOutliersPerQuantity) {
      out.outliers_left_out[k] = found.size() - kMaxOutliersPerQuantity;
      found.resize(kMaxOutliersPerQuantity);
    }
    out.outliers.insert(out.outliers.end(), found.begin(), found.end());
  }
  return out;
}

Efficiency timeline_efficiency(const Timeline& tl, double from_s, double to_s) {
  const std::size_t n = tl.entity_count();
  const double lo = std::clamp(from_s, tl.begin_s, std::max(tl.begin_s, tl.end_s));
  const double hi = std::clamp(to_s, lo, std::max(lo, tl.end_s));
  const auto bin_start = [&](std::size_t b) { return tl.begin_s + static_cast<double>(b) * tl.interval_s; };
  std::size_t first = 0;
  std::size_t stop = 0;  // one past the last bin used
  if (hi > lo && tl.bin_count > 0) {
    first = tl.bin_of(lo);
    stop = tl.bin_of(hi);
    // hi is exclusive: the bin that starts at it is not used.
    if (hi - bin_start(stop) > 1e-9 * tl.interval_s) ++stop;
    stop = std::max(stop, first + 1);
  }
  std::vector<EntityActivity> rows(n);
  for (std::size_t b = first; b < stop; ++b) {
    for (std::size_t e = 0; e < n; ++e) {
      const Timeline::BinTime t = tl.bin_time(b, static_cast<EntityIndex>(e));  // fitted into the bin
      rows[e].useful_s += t.busy_s;
      rows[e].communicating_s += t.comm_s;
      rows[e].waiting_s += t.idle_s;
    }
    for (const PairTraffic& p : tl.traffic(b)) {
      rows[p.src].bytes_sent += p.bytes;
      rows[p.src].messages_sent += p.messages;
      rows[p.dst].bytes_received += p.bytes;
      rows[p.dst].messages_received += p.messages;
    }
  }
  const double used_from = stop > first ? bin_start(first) : lo;
  const double used_to = stop > first ? std::min(tl.end_s, bin_start(stop)) : lo;
  return compute_efficiency(std::move(rows), used_from, used_to, tl.state_count > 0);
}

std::string percent_text(double fraction) { return format_percent(fraction); }

std::vector<std::string> metric_lines(const PopMetrics& m) {
  if (!m.available) return {"unavailable: " + m.unavailable_reason};
  return {"load balance:             " + percent_text(m.load_balance),
          "communication efficiency: " + percent_text(m.communication_efficiency),
          "parallel efficiency:      " + percent_text(m.parallel_efficiency)};
}

std::string describe_outlier(const Outlier& o, const std::vector<std::string>& names) {
  const std::string name = o.entity < names.size() ? names[o.entity] : "#" + std::to_string(o.entity);
  std::string text = name + ": " + quantity_name(o.quantity) + " " + quantity_text(o.value, o.quantity) + ", ";
  if (o.largest) text += "the largest, ";
  if (o.median != 0) {
    text += short_number(o.value / o.median) + "× the median (" + quantity_text(o.median, o.quantity) + ")";
  } else {
    text += "the median is 0";
  }
  text += std::isinf(o.mads) ? ", MAD 0" : ", " + short_number(o.mads, 2) + " MADs out";
  return text;
}

}  // namespace kanoko::trace
