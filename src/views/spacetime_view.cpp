// The space-time diagram (VENUS view 15, "the view with the most information"): one row per
// entity with its states over time, and its messages. It draws from what the pixels can show:
// each pixel column of a row holds the mix of the classes' time in it (the VENUS level-of-detail
// merge), and when there are more entities than pixel rows a pixel row aggregates the entities
// that fall in it. Messages are lines from sender to receiver (merged per pixel into bundles)
// while they are few; beyond kMaxMessageLines they become a density of message ends per pixel
// drawn over the states, so a million messages draw as fast as a hundred. The picture is one
// image of columns × pixel rows, so the cost is the visible segments (or bins) plus the pixels.
#include <algorithm>
#include <array>
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

/// Most message lines drawn; beyond it messages are a density.
constexpr std::uint64_t kMaxMessageLines = 2000;
/// Fewest lines drawn with arrowheads.
constexpr std::size_t kMaxArrowheads = 400;
constexpr double kAxisHeight = 14;
constexpr Rgb kHeatColour{0.10, 0.05, 0.35};

/// Opacity of the density over the states for `v` message ends in a cell (log scale to `max`).
double heat_alpha(double v, double max) {
  if (!(v > 0) || !(max > 0)) return 0;
  return 0.30 + 0.65 * std::log1p(v) / std::log1p(max);
}

Rgb mix(const Rgb& a, const Rgb& b, double t) {
  return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}

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
    const std::size_t columns = lay.axis.columns();
    const Rows rows = rows_of(lay, index);
    const StateGrid grid = state_grid(index, lay.axis.t0_s, lay.axis.t1_s, columns, rows.first, rows.row_of, rows.count);
    const bool lines = as_lines(index, lay, rows);
    MessageBundles bundles;
    MessageDensity density;
    std::uint64_t shown_messages = 0;
    if (lines) {
      bundles = bundle_messages(index, lay.axis.t0_s, lay.axis.t1_s, columns);
      shown_messages = bundles.messages;
    } else {
      density = message_density(index, lay.axis.t0_s, lay.axis.t1_s, columns, rows.first, rows.row_of, rows.count);
      shown_messages = density.messages;
    }
    std::string title = "space-time  " + std::to_string(n) + " entities";
    if (lay.e1 - lay.e0 < static_cast<double>(n)) {
      title += " (" + std::to_string(static_cast<std::size_t>(lay.e0)) + "-" +
               std::to_string(static_cast<std::size_t>(std::ceil(lay.e1)) - 1) + " shown)";
    }
    title += ", " + format_count(static_cast<double>(shown_messages)) + " messages" +
             (lines ? "" : " as density") + (!rows.per_entity ? ", rows merged" : "") +
             (grid.exact && (lines ? bundles.exact : density.exact) ? "" : " (binned)");
    (void)draw_frame(cr, area, title);
    paint_cells(cr, lay, rows, grid, lines ? nullptr : &density);
    // By code location (location_colours.hpp): each entity's row over the class colours, when
    // every entity has a row of its own.
    const bool by_location = state.location_colours && rows.per_entity;
    if (by_location) {
      const ClipTo plot_clip(cr, lay.axis.plot);
      const double h = std::max(lay.row_h - (lay.row_h >= 4 ? 1.0 : 0.0), 0.5);
      const auto from = static_cast<EntityIndex>(std::floor(lay.e0));
      for (EntityIndex e = from; e < n && static_cast<double>(e) < lay.e1; ++e) {
        draw_location_row(cr, *state.location_colours, e, Rect{lay.axis.plot.x, lay.y_of(e), lay.axis.plot.w, h},
                          lay.axis.t0_s, lay.axis.t1_s, columns);
      }
    }
    draw_labels(cr, lay, index);
    draw_selected_entity(cr, lay, state.selection, n);
    if (lines) draw_bundles(cr, lay, bundles, columns, state.selection);
    if (by_location) draw_location_legend(cr, *state.location_colours, lay.axis.plot);
    draw_time_decorations(cr, lay.axis, state);
    draw_legend(cr, lay, lines, density);
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
    const double e = std::floor(lay.entity_at(y));
    out.entity = static_cast<std::int64_t>(std::clamp(e, 0.0, static_cast<double>(n - 1)));
    if (x < lay.axis.plot.x) return out;  // a click on a label picks the entity only
    out.time_s = lay.axis.t_of(x);
    // A click within 3 px of a message line picks that message (and its pair); a density has
    // no lines to pick, so there the click picks the row's entity and the time.
    if (!as_lines(index, lay, rows_of(lay, index))) return out;
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

  [[nodiscard]] ZoomAxes zoom_axes(const Rect& area, const TraceIndex& index, const ViewState& state) const override {
    ZoomAxes axes;
    axes.plot = layout(area, index, state).axis.plot;
    axes.time_x = true;
    axes.entities_y = true;
    return axes;
  }

 private:
  struct Layout {
    TimeAxis axis;
    double label_w = 0;
    double e0 = 0;  ///< visible entities [e0, e1)
    double e1 = 1;
    double row_h = 1;  ///< pixels per entity
    Rect legend;
    [[nodiscard]] double y_of(double e) const { return axis.plot.y + (e - e0) * row_h; }
    [[nodiscard]] double entity_at(double y) const { return e0 + (y - axis.plot.y) / row_h; }
    /// Pixel rows of the picture (at least 1).
    [[nodiscard]] std::size_t pixel_rows() const {
      return static_cast<std::size_t>(std::max(1.0, std::floor(axis.plot.h)));
    }
  };
  struct Line {
    double x0, y0, x1, y1;
  };
  /// The picture's rows: one per visible entity when each has a pixel row or more, else one per
  /// pixel row, holding the entities whose middle falls in it.
  struct Rows {
    EntityIndex first = 0;
    std::vector<std::uint32_t> row_of;  ///< per entity from `first`
    std::size_t count = 0;
    bool per_entity = true;
  };

  static Layout layout(const Rect& area, const TraceIndex& index, const ViewState& state) {
    Layout lay;
    const Rect content = content_area(area);
    visible_entities(index, state, lay.e0, lay.e1);
    if (!(lay.e1 > lay.e0)) lay.e1 = lay.e0 + 1;
    lay.label_w = content.w >= 200 ? std::min(80.0, content.w / 5) : 0.0;
    const double bottom = kAxisHeight + kLegendHeight;
    lay.axis.plot = Rect{content.x + lay.label_w, content.y + 2, std::max(1.0, content.w - lay.label_w - 6),
                         std::max(1.0, content.h - bottom - 2)};
    lay.legend = Rect{content.x, lay.axis.plot.y + lay.axis.plot.h + kAxisHeight, content.w, kLegendHeight};
    lay.row_h = lay.axis.plot.h / (lay.e1 - lay.e0);
    visible_window(index, state, lay.axis.t0_s, lay.axis.t1_s);
    return lay;
  }

  static Rows rows_of(const Layout& lay, const TraceIndex& index) {
    Rows rows;
    const std::size_t n = index.entity_count();
    rows.first = static_cast<EntityIndex>(std::clamp(std::floor(lay.e0), 0.0, static_cast<double>(n)));
    const auto last = static_cast<EntityIndex>(std::clamp(std::ceil(lay.e1), 0.0, static_cast<double>(n)));
    const std::size_t pixels = lay.pixel_rows();
    rows.per_entity = lay.row_h >= 1.0;
    rows.row_of.resize(last - std::min(rows.first, last));
    if (rows.per_entity) {
      rows.count = rows.row_of.size();
      for (std::size_t i = 0; i < rows.row_of.size(); ++i) rows.row_of[i] = static_cast<std::uint32_t>(i);
      return rows;
    }
    rows.count = pixels;
    const double scale = static_cast<double>(pixels) / (lay.e1 - lay.e0);
    for (std::size_t i = 0; i < rows.row_of.size(); ++i) {
      const double middle = static_cast<double>(rows.first + i) + 0.5;
      const double py = std::floor((middle - lay.e0) * scale);
      rows.row_of[i] = py < 0 || py >= static_cast<double>(pixels) ? kNoRow : static_cast<std::uint32_t>(py);
    }
    return rows;
  }

  /// Lines while the visible messages are few and known one by one, else a density.
  static bool as_lines(const TraceIndex& index, const Layout& lay, const Rows& rows) {
    if (!index.detail_complete) return false;
    const auto last = static_cast<EntityIndex>(rows.first + rows.row_of.size());
    return count_visible_messages(index, lay.axis.t0_s, lay.axis.t1_s, rows.first, last, kMaxMessageLines + 1) <=
           kMaxMessageLines;
  }

  /// The picture: per pixel, the mix of the classes' colours by their time in it, under the
  /// message density when there is one; a pixel gap between rows of 4 pixels or more.
  static void paint_cells(cairo_t* cr, const Layout& lay, const Rows& rows, const StateGrid& grid,
                          const MessageDensity* density) {
    const std::size_t columns = grid.columns;
    const std::size_t pixels = lay.pixel_rows();
    const std::array<Rgb, kClassCount> fills{class_fill(StateClass::Busy), class_fill(StateClass::Overhead),
                                             class_fill(StateClass::Idle)};
    const std::uint32_t white = argb_pixel(Rgb{1, 1, 1});
    const double max_ends = density != nullptr ? static_cast<double>(density->max_ends) : 0.0;
    const double pixel_h = lay.axis.plot.h / static_cast<double>(pixels);
    const auto fill_row = [&](int y, std::uint32_t* out) {
      const auto py = static_cast<std::size_t>(y);
      std::size_t r = kNoRow;
      if (rows.per_entity) {
        const double e = lay.entity_at(lay.axis.plot.y + (static_cast<double>(py) + 0.5) * pixel_h);
        const double whole = std::floor(e);
        const bool gap = lay.row_h >= 4 && (e - whole) * lay.row_h >= lay.row_h - 1;
        if (!gap && whole >= static_cast<double>(rows.first) &&
            whole < static_cast<double>(rows.first + rows.row_of.size())) {
          r = static_cast<std::size_t>(whole) - rows.first;
        }
      } else if (py < grid.rows && grid.members[py] > 0) {
        r = py;
      }
      if (r == kNoRow || r >= grid.rows) {
        std::fill(out, out + columns, white);
        return;
      }
      for (std::size_t c = 0; c < columns; ++c) {
        const ClassSeconds& k = grid.cell(r, c);
        const double total = k[0] + k[1] + k[2];
        Rgb colour{1, 1, 1};
        if (total > 0) {
          colour = Rgb{0, 0, 0};
          for (std::size_t j = 0; j < kClassCount; ++j) {
            const double f = k[j] / total;
            colour.r += f * fills[j].r;
            colour.g += f * fills[j].g;
            colour.b += f * fills[j].b;
          }
        }
        if (density != nullptr) {
          colour = mix(colour, kHeatColour, heat_alpha(static_cast<double>(density->ends[r * columns + c]), max_ends));
        }
        out[c] = argb_pixel(colour);
      }
    };
    draw_pixels(cr, lay.axis.plot, static_cast<int>(columns), static_cast<int>(pixels), fill_row);
  }

  /// Entity names in the gutter: every one when rows are tall enough, else every k-th (k a nice
  /// stride) so that no two overlap.
  static void draw_labels(cairo_t* cr, const Layout& lay, const TraceIndex& index) {
    if (lay.label_w <= 0) return;
    const double size = lay.row_h >= 8 ? std::clamp(lay.row_h * 0.7, 7.0, 10.0) : 8.0;
    const std::size_t stride = nice_stride((size + 3) / lay.row_h);
    const double top = lay.axis.plot.y + size * 0.75;
    const double bottom = lay.axis.plot.y + lay.axis.plot.h;
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.15);
    cairo_set_line_width(cr, 1);
    const auto first = static_cast<std::size_t>(std::ceil(std::max(0.0, lay.e0) / static_cast<double>(stride))) * stride;
    for (std::size_t e = first; static_cast<double>(e) < lay.e1 && e < index.entity_count(); e += stride) {
      const double y = lay.y_of(static_cast<double>(e) + 0.5);
      // The first label may sit a little lower than its row so that it stays under the title.
      const double base = std::max(y + size * 0.35, top);
      if (base > bottom) continue;
      const std::string& label = index.entities[e].name;
      // Labels longer than the gutter are cut on the left (they are right-aligned).
      draw_text(cr, lay.axis.plot.x - 5, base, label, size, 1.0);
      if (stride > 1) {
        cairo_move_to(cr, lay.axis.plot.x - 3, y);
        cairo_line_to(cr, lay.axis.plot.x, y);
        cairo_stroke(cr);
      }
    }
  }

  /// The selected entity's row: an outline (at least 3 px high) and a mark in the gutter, never a fill.
  static void draw_selected_entity(cairo_t* cr, const Layout& lay, const Selection& sel, std::size_t n) {
    if (!sel.has_entity() || static_cast<std::size_t>(sel.entity) >= n) return;
    const auto e = static_cast<double>(sel.entity);
    if (e + 1 <= lay.e0 || e >= lay.e1) return;
    // Inside the row as drawn (without its gap pixel), so that the outline marks this row only;
    // at least 3 px high when rows are thinner.
    double y0 = lay.y_of(e);
    double h = lay.row_h >= 4 ? lay.row_h - 1 : lay.row_h;
    if (h < 3) {
      y0 += h / 2 - 1.5;
      h = 3;
    }
    const ClipTo clip(cr, Rect{lay.axis.plot.x - lay.label_w, lay.axis.plot.y - 2, lay.axis.plot.w + lay.label_w + 4,
                               lay.axis.plot.h + 4});
    set_colour(cr, kSelectionColour);
    cairo_set_line_width(cr, 1.5);
    cairo_rectangle(cr, lay.axis.plot.x + 0.75, y0 + 0.75, lay.axis.plot.w - 1.5, h - 1.5);
    cairo_stroke(cr);
    const double ym = y0 + h / 2;
    cairo_move_to(cr, lay.axis.plot.x - 1, ym);
    cairo_line_to(cr, lay.axis.plot.x - 7, ym - 4);
    cairo_line_to(cr, lay.axis.plot.x - 7, ym + 4);
    cairo_close_path(cr);
    cairo_fill(cr);
  }

  static void draw_legend(cairo_t* cr, const Layout& lay, bool lines, const MessageDensity& density) {
    if (lay.legend.w < 60) return;
    const double y = lay.legend.y + lay.legend.h - 3;
    double x = draw_class_key(cr, lay.legend.x + 4, y, 8);
    if (lines) {
      cairo_set_source_rgba(cr, 0.1, 0.1, 0.2, 0.8);
      cairo_set_line_width(cr, 1);
      cairo_move_to(cr, x, y - 3);
      cairo_line_to(cr, x + 14, y - 3);
      cairo_stroke(cr);
      cairo_set_source_rgb(cr, 0.15, 0.15, 0.2);
      draw_text(cr, x + 17, y, "message, sender to receiver", 8);
      return;
    }
    const double max = std::max(1.0, static_cast<double>(density.max_ends));
    (void)draw_ramp(
        cr, x, y, 60,
        [max](double f) {
          return mix(Rgb{1, 1, 1}, kHeatColour, heat_alpha(std::exp(f * std::log1p(max)) - 1, max));
        },
        "1", format_count(max), "message ends per pixel", 8);
  }

  static void draw_bundles(cairo_t* cr, const Layout& lay, const MessageBundles& bundles, std::size_t columns,
                           const Selection& selection) {
    const ClipTo clip(cr, lay.axis.plot);
    const bool arrows = bundles.bundles.size() <= kMaxArrowheads;
    const double alpha = std::clamp(0.55 * 2.0 * static_cast<double>(columns) /
                                        std::max(1.0, static_cast<double>(bundles.bundles.size())),
                                    0.15, 0.7);
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
        const double len = std::hypot(x1 - x0, y1 - y0);
        if (arrows && len > 8) {
          const double ux = (x1 - x0) / len;
          const double uy = (y1 - y0) / len;
          cairo_move_to(cr, x1, y1);
          cairo_line_to(cr, x1 - 6 * ux - 3 * uy, y1 - 6 * uy + 3 * ux);
          cairo_line_to(cr, x1 - 6 * ux + 3 * uy, y1 - 6 * uy - 3 * ux);
          cairo_close_path(cr);
          cairo_fill(cr);
        }
      }
    }
  }

  static Line line_of(const MessageBundle& b, const Layout& lay, std::size_t columns) {
    const double colw = lay.axis.plot.w / static_cast<double>(columns);
    const auto x = [&](std::int32_t c) { return lay.axis.plot.x + (static_cast<double>(c) + 0.5) * colw; };
    const auto y = [&](EntityIndex e) { return lay.y_of(static_cast<double>(e) + 0.5); };
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
