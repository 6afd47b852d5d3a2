// Utilisation over time (VENUS view 5, Utilization Count): how many entities are busy, in
// overhead or idle at each moment, stacked; one sample per pixel column.
#include <algorithm>
#include <cmath>

#include "src/views/builtin_views.hpp"
#include "src/views/draw.hpp"
#include "src/views/models.hpp"

namespace kanoko::views {

namespace {

class UtilisationView final : public View {
 public:
  [[nodiscard]] std::string name() const override { return "utilisation"; }
  [[nodiscard]] unsigned needs() const override { return static_cast<unsigned>(DataNeed::States); }

  void draw(cairo_t* cr, const Rect& area, const TraceIndex& index, const ViewState& state) const override {
    const ClipTo clip(cr, area);
    const TimeAxis axis = layout(area, index, state);
    const UtilisationModel u = compute_utilisation(index, axis.t0_s, axis.t1_s, axis.columns());
    (void)draw_frame(cr, area, "utilisation  entities in each state over time");
    const double n = static_cast<double>(std::max<std::size_t>(1, u.entities));
    const double colw = axis.plot.w / static_cast<double>(u.counts.size());
    const auto y_of = [&](double count) { return axis.plot.y + axis.plot.h * (1 - count / n); };
    // Stacked bands: busy at the bottom, then overhead, then idle.
    for (std::size_t k = 0; k < kClassCount; ++k) {
      for (std::size_t c = 0; c < u.counts.size(); ++c) {
        double below = 0;
        for (std::size_t j = 0; j < k; ++j) below += u.counts[c][j];
        const double x = axis.plot.x + static_cast<double>(c) * colw;
        const double y_top = y_of(below + u.counts[c][k]);
        if (c == 0) cairo_move_to(cr, x, y_top);
        cairo_line_to(cr, x, y_top);
        cairo_line_to(cr, x + colw, y_top);
      }
      for (std::size_t c = u.counts.size(); c-- > 0;) {
        double below = 0;
        for (std::size_t j = 0; j < k; ++j) below += u.counts[c][j];
        const double x = axis.plot.x + static_cast<double>(c) * colw;
        cairo_line_to(cr, x + colw, y_of(below));
        cairo_line_to(cr, x, y_of(below));
      }
      cairo_close_path(cr);
      const auto cls = static_cast<StateClass>(k);
      set_colour(cr, class_colour(cls), cls == StateClass::Idle ? 0.35 : 0.9);
      cairo_fill(cr);
    }
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.25);
    draw_text(cr, axis.plot.x - 3, axis.plot.y + 8, format_count(n), 9, 1.0);
    draw_text(cr, axis.plot.x - 3, axis.plot.y + axis.plot.h, "0", 9, 1.0);
    draw_time_decorations(cr, axis, state);
    const Rect content = content_area(area);
    if (content.w >= 60) {
      const double y = content.y + content.h - 3;
      const double x = draw_class_key(cr, content.x + 4, y, 8);
      cairo_set_source_rgb(cr, 0.3, 0.3, 0.35);
      draw_text(cr, x, y, "height: number of entities (0 to " + format_count(n) + "), stacked", 8);
    }
  }

  [[nodiscard]] ZoomAxes zoom_axes(const Rect& area, const TraceIndex& index, const ViewState& state) const override {
    ZoomAxes axes;
    axes.plot = layout(area, index, state).plot;
    axes.time_x = true;
    return axes;
  }

  [[nodiscard]] Selection pick(double x, double y, const Rect& area, const TraceIndex& index,
                               const ViewState& state) const override {
    Selection out;
    const TimeAxis axis = layout(area, index, state);
    if (axis.plot.contains(x, y)) out.time_s = axis.t_of(x);
    return out;
  }

 private:
  static TimeAxis layout(const Rect& area, const TraceIndex& index, const ViewState& state) {
    TimeAxis axis;
    const Rect content = content_area(area);
    axis.plot = Rect{content.x + 34, content.y + 4, std::max(1.0, content.w - 40),
                     std::max(1.0, content.h - 22 - kLegendHeight)};
    visible_window(index, state, axis.t0_s, axis.t1_s);
    return axis;
  }
};

}  // namespace

std::unique_ptr<View> make_utilisation_view() { return std::make_unique<UtilisationView>(); }

}  // namespace kanoko::views
