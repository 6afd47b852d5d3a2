#include "src/scene/inspect.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <vector>

#include "src/base/error.hpp"
#include "src/base/units.hpp"
#include "src/trajectory/panel_values.hpp"

namespace kanoko::scene {

namespace {

using trajectory::stat_label;

std::string format_value(std::string_view stat, double v) { return trajectory::format_stat_value(stat, v); }

std::string line(std::string_view label, std::string_view value) {
  std::string s(label);
  s.resize(std::max<std::size_t>(s.size() + 1, 22), ' ');
  s += value;
  s += '\n';
  return s;
}

/// "[1, 2) s" : the run's binning interval that holds frame time t (the one the frame's
/// per-interval statistics describe), or the settling phase after the trace.
std::string interval_text(const trajectory::Metadata& meta, double t) {
  if (t > meta.trace_end_s) return "settling (after the trace)";
  if (!(meta.interval_s > 0)) return "none";
  const double t0 = meta.trace_begin_s + static_cast<double>(meta.interval_of(t)) * meta.interval_s;
  const double t1 = std::min(meta.trace_end_s, t0 + meta.interval_s);
  char buf[96];
  std::snprintf(buf, sizeof buf, "[%.6g, %.6g) s", t0, std::max(t0, t1));
  return buf;
}

std::string body_title(const trajectory::BodyInfo& b, std::size_t index) {
  std::string s = b.name.empty() ? "body " + std::to_string(index) : b.name;
  if (b.rank >= 0) s += "  (rank " + std::to_string(b.rank) + ")";
  return s;
}

/// "1.5 KiB in 3 msgs"
std::string flow_text(const Flow& f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, " in %.6g msgs", f.messages);
  return trajectory::format_bytes_text(f.bytes) + buf;
}

}  // namespace

std::optional<Pick> pick_body(const Ray& ray, const Eigen::Matrix3Xd& positions,
                              std::span<const double> radii) {
  const double a = ray.direction.squaredNorm();
  if (!(a > 0)) return std::nullopt;
  std::optional<Pick> best;
  const auto n = std::min(static_cast<std::size_t>(positions.cols()), radii.size());
  for (std::size_t i = 0; i < n; ++i) {
    const Eigen::Vector3d m = ray.origin - positions.col(static_cast<Eigen::Index>(i));
    const double b = m.dot(ray.direction);
    const double c = m.squaredNorm() - radii[i] * radii[i];
    const double disc = b * b - a * c;
    if (disc < 0) continue;
    const double root = std::sqrt(disc);
    double s = (-b - root) / a;
    if (s < 0) s = (-b + root) / a;  // the eye is inside this sphere
    if (s < 0 || !std::isfinite(s) || !(radii[i] > 0)) continue;  // radius 0: not drawn
    if (!best || s < best->distance) best = Pick{Pick::Kind::body, i, s};
  }
  return best;
}

std::optional<Pick> pick_spring(const Ray& ray, const Eigen::Matrix3Xd& positions,
                                std::span<const std::array<std::uint32_t, 2>> edges,
                                double radius) {
  const Eigen::Vector3d& d = ray.direction;
  const double a = d.squaredNorm();
  if (!(a > 0)) return std::nullopt;
  std::optional<Pick> best;
  for (std::size_t e = 0; e < edges.size(); ++e) {
    const auto [i, j] = edges[e];
    if (i >= positions.cols() || j >= positions.cols()) continue;
    const Eigen::Vector3d p = positions.col(i);
    const Eigen::Vector3d q = positions.col(j);
    const Eigen::Vector3d u = q - p;
    const Eigen::Vector3d w = ray.origin - p;
    // Closest points of the line origin + s d and the segment p + t u, t in [0, 1], s >= 0.
    const double uu = u.squaredNorm();
    const double du = d.dot(u);
    const double dw = d.dot(w);
    const double uw = u.dot(w);
    const double denom = a * uu - du * du;
    double t = denom > 1e-12 * a * uu ? (a * uw - du * dw) / denom : 0.0;
    t = std::clamp(t, 0.0, 1.0);
    double s = std::max(0.0, (t * du - dw) / a);
    // With s fixed (possibly clamped), the best t on the segment.
    if (uu > 0) t = std::clamp((u.dot(ray.origin + s * d - p)) / uu, 0.0, 1.0);
    const double gap = (ray.origin + s * d - (p + t * u)).norm();
    if (!(gap <= radius)) continue;
    if (!best || s < best->distance) best = Pick{Pick::Kind::spring, e, s};
  }
  return best;
}

std::optional<Pick> pick(const Ray& ray, const Eigen::Matrix3Xd& positions,
                         std::span<const double> radii,
                         std::span<const std::array<std::uint32_t, 2>> edges,
                         double spring_radius) {
  if (auto b = pick_body(ray, positions, radii)) return b;
  return pick_spring(ray, positions, edges, spring_radius);
}

std::size_t find_body(const trajectory::Reader& reader, std::string_view name_or_index,
                      std::string_view option) {
  const auto& bodies = reader.meta().bodies;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies[i].name == name_or_index) return i;
  }
  std::size_t index = 0;
  const auto* end = name_or_index.data() + name_or_index.size();
  const auto [ptr, ec] = std::from_chars(name_or_index.data(), end, index);
  if (ec == std::errc() && ptr == end && index < bodies.size()) return index;
  std::string some;
  for (std::size_t i = 0; i < bodies.size() && i < 4; ++i) some += (i ? ", " : "") + bodies[i].name;
  if (bodies.size() > 4) some += ", ...";
  throw InputError(FileLoc{std::string(option)},
                   "no body named '" + std::string(name_or_index) + "' and no body with that index (" +
                       std::to_string(bodies.size()) + " bodies: " + some + ")");
}

std::string describe_body(const trajectory::Reader& reader, std::size_t body, double t_s,
                          PartnerTotals* partners) {
  const auto& meta = reader.meta();
  const trajectory::BodyInfo& b = meta.bodies.at(body);
  std::string text = body_title(b, body) + '\n';
  if (!b.host.empty()) text += line("host", b.host);
  const trajectory::FrameView f = reader.frame(reader.frame_at_or_before(t_s));
  text += line("interval", interval_text(meta, f.time_s));
  const auto stat = [&](std::size_t s) { return f.stats(static_cast<Eigen::Index>(s), static_cast<Eigen::Index>(body)); };
  for (std::size_t s = 0; s < meta.stat_count(); ++s) {
    const std::string& name = meta.stat_names[s];
    text += line(stat_label(name), format_value(name, stat(s)));
  }
  // The one split's rest (trace::split_time): the interval's time in no state, not waiting.
  if (const auto split = trajectory::interval_split(meta, f, body)) {
    text += line("no state (interval)", format_percent(split->no_state_s));
  }
  char buf[64];
  // Scene length units per trace second.
  std::snprintf(buf, sizeof buf, "%.4g units/s", body_speed(reader, body, t_s));
  text += line("speed", buf);
  std::vector<std::string> neighbours;
  for (const auto& [i, j] : meta.edges) {
    if (i == body) neighbours.push_back(meta.bodies[j].name);
    if (j == body) neighbours.push_back(meta.bodies[i].name);
  }
  std::string list;
  constexpr std::size_t kMaxListed = 4;
  for (std::size_t k = 0; k < neighbours.size() && k < kMaxListed; ++k)
    list += (k == 0 ? "" : ", ") + neighbours[k];
  if (neighbours.size() > kMaxListed)
    list += " +" + std::to_string(neighbours.size() - kMaxListed) + " more";
  text += line("springs to", neighbours.empty() ? "none" : list);
  if (meta.traffic_intervals() > 0) {
    PartnerTotals local;
    PartnerTotals& totals = partners != nullptr ? *partners : local;
    constexpr std::size_t kTopPartners = 3;
    const auto top = totals.top(meta, static_cast<std::uint32_t>(body), meta.interval_of(t_s), kTopPartners);
    if (top.empty()) text += line("top partners", "none so far");
    for (std::size_t k = 0; k < top.size(); ++k) {
      const Partner& p = top[k];
      const auto& other = meta.bodies[p.body];
      const std::string who = other.name.empty() ? "body " + std::to_string(p.body) : other.name;
      // Total, then each way: the shared page's panel says the same (src/web/page.js).
      const auto bytes = [](double v) { return trajectory::format_bytes_text(v); };
      text += line(k == 0 ? "top partners" : "", who + ": " + bytes(p.total_bytes()) + " (sent " + bytes(p.sent.bytes) +
                                                     ", recv " + bytes(p.received.bytes) + ")");
    }
  }
  return text;
}

std::string describe_group(const trajectory::Metadata& meta, const GroupSummary& g) {
  const std::size_t n = g.members.size();
  std::string text = g.name + "  (" + g.level + " of " + std::to_string(n) + (n == 1 ? " body" : " bodies") + ")\n";
  if (!g.child_level.empty()) {
    text += line(g.child_level + "s", std::to_string(g.children));
  }
  std::string list;
  constexpr std::size_t kMaxListed = 4;
  for (std::size_t k = 0; k < n && k < kMaxListed; ++k) {
    const std::uint32_t b = g.members[k];
    list += (k == 0 ? "" : ", ") + (meta.bodies.at(b).name.empty() ? "body " + std::to_string(b) : meta.bodies[b].name);
  }
  if (n > kMaxListed) list += " +" + std::to_string(n - kMaxListed) + " more";
  text += line("members", list);
  text += line("interval", interval_text(meta, g.time_s));
  for (std::size_t s = 0; s < meta.stat_count() && static_cast<Eigen::Index>(s) < g.stats.size(); ++s) {
    const std::string& name = meta.stat_names[s];
    const bool mean = trajectory::is_fraction_stat(name);
    text += line(std::string(stat_label(name)) + (mean ? " (mean)" : " (sum)"), format_value(name, g.stats(static_cast<Eigen::Index>(s))));
  }
  return text;
}

std::string describe_spring(const trajectory::Reader& reader, std::size_t edge, double t_s,
                            PartnerTotals* partners) {
  const auto& meta = reader.meta();
  const auto [i, j] = meta.edges.at(edge);
  std::string text = "spring " + body_title(meta.bodies[i], i) + " -- " +
                     body_title(meta.bodies[j], j) + '\n';
  Eigen::Matrix3Xd now;
  reader.positions_at(t_s, now);
  const trajectory::FrameView f0 = reader.frame(0);
  const double length = (now.col(i) - now.col(j)).norm();
  const double length0 = (f0.positions.col(i) - f0.positions.col(j)).norm();
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.4g (at start %.4g, %+.1f%%)", length, length0,
                length0 > 0 ? 100.0 * (length / length0 - 1.0) : 0.0);
  text += line("length", buf);
  if (meta.traffic_intervals() > 0) {
    const std::size_t bin = meta.interval_of(t_s);
    const auto this_interval = interval_flows(meta, i, j, bin);
    PartnerTotals local;
    const auto& all = (partners != nullptr ? *partners : local).through(meta, i, bin);
    const auto it = all.find(j);
    const Partner total = it != all.end() ? it->second : Partner{};
    text += "pair, this interval\n";
    text += line("  first -> second", flow_text(this_interval[0]));
    text += line("  second -> first", flow_text(this_interval[1]));
    text += "pair, so far\n";
    text += line("  first -> second", flow_text(total.sent));
    text += line("  second -> first", flow_text(total.received));
  }
  const trajectory::FrameView f = reader.frame(reader.frame_at_or_before(t_s));
  namespace st = trajectory::stat;
  for (const char* name : {st::kBytesSent, st::kMsgsSent, st::kBytesSentTotal, st::kMsgsSentTotal}) {
    const int s = meta.stat_index(name);
    if (s < 0) continue;
    const std::string value =
        format_value(name, f.stats(s, static_cast<Eigen::Index>(i))) + "  |  " +
        format_value(name, f.stats(s, static_cast<Eigen::Index>(j)));
    text += line(stat_label(name), value);
  }
  return text;
}

}  // namespace kanoko::scene
