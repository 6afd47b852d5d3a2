#include "src/trajectory/panel_values.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "src/base/units.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::trajectory {

bool is_fraction_stat(std::string_view name) {
  return name == stat::kBusy || name == stat::kCommunicating || name == stat::kIdle;
}

std::string_view stat_unit(std::string_view name) {
  if (is_fraction_stat(name)) return "fraction";
  if (name == stat::kBytesSent || name == stat::kBytesRecv || name == stat::kBytesSentTotal ||
      name == stat::kBytesRecvTotal) {
    return "B";
  }
  return "";
}

std::string_view stat_label(std::string_view name) {
  if (name == stat::kLoad) return "load (interval)";
  if (name == stat::kMass) return "mass";
  if (name == stat::kBytesSent) return "bytes sent (interval)";
  if (name == stat::kBytesRecv) return "bytes recv (interval)";
  if (name == stat::kMsgsSent) return "msgs sent (interval)";
  if (name == stat::kMsgsRecv) return "msgs recv (interval)";
  if (name == stat::kBytesSentTotal) return "bytes sent (so far)";
  if (name == stat::kBytesRecvTotal) return "bytes recv (so far)";
  if (name == stat::kMsgsSentTotal) return "msgs sent (so far)";
  if (name == stat::kMsgsRecvTotal) return "msgs recv (so far)";
  if (name == stat::kBusy) return "busy (interval)";
  if (name == stat::kCommunicating) return "communicating (interval)";
  if (name == stat::kIdle) return "waiting (interval)";
  return name;
}

std::string format_stat_value(std::string_view stat, double v) {
  char buf[64];
  if (is_fraction_stat(stat)) return format_percent(v);
  if (stat.starts_with("bytes") && std::abs(v) >= 1024.0) {
    static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
    double x = v / 1024.0;
    std::size_t u = 0;
    while (std::abs(x) >= 1024.0 && u + 1 < std::size(kUnits)) {
      x /= 1024.0;
      ++u;
    }
    std::snprintf(buf, sizeof buf, "%.4g %s", x, kUnits[u]);
  } else if (stat.starts_with("bytes")) {
    std::snprintf(buf, sizeof buf, "%.6g B", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", v);
  }
  return buf;
}

std::string format_bytes_text(double bytes) { return format_stat_value(stat::kBytesSent, bytes); }

std::optional<trace::TimeSplit> interval_split(const Metadata& meta, const FrameView& f, std::size_t body) {
  return interval_split(meta, f.time_s, f.stats, body);
}

std::optional<trace::TimeSplit> interval_split(const Metadata& meta, double time_s,
                                               const Eigen::Ref<const Eigen::MatrixXd>& stats, std::size_t body) {
  const int busy = meta.stat_index(stat::kBusy);
  const int comm = meta.stat_index(stat::kCommunicating);
  const int idle = meta.stat_index(stat::kIdle);
  if (busy < 0 || comm < 0 || idle < 0 || time_s > meta.trace_end_s) return std::nullopt;
  const auto b = static_cast<Eigen::Index>(body);
  return trace::split_time(stats(busy, b), stats(comm, b), stats(idle, b), 1.0, false);
}

double body_speed(const Reader& reader, std::size_t body, double t_s) {
  const std::size_t k = reader.frame_at_or_before(t_s);
  const auto j = static_cast<Eigen::Index>(body);
  const FrameView a = reader.frame(k);
  Eigen::Vector3d v = a.velocities.col(j);
  if (k + 1 < reader.frame_count() && t_s > a.time_s) {
    const FrameView b = reader.frame(k + 1);
    const double s = std::clamp((t_s - a.time_s) / (b.time_s - a.time_s), 0.0, 1.0);
    v = (1 - s) * v + s * Eigen::Vector3d(b.velocities.col(j));
  }
  return v.norm();
}

}  // namespace kanoko::trajectory
