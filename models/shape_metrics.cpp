#include "models/shape_metrics.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#include <cmath>

#include "src/base/check.hpp"

namespace kanoko::models {

Eigen::Vector3d centroid(const Eigen::Ref<const Eigen::Matrix3Xd>& x) {
  KANOKO_ASSERT(x.cols() > 0, "centroid of no bodies");
  return x.rowwise().mean();
}

double radius_of_gyration(const Eigen::Ref<const Eigen::Matrix3Xd>& x) {
  const Eigen::Matrix3Xd d = x.colwise() - centroid(x);
  return std::sqrt(d.squaredNorm() / static_cast<double>(x.cols()));
}

Eigen::Vector3d gyration_eigenvalues(const Eigen::Ref<const Eigen::Matrix3Xd>& x) {
  const Eigen::Matrix3Xd d = x.colwise() - centroid(x);
  const Eigen::Matrix3d s = d * d.transpose() / static_cast<double>(x.cols());
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> solver(s, Eigen::EigenvaluesOnly);
  return solver.eigenvalues();
}

double anisotropy(const Eigen::Ref<const Eigen::Matrix3Xd>& x) {
  const Eigen::Vector3d l = gyration_eigenvalues(x);
  const double trace = l.sum();
  if (!(trace > 0)) return 0;
  return 1.0 - 3.0 * (l[0] * l[1] + l[1] * l[2] + l[2] * l[0]) / (trace * trace);
}

double radial_unevenness(const Eigen::Ref<const Eigen::Matrix3Xd>& x) {
  const Eigen::ArrayXd radii = (x.colwise() - centroid(x)).colwise().norm().transpose().array();
  const double mean = radii.mean();
  if (!(mean > 0)) return 0;
  return std::sqrt((radii - mean).square().mean()) / mean;
}

Deformation deformation(const Eigen::Ref<const Eigen::Matrix3Xd>& x,
                        const Eigen::Ref<const Eigen::Matrix3Xd>& reference) {
  KANOKO_ASSERT(x.cols() == reference.cols() && x.cols() > 0, "shapes of different sizes");
  const Eigen::Matrix3Xd a = x.colwise() - centroid(x);
  const Eigen::Matrix3Xd b = reference.colwise() - centroid(reference);
  const double b2 = b.squaredNorm();
  const double a2 = a.squaredNorm();
  if (!(b2 > 0) || !(a2 > 0)) return {};
  // Umeyama: rotation from the SVD of the cross-covariance, reflection excluded.
  const Eigen::Matrix3d cov = a * b.transpose();
  Eigen::JacobiSVD<Eigen::Matrix3d> svd(cov, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Matrix3d sign = Eigen::Matrix3d::Identity();
  if ((svd.matrixU() * svd.matrixV().transpose()).determinant() < 0) sign(2, 2) = -1;
  const Eigen::Matrix3d rotation = svd.matrixU() * sign * svd.matrixV().transpose();
  const double scale = (svd.singularValues().asDiagonal() * sign).trace() / b2;
  const Eigen::Matrix3Xd fitted = scale * rotation * b;
  Deformation d;
  d.scale = scale;
  d.residual = std::sqrt((a - fitted).squaredNorm() / a2);
  return d;
}

}  // namespace kanoko::models
