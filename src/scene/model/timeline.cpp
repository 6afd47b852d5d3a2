#include "src/scene/model/timeline.hpp"

#include <algorithm>
#include <cmath>


namespace kanoko::scene {

TimelineView::TimelineView(double begin_s, double end_s)
    : begin_s_(begin_s), end_s_(std::max(end_s, begin_s)), view_begin_s_(begin_s_), view_end_s_(end_s_) {}

double TimelineView::time_at(double x_px, double x0_px, double width_px) const {
  if (!(width_px > 0)) return view_begin_s_;
  const double f = (x_px - x0_px) / width_px;
  return std::clamp(view_begin_s_ + f * (view_end_s_ - view_begin_s_), begin_s_, end_s_);
}

double TimelineView::x_of(double t_s, double x0_px, double width_px) const {
  const double span = view_end_s_ - view_begin_s_;
  if (!(span > 0)) return x0_px;
  return x0_px + (t_s - view_begin_s_) / span * width_px;
}

void TimelineView::zoom(double factor, double anchor_s) {
  const double run = end_s_ - begin_s_;
  if (!(run > 0) || !(factor > 0) || !std::isfinite(factor)) return;
  const double span = view_end_s_ - view_begin_s_;
  const double new_span = std::clamp(span * factor, run * 1e-6, run);
  anchor_s = std::clamp(anchor_s, view_begin_s_, view_end_s_);
  const double f = span > 0 ? (anchor_s - view_begin_s_) / span : 0.5;
  double b = anchor_s - f * new_span;
  b = std::clamp(b, begin_s_, end_s_ - new_span);
  view_begin_s_ = b;
  view_end_s_ = b + new_span;
}

void TimelineView::pan(double dx_px, double width_px) {
  if (!(width_px > 0)) return;
  const double span = view_end_s_ - view_begin_s_;
  const double b = std::clamp(view_begin_s_ + dx_px / width_px * span, begin_s_, end_s_ - span);
  view_begin_s_ = b;
  view_end_s_ = b + span;
}

void TimelineView::reset() {
  view_begin_s_ = begin_s_;
  view_end_s_ = end_s_;
}

void TimelineView::show(double a_s, double b_s) {
  reset();
  if (!(b_s > a_s) || !std::isfinite(a_s) || !std::isfinite(b_s)) return;
  zoom((b_s - a_s) / std::max(end_s_ - begin_s_, 1e-300), begin_s_);
  pan((a_s - view_begin_s_) / std::max(view_end_s_ - view_begin_s_, 1e-300), 1.0);
}

bool TimelineView::whole() const { return view_begin_s_ <= begin_s_ && view_end_s_ >= end_s_; }

void TimelineView::select(double a_s, double b_s) {
  a_s = std::clamp(a_s, begin_s_, end_s_);
  b_s = std::clamp(b_s, begin_s_, end_s_);
  if (b_s < a_s) std::swap(a_s, b_s);
  if (!(b_s > a_s)) {
    selection_.reset();
    return;
  }
  selection_ = std::make_pair(a_s, b_s);
}

double tick_step(double span_s, double width_px, double min_gap_px) {
  if (!(span_s > 0) || !(width_px > 0)) return 1.0;
  const double min_step = span_s * std::max(min_gap_px, 1.0) / width_px;
  const double p = std::pow(10.0, std::floor(std::log10(min_step)));
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= min_step) return m * p;
  }
  return 10.0 * p;
}

}  // namespace kanoko::scene
