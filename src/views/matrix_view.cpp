// The communication matrix (VENUS view 12): cell (i, j) holds what entity i sent to entity j in
// the current interval (or everything up to the cursor), as message counts or bytes; darker is
// more. Beyond what the pixels can show, a cell sums a block of entities (the visible range split
// into as many blocks as there are pixels). Labels are thinned to every k-th entity so that none
// collide; a legend gives the colour scale with its range and unit. The selected entity's row and
// column are outlined, the selected pair is outlined thicker.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "src/trajectory/panel_values.hpp"
#include "src/views/builtin_views.hpp"
#include "src/views/draw.hpp"
#include "src/views/models.hpp"

namespace kanoko::views {

namespace {

/// The colour of a cell at `t` (0..1) of the maximum.
Rgb matrix_colour(double t) { return {1 - 0.85 * t, 1 - 0.70 * t, 1 - 0.25 * t}; }
constexpr Rgb kEmptyCell{0.97, 0.97, 0.97};
constexpr double kLabelSize = 8;

class MatrixView final : public View {
 public:
  [[nodiscard]] std::string name() const override { return "matrix"; }
  [[nodiscard]] unsigned needs() const override {
    return static_cast<unsigned>(DataNeed::Messages) | static_cast<unsigned>(DataNeed::Traffic);
  }

  void draw(cairo_t* cr, const Rect& area, const TraceIndex& index, const ViewState& state) const override {
    const ClipTo clip(cr, area);
    double t0 = 0;
    double t1 = 0;
    current_interval(index, state, t0, t1);
    const Layout lay = layout(cr, area, index, state);
    const MatrixModel m = compute_matrix_blocks(index, t0, t1, lay.first, lay.last, lay.cells);
    const double max = static_cast<double>(state.bytes ? m.max_bytes : m.max_messages);
    const std::size_t count = lay.last - lay.first;
    std::string title = std::string("matrix  ") + (state.bytes ? "bytes" : "messages") + ", " +
                        (state.cumulative ? "cumulative to " + format_time(t1)
                                          : "interval " + format_time(t0) + " - " + format_time(t1));
    if (count < index.entity_count()) {
      title += ", entities " + std::to_string(lay.first) + "-" + std::to_string(lay.last - 1);
    }
    if (m.n > 0 && m.n < count) {
      title += ", " + format_count(static_cast<double>(count) / static_cast<double>(m.n)) + " entities per cell";
    }
    (void)draw_frame(cr, area, title);
    draw_cells(cr, lay, m, state.bytes, max);
    draw_labels(cr, lay, index);
    draw_selection(cr, lay, state.selection);
    if (lay.legend.w >= 60) {
      const double y = lay.legend.y + lay.legend.h - 3;
      const std::string unit = std::string(state.bytes ? "bytes" : "messages") + " per cell";
      const double x = draw_ramp(cr, lay.legend.x + 4, y, 60, matrix_colour, "0",
                                 state.bytes ? trajectory::format_bytes_text(max) : format_count(max), unit, 8);
      cairo_set_source_rgb(cr, 0.3, 0.3, 0.35);
      draw_text(cr, x + 10, y, "rows: sender, columns: receiver", 8);
    }
  }

  [[nodiscard]] Selection pick(double x, double y, const Rect& area, const TraceIndex& index,
                               const ViewState& state) const override {
    Selection out;
    const Layout lay = layout(nullptr, area, index, state);
    if (lay.last <= lay.first || !(lay.per_entity > 0) || x < lay.x0 || y < lay.y0 || x >= lay.x0 + lay.side ||
        y >= lay.y0 + lay.side) {
      return out;
    }
    const auto d = lay.first + static_cast<std::size_t>((x - lay.x0) / lay.per_entity);
    const auto s = lay.first + static_cast<std::size_t>((y - lay.y0) / lay.per_entity);
    if (d >= lay.last || s >= lay.last) return out;
    out.entity = static_cast<std::int64_t>(s);
    out.pair_src = static_cast<std::int64_t>(s);
    out.pair_dst = static_cast<std::int64_t>(d);
    return out;
  }

  [[nodiscard]] ZoomAxes zoom_axes(const Rect& area, const TraceIndex& index, const ViewState& state) const override {
    const Layout lay = layout(nullptr, area, index, state);
    ZoomAxes axes;
    axes.plot = Rect{lay.x0, lay.y0, lay.side, lay.side};
    axes.entities_y = true;  // the rows; the columns show the same range
    return axes;
  }

 private:
  struct Layout {
    EntityIndex first = 0;  ///< visible entities [first, last)
    EntityIndex last = 0;
    std::size_t cells = 0;   ///< cells per side
    double x0 = 0;
    double y0 = 0;
    double side = 0;        ///< the matrix's side in pixels
    double per_entity = 0;  ///< pixels per entity
    bool labels = false;
    std::size_t row_stride = 1;
    std::size_t column_stride = 1;
    Rect legend;
    [[nodiscard]] double cell_px() const { return cells > 0 ? side / static_cast<double>(cells) : 0.0; }
  };

  /// With `cr` the label strides are measured from the names; without (pick, zoom) the geometry
  /// alone is computed, which does not depend on them.
  static Layout layout(cairo_t* cr, const Rect& area, const TraceIndex& index, const ViewState& state) {
    Layout lay;
    const Rect content = content_area(area);
    double e0 = 0;
    double e1 = 0;
    visible_entities(index, state, e0, e1);
    lay.first = static_cast<EntityIndex>(std::floor(e0));
    lay.last = static_cast<EntityIndex>(std::min<double>(std::ceil(e1), static_cast<double>(index.entity_count())));
    const std::size_t count = lay.last - std::min(lay.first, lay.last);
    const double margin = 6;
    const double room_w = content.w - 2 * margin;
    const double room_h = content.h - 2 * margin - kLegendHeight;
    lay.labels = std::min(room_w, room_h) >= 80 && count > 0;
    const double left = lay.labels ? 52 : 0;
    const double top = lay.labels ? kLabelSize + 9 : 0;
    lay.side = std::max(0.0, std::min(room_w - left, room_h - top));
    lay.x0 = content.x + margin + left;
    lay.y0 = content.y + margin + top;
    lay.legend = Rect{content.x, content.y + content.h - kLegendHeight, content.w, kLegendHeight};
    lay.cells = std::min(count, static_cast<std::size_t>(std::max(1.0, std::floor(lay.side))));
    lay.per_entity = count > 0 ? lay.side / static_cast<double>(count) : 0.0;
    if (lay.labels && cr != nullptr && lay.per_entity > 0) {
      double widest = 0;
      for (EntityIndex e = lay.first; e < lay.last; e += std::max<EntityIndex>(1, (lay.last - lay.first) / 64)) {
        widest = std::max(widest, text_width(cr, index.entities[e].name, kLabelSize));
      }
      widest = std::max(widest, text_width(cr, index.entities[lay.last - 1].name, kLabelSize));
      lay.row_stride = nice_stride((kLabelSize + 3) / lay.per_entity);
      lay.column_stride = nice_stride((widest + 5) / lay.per_entity);
    }
    return lay;
  }

  static void draw_cells(cairo_t* cr, const Layout& lay, const MatrixModel& m, bool bytes, double max) {
    if (m.n == 0) return;
    const double cell = lay.cell_px();
    const auto value = [&](std::size_t s, std::size_t d) {
      return static_cast<double>(bytes ? m.bytes[s * m.n + d] : m.messages[s * m.n + d]);
    };
    const auto colour = [&](double v) { return v > 0 ? matrix_colour(max > 0 ? v / max : 0.0) : kEmptyCell; };
    if (cell < 4) {
      // Small cells: one picture, a pixel per cell.
      const int side = static_cast<int>(m.n);
      draw_pixels(cr, Rect{lay.x0, lay.y0, cell * side, cell * side}, side, side, [&](int s, std::uint32_t* row) {
        for (std::size_t d = 0; d < m.n; ++d) row[d] = argb_pixel(colour(value(static_cast<std::size_t>(s), d)));
      });
      return;
    }
    for (std::size_t s = 0; s < m.n; ++s) {
      for (std::size_t d = 0; d < m.n; ++d) {
        const double v = value(s, d);
        set_colour(cr, colour(v));
        cairo_rectangle(cr, lay.x0 + static_cast<double>(d) * cell, lay.y0 + static_cast<double>(s) * cell, cell - 1, cell - 1);
        cairo_fill(cr);
        if (v > 0 && cell >= 24) {
          const double t = max > 0 ? v / max : 0.0;
          if (t > 0.5) {
            cairo_set_source_rgb(cr, 1, 1, 1);
          } else {
            cairo_set_source_rgb(cr, 0.1, 0.1, 0.2);
          }
          draw_text(cr, lay.x0 + (static_cast<double>(d) + 0.5) * cell, lay.y0 + (static_cast<double>(s) + 0.6) * cell,
                    format_count(v), std::min(10.0, cell / 3), 0.5);
        }
      }
    }
  }

  /// Row labels on the left and column labels on top, every row_stride-th and
  /// column_stride-th entity, at the middle of the entity's band.
  static void draw_labels(cairo_t* cr, const Layout& lay, const TraceIndex& index) {
    if (!lay.labels || lay.per_entity <= 0) return;
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.15);
    cairo_set_line_width(cr, 1);
    const auto first_of = [&](std::size_t stride) { return (lay.first + stride - 1) / stride * stride; };
    for (std::size_t e = first_of(lay.row_stride); e < lay.last; e += lay.row_stride) {
      const double y = lay.y0 + (static_cast<double>(e - lay.first) + 0.5) * lay.per_entity;
      draw_text(cr, lay.x0 - 5, y + kLabelSize * 0.35, index.entities[e].name, kLabelSize, 1.0);
      if (lay.row_stride > 1) {
        cairo_move_to(cr, lay.x0 - 3, y);
        cairo_line_to(cr, lay.x0, y);
        cairo_stroke(cr);
      }
    }
    for (std::size_t e = first_of(lay.column_stride); e < lay.last; e += lay.column_stride) {
      const double x = lay.x0 + (static_cast<double>(e - lay.first) + 0.5) * lay.per_entity;
      draw_text(cr, x, lay.y0 - 6, index.entities[e].name, kLabelSize, 0.5);
    }
  }

  static void draw_selection(cairo_t* cr, const Layout& lay, const Selection& sel) {
    const auto band = [&](std::int64_t e, double& at, double& width) {
      at = (static_cast<double>(e) - static_cast<double>(lay.first)) * lay.per_entity;
      width = lay.per_entity;
      if (width < 3) {
        at += width / 2 - 1.5;
        width = 3;
      }
    };
    const auto visible = [&](std::int64_t e) { return e >= static_cast<std::int64_t>(lay.first) && e < static_cast<std::int64_t>(lay.last); };
    set_colour(cr, kSelectionColour);
    if (sel.has_entity() && visible(sel.entity)) {
      double at = 0;
      double w = 0;
      band(sel.entity, at, w);
      cairo_set_line_width(cr, 1.2);  // inside the bands: the outline marks this entity only
      cairo_rectangle(cr, lay.x0 + 0.6, lay.y0 + at + 0.6, lay.side - 1.2, w - 1.2);
      cairo_rectangle(cr, lay.x0 + at + 0.6, lay.y0 + 0.6, w - 1.2, lay.side - 1.2);
      cairo_stroke(cr);
    }
    if (sel.has_pair() && visible(sel.pair_src) && visible(sel.pair_dst)) {
      double ys = 0;
      double hs = 0;
      double xd = 0;
      double wd = 0;
      band(sel.pair_src, ys, hs);
      band(sel.pair_dst, xd, wd);
      cairo_set_line_width(cr, 2);
      cairo_rectangle(cr, lay.x0 + xd - 1, lay.y0 + ys - 1, wd + 2, hs + 2);
      cairo_stroke(cr);
    }
  }
};

}  // namespace

std::unique_ptr<View> make_matrix_view() { return std::make_unique<MatrixView>(); }

}  // namespace kanoko::views
