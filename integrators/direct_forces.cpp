#include "integrators/direct_forces.hpp"

#include <cmath>

namespace kanoko::integrators {

void add_repulsion_direct(const Eigen::Ref<const Eigen::Matrix3Xd>& positions, double strength,
                          double softening, Eigen::Ref<Eigen::Matrix3Xd> force) {
  const Eigen::Index n = positions.cols();
  const double eps2 = softening * softening;
  for (Eigen::Index i = 0; i < n; ++i) {
    const Eigen::Vector3d xi = positions.col(i);
    Eigen::Vector3d fi = Eigen::Vector3d::Zero();
    for (Eigen::Index j = i + 1; j < n; ++j) {
      const Eigen::Vector3d d = xi - positions.col(j);
      const double r2 = d.squaredNorm() + eps2;
      if (r2 == 0.0) continue;  // coincident, unsoftened: no defined direction
      const double inv_r = 1.0 / std::sqrt(r2);
      const Eigen::Vector3d f = (strength * inv_r * inv_r * inv_r) * d;
      fi += f;
      force.col(j) -= f;
    }
    force.col(i) += fi;
  }
}

}  // namespace kanoko::integrators
