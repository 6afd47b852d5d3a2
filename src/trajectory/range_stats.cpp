#include "src/trajectory/range_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "src/base/error.hpp"
#include "src/trajectory/panel_values.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::trajectory {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

RangeStats range_statistics(const Reader& reader, double t0_s, double t1_s, std::size_t max_frames) {
  const Metadata& meta = reader.meta();
  if (t1_s < t0_s) std::swap(t0_s, t1_s);
  t0_s = std::clamp(t0_s, reader.begin_time(), reader.end_time());
  t1_s = std::clamp(t1_s, reader.begin_time(), reader.end_time());
  RangeStats r;
  r.t0_s = t0_s;
  r.t1_s = t1_s;
  r.bodies.assign(meta.body_count(), BodyRange{});

  // Traffic: each interval overlapping the range counts with the overlapping fraction.
  if (meta.interval_s > 0 && meta.traffic_intervals() > 0) {
    const std::size_t b0 = meta.interval_of(t0_s);
    const std::size_t b1 = std::min(meta.interval_of(t1_s), meta.traffic_intervals() - 1);
    for (std::size_t b = b0; b <= b1 && b < meta.traffic_intervals(); ++b) {
      const double lo = meta.trace_begin_s + static_cast<double>(b) * meta.interval_s;
      const double hi = lo + meta.interval_s;
      const double overlap = t1_s > t0_s ? std::max(0.0, std::min(hi, t1_s) - std::max(lo, t0_s)) / meta.interval_s
                                         : (t0_s >= lo && t0_s < hi ? 1.0 : 0.0);
      if (overlap <= 0) continue;
      for (const PairTraffic& p : meta.traffic_in(b)) {
        if (p.src >= r.bodies.size() || p.dst >= r.bodies.size()) continue;
        r.bodies[p.src].bytes_sent += overlap * p.bytes;
        r.bodies[p.src].msgs_sent += overlap * p.messages;
        r.bodies[p.dst].bytes_recv += overlap * p.bytes;
        r.bodies[p.dst].msgs_recv += overlap * p.messages;
        r.bytes += overlap * p.bytes;
        r.messages += overlap * p.messages;
      }
    }
  }

  // Fractions: the one split (interval_split) of each interval the range overlaps, weighted by
  // the overlap, as the companion views split [t0, t1) (docs/statistics.md). Settling time after
  // the trace has no interval and counts in none.
  const bool stored = meta.stat_index(stat::kBusy) >= 0 && meta.stat_index(stat::kCommunicating) >= 0 &&
                      meta.stat_index(stat::kIdle) >= 0;
  for (BodyRange& b : r.bodies) {
    b.busy = b.communicating = b.idle = b.no_state = stored ? 0.0 : kNaN;
  }
  if (!stored || reader.frame_count() == 0) return r;
  double weight = 0;
  const auto add = [&](std::size_t k, double w) {
    try {
      const FrameView f = reader.frame(k);
      if (f.time_s > meta.trace_end_s) return;  // settling: no interval
      for (std::size_t i = 0; i < r.bodies.size(); ++i) {
        const auto s = interval_split(meta, f, i);
        if (!s) continue;
        BodyRange& b = r.bodies[i];
        b.busy += w * s->computing_s;
        b.communicating += w * s->communicating_s;
        b.idle += w * s->waiting_s;
        b.no_state += w * s->no_state_s;
      }
      weight += w;
      ++r.frames;
    } catch (const InputError&) {
      // a damaged block: the range is split over the intervals that read
    }
  };
  const double hi = std::min(t1_s, meta.trace_end_s);
  if (meta.interval_s > 0 && hi > t0_s) {
    const std::size_t b0 = meta.interval_of(t0_s);
    const std::size_t b1 = meta.interval_of(hi);
    // At most max_frames intervals are read: a long range samples them evenly.
    const std::size_t step = std::max<std::size_t>(1, (b1 - b0 + 1 + max_frames - 1) / std::max<std::size_t>(1, max_frames));
    for (std::size_t b = b0; b <= b1; b += step) {
      const double lo = meta.trace_begin_s + static_cast<double>(b) * meta.interval_s;
      const double from = std::max(lo, t0_s);
      const double to = std::min(lo + meta.interval_s, hi);
      if (!(to > from)) continue;
      // A frame inside the interval holds its statistics.
      const std::size_t k = reader.frame_at_or_before(0.5 * (from + to));
      if (meta.interval_of(reader.frame_time(k)) != b) continue;
      add(k, to - from);
    }
  } else {
    add(reader.frame_at_or_before(t0_s), 1.0);  // a range of no length: the interval at t0
  }
  if (weight > 0) {
    for (BodyRange& b : r.bodies) {
      b.busy /= weight;
      b.communicating /= weight;
      b.idle /= weight;
      b.no_state /= weight;
    }
  }
  return r;
}

Activity run_activity(const Reader& reader, std::size_t bins) {
  Activity a;
  a.bytes.assign(bins, 0.0);
  a.busy.assign(bins, kNaN);
  if (bins == 0) return a;
  const Metadata& meta = reader.meta();
  const double begin = reader.begin_time();
  const double span = reader.end_time() - begin;
  auto bin_of = [&](double t) {
    if (!(span > 0)) return std::size_t{0};
    const double x = (t - begin) / span * static_cast<double>(bins);
    return static_cast<std::size_t>(std::clamp(x, 0.0, static_cast<double>(bins - 1)));
  };
  for (std::size_t b = 0; b < meta.traffic_intervals(); ++b) {
    double bytes = 0;
    for (const PairTraffic& p : meta.traffic_in(b)) bytes += p.bytes;
    const double mid = meta.trace_begin_s + (static_cast<double>(b) + 0.5) * meta.interval_s;
    a.bytes[bin_of(mid)] += bytes;
  }
  for (const double v : a.bytes) a.max_bytes = std::max(a.max_bytes, v);
  const int busy = meta.stat_index(stat::kBusy);
  const std::size_t n = reader.frame_count();
  if (busy < 0 || n == 0 || meta.body_count() == 0) return a;
  // One frame per bin at most, the one at the bin's middle.
  for (std::size_t j = 0; j < bins; ++j) {
    const double t = begin + (static_cast<double>(j) + 0.5) / static_cast<double>(bins) * span;
    if (t > meta.trace_end_s && j > 0) break;  // settling: no forcing, no activity
    const std::size_t k = reader.frame_at_or_before(t);
    try {
      const FrameView f = reader.frame(k);
      a.busy[j] = f.stats.row(busy).mean();
    } catch (const InputError&) {
      // a damaged block leaves its bins empty
    }
  }
  return a;
}

}  // namespace kanoko::trajectory
