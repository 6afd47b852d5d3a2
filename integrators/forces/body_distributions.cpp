#include "integrators/forces/body_distributions.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace kanoko::integrators {
namespace {

/// SplitMix64 (Steele, Lea & Flood 2014): small, fast, and the same sequence everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31U);
  }
  /// Uniform in [0, 1), 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11U) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

}  // namespace

Eigen::Matrix3Xd plummer_sphere(std::size_t n, std::uint64_t seed) {
  constexpr double kTruncation = 10.0;
  SplitMix64 rng(seed);
  Eigen::Matrix3Xd x(3, static_cast<Eigen::Index>(n));
  for (Eigen::Index i = 0; i < x.cols();) {
    // The enclosed fraction at radius r is r³ / (1 + r²)^{3/2}; invert it for a uniform draw.
    const double m = rng.uniform();
    if (m <= 0.0) continue;
    const double r = 1.0 / std::sqrt(std::pow(m, -2.0 / 3.0) - 1.0);
    if (!(r <= kTruncation)) continue;
    const double cos_theta = 2.0 * rng.uniform() - 1.0;
    const double phi = 2.0 * std::numbers::pi * rng.uniform();
    const double sin_theta = std::sqrt(std::max(0.0, 1.0 - cos_theta * cos_theta));
    x(0, i) = r * sin_theta * std::cos(phi);
    x(1, i) = r * sin_theta * std::sin(phi);
    x(2, i) = r * cos_theta;
    ++i;
  }
  return x;
}

Eigen::Matrix3Xd uniform_cube(std::size_t n, std::uint64_t seed) {
  SplitMix64 rng(seed);
  Eigen::Matrix3Xd x(3, static_cast<Eigen::Index>(n));
  for (Eigen::Index i = 0; i < x.cols(); ++i) {
    for (Eigen::Index a = 0; a < 3; ++a) x(a, i) = 2.0 * rng.uniform() - 1.0;
  }
  return x;
}

}  // namespace kanoko::integrators
