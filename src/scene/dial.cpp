#include "src/scene/dial.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

namespace kanoko::scene {

DialLayout dial_layout(int width_px, int height_px) {
  const double w = std::max(width_px, 1);
  const double h = std::max(height_px, 1);
  DialLayout d;
  d.radius_px = std::clamp(0.09 * std::min(w, h), 22.0, 64.0);
  d.label_size_px = std::clamp(0.30 * d.radius_px + 5.0, 11.0, 18.0);
  const double margin = 0.5 * d.radius_px + 4.0;
  d.centre_x_px = w - margin - d.radius_px;
  d.label_x_px = w - margin * 0.5;
  d.label_y_px = margin * 0.5 + 0.25 * d.label_size_px;
  d.centre_y_px = d.label_y_px + 1.45 * d.label_size_px + d.radius_px;
  return d;
}

double dial_fraction(double t_s, double begin_s, double end_s) {
  const double duration = end_s - begin_s;
  if (!(duration > 0) || !std::isfinite(t_s)) return 0.0;
  return std::clamp((t_s - begin_s) / duration, 0.0, 1.0);
}

double dial_hand_angle_deg(double fraction) { return 360.0 * std::clamp(fraction, 0.0, 1.0); }

Direction2 dial_hand_direction(double fraction) {
  const double a = dial_hand_angle_deg(fraction) * std::numbers::pi / 180.0;
  return {std::sin(a), std::cos(a)};
}

bool dial_contains(const DialLayout& layout, double x_px, double y_px) {
  const double dx = x_px - layout.centre_x_px;
  const double dy = y_px - layout.centre_y_px;
  return dx * dx + dy * dy <= layout.radius_px * layout.radius_px;
}

std::string format_dial_time(double t_s, double begin_s, double end_s) {
  const double duration = end_s - begin_s;
  // Enough decimals to show about 1/1000 of the run: 20 s → 2 decimals, 0.02 s → 5.
  int decimals = 2;
  if (duration > 0)
    decimals = std::clamp(3 - static_cast<int>(std::floor(std::log10(duration))), 0, 9);
  const double percent = 100.0 * dial_fraction(t_s, begin_s, end_s);
  char buf[96];
  std::snprintf(buf, sizeof buf, "t = %.*f s  (%.0f%%)", decimals, t_s, percent);
  return buf;
}

}  // namespace kanoko::scene
