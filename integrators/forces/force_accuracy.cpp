#include "integrators/forces/force_accuracy.hpp"

#include <algorithm>
#include <cmath>

#include "src/base/check.hpp"

namespace kanoko::integrators {

std::vector<Eigen::Index> spread_sample(std::size_t n, std::size_t count) {
  count = std::min(n, count);
  std::vector<Eigen::Index> out;
  out.reserve(count);
  for (std::size_t k = 0; k < count; ++k) out.push_back(static_cast<Eigen::Index>(k * n / count));
  return out;
}

std::vector<Eigen::Vector3d> reference_repulsion(const Eigen::Matrix3Xd& x, const std::vector<Eigen::Index>& targets) {
  std::vector<Eigen::Vector3d> out;
  out.reserve(targets.size());
  for (const Eigen::Index i : targets) {
    double fx = 0, fy = 0, fz = 0;
    const double xi = x(0, i), yi = x(1, i), zi = x(2, i);
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      if (j == i) continue;
      const double dx = xi - x(0, j), dy = yi - x(1, j), dz = zi - x(2, j);
      const double r2 = dx * dx + dy * dy + dz * dz;
      const double inv_r3 = 1.0 / (r2 * std::sqrt(r2));
      fx += dx * inv_r3;
      fy += dy * inv_r3;
      fz += dz * inv_r3;
    }
    out.emplace_back(fx, fy, fz);
  }
  return out;
}

ForceErrors relative_force_errors(const Eigen::Matrix3Xd& force, const std::vector<Eigen::Index>& targets,
                                  const std::vector<Eigen::Vector3d>& reference) {
  KANOKO_ASSERT(targets.size() == reference.size() && !targets.empty(), "one reference force per target");
  ForceErrors e;
  e.sorted.reserve(targets.size());
  for (std::size_t k = 0; k < targets.size(); ++k) {
    e.sorted.push_back((force.col(targets[k]) - reference[k]).norm() / reference[k].norm());
  }
  std::sort(e.sorted.begin(), e.sorted.end());
  return e;
}

}  // namespace kanoko::integrators
