// The per-entity summary table (VENUS views 4 and 10, Utilization Summary and Communication
// Summary) from the start up to the replay cursor: the computing (busy), communicating and
// waiting shares of the span with a bar, messages and bytes sent and received, and the share in
// no state (docs/statistics.md: the one split, trace::split_time); the rows scroll under the
// wheel and a drag. Above the table, the POP efficiency metrics and the outlier entities over the
// same span (docs/efficiency.md).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "src/trajectory/panel_values.hpp"
#include "src/views/builtin_views.hpp"
#include "src/views/draw.hpp"
#include "src/views/models.hpp"

namespace kanoko::views {

namespace {

constexpr double kRowHeight = 15;
/// Lines of the efficiency block above the table: the metrics and two outliers, or the metrics
/// alone in a short area (a viewer panel), so that the table keeps its rows.
std::size_t efficiency_lines(const Rect& area) { return area.h >= 240 ? 3 : 1; }

std::string percent(double f) { return trace::percent_text(f); }

class SummaryView final : public View {
 public:
  [[nodiscard]] std::string name() const override { return "summary"; }
  [[nodiscard]] unsigned needs() const override {
    return static_cast<unsigned>(DataNeed::States) | static_cast<unsigned>(DataNeed::Messages);
  }

  void draw(cairo_t* cr, const Rect& area, const TraceIndex& index, const ViewState& state) const override {
    const ClipTo clip(cr, area);
    const bool whole = !(state.time_s < index.end_s);
    const SummaryModel m = compute_summary(index, state.time_s);
    (void)draw_frame(cr, area, std::string("summary  ") + (whole ? "whole run" : "up to " + format_time(state.time_s)) +
                                   ": busy " + percent(m.overall[0]) + ", comm " + percent(m.overall[1]) +
                                   ", wait " + percent(m.overall[2]) + ", no state " + percent(m.overall_no_state));
    const Layout lay = layout(area, index, state);
    const trace::Efficiency efficiency = compute_summary_efficiency(index, m, state.time_s);
    const std::vector<std::string> lines = summary_efficiency_lines(index, efficiency, efficiency_lines(area));
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.15);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      draw_text(cr, area.x + 6, area.y + kTitleHeight + static_cast<double>(i + 1) * kRowHeight - 3, lines[i], 9);
    }
    static const char* const kHeaders[] = {"entity", "busy", "comm", "wait", "share", "msgs out", "msgs in", "bytes out", "bytes in", "no state"};
    cairo_set_source_rgb(cr, 0.25, 0.25, 0.3);
    for (std::size_t c = 0; c < std::size(kHeaders); ++c) {
      const ClipTo clip_header(cr, column_box(lay, area, c, lay.y0 - kRowHeight));
      draw_text(cr, lay.x[c], lay.y0 - 4, kHeaders[c], 9);
    }
    for (std::size_t r = 0; r < lay.visible; ++r) {
      const std::size_t e = lay.first + r;
      if (e >= m.rows.size()) break;
      const SummaryRow& row = m.rows[e];
      const double y = lay.y0 + static_cast<double>(r) * kRowHeight;
      if (state.selection.entity == static_cast<std::int64_t>(e)) {
        set_colour(cr, kSelectionColour, 0.2);
        cairo_rectangle(cr, area.x + 2, y, area.w - 4, kRowHeight);
        cairo_fill(cr);
      } else if (r % 2 == 1) {
        cairo_set_source_rgb(cr, 0.96, 0.96, 0.97);
        cairo_rectangle(cr, area.x + 2, y, area.w - 4, kRowHeight);
        cairo_fill(cr);
      }
      // The share bar: busy, communicating, waiting side by side (no state: the bar's blank rest).
      double bx = lay.x[4];
      for (std::size_t k = 0; k < kClassCount; ++k) {
        const double w = row.share[k] * lay.bar_w;
        set_colour(cr, class_colour(static_cast<StateClass>(k)));
        cairo_rectangle(cr, bx, y + 3, w, kRowHeight - 6);
        cairo_fill(cr);
        bx += w;
      }
      cairo_set_source_rgb(cr, 0.1, 0.1, 0.15);
      const double base = y + kRowHeight - 4;
      // Each cell is clipped to its column, so a long name or a narrow panel never runs text
      // into the next column.
      const auto cell = [&](std::size_t c, const std::string& text) {
        const ClipTo clip_cell(cr, column_box(lay, area, c, y));
        draw_text(cr, lay.x[c], base, text, 9);
      };
      cell(0, index.entities[e].name);
      cell(1, percent(row.share[0]));
      cell(2, percent(row.share[1]));
      cell(3, percent(row.share[2]));
      cell(5, format_count(static_cast<double>(row.messages_sent)));
      cell(6, format_count(static_cast<double>(row.messages_received)));
      cell(7, trajectory::format_bytes_text(static_cast<double>(row.bytes_sent)));
      cell(8, trajectory::format_bytes_text(static_cast<double>(row.bytes_received)));
      cell(9, percent(row.no_state_share));
    }
    if (lay.visible < m.rows.size()) {
      cairo_set_source_rgb(cr, 0.4, 0.4, 0.45);
      std::string footer = "rows " + std::to_string(lay.first + 1) + "-" +
                           std::to_string(std::min(m.rows.size(), lay.first + lay.visible)) + " of " +
                           std::to_string(m.rows.size()) + " (wheel or drag scrolls)";
      const auto sel = state.selection.entity;
      if (state.selection.has_entity() &&
          (static_cast<std::size_t>(sel) < lay.first || static_cast<std::size_t>(sel) >= lay.first + lay.visible)) {
        footer += ", selected: row " + std::to_string(sel + 1);
      }
      draw_text(cr, area.x + area.w - 6, area.y + area.h - 4, footer, 9, 1.0);
    }
  }

  /// The rows scroll under the wheel and a drag (ZoomAxes::rows_y); the table has no time window.
  [[nodiscard]] ZoomAxes zoom_axes(const Rect& area, const TraceIndex& index, const ViewState& state) const override {
    const Layout lay = layout(area, index, state);
    ZoomAxes axes;
    axes.plot = Rect{area.x, lay.y0, area.w, std::max(0.0, static_cast<double>(lay.visible) * kRowHeight)};
    axes.rows_y = lay.visible < index.entity_count();
    axes.row_height = kRowHeight;
    return axes;
  }

  [[nodiscard]] Selection pick(double x, double y, const Rect& area, const TraceIndex& index,
                               const ViewState& state) const override {
    Selection out;
    const Layout lay = layout(area, index, state);
    if (!area.contains(x, y) || y < lay.y0) return out;
    const auto r = static_cast<std::size_t>((y - lay.y0) / kRowHeight);
    if (r >= lay.visible || lay.first + r >= index.entity_count()) return out;
    out.entity = static_cast<std::int64_t>(lay.first + r);
    return out;
  }

 private:
  struct Layout {
    double x[10] = {};
    double bar_w = 0;
    double y0 = 0;
    std::size_t first = 0;    // first row shown
    std::size_t visible = 0;  // rows that fit
  };

  /// Column c of the row starting at y: text in it is clipped to it.
  static Rect column_box(const Layout& lay, const Rect& area, std::size_t c, double y) {
    const double x1 = c + 1 < std::size(lay.x) ? lay.x[c + 1] - 3 : area.x + area.w - 2;
    return Rect{lay.x[c], y, std::max(0.0, x1 - lay.x[c]), kRowHeight};
  }

  static Layout layout(const Rect& area, const TraceIndex& index, const ViewState& state) {
    Layout lay;
    // Column widths as shares of the width: name, three shares, the bar, five numbers.
    static const double kShare[] = {0.14, 0.08, 0.08, 0.08, 0.14, 0.08, 0.08, 0.11, 0.11, 0.10};
    double x = area.x + 6;
    for (std::size_t c = 0; c < std::size(kShare); ++c) {
      lay.x[c] = x;
      x += kShare[c] * (area.w - 12);
    }
    lay.bar_w = kShare[4] * (area.w - 12) - 6;
    lay.y0 = area.y + kTitleHeight + static_cast<double>(efficiency_lines(area) + 1) * kRowHeight + 2;
    const double room = area.y + area.h - 14 - lay.y0;
    lay.visible = room > 0 ? static_cast<std::size_t>(room / kRowHeight) : 0;
    const std::size_t n = index.entity_count();
    const std::size_t last_first = n - std::min(n, lay.visible);
    double e0 = 0;
    double e1 = 0;
    visible_entities(index, state, e0, e1);
    if (e0 > 0) {
      // Scrolled by the wheel or a drag (zoom_axes: rows_y): that scroll wins over the selection.
      lay.first = std::min(static_cast<std::size_t>(e0), last_first);
    } else if (state.selection.has_entity() && lay.visible > 0 &&
               static_cast<std::size_t>(state.selection.entity) >= lay.visible) {
      // Not scrolled: the selected entity is brought into view.
      lay.first = std::min(static_cast<std::size_t>(state.selection.entity) - lay.visible / 2, last_first);
    }
    return lay;
  }
};

}  // namespace

std::unique_ptr<View> make_summary_view() { return std::make_unique<SummaryView>(); }

}  // namespace kanoko::views
