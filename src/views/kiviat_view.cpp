// The utilisation Kiviat diagram (VENUS view 7): entities evenly spaced on a circle, the distance
// from the centre to each vertex its busy fraction over the current interval (0 at the centre, 1
// on the circle). A balanced program is a round polygon; idle entities pull it inwards. Labels and
// spokes are thinned to every k-th entity so that no two labels collide, rings mark every 25 %,
// and a legend says what the radius means. Zoom narrows the circle to a range of entities.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

#include "src/views/builtin_views.hpp"
#include "src/views/draw.hpp"
#include "src/views/models.hpp"

namespace kanoko::views {

namespace {

constexpr double kLabelSize = 8;
constexpr double kLabelGap = 8;  ///< from the circle to a label's anchor

class KiviatView final : public View {
 public:
  [[nodiscard]] std::string name() const override { return "kiviat"; }
  [[nodiscard]] unsigned needs() const override { return static_cast<unsigned>(DataNeed::States); }

  void draw(cairo_t* cr, const Rect& area, const TraceIndex& index, const ViewState& state) const override {
    const ClipTo clip(cr, area);
    double t0 = 0;
    double t1 = 0;
    current_interval(index, state, t0, t1);
    const Geometry g = geometry(area, index, state);
    const std::size_t n = g.last - g.first;
    KiviatModel k = compute_kiviat(index, t0, t1);
    k.busy_fraction.erase(k.busy_fraction.begin() + static_cast<std::ptrdiff_t>(g.last), k.busy_fraction.end());
    k.busy_fraction.erase(k.busy_fraction.begin(), k.busy_fraction.begin() + static_cast<std::ptrdiff_t>(g.first));
    double mean = 0;
    for (double f : k.busy_fraction) mean += f;
    if (!k.busy_fraction.empty()) mean /= static_cast<double>(k.busy_fraction.size());
    std::string title =
        "kiviat  busy fraction " + format_time(t0) + " - " + format_time(t1) + ", mean " + trace::percent_text(mean);
    if (n < index.entity_count()) title += ", entities " + std::to_string(g.first) + "-" + std::to_string(g.last - 1);
    (void)draw_frame(cr, area, title);
    cairo_set_line_width(cr, 1);
    for (int ring = 1; ring <= 4; ++ring) {
      cairo_set_source_rgb(cr, 0.82, 0.82, 0.86);
      cairo_arc(cr, g.cx, g.cy, g.radius * ring / 4.0, 0, 2 * std::numbers::pi);
      cairo_stroke(cr);
    }
    const auto [stride, shown] = label_stride(cr, g, index);
    for (std::size_t i = 0; i < n && i < shown * stride; i += stride) {
      const auto [dx, dy] = g.direction(i, n);
      cairo_set_source_rgb(cr, 0.85, 0.85, 0.88);
      cairo_move_to(cr, g.cx, g.cy);
      cairo_line_to(cr, g.cx + dx * g.radius, g.cy + dy * g.radius);
      cairo_stroke(cr);
      if (g.labels) {
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.15);
        const Anchor a = anchor(g, i, n);
        draw_text(cr, a.x, a.y, index.entities[g.first + i].name, kLabelSize, a.align);
      }
    }
    // Ring values just inside each ring, right of the 12 o'clock spoke.
    cairo_set_source_rgb(cr, 0.45, 0.45, 0.5);
    for (int ring = 1; ring <= 4 && g.radius >= 40; ++ring) {
      draw_text(cr, g.cx + 3, g.cy - g.radius * ring / 4.0 + 8, std::to_string(25 * ring) + "%", 7);
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
    const std::int64_t sel = state.selection.entity;
    if (state.selection.has_entity() && sel >= static_cast<std::int64_t>(g.first) && sel < static_cast<std::int64_t>(g.last)) {
      const auto i = static_cast<std::size_t>(sel) - g.first;
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
    if (g.legend.w >= 60) {
      const double y = g.legend.y + g.legend.h - 3;
      const double x = draw_key(cr, g.legend.x + 4, y, {{class_colour(StateClass::Busy), "busy (computing)"}}, 8);
      cairo_set_source_rgb(cr, 0.3, 0.3, 0.35);
      draw_text(cr, x, y, "radius: busy share of the interval per entity, rings every 25 %", 8);
    }
  }

  [[nodiscard]] Selection pick(double x, double y, const Rect& area, const TraceIndex& index,
                               const ViewState& state) const override {
    Selection out;
    const Geometry g = geometry(area, index, state);
    const std::size_t n = g.last - g.first;
    if (n == 0) return out;
    const double dx = x - g.cx;
    const double dy = y - g.cy;
    if (std::hypot(dx, dy) > g.radius + 20) return out;
    // Angle from 12 o'clock, clockwise, in units of the spoke spacing.
    double a = std::atan2(dx, -dy) / (2 * std::numbers::pi);
    if (a < 0) a += 1;
    out.entity = static_cast<std::int64_t>(g.first + static_cast<std::size_t>(std::lround(a * static_cast<double>(n))) % n);
    return out;
  }

  [[nodiscard]] ZoomAxes zoom_axes(const Rect& area, const TraceIndex& index, const ViewState& state) const override {
    const Geometry g = geometry(area, index, state);
    ZoomAxes axes;
    axes.plot = Rect{g.cx - g.radius, g.cy - g.radius, 2 * g.radius, 2 * g.radius};
    axes.entities_around = true;
    return axes;
  }

 private:
  struct Geometry {
    double cx = 0;
    double cy = 0;
    double radius = 0;
    std::size_t first = 0;  ///< visible entities [first, last)
    std::size_t last = 0;
    bool labels = false;
    Rect legend;
    // Unit vector of spoke i of n: the first at 12 o'clock, then clockwise.
    [[nodiscard]] std::pair<double, double> direction(std::size_t i, std::size_t n) const {
      const double a = 2 * std::numbers::pi * static_cast<double>(i) / static_cast<double>(std::max<std::size_t>(1, n));
      return {std::sin(a), -std::cos(a)};
    }
  };
  struct Anchor {
    double x;
    double y;
    double align;
  };

  static Geometry geometry(const Rect& area, const TraceIndex& index, const ViewState& state) {
    Geometry g;
    double e0 = 0;
    double e1 = 0;
    visible_entities(index, state, e0, e1);
    g.first = static_cast<std::size_t>(std::floor(e0));
    g.last = std::min(index.entity_count(), static_cast<std::size_t>(std::ceil(e1)));
    g.first = std::min(g.first, g.last);
    Rect content = content_area(area);
    g.legend = Rect{content.x, content.y + content.h - kLegendHeight, content.w, kLegendHeight};
    content.h = std::max(0.0, content.h - kLegendHeight);
    g.labels = std::min(content.w, content.h) >= 120;
    const double margin = g.labels ? 40 : 10;
    g.cx = content.x + content.w / 2;
    g.cy = content.y + content.h / 2;
    g.radius = std::max(1.0, std::min(content.w, content.h) / 2 - margin);
    return g;
  }

  static Anchor anchor(const Geometry& g, std::size_t i, std::size_t n) {
    const auto [dx, dy] = g.direction(i, n);
    return Anchor{g.cx + dx * (g.radius + kLabelGap), g.cy + dy * (g.radius + kLabelGap) + kLabelSize * 0.35 + dy * 3,
                  dx < -0.3 ? 1.0 : (dx > 0.3 ? 0.0 : 0.5)};
  }

  /// The smallest nice stride at which the labels (every stride-th entity) do not overlap, and
  /// how many of them to draw: the last ones are left out when they come round too close to the
  /// first (a stride that does not divide the count).
  static std::pair<std::size_t, std::size_t> label_stride(cairo_t* cr, const Geometry& g, const TraceIndex& index) {
    const std::size_t n = g.last - g.first;
    if (n == 0) return {1, 0};
    const auto box = [&](std::size_t i) {
      const Anchor a = anchor(g, i, n);
      const double w = text_width(cr, index.entities[g.first + i].name, kLabelSize);
      return Rect{a.x - a.align * w - 1, a.y - kLabelSize - 1, w + 2, kLabelSize + 4};
    };
    // Labels are about kLabelSize apart at best: start from what the circumference allows.
    double at_least = static_cast<double>(n) * (kLabelSize + 2) / (2 * std::numbers::pi * (g.radius + kLabelGap));
    for (;;) {
      const std::size_t stride = nice_stride(at_least);
      if (!g.labels || stride >= n) {
        const std::size_t k = std::max<std::size_t>(1, std::min(stride, n));
        return {k, (n + k - 1) / k};
      }
      std::vector<Rect> boxes;
      for (std::size_t i = 0; i < n; i += stride) boxes.push_back(box(i));
      while (boxes.size() > 2 && boxes_overlap(boxes.back(), boxes.front())) boxes.pop_back();
      bool clear = true;
      for (std::size_t a = 0; a < boxes.size() && clear; ++a) {
        for (std::size_t b = a + 1; b < boxes.size() && clear; ++b) clear = !boxes_overlap(boxes[a], boxes[b]);
      }
      if (clear) return {stride, boxes.size()};
      at_least = static_cast<double>(stride) + 1;
    }
  }
};

}  // namespace

std::unique_ptr<View> make_kiviat_view() { return std::make_unique<KiviatView>(); }

}  // namespace kanoko::views
