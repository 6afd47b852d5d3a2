// The viewer's timeline as a model: which part of the run it shows (zoom and pan), the mapping
// between pixels and trace time, and the selected range. Pure arithmetic, no OpenSceneGraph or
// ImGui, so it is tested without a display; src/scene/viewer_ui.cpp draws it.
#pragma once

#include <optional>
#include <utility>
#include <vector>

namespace kanoko::scene {

class TimelineView {
 public:
  /// A timeline over the run [begin_s, end_s] showing all of it.
  TimelineView(double begin_s, double end_s);

  [[nodiscard]] double begin_s() const { return begin_s_; }
  [[nodiscard]] double end_s() const { return end_s_; }
  /// The part shown.
  [[nodiscard]] double view_begin_s() const { return view_begin_s_; }
  [[nodiscard]] double view_end_s() const { return view_end_s_; }

  /// Trace time under pixel x of a strip starting at x0_px, width_px wide (clamped to the run).
  [[nodiscard]] double time_at(double x_px, double x0_px, double width_px) const;
  /// Pixel of trace time t on that strip (not clamped: times outside the view fall outside).
  [[nodiscard]] double x_of(double t_s, double x0_px, double width_px) const;

  /// Zooms by `factor` (< 1 in, > 1 out) keeping `anchor_s` under the same pixel. The view stays
  /// inside the run and never narrower than a millionth of it.
  void zoom(double factor, double anchor_s);
  /// Moves the view by `dx_px` pixels of a strip `width_px` wide (positive: towards later times),
  /// stopping at the run's ends.
  void pan(double dx_px, double width_px);
  /// Shows the whole run again.
  void reset();
  /// Shows [a, b] (clamped to the run; at least a millionth of it).
  void show(double a_s, double b_s);
  /// True when the whole run is shown.
  [[nodiscard]] bool whole() const;

  /// Selects [a, b] (any order, clamped to the run); an empty range clears the selection.
  void select(double a_s, double b_s);
  void clear_selection() { selection_.reset(); }
  [[nodiscard]] const std::optional<std::pair<double, double>>& selection() const { return selection_; }

  /// Spans of trace time the strip marks (where a chosen code location dominates); empty: none.
  void set_marks(std::vector<std::pair<double, double>> marks) { marks_ = std::move(marks); }
  [[nodiscard]] const std::vector<std::pair<double, double>>& marks() const { return marks_; }

 private:
  double begin_s_;
  double end_s_;
  double view_begin_s_;
  double view_end_s_;
  std::optional<std::pair<double, double>> selection_;
  std::vector<std::pair<double, double>> marks_;
};

/// Tick spacing for a view `span_s` wide drawn over `width_px` pixels: 1, 2 or 5 × 10^k seconds
/// so that ticks are at least `min_gap_px` apart.
[[nodiscard]] double tick_step(double span_s, double width_px, double min_gap_px);

}  // namespace kanoko::scene
