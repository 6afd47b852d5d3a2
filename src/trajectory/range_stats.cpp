#include "src/trajectory/range_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "src/base/error.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::trajectory {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Frames with time in [t0, t1], sampled evenly down to at most `max_frames` indices.
std::vector<std::size_t> frames_in(const Reader& reader, double t0, double t1, std::size_t max_frames) {
  std::vector<std::size_t> out;
  const std::size_t n = reader.frame_count();
  if (n == 0 || max_frames == 0) return out;
  std::size_t first = reader.frame_at_or_before(t0);
  if (reader.frame_time(first) < t0 && first + 1 < n) ++first;
  const std::size_t last = reader.frame_at_or_before(t1);
  if (last < first || reader.frame_time(first) > t1) {
    out.push_back(reader.frame_at_or_before(0.5 * (t0 + t1)));  // a range inside one frame step
    return out;
  }
  const std::size_t count = last - first + 1;
  const std::size_t take = std::min(count, max_frames);
  for (std::size_t j = 0; j < take; ++j) {
    out.push_back(first + (take == 1 ? 0 : j * (count - 1) / (take - 1)));
  }
  return out;
}

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

  // Fractions: the mean of the stored per-interval fractions over the frames in the range.
  const int busy = meta.stat_index(stat::kBusy);
  const int comm = meta.stat_index(stat::kCommunicating);
  const int idle = meta.stat_index(stat::kIdle);
  for (BodyRange& b : r.bodies) {
    b.busy = busy < 0 ? kNaN : 0.0;
    b.communicating = comm < 0 ? kNaN : 0.0;
    b.idle = idle < 0 ? kNaN : 0.0;
  }
  if (busy < 0 && comm < 0 && idle < 0) return r;
  for (const std::size_t k : frames_in(reader, t0_s, t1_s, max_frames)) {
    try {
      const FrameView f = reader.frame(k);
      for (std::size_t i = 0; i < r.bodies.size(); ++i) {
        const auto col = static_cast<Eigen::Index>(i);
        if (busy >= 0) r.bodies[i].busy += f.stats(busy, col);
        if (comm >= 0) r.bodies[i].communicating += f.stats(comm, col);
        if (idle >= 0) r.bodies[i].idle += f.stats(idle, col);
      }
      ++r.frames;
    } catch (const InputError&) {
      continue;  // a damaged block: the range is averaged over the frames that read
    }
  }
  if (r.frames > 0) {
    const double n = static_cast<double>(r.frames);
    for (BodyRange& b : r.bodies) {
      b.busy /= n;
      b.communicating /= n;
      b.idle /= n;
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
