// The force evaluation: every force term of the model as plain data (ForceTerms, rebuilt by the
// model for each interval of the trace) and one pure function that turns a state into its time
// derivative, with its buffers passed explicitly (REBOUND's gravity routines without the hidden
// state). The model (models/) decides what the terms are; this library decides how they are
// summed. Equation of motion of body i, each term optional (DESIGN.md, "The model"):
//
//   dx_i/dt = v_i
//   dv_i/dt = (1 / m_i) [ Σ_{springs ij} k_s (L_s − |d_ij|) d_ij/|d_ij|          (Hooke)
//                        + R Σ_{j≠i} d_ij / (|d_ij|² + ε²)^{3/2}                  (repulsion.hpp)
//                        + Σ_pulls w (x_to − x_from)/|x_to − x_from|              (communication)
//                        − c (x_i − x̄_0) ]                                        (centre pull)
//             − β v_i                                                             (friction)
//
// with d_ij = x_i − x_j. The state is y = [x (3N); v (3N)], each a 3×N column-major block (a
// body's x, y, z contiguous), as Eigen::Map over the vector: no copy.
//
// Determinism: the terms are summed in a fixed order (springs, repulsion, pulls, centre; each in
// its list's order), so dy/dt is a function of the terms and y alone (and, when the tree is
// reused, of the state the scratch's tree was built at; see repulsion.hpp).
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <vector>

#include "integrators/forces/repulsion.hpp"

namespace kanoko::integrators {

/// One communication pull: `from` is pulled towards `to` (and, with symmetric pulls, `to` towards
/// `from`) with magnitude `weight` (force units) whatever their distance.
struct Pull {
  std::uint32_t from = 0;
  std::uint32_t to = 0;
  double weight = 0;
};

/// Pulls between bodies closer than this (scene units) are skipped: no direction to pull along.
inline constexpr double kPullMinDistance = 1e-12;

/// The force terms of one interval. Every vector is indexed as the comments say; `mass` fixes the
/// body count N.
struct ForceTerms {
  /// Hooke springs between the two bodies of each edge.
  std::vector<std::array<std::uint32_t, 2>> spring_edges;
  std::vector<double> spring_length;  ///< L_s, natural length of each spring (scene units)
  std::vector<double> spring_k;       ///< k_s, stiffness of each spring in this interval
  /// The pairwise repulsion; strength 0 = none.
  RepulsionParams repulsion;
  /// The communication pulls of this interval.
  std::vector<Pull> pulls;
  bool symmetric_pulls = false;  ///< `to` is pulled towards `from` as well (action = reaction)
  /// Centre pull −c (x_i − centre), c = centre_strength; 0 = none.
  double centre_strength = 0;
  Eigen::Vector3d centre = Eigen::Vector3d::Zero();
  /// β of the friction −β v_i (an acceleration: independent of the mass); 0 = none.
  double friction = 0;
  /// A force on each body that does not depend on the state (3×N; empty = none): the repulsion
  /// held at its value in a resting layout (models::Model::hold_repulsion). It has no potential;
  /// like the pulls it does work (forcing_power counts it).
  Eigen::Matrix3Xd fixed_force;
  /// m_i of this interval, one per body.
  Eigen::VectorXd mass;

  [[nodiscard]] Eigen::Index body_count() const { return mass.size(); }
};

/// Buffers of derivative(), reused from one call to the next: after the first call for a given N
/// no call allocates. One per model (or per thread of a caller that evaluates several at once).
struct DerivativeScratch {
  Eigen::Matrix3Xd force;  ///< the summed force on each body
  ForceScratch repulsion;  ///< the repulsion's buffers and its octree
  /// The repulsion force of the last evaluation, the positions it was summed at and the law it
  /// was summed with (strength, softening, evaluator, θ, multipole, leaf and group size), once
  /// one is kept.
  Eigen::Matrix3Xd repulsion_force;
  Eigen::Matrix3Xd repulsion_at;
  std::array<double, 7> repulsion_law{};
  bool repulsion_kept = false;
};

/// dy/dt under `terms` at state y (6N), into `dydt` (6N, not resized). `reuse_tree`: Barnes–Hut
/// may refit the octree the scratch kept from its last building evaluation instead of building
/// one (RepulsionParams::reuse_tree; meant for the later stages of one integration step).
///
/// An evaluation at the very positions of the scratch's last one (bit for bit) under the same
/// repulsion law takes that evaluation's repulsion instead of summing it again, and returns true.
/// That is what a stepper restarted at an interval boundary does (velocity Verlet, or a method
/// whose last stage is the next step's first): only the pulls, masses and springs of the new
/// interval differ there, and the repulsion is most of the cost. What it takes is what the last
/// evaluation's tree gave: a tree built at these positions gives the same bits as summing again;
/// a tree refitted to them (a later stage of a step) may differ from a new one in the last bits.
/// Either way the result is the same for every thread and process count.
bool derivative(const ForceTerms& terms, const Eigen::VectorXd& y, bool reuse_tree, DerivativeScratch& scratch,
                Eigen::VectorXd& dydt);

/// Mechanical energy at y: kinetic + spring + repulsion + centre-pull potential (the pulls and
/// friction have no potential). The repulsion potential uses the terms' evaluator (Barnes–Hut
/// gives it to the accuracy of its forces) with a scratch of its own, so it costs about one force
/// evaluation.
double mechanical_energy(const ForceTerms& terms, const Eigen::VectorXd& y);
/// Σ ½ m_i |v_i|².
double kinetic_energy(const ForceTerms& terms, const Eigen::VectorXd& y);
/// Rate at which the pulls and the fixed force do work on the bodies, Σ F_i · v_i. O(number of
/// pulls), and O(N) with a fixed force.
double forcing_power(const ForceTerms& terms, const Eigen::VectorXd& y);
/// Rate at which friction removes energy, Σ β m_i |v_i|² (≥ 0). O(N).
double friction_power(const ForceTerms& terms, const Eigen::VectorXd& y);

}  // namespace kanoko::integrators
