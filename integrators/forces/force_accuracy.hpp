// Accuracy of a force evaluator against direct summation, shared by the accuracy tests
// (tests/integrators/forces/test_barnes_hut.cpp) and the benchmarks (bench/bench_forces.cpp), so that both
// report the same statistics the same way.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <vector>

namespace kanoko::integrators {

/// `count` bodies of `n` (all if n ≤ count) spread evenly over the index range: every (n/count)-th
/// body. For bodies drawn independently (body_distributions.hpp) it is a random sample.
std::vector<Eigen::Index> spread_sample(std::size_t n, std::size_t count);

/// The repulsion R = 1, ε = 0 at the bodies `targets`, summed straight from the definition over all
/// other bodies in double precision with a √ and a ÷ — independent of the evaluators' kernels.
/// O(N) per target.
std::vector<Eigen::Vector3d> reference_repulsion(const Eigen::Matrix3Xd& x, const std::vector<Eigen::Index>& targets);

/// Relative force errors |f − f_ref| / |f_ref| at the targets, sorted.
struct ForceErrors {
  std::vector<double> sorted;
  [[nodiscard]] double median() const { return sorted[sorted.size() / 2]; }
  [[nodiscard]] double p99() const {
    return sorted[std::min(sorted.size() - 1, sorted.size() * 99 / 100)];
  }
  [[nodiscard]] double max() const { return sorted.back(); }
};

/// The errors of `force` (3×N, all bodies; R = 1) at `targets` against `reference` (same order).
ForceErrors relative_force_errors(const Eigen::Matrix3Xd& force, const std::vector<Eigen::Index>& targets,
                                  const std::vector<Eigen::Vector3d>& reference);

}  // namespace kanoko::integrators
