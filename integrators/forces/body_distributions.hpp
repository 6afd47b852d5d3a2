// Standard test distributions of bodies for the force evaluators' accuracy tests and benchmarks,
// reproducible on every platform (their own random generator, not the standard library's
// implementation-defined distributions).
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>

namespace kanoko::integrators {

/// n bodies drawn from a Plummer sphere of scale radius 1 centred on the origin (density
/// ∝ (1 + r²)^{-5/2}; Aarseth, Hénon & Wielen 1974), truncated at radius 10 (which keeps 98.5 % of
/// the distribution). Strongly concentrated: half of the bodies lie within r ≈ 1.3.
Eigen::Matrix3Xd plummer_sphere(std::size_t n, std::uint64_t seed);

/// n bodies uniformly distributed in the cube [-1, 1]³.
Eigen::Matrix3Xd uniform_cube(std::size_t n, std::uint64_t seed);

}  // namespace kanoko::integrators
