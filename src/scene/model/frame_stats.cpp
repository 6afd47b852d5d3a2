#include "src/scene/model/frame_stats.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace kanoko::scene {

double percentile_s(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size()));
  const auto k = static_cast<std::size_t>(std::max(1.0, rank)) - 1;
  return values[std::min(k, values.size() - 1)];
}

void FrameStats::frame(double wall_s, bool indexing) {
  if (!(wall_s >= 0) || !std::isfinite(wall_s)) return;
  (indexing ? while_indexing_ : after_).push_back(wall_s);
  if (wall_s > max_clock_step_s()) ++capped_;
}

namespace {

void phase(std::ostringstream& o, const char* name, const std::vector<double>& v) {
  o << "  \"" << name << "\": {\"frames\": " << v.size() << ", \"median_ms\": " << 1e3 * percentile_s(v, 50)
    << ", \"p99_ms\": " << 1e3 * percentile_s(v, 99)
    << ", \"max_ms\": " << 1e3 * (v.empty() ? 0.0 : *std::max_element(v.begin(), v.end())) << "}";
}

}  // namespace

std::string FrameStats::json() const {
  std::ostringstream o;
  o.precision(6);
  o << "{\n  \"first_frame_s\": " << first_frame_s_ << ",\n  \"views_ready_s\": " << views_ready_s_ << ",\n";
  if (first_frames_s_ >= 0) {
    o << "  \"simulation\": {\"writing_s\": " << writing_s_ << ", \"first_frames_s\": " << first_frames_s_
      << ", \"complete_s\": " << complete_s_ << "},\n";
  }
  phase(o, "while_indexing", while_indexing_);
  o << ",\n";
  phase(o, "after", after_);
  o << ",\n";
  std::vector<double> all = while_indexing_;
  all.insert(all.end(), after_.begin(), after_.end());
  phase(o, "all", all);
  o << ",\n  \"capped_frames\": " << capped_ << "\n}\n";
  return o.str();
}

}  // namespace kanoko::scene
