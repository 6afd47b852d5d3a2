// The communication matrix (VENUS view 12): cell (i, j) holds what entity i sent to entity j in
// the current interval (or everything up to the cursor), as message counts or bytes; darker is
// more. The selected entity's row and column are tinted, the selected pair is outlined.
#include <algorithm>
#include <cmath>

#include "src/trajectory/panel_values.hpp"
#include "src/views/builtin_views.hpp"
#include "src/views/draw.hpp"
#include "src/views/models.hpp"

namespace kanoko::views {

namespace {

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
    const MatrixModel m = compute_matrix(index, t0, t1);
    (void)draw_frame(cr, area,
                     std::string("matrix  ") + (state.bytes ? "bytes" : "messages") + ", " +
                         (state.cumulative ? "cumulative to " + format_time(t1)
                                           : "interval " + format_time(t0) + " - " + format_time(t1)) +
                         ", max " +
                         (state.bytes ? trajectory::format_bytes_text(static_cast<double>(m.max_bytes))
                                      : format_count(static_cast<double>(m.max_messages)) + " msgs") +
                         "  (row sends, column receives)");
    const Layout lay = layout(area, m.n);
    const double max = static_cast<double>(state.bytes ? m.max_bytes : m.max_messages);
    for (std::size_t s = 0; s < m.n; ++s) {
      for (std::size_t d = 0; d < m.n; ++d) {
        const double v = static_cast<double>(state.bytes ? m.bytes[s * m.n + d] : m.messages[s * m.n + d]);
        const double t = max > 0 ? v / max : 0.0;
        if (v > 0) {
          cairo_set_source_rgb(cr, 1 - 0.85 * t, 1 - 0.70 * t, 1 - 0.25 * t);
        } else {
          cairo_set_source_rgb(cr, 0.97, 0.97, 0.97);
        }
        cairo_rectangle(cr, lay.x0 + static_cast<double>(d) * lay.cell, lay.y0 + static_cast<double>(s) * lay.cell,
                        lay.cell - (lay.cell >= 4 ? 1 : 0), lay.cell - (lay.cell >= 4 ? 1 : 0));
        cairo_fill(cr);
        if (v > 0 && lay.cell >= 24) {
          if (t > 0.5) {
            cairo_set_source_rgb(cr, 1, 1, 1);
          } else {
            cairo_set_source_rgb(cr, 0.1, 0.1, 0.2);
          }
          draw_text(cr, lay.x0 + (static_cast<double>(d) + 0.5) * lay.cell, lay.y0 + (static_cast<double>(s) + 0.6) * lay.cell,
                    format_count(v), std::min(10.0, lay.cell / 3), 0.5);
        }
      }
    }
    if (lay.labels) {
      cairo_set_source_rgb(cr, 0.1, 0.1, 0.15);
      const double size = std::clamp(lay.cell * 0.6, 6.0, 10.0);
      for (std::size_t i = 0; i < m.n; ++i) {
        draw_text(cr, lay.x0 - 3, lay.y0 + (static_cast<double>(i) + 0.5) * lay.cell + 3.5, index.entities[i].name, size, 1.0);
        draw_text(cr, lay.x0 + (static_cast<double>(i) + 0.5) * lay.cell, lay.y0 - 4, index.entities[i].name, size, 0.5);
      }
      draw_text(cr, lay.x0 - 3, lay.y0 - 4, "from\\to", 8, 1.0);
    }
    const Selection& sel = state.selection;
    const double side = lay.cell * static_cast<double>(m.n);
    if (sel.has_entity() && static_cast<std::size_t>(sel.entity) < m.n) {
      const double at = static_cast<double>(sel.entity) * lay.cell;
      set_colour(cr, kSelectionColour, 0.18);
      cairo_rectangle(cr, lay.x0, lay.y0 + at, side, lay.cell);
      cairo_rectangle(cr, lay.x0 + at, lay.y0, lay.cell, side);
      cairo_fill(cr);
    }
    if (sel.has_pair() && static_cast<std::size_t>(sel.pair_src) < m.n && static_cast<std::size_t>(sel.pair_dst) < m.n) {
      set_colour(cr, kSelectionColour);
      cairo_set_line_width(cr, 2);
      cairo_rectangle(cr, lay.x0 + static_cast<double>(sel.pair_dst) * lay.cell, lay.y0 + static_cast<double>(sel.pair_src) * lay.cell,
                      std::max(lay.cell, 2.0), std::max(lay.cell, 2.0));
      cairo_stroke(cr);
    }
  }

  [[nodiscard]] Selection pick(double x, double y, const Rect& area, const TraceIndex& index,
                               const ViewState& /*state*/) const override {
    Selection out;
    const std::size_t n = index.entity_count();
    const Layout lay = layout(area, n);
    if (n == 0 || lay.cell <= 0 || x < lay.x0 || y < lay.y0) return out;
    const auto d = static_cast<std::size_t>((x - lay.x0) / lay.cell);
    const auto s = static_cast<std::size_t>((y - lay.y0) / lay.cell);
    if (d >= n || s >= n) return out;
    out.entity = static_cast<std::int64_t>(s);
    out.pair_src = static_cast<std::int64_t>(s);
    out.pair_dst = static_cast<std::int64_t>(d);
    return out;
  }

 private:
  struct Layout {
    double x0 = 0;
    double y0 = 0;
    double cell = 0;
    bool labels = false;
  };

  static Layout layout(const Rect& area, std::size_t n) {
    Layout lay;
    const Rect content = content_area(area);
    const double nn = static_cast<double>(std::max<std::size_t>(1, n));
    const double margin = 6;
    double cell = std::min(content.w - 2 * margin, content.h - 2 * margin) / nn;
    lay.labels = n <= 48 && cell >= 6;
    const double label = lay.labels ? 46 : 0;
    cell = std::max(0.0, std::min(content.w - 2 * margin - label, content.h - 2 * margin - label) / nn);
    lay.cell = cell;
    lay.x0 = content.x + margin + label;
    lay.y0 = content.y + margin + label;
    return lay;
  }
};

}  // namespace

std::unique_ptr<View> make_matrix_view() { return std::make_unique<MatrixView>(); }

}  // namespace kanoko::views
