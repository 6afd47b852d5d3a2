// Shape metrics of a body configuration: the measurable form of "compact", "lopsided" and
// "deformed" that the paper's examples are judged by.
#pragma once

#include <Eigen/Core>

namespace kanoko::models {

/// Mean position.
Eigen::Vector3d centroid(const Eigen::Ref<const Eigen::Matrix3Xd>& x);

/// Root-mean-square distance from the centroid.
double radius_of_gyration(const Eigen::Ref<const Eigen::Matrix3Xd>& x);

/// Eigenvalues (ascending) of the gyration tensor S = (1/N) Σ (x − c)(x − c)ᵀ.
Eigen::Vector3d gyration_eigenvalues(const Eigen::Ref<const Eigen::Matrix3Xd>& x);

/// Relative shape anisotropy κ² = 1 − 3 (λ₁λ₂ + λ₂λ₃ + λ₃λ₁) / (λ₁ + λ₂ + λ₃)²: 0 for an
/// isotropic cloud (a cube's vertices), 1/4 for a flat regular polygon, 1 for bodies on a line.
double anisotropy(const Eigen::Ref<const Eigen::Matrix3Xd>& x);

/// Radial unevenness: coefficient of variation of the bodies' distances from their centroid. 0
/// when every body is equally far from the centre (a cube's vertices, a sphere); it grows as the
/// shape turns lopsided, with some bodies drawn in and others left out.
double radial_unevenness(const Eigen::Ref<const Eigen::Matrix3Xd>& x);

/// How well `x` matches `reference` up to translation, rotation and uniform scale.
struct Deformation {
  double scale = 1;     ///< size of x relative to the reference (s in s·R·ref + t)
  double residual = 0;  ///< RMS misfit after the best similarity fit, relative to x's own size
};

/// Best similarity fit (Umeyama/Kabsch) of `reference` onto `x`; residual 0 means the same shape.
Deformation deformation(const Eigen::Ref<const Eigen::Matrix3Xd>& x,
                        const Eigen::Ref<const Eigen::Matrix3Xd>& reference);

}  // namespace kanoko::models
