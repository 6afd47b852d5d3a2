// The dynamical model: bodies, springs and force terms built from a mapping and a timeline. It
// does not know the integrator; it only provides dy/dt for y = [positions; velocities].
//
// Equation of motion of body i (each term is optional, chosen by the mapping):
//   dx_i/dt = v_i
//   dv_i/dt = (1 / m_i(t)) [ Σ_{springs ij} k (L_ij − |d_ij|) d_ij/|d_ij|          (Hooke)
//                           + R Σ_{j≠i} d_ij / (|d_ij|² + ε²)^{3/2}                  (repulsion)
//                           + Σ_j w_ij(t) (x_j − x_i)/|x_j − x_i|                    (communication)
//                           − c (x_i − x̄_0) ]                                        (centre pull)
//             − β v_i                                                                (friction)
// with d_ij = x_i − x_j. This covers both equations of the paper (DESIGN.md): constant mass 1
// gives the Fibonacci equation; springs + symmetric attraction + mass from load gives the mesh.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "integrators/forces.hpp"
#include "models/layout.hpp"
#include "models/quantities.hpp"
#include "src/mapping/mapping.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::models {

/// One communication pull active in the current interval: `from` is pulled towards `to` (and,
/// in symmetric mode, `to` towards `from`) with magnitude `weight`.
struct Pull {
  std::uint32_t from = 0;
  std::uint32_t to = 0;
  double weight = 0;
};

class Model {
 public:
  /// Builds the model; throws InputError (located in the mapping) when it does not fit the trace.
  Model(const mapping::Mapping& m, const trace::Timeline& timeline);

  [[nodiscard]] std::size_t body_count() const { return static_cast<std::size_t>(initial_positions_.cols()); }
  [[nodiscard]] const Eigen::Matrix3Xd& initial_positions() const { return initial_positions_; }
  [[nodiscard]] const std::vector<std::array<std::uint32_t, 2>>& spring_edges() const { return edges_; }
  [[nodiscard]] const trace::Timeline& timeline() const { return timeline_; }

  /// Makes `x` (3×N) the starting positions, keeping the springs' natural lengths: used to start a
  /// calibrated run at rest, from the layout relaxed under springs and repulsion alone.
  void rest_at(const Eigen::Matrix3Xd& x);

  /// State vector at t = 0: initial positions, zero velocities. Layout: y = [x (3N); v (3N)],
  /// each a 3×N column-major block (a body's x, y, z contiguous).
  [[nodiscard]] Eigen::VectorXd initial_state() const;

  /// Selects the forcing and masses of interval `bin`; bin >= bin_count() is the settling phase
  /// after the trace (no communication, the last masses). Steps never straddle intervals.
  void set_interval(std::size_t bin);
  [[nodiscard]] std::size_t current_interval() const { return bin_; }

  /// dy/dt at state y under the current interval's forcing. O(N + E) besides the repulsion, which
  /// uses the mapping's evaluator. No allocation once the first call has sized the scratch.
  void derivative(double t, const Eigen::VectorXd& y, Eigen::VectorXd& dydt);

  /// Threads for the repulsion (0 = all cores). The trajectory does not depend on it.
  void set_threads(int threads) { repulsion_params_.threads = threads; }
  /// Marks the start of an integration step: its first derivative builds the Barnes–Hut tree, the
  /// step's later ones refit it (integrators::RepulsionParams::reuse_tree). Without calls to
  /// begin_step every derivative builds its own tree. The result depends on the state at the step's
  /// first evaluation, never on the thread count.
  void begin_step() {
    step_started_ = true;
    evaluations_in_step_ = 0;
  }
  /// Replaces the repulsion's evaluator (benchmarks: barnes-hut-v1 as the baseline).
  void set_repulsion_evaluator(integrators::Evaluator e) { repulsion_params_.evaluator = e; }
  /// How the repulsion is evaluated (from the mapping's [forces.repulsion]).
  [[nodiscard]] const integrators::RepulsionParams& repulsion_params() const { return repulsion_params_; }
  /// Counts from the last repulsion evaluation.
  [[nodiscard]] const integrators::ForceStats& force_stats() const { return scratch_.stats(); }

  [[nodiscard]] const Eigen::VectorXd& masses() const { return mass_; }
  [[nodiscard]] const std::vector<Pull>& pulls() const { return pulls_; }

  /// Names of the per-body statistics written to each trajectory frame (trajectory::stat), and
  /// after them the variables of the mapping's [locations] (seconds of the interval at those call
  /// sites), which sound cues can watch.
  static std::vector<std::string> stat_names(const mapping::Mapping& m);
  /// The statistics of the current interval, S×N in stat_names(mapping) order.
  void current_stats(Eigen::MatrixXd& out) const;

  /// Mechanical energy: kinetic + spring + repulsion + centre-pull potential (no forcing
  /// potential). The repulsion potential uses the mapping's evaluator (Barnes–Hut gives it to the
  /// accuracy of its forces), so it costs about one force evaluation.
  [[nodiscard]] double energy(const Eigen::VectorXd& y) const;
  /// Σ ½ m_i |v_i|² with the current interval's masses.
  [[nodiscard]] double kinetic_energy(const Eigen::VectorXd& y) const;
  /// Rate at which the current interval's communication pulls do work on the bodies, Σ F_i · v_i.
  /// O(number of pulls).
  [[nodiscard]] double forcing_power(const Eigen::VectorXd& y) const;
  /// Rate at which friction removes energy, Σ β m_i |v_i|² (≥ 0). O(N).
  [[nodiscard]] double friction_power(const Eigen::VectorXd& y) const;

 private:
  /// The load of a body in a bin, as [mass] load says (samples or busy fraction).
  [[nodiscard]] double load_of(std::size_t bin, trace::EntityIndex e) const;
  const mapping::Mapping& mapping_;
  const trace::Timeline& timeline_;
  Eigen::Matrix3Xd initial_positions_;
  Eigen::Vector3d initial_centroid_;
  std::vector<std::array<std::uint32_t, 2>> edges_;
  std::vector<double> spring_length_;
  std::vector<double> spring_k_;  ///< stiffness of each spring in the current interval
  std::unique_ptr<Quantities> quantities_;  ///< the mapping's expressions, when it has any
  double communication_scale_ = 0;  ///< weight per unit of traffic
  std::size_t bin_ = 0;
  Eigen::VectorXd mass_;
  /// [mass] smoothing: running sums of each body's load, [bin * N + body] = Σ load of bins < bin.
  std::vector<double> load_prefix_;
  std::vector<Pull> pulls_;
  Eigen::Matrix3Xd force_;  ///< scratch, sized once
  integrators::RepulsionParams repulsion_params_;
  integrators::ForceScratch scratch_;  ///< the repulsion's buffers, reused by every evaluation
  bool step_started_ = false;          ///< begin_step() was called: the tree is reused within steps
  std::uint64_t evaluations_in_step_ = 0;
  // Cumulative traffic through the current interval, for the statistics.
  std::size_t totals_through_ = 0;  ///< bins [0, totals_through_) are summed in totals_
  Eigen::Matrix<double, 4, Eigen::Dynamic> totals_;  ///< bytes sent, recv, msgs sent, recv
  Eigen::Matrix<double, 4, Eigen::Dynamic> interval_traffic_;
};

}  // namespace kanoko::models
