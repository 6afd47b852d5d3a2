// Pairwise forces by direct summation: exact, O(N²), the right choice for small N (the paper's
// 8 and 27 bodies). A pure function: positions in, forces added to an output, no hidden state.
#pragma once

#include <Eigen/Core>

namespace kanoko::integrators {

/// Adds the inverse-square repulsion R Σ_{j≠i} (x_i − x_j) / (|x_i − x_j|² + ε²)^{3/2} to
/// `force` (3×N) for every body. ε (softening, scene units) keeps coincident bodies finite; ε = 0
/// is the paper's exact law. Each pair is visited once in a fixed order, so the result is
/// deterministic.
void add_repulsion_direct(const Eigen::Ref<const Eigen::Matrix3Xd>& positions, double strength,
                          double softening, Eigen::Ref<Eigen::Matrix3Xd> force);

}  // namespace kanoko::integrators
