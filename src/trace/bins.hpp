// Which bin of a timeline a time falls in.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace kanoko::trace {

// Trace times are decimals and binary floating point cannot hold most of them: 0.3 / 0.1 is
// 2.9999999999999996. A time within this relative distance of a boundary counts as on it, so a
// message sent at "0.3" with an interval of 0.1 lands in bin 3 as a person expects.
inline constexpr double kBoundarySnap = 1e-9;

/// t in units of bins from 0, snapped onto a boundary when within rounding of it.
inline double bin_position(double t, double interval_s) {
  const double q = t / interval_s;
  // Nearest integer without a libm call: floor(q + 0.5) can differ from round(q) only for q
  // within an ulp of k + 0.5, which no boundary snaps to either way.
  const double r = q >= 0 && q < 4e15 ? static_cast<double>(static_cast<std::int64_t>(q + 0.5)) : std::round(q);
  return std::abs(q - r) <= kBoundarySnap * std::max(1.0, r) ? r : q;
}

/// floor() and ceil() of bin_position(t) for a stream of nearby times (a trace read in time
/// order), exactly as computed from it, but without its division for a time safely inside the
/// last bin found: within a relative 1e-12 of its start, and short of its end's snapping zone by
/// twice that zone. (Rounding errs by about 1e-16; a time in those margins is computed again.)
class BinFinder {
 public:
  explicit BinFinder(double interval_s) : w_(interval_s) {}

  [[nodiscard]] double floor_position(double t) {
    if (t >= floor_lo_ && t < floor_hi_) return floor_value_;
    const double pos = std::floor(bin_position(t, w_));
    // [b, b + 1) in bins: q ≥ b is not snapped below b, and q < (b + 1)(1 - 2 snap) not up to b + 1.
    if (pos >= 0 && pos < 4e15) remember(floor_lo_, floor_hi_, floor_value_, pos * w_ * (1 + kInside),
                                         (pos + 1) * w_ * (1 - 2 * kBoundarySnap), pos);
    return pos;
  }

  [[nodiscard]] double ceil_position(double t) {
    if (t >= ceil_lo_ && t < ceil_hi_) return ceil_value_;
    const double pos = std::ceil(bin_position(t, w_));
    // (c - 1, c) in bins: q past c - 1 by more than its snapping zone, and q < c.
    if (pos >= 1 && pos < 4e15) {
      const double below = pos - 1;
      remember(ceil_lo_, ceil_hi_, ceil_value_, (below + 2 * kBoundarySnap * std::max(1.0, below)) * w_ * (1 + kInside),
               pos * w_ * (1 - kInside), pos);
    }
    return pos;
  }

 private:
  /// A relative margin far above rounding (1e-16) and far below kBoundarySnap.
  static constexpr double kInside = 1e-12;
  static void remember(double& lo, double& hi, double& value, double new_lo, double new_hi, double v) {
    if (!(new_lo < new_hi) || !std::isfinite(new_hi)) return;  // keep the last range
    lo = new_lo;
    hi = new_hi;
    value = v;
  }
  double w_;
  double floor_lo_ = 1, floor_hi_ = 0, floor_value_ = 0;  // empty until the first time
  double ceil_lo_ = 1, ceil_hi_ = 0, ceil_value_ = 0;
};

}  // namespace kanoko::trace
