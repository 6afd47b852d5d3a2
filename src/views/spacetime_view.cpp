// The space-time diagram (VENUS view 15, "the view with the most information"): one row per
// entity with its states over time, and a line per message from sender to receiver. Everything
// that falls inside one pixel column is merged (the VENUS level-of-detail technique): a cell takes
// its dominant state, and messages sharing sender, receiver and pixel columns become one bundle
// whose line width grows with its count.
#include <algorithm>
#include <cmath>

#include "src/views/builtin_views.hpp"
#include "src/views/draw.hpp"
#include "src/views/location_colours.hpp"
#include "src/views/models.hpp"

namespace kanoko::views {

std::size_t TimeAxis::columns() const { return static_cast<std::size_t>(std::max(1.0, std::floor(plot.w))); }

void visible_window(const TraceIndex& index, const ViewState& state, double& t0_s, double& t1_s) {
  t0_s = state.window_t0_s;
  t1_s = state.window_t1_s;
  if (!(t1_s > t0_s) || !std::isfinite(t0_s) || !std::isfinite(t1_s)) {
    t0_s = index.begin_s;
    t1_s = index.end_s > index.begin_s ? index.end_s : index.begin_s + 1.0;
  }
}

void draw_time_decorations(cairo_t* cr, const TimeAxis& axis, const ViewState& state) {
  cairo_set_source_rgb(cr, 0.2, 0.2, 0.25);
  const double y = axis.plot.y + axis.plot.h + 12;
  draw_text(cr, axis.plot.x, y, format_time(axis.t0_s), 9, 0.0);
  draw_text(cr, axis.plot.x + axis.plot.w / 2, y, format_time((axis.t0_s + axis.t1_s) / 2), 9, 0.5);
  draw_text(cr, axis.plot.x + axis.plot.w, y, format_time(axis.t1_s), 9, 1.0);
  const ClipTo clip(cr, axis.plot);
  if (state.selection.has_time()) {
    const double xs = axis.x_of(state.selection.time_s);
    const double dash[] = {4.0, 3.0};
    cairo_set_dash(cr, dash, 2, 0);
    set_colour(cr, kSelectionColour);
    cairo_set_line_width(cr, 1.5);
    cairo_move_to(cr, xs, axis.plot.y);
    cairo_line_to(cr, xs, axis.plot.y + axis.plot.h);
    cairo_stroke(cr);
    cairo_set_dash(cr, nullptr, 0, 0);
  }
  const double xc = axis.x_of(state.time_s);
  set_colour(cr, kCursorColour);
  cairo_set_line_width(cr, 2);
  cairo_move_to(cr, xc, axis.plot.y);
  cairo_line_to(cr, xc, axis.plot.y + axis.plot.h);
  cairo_stroke(cr);
}

namespace {

class SpaceTimeView final : public View {
 public:
  [[nodiscard]] std::string name() const override { return "spacetime"; }
  [[nodiscard]] unsigned needs() const override {
    return static_cast<unsigned>(DataNeed::States) | static_cast<unsigned>(DataNeed::Messages);
  }

  void draw(cairo_t* cr, const Rect& area, const TraceIndex& index, const ViewState& state) const override {
    const ClipTo clip(cr, area);
    const Layout lay = layout(area, index, state);
    const std::size_t n = index.entity_count();
    const StateColumns cols = state_columns(index, lay.axis.t0_s, lay.axis.t1_s, lay.axis.columns());
    const MessageBundles bundles = bundle_messages(index, lay.axis.t0_s, lay.axis.t1_s, cols.columns);
    Rect frame_area = area;
    (void)draw_frame(cr, frame_area,
                     "space-time  " + std::to_string(n) + " entities, " + format_count(static_cast<double>(bundles.messages)) +
                         " messages in " + format_count(static_cast<double>(bundles.bundles.size())) + " bundles" +
                         (cols.exact && bundles.exact ? "" : " (binned)"));
    const double colw = lay.axis.plot.w / static_cast<double>(cols.columns);
    // State rows: runs of equal dominant class become one rectangle.
    for (EntityIndex e = 0; e < n; ++e) {
      const double y = lay.axis.plot.y + static_cast<double>(e) * lay.row_h;
      const double h = std::max(lay.row_h - (lay.row_h >= 4 ? 1.0 : 0.0), 0.5);
      if (state.location_colours) {  // by code location (location_colours.hpp)
        draw_location_row(cr, *state.location_colours, e, Rect{lay.axis.plot.x, y, lay.axis.plot.w, h}, lay.axis.t0_s,
                          lay.axis.t1_s, cols.columns);
      }
      std::size_t start = 0;
      for (std::size_t c = 1; c <= cols.columns && !state.location_colours; ++c) {
        const StateClass k = cols.dominant(e, start);
        if (c < cols.columns && cols.dominant(e, c) == k) continue;
        if (k == StateClass::None) {  // no state: the background shows
          start = c;
          continue;
        }
        set_colour(cr, class_colour(k), k == StateClass::Idle ? 0.35 : 1.0);
        cairo_rectangle(cr, lay.axis.plot.x + static_cast<double>(start) * colw, y,
                        static_cast<double>(c - start) * colw, h);
        cairo_fill(cr);
        start = c;
      }
      if (lay.label_w > 0) {
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.15);
        draw_text(cr, lay.axis.plot.x - 4, y + lay.row_h / 2 + 3.5, index.entities[e].name,
                  std::clamp(lay.row_h * 0.7, 6.0, 10.0), 1.0);
      }
    }
    if (state.selection.has_entity() && static_cast<std::size_t>(state.selection.entity) < n) {
      set_colour(cr, kSelectionColour);
      cairo_set_line_width(cr, 2);
      cairo_rectangle(cr, area.x + 2, lay.axis.plot.y + static_cast<double>(state.selection.entity) * lay.row_h,
                      lay.axis.plot.w + lay.label_w, std::max(lay.row_h, 2.0));
      cairo_stroke(cr);
    }
    draw_bundles(cr, lay, bundles, cols.columns, state.selection);
    if (state.location_colours) draw_location_legend(cr, *state.location_colours, lay.axis.plot);
    draw_time_decorations(cr, lay.axis, state);
  }

  [[nodiscard]] Selection pick(double x, double y, const Rect& area, const TraceIndex& index,
                               const ViewState& state) const override {
    Selection out;
    const Layout lay = layout(area, index, state);
    const std::size_t n = index.entity_count();
    if (n == 0 || y < lay.axis.plot.y || y >= lay.axis.plot.y + lay.axis.plot.h || x < area.x ||
        x >= lay.axis.plot.x + lay.axis.plot.w) {
      return out;
    }
    out.entity = static_cast<std::int64_t>(std::min<double>(static_cast<double>(n - 1), std::floor((y - lay.axis.plot.y) / lay.row_h)));
    if (x < lay.axis.plot.x) return out;  // a click on a label picks the entity only
    out.time_s = lay.axis.t_of(x);
    // A click within 3 px of a message line picks that message (and its pair).
    const std::size_t columns = lay.axis.columns();
    const MessageBundles bundles = bundle_messages(index, lay.axis.t0_s, lay.axis.t1_s, columns);
    double best = 3.0;
    for (const MessageBundle& b : bundles.bundles) {
      const auto [x0, y0, x1, y1] = line_of(b, lay, columns);
      const double d = distance_to_segment(x, y, x0, y0, x1, y1);
      if (d > best) continue;
      best = d;
      out.entity = b.src;
      out.pair_src = b.src;
      out.pair_dst = b.dst;
      out.message = bundles.exact ? static_cast<std::int64_t>(b.first_message) : -1;
      if (bundles.exact) out.time_s = index.messages[b.first_message].send_s;
    }
    return out;
  }

 private:
  struct Layout {
    TimeAxis axis;
    double label_w = 0;
    double row_h = 1;
  };
  struct Line {
    double x0, y0, x1, y1;
  };

  static Layout layout(const Rect& area, const TraceIndex& index, const ViewState& state) {
    Layout lay;
    const Rect content = content_area(area);
    const std::size_t n = std::max<std::size_t>(1, index.entity_count());
    const double axis_h = 16;
    lay.row_h = std::max(0.01, (content.h - axis_h - 2) / static_cast<double>(n));
    lay.label_w = lay.row_h >= 6 ? std::min(80.0, content.w / 5) : 0.0;
    lay.axis.plot = Rect{content.x + lay.label_w, content.y + 2, std::max(1.0, content.w - lay.label_w - 6),
                         std::max(1.0, content.h - axis_h - 2)};
    visible_window(index, state, lay.axis.t0_s, lay.axis.t1_s);
    return lay;
  }

  static void draw_bundles(cairo_t* cr, const Layout& lay, const MessageBundles& bundles, std::size_t columns,
                           const Selection& selection) {
    const ClipTo clip(cr, lay.axis.plot);
    // Many bundles per pixel column would hide the states: fainter lines the denser they are.
    const double alpha = std::clamp(0.55 * 2.0 * static_cast<double>(columns) /
                                        std::max(1.0, static_cast<double>(bundles.bundles.size())),
                                    0.06, 0.55);
    for (int pass = 0; pass < 2; ++pass) {  // selected pair on top
      for (const MessageBundle& b : bundles.bundles) {
        const bool selected = is_selected(b, selection);
        if (selected != (pass == 1)) continue;
        const auto [x0, y0, x1, y1] = line_of(b, lay, columns);
        cairo_set_line_width(cr, std::min(4.0, 0.6 + 0.5 * std::log2(static_cast<double>(b.messages))) + (selected ? 1.5 : 0.0));
        if (selected) {
          set_colour(cr, kSelectionColour);
        } else {
          cairo_set_source_rgba(cr, 0.1, 0.1, 0.2, alpha);
        }
        cairo_move_to(cr, x0, y0);
        cairo_line_to(cr, x1, y1);
        cairo_stroke(cr);
      }
    }
  }

  static Line line_of(const MessageBundle& b, const Layout& lay, std::size_t columns) {
    const double colw = lay.axis.plot.w / static_cast<double>(columns);
    const auto x = [&](std::int32_t c) { return lay.axis.plot.x + (static_cast<double>(c) + 0.5) * colw; };
    const auto y = [&](EntityIndex e) { return lay.axis.plot.y + (static_cast<double>(e) + 0.5) * lay.row_h; };
    return Line{x(b.send_column), y(b.src), x(b.recv_column), y(b.dst)};
  }

  static bool is_selected(const MessageBundle& b, const Selection& s) {
    return s.has_pair() && static_cast<std::int64_t>(b.src) == s.pair_src && static_cast<std::int64_t>(b.dst) == s.pair_dst;
  }

  static double distance_to_segment(double px, double py, double x0, double y0, double x1, double y1) {
    const double dx = x1 - x0;
    const double dy = y1 - y0;
    const double len2 = dx * dx + dy * dy;
    const double u = len2 > 0 ? std::clamp(((px - x0) * dx + (py - y0) * dy) / len2, 0.0, 1.0) : 0.0;
    return std::hypot(px - (x0 + u * dx), py - (y0 + u * dy));
  }
};

}  // namespace

std::unique_ptr<View> make_spacetime_view() { return std::make_unique<SpaceTimeView>(); }

}  // namespace kanoko::views
