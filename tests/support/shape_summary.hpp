// Shape metrics of a trajectory over the frames of its forced phase (while the trace runs): what
// the paper's examples must show (DESIGN.md), for the tests of shipped (tests/paper) and captured
// (tests/capture) traces.
#pragma once

#include <algorithm>
#include <cmath>
#include <ostream>

#include "models/shape_metrics.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::test {

/// Shape metrics over the frames of the forced phase (while the trace runs).
struct ShapeSummary {
  double anisotropy_mean = 0;   ///< time-mean of κ² (0 isotropic … 1 on a line)
  double rg_ratio_mean = 0;     ///< time-mean of Rg(t) / Rg(0)
  double centroid_shift = 0;    ///< largest |centroid(t) − centroid(0)| / Rg(0)
  double residual_mean = 0;     ///< time-mean of the similarity-fit misfit to the initial shape
  double scale_mean = 0;        ///< time-mean of the fitted size relative to the initial shape
  double rg_ratio_std = 0;      ///< standard deviation over time of Rg(t) / Rg(0): restlessness of size
  double radial_spread_mean = 0;  ///< time-mean of the radial unevenness (lopsidedness)
};

inline ShapeSummary summarise(const trajectory::Reader& r) {
  ShapeSummary s;
  const Eigen::Matrix3Xd x0 = r.frame(0).positions;
  const double rg0 = models::radius_of_gyration(x0);
  const Eigen::Vector3d c0 = models::centroid(x0);
  const double end = r.meta().trace_end_s;
  int count = 0;
  double rg2 = 0;
  for (std::size_t k = 1; k < r.frame_count() && r.frame_time(k) <= end; ++k) {
    const Eigen::Matrix3Xd x = r.frame(k).positions;
    const models::Deformation d = models::deformation(x, x0);
    s.anisotropy_mean += models::anisotropy(x);
    s.rg_ratio_mean += models::radius_of_gyration(x) / rg0;
    s.centroid_shift = std::max(s.centroid_shift, (models::centroid(x) - c0).norm() / rg0);
    s.residual_mean += d.residual;
    s.scale_mean += d.scale;
    const double rg_ratio = models::radius_of_gyration(x) / rg0;
    rg2 += rg_ratio * rg_ratio;
    s.radial_spread_mean += models::radial_unevenness(x);
    ++count;
  }
  s.anisotropy_mean /= count;
  s.rg_ratio_mean /= count;
  s.residual_mean /= count;
  s.scale_mean /= count;
  s.radial_spread_mean /= count;
  s.rg_ratio_std = std::sqrt(std::max(0.0, rg2 / count - s.rg_ratio_mean * s.rg_ratio_mean));
  return s;
}

inline std::ostream& operator<<(std::ostream& os, const ShapeSummary& s) {
  return os << "anisotropy " << s.anisotropy_mean << ", Rg/Rg0 " << s.rg_ratio_mean << ", centroid shift "
            << s.centroid_shift << ", residual " << s.residual_mean << ", scale " << s.scale_mean
            << ", Rg std " << s.rg_ratio_std << ", radial spread " << s.radial_spread_mean;
}

// ---- thresholds (named; tests/paper exercises each with a control run) -----------------------

/// Random distribution: time-mean anisotropy at most this (a cube's vertices have 0).
inline constexpr double kRandomMaxAnisotropy = 0.05;
/// Random distribution: the centroid moves at most this fraction of the initial Rg.
inline constexpr double kRandomMaxCentroidShift = 0.15;
/// Random distribution: the bodies gather, mean Rg at most this fraction of the initial Rg.
inline constexpr double kRandomMaxRgRatio = 0.9;
/// Random distribution: bodies stay about equally far from the centre (radial unevenness).
inline constexpr double kRandomMaxUnevenness = 0.05;
/// Ring distribution: time-mean anisotropy at least this many times random's…
inline constexpr double kRingOverRandomAnisotropy = 3.0;
/// …and lopsided: radial unevenness at least this many times random's.
inline constexpr double kRingOverRandomUnevenness = 3.0;

/// Uniform mesh communication: the mesh shrinks (mean fitted scale below this)…
inline constexpr double kUniformMaxScale = 0.97;
/// …keeping its shape (mean misfit below this).
inline constexpr double kUniformMaxResidual = 0.03;
/// Skewed communication deforms: mean misfit at least this many times uniform's.
inline constexpr double kSkewedOverUniformResidual = 3.0;
/// Heavy load deforms less: heavy's mean misfit at most this fraction of light's.
inline constexpr double kHeavyOverLightResidual = 0.7;

}  // namespace kanoko::test
