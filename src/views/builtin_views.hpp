// The built-in views (one file each) and the layout pieces they share.
#pragma once

#include <memory>

#include "src/views/view.hpp"

namespace kanoko::views {

std::unique_ptr<View> make_spacetime_view();
std::unique_ptr<View> make_matrix_view();
std::unique_ptr<View> make_kiviat_view();
std::unique_ptr<View> make_utilisation_view();
std::unique_ptr<View> make_summary_view();

/// A time axis: the plot rectangle of a history view and the time ↔ x mapping.
struct TimeAxis {
  Rect plot;
  double t0_s = 0;
  double t1_s = 1;
  [[nodiscard]] double x_of(double t) const { return plot.x + (t - t0_s) / (t1_s - t0_s) * plot.w; }
  [[nodiscard]] double t_of(double x) const { return t0_s + (x - plot.x) / plot.w * (t1_s - t0_s); }
  /// Whole pixel columns across the plot (at least 1).
  [[nodiscard]] std::size_t columns() const;
};

/// The visible window of a state, made valid (t1 > t0).
void visible_window(const TraceIndex& index, const ViewState& state, double& t0_s, double& t1_s);
/// Draws tick labels under the plot, the replay cursor and the selected time.
void draw_time_decorations(cairo_t* cr, const TimeAxis& axis, const ViewState& state);

}  // namespace kanoko::views
