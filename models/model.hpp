// The dynamical model: bodies, springs and the force terms of each interval, built from a mapping
// and a timeline. It decides what the terms are (integrators::ForceTerms: which springs with which
// stiffness, which pulls, which masses) and leaves their evaluation to the force library
// (integrators/forces/forces.hpp, which also states the equation of motion). It does not know the
// integrator; it only provides dy/dt for y = [positions; velocities]. Both equations of the paper
// (DESIGN.md) are cases: constant mass 1 gives the Fibonacci equation; springs + symmetric
// attraction + mass from load gives the mesh. The mapping is read while the model is built and not
// kept.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "integrators/forces/forces.hpp"
#include "models/layout.hpp"
#include "models/quantities.hpp"
#include "src/mapping/mapping.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::models {

class Model {
 public:
  /// Builds the model; throws InputError (located in the mapping) when it does not fit the trace.
  /// Keeps a reference to `timeline`, none to `m`. `layout`, when given, is what
  /// build_layout(m, timeline.entity_count(), &timeline) returns, built once by a caller that
  /// makes several models of mappings differing only in keys the layout does not read (a
  /// calibrated run: calibration writes friction, gain, stiffness, lengths, repulsion and step).
  Model(const mapping::Mapping& m, const trace::Timeline& timeline, const Layout* layout = nullptr);
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  [[nodiscard]] std::size_t body_count() const { return static_cast<std::size_t>(initial_positions_.cols()); }
  [[nodiscard]] const Eigen::Matrix3Xd& initial_positions() const { return initial_positions_; }
  [[nodiscard]] const std::vector<std::array<std::uint32_t, 2>>& spring_edges() const { return terms_.spring_edges; }
  [[nodiscard]] const trace::Timeline& timeline() const { return timeline_; }

  /// Makes `x` (3×N) the starting positions, keeping the springs' natural lengths: used to start a
  /// calibrated run at rest, from the layout relaxed under springs and repulsion alone.
  void rest_at(const Eigen::Matrix3Xd& x);

  /// State vector at t = 0: initial positions, zero velocities. Layout: y = [x (3N); v (3N)],
  /// each a 3×N column-major block (a body's x, y, z contiguous).
  [[nodiscard]] Eigen::VectorXd initial_state() const;

  /// Builds the force terms of interval `bin` (masses, stiffness, pulls); bin >= bin_count() is the
  /// settling phase after the trace (no communication, the last masses). Steps never straddle
  /// intervals.
  void set_interval(std::size_t bin);
  /// The mean of the force terms of intervals first .. first + count - 1 (all before bin_count()):
  /// masses and stiffness averaged, every interval's pulls with 1/count of their weight (a pull is
  /// linear in its weight). For a calibration probe that steps across several intervals at once;
  /// the statistics (current_stats) stay those of the last interval.
  void set_interval_mean(std::size_t first, std::size_t count);
  [[nodiscard]] std::size_t current_interval() const { return bin_; }

  /// dy/dt at state y under the current interval's terms (integrators::derivative). O(N + E)
  /// besides the repulsion, which uses the mapping's evaluator. No allocation once the first call
  /// has sized the scratch.
  void derivative(double t, const Eigen::VectorXd& y, Eigen::VectorXd& dydt);

  /// Threads for the repulsion (0 = all cores). The trajectory does not depend on it.
  void set_threads(int threads) { terms_.repulsion.threads = threads; }
  /// Shares the repulsion among processes (not owned; null = this process alone). The trajectory
  /// does not depend on it; every process must then evaluate at the same states.
  void set_partition(integrators::Partition* partition) { terms_.repulsion.partition = partition; }
  /// Marks the start of an integration step: its first derivative that sums the repulsion builds
  /// the Barnes–Hut tree, the step's later ones refit it (integrators::RepulsionParams::reuse_tree).
  /// Without calls to begin_step every derivative builds its own tree. A derivative at the last
  /// one's positions takes its repulsion (integrators::derivative). The result depends on the
  /// states evaluated, never on the thread count.
  void begin_step() {
    step_started_ = true;
    evaluations_in_step_ = 0;
  }
  /// Holds the repulsion at the force it exerts at the initial positions (the resting layout):
  /// later evaluations add that force and sum no repulsion. The calibration probe's approximation
  /// (sim/simulate.cpp, probe_motion): its bodies stay within a fraction of a spacing of rest,
  /// where the springs' stiffness dominates the repulsion's. The equilibrium is kept exactly;
  /// only the repulsion's own stiffness is left out. Also drops the repulsion from energy().
  void hold_repulsion();
  /// Replaces the repulsion's evaluator (benchmarks: barnes-hut-v1 as the baseline).
  void set_repulsion_evaluator(integrators::Evaluator e) { terms_.repulsion.evaluator = e; }
  /// How the repulsion is evaluated (from the mapping's [forces.repulsion]).
  [[nodiscard]] const integrators::RepulsionParams& repulsion_params() const { return terms_.repulsion; }
  /// Counts from the last repulsion evaluation.
  [[nodiscard]] const integrators::ForceStats& force_stats() const { return scratch_.repulsion.stats(); }

  /// The force terms of the current interval.
  [[nodiscard]] const integrators::ForceTerms& terms() const { return terms_; }
  [[nodiscard]] const Eigen::VectorXd& masses() const { return terms_.mass; }
  [[nodiscard]] const std::vector<integrators::Pull>& pulls() const { return terms_.pulls; }

  /// Names of the per-body statistics written to each trajectory frame (trajectory::stat), and
  /// after them the variables of the mapping's [locations] (seconds of the interval at those call
  /// sites), which sound cues can watch.
  static std::vector<std::string> stat_names(const mapping::Mapping& m);
  /// The statistics of the current interval, S×N in stat_names(mapping) order. Not after
  /// skip_traffic_statistics().
  void current_stats(Eigen::MatrixXd& out) const;
  /// From now on set_interval leaves the traffic statistics (bytes and messages sent and received,
  /// in the interval and in total) alone: the calibration's models write no frame, and summing each
  /// interval's pairs twice for nothing cost a tenth of the calibration at 10,000 bodies.
  void skip_traffic_statistics() { traffic_statistics_ = false; }

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
  /// load_of(bin, e) of every body, into `out` (body_count() values).
  void loads_of(std::size_t bin, std::span<double> out) const;
  const trace::Timeline& timeline_;
  Eigen::Matrix3Xd initial_positions_;
  // What set_interval needs of the mapping's [mass] and [forces.communication].
  double mass_base_ = 1;              ///< [mass] base
  double mass_load_gain_ = 0;         ///< [mass] load_gain
  std::uint32_t mass_smoothing_ = 1;  ///< [mass] smoothing (intervals averaged)
  bool load_from_samples_ = true;     ///< [mass] load = "samples" (else the busy fraction)
  bool pulls_by_bytes_ = true;        ///< pulls follow bytes (else messages)
  double communication_scale_ = 0;    ///< weight per unit of traffic; 0 = no pulls from traffic
  /// The terms of the current interval; spring_edges and spring_length are fixed at construction.
  integrators::ForceTerms terms_;
  std::unique_ptr<Quantities> quantities_;  ///< the mapping's expressions, when it has any
  std::size_t bin_ = 0;
  /// [mass] smoothing: running sums of each body's load, [bin * N + body] = Σ load of bins < bin.
  std::vector<double> load_prefix_;
  std::vector<double> loads_;  ///< scratch: one interval's loads (loads_of)
  integrators::DerivativeScratch scratch_;  ///< reused by every evaluation
  bool step_started_ = false;          ///< begin_step() was called: the tree is reused within steps
  std::uint64_t evaluations_in_step_ = 0;
  bool traffic_statistics_ = true;  ///< set_interval sums the traffic statistics
  // Cumulative traffic through the current interval, for the statistics.
  std::size_t totals_through_ = 0;  ///< bins [0, totals_through_) are summed in totals_
  Eigen::Matrix<double, 4, Eigen::Dynamic> totals_;  ///< bytes sent, recv, msgs sent, recv
  Eigen::Matrix<double, 4, Eigen::Dynamic> interval_traffic_;
};

}  // namespace kanoko::models
