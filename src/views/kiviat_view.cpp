// The utilisation Kiviat diagram (VENUS view 7): entities evenly spaced on a circle, the distance
// from the centre to each vertex its busy fraction over the current interval (0 at the centre, 1
// on the circle). A balanced program is a round polygon; idle entities pull it inwards.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "src/views/builtin_views.hpp"
#include "src/views/draw.hpp"
#include "src/views/models.hpp"

namespace kanoko::views {

namespace {

class KiviatView final : public View {
 public:
  [[nodiscard]] std::string name() const override { return "kiviat"; }
  [[nodiscard]] unsigned needs() const override { return static_cast<unsigned>(DataNeed::States); }

  void draw(cairo_t* cr, const Rect& area, const TraceIndex& index, const ViewState& state) const override {
    const ClipTo clip(cr, area);
    double t0 = 0;
    double t1 = 0;
    current_interval(index, state, t0, t1);
    const KiviatModel k = compute_kiviat(index, t0, t1);
    double mean = 0;
    for (double f : k.busy_fraction) mean += f;
    if (!k.busy_fraction.empty()) mean /= static_cast<double>(k.busy_fraction.size());
    (void)draw_frame(cr, area, "kiviat  busy fraction " + format_time(t0) + " - " + format_time(t1) + ", mean " +
                                   trace::percent_text(mean));
    const Geometry g = geometry(area, index.entity_count());
    cairo_set_line_width(cr, 1);
    for (int ring = 1; ring <= 4; ++ring) {
      cairo_set_source_rgb(cr, 0.82, 0.82, 0.86);
      cairo_arc(cr, g.cx, g.cy, g.radius * ring / 4.0, 0, 2 * std::numbers::pi);
      cairo_stroke(cr);
    }
    const std::size_t n = k.busy_fraction.size();
    for (std::size_t i = 0; i < n; ++i) {
      const auto [dx, dy] = g.direction(i, n);
      cairo_set_source_rgb(cr, 0.85, 0.85, 0.88);
      cairo_move_to(cr, g.cx, g.cy);
      cairo_line_to(cr, g.cx + dx * g.radius, g.cy + dy * g.radius);
      cairo_stroke(cr);
      if (n <= 32) {
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.15);
        draw_text(cr, g.cx + dx * (g.radius + 10), g.cy + dy * (g.radius + 10) + 3.5, index.entities[i].name, 9,
                  dx < -0.3 ? 1.0 : (dx > 0.3 ? 0.0 : 0.5));
      }
    }
    if (n > 0) {
      for (std::size_t i = 0; i <= n; ++i) {
        const auto [dx, dy] = g.direction(i % n, n);
        const double r = std::clamp(k.busy_fraction[i % n], 0.0, 1.0) * g.radius;
        if (i == 0) {
          cairo_move_to(cr, g.cx + dx * r, g.cy + dy * r);
        } else {
          cairo_line_to(cr, g.cx + dx * r, g.cy + dy * r);
        }
      }
      cairo_close_path(cr);
      set_colour(cr, class_colour(StateClass::Busy), 0.35);
      cairo_fill_preserve(cr);
      set_colour(cr, class_colour(StateClass::Busy));
      cairo_set_line_width(cr, 1.5);
      cairo_stroke(cr);
    }
    if (state.selection.has_entity() && static_cast<std::size_t>(state.selection.entity) < n) {
      const auto i = static_cast<std::size_t>(state.selection.entity);
      const auto [dx, dy] = g.direction(i, n);
      const double r = std::clamp(k.busy_fraction[i], 0.0, 1.0) * g.radius;
      set_colour(cr, kSelectionColour);
      cairo_set_line_width(cr, 2.5);
      cairo_move_to(cr, g.cx, g.cy);
      cairo_line_to(cr, g.cx + dx * g.radius, g.cy + dy * g.radius);
      cairo_stroke(cr);
      cairo_arc(cr, g.cx + dx * r, g.cy + dy * r, 4, 0, 2 * std::numbers::pi);
      cairo_fill(cr);
    }
  }

  [[nodiscard]] Selection pick(double x, double y, const Rect& area, const TraceIndex& index,
                               const ViewState& /*state*/) const override {
    Selection out;
    const std::size_t n = index.entity_count();
    if (n == 0) return out;
    const Geometry g = geometry(area, n);
    const double dx = x - g.cx;
    const double dy = y - g.cy;
    if (std::hypot(dx, dy) > g.radius + 20) return out;
    // Angle from 12 o'clock, clockwise, in units of the spoke spacing.
    double a = std::atan2(dx, -dy) / (2 * std::numbers::pi);
    if (a < 0) a += 1;
    out.entity = static_cast<std::int64_t>(static_cast<std::size_t>(std::lround(a * static_cast<double>(n))) % n);
    return out;
  }

 private:
  struct Geometry {
    double cx = 0;
    double cy = 0;
    double radius = 0;
    // Unit vector of spoke i: the first at 12 o'clock, then clockwise.
    [[nodiscard]] std::pair<double, double> direction(std::size_t i, std::size_t n) const {
      const double a = 2 * std::numbers::pi * static_cast<double>(i) / static_cast<double>(std::max<std::size_t>(1, n));
      return {std::sin(a), -std::cos(a)};
    }
  };

  static Geometry geometry(const Rect& area, std::size_t n) {
    const Rect content = content_area(area);
    const double margin = n <= 32 ? 34 : 10;
    return Geometry{content.x + content.w / 2, content.y + content.h / 2,
                    std::max(1.0, std::min(content.w, content.h) / 2 - margin)};
  }
};

}  // namespace

std::unique_ptr<View> make_kiviat_view() { return std::make_unique<KiviatView>(); }

}  // namespace kanoko::views
