// Shape metrics against configurations with known answers.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>

#include "models/shape_metrics.hpp"

namespace kanoko::models {
namespace KANOKO_UNITY_ID {

Eigen::Matrix3Xd cube() {
  Eigen::Matrix3Xd x(3, 8);
  for (int k = 0; k < 8; ++k) x.col(k) << (k & 1), (k >> 1) & 1, (k >> 2) & 1;
  return x;
}

TEST(ShapeMetrics, CubeIsIsotropicAndEven) {
  const Eigen::Matrix3Xd x = cube();
  EXPECT_NEAR(anisotropy(x), 0.0, 1e-15);
  EXPECT_NEAR(radial_unevenness(x), 0.0, 1e-15);
  EXPECT_NEAR(radius_of_gyration(x), std::sqrt(0.75), 1e-15);
  EXPECT_TRUE(centroid(x).isApprox(Eigen::Vector3d(0.5, 0.5, 0.5)));
}

TEST(ShapeMetrics, AnisotropyOfLineAndSquare) {
  Eigen::Matrix3Xd line = Eigen::Matrix3Xd::Zero(3, 5);
  for (int k = 0; k < 5; ++k) line(0, k) = k;
  EXPECT_NEAR(anisotropy(line), 1.0, 1e-12);
  Eigen::Matrix3Xd square(3, 4);
  square << 0, 1, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0;
  EXPECT_NEAR(anisotropy(square), 0.25, 1e-12);
}

TEST(ShapeMetrics, RadialUnevennessGrowsWhenOneBodyIsDrawnIn) {
  Eigen::Matrix3Xd x = cube();
  x.col(0) = Eigen::Vector3d(0.4, 0.4, 0.4);
  EXPECT_GT(radial_unevenness(x), 0.2);
}

TEST(ShapeMetrics, DeformationIgnoresTranslationRotationAndScale) {
  std::srand(3);
  const Eigen::Matrix3Xd ref = Eigen::Matrix3Xd::Random(3, 27);
  const Eigen::Matrix3d rotation = Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
  const Eigen::Matrix3Xd moved = (0.6 * rotation * ref).colwise() + Eigen::Vector3d(5, -2, 1);
  const Deformation d = deformation(moved, ref);
  EXPECT_NEAR(d.scale, 0.6, 1e-12);
  EXPECT_NEAR(d.residual, 0.0, 1e-12);
  // A mirror image is not the same shape (rotations only).
  Eigen::Matrix3Xd mirrored = ref;
  mirrored.row(0) *= -1;
  EXPECT_GT(deformation(mirrored, ref).residual, 0.1);
  // Moving one body changes the shape.
  Eigen::Matrix3Xd bent = ref;
  bent.col(3) += Eigen::Vector3d(0.5, 0, 0);
  EXPECT_GT(deformation(bent, ref).residual, 0.01);
}

}  // namespace
}  // namespace kanoko::models
