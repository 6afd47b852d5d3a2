// The mapping's expressions evaluated per interval: mass, communication weight, spring stiffness
// and any other body-scope expression (colour, radius scale, cue values). Variables are
// precomputed once per interval into flat arrays, so each evaluation is one bytecode run of
// muparser with no allocation.
#pragma once

#include <Eigen/Core>
#include <memory>
#include <unordered_map>
#include <string>
#include <vector>

#include "models/topology.hpp"
#include "src/mapping/expression.hpp"
#include "src/mapping/mapping.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::models {

/// Per-body traffic sums: rows bytes sent, bytes received, messages sent, messages received.
using TrafficSums = Eigen::Matrix<double, 4, Eigen::Dynamic>;
/// Adds one pair's traffic of one interval to the sums of its two ends.
void add_pair_traffic(const trace::PairTraffic& p, TrafficSums& sums);

class Quantities {
 public:
  /// `edges`: the springs (for `degree` and per-spring stiffness).
  Quantities(const mapping::Mapping& m, const trace::Timeline& tl, const std::vector<Edge>& edges);
  Quantities(const Quantities&) = delete;
  Quantities& operator=(const Quantities&) = delete;

  [[nodiscard]] bool has_mass() const { return mass_.valid(); }
  [[nodiscard]] bool has_weight() const { return weight_.valid(); }
  [[nodiscard]] bool has_stiffness() const { return stiffness_.valid(); }

  /// Moves to interval `bin` (≥ bin_count: the settling phase, no traffic). Updates running
  /// totals; going backwards recomputes them.
  void set_interval(std::size_t bin);

  /// Load of body i in the current interval, as [mass] `load` defines it (after the trace: the
  /// last interval's).
  [[nodiscard]] double load(std::size_t i) const;

  /// Masses of every body from [mass] `expression`. Throws RunError naming the body and the
  /// interval for a non-finite or non-positive mass.
  void masses(Eigen::VectorXd& out);
  /// Pull magnitude of one pair's traffic in the current interval from [forces.communication]
  /// `weight`. Throws RunError for a non-finite or negative weight.
  double weight(const trace::PairTraffic& p);
  /// Stiffness of every spring (in `edges` order) from [springs] `k`. Throws RunError for a
  /// non-finite or negative stiffness.
  void stiffness(std::vector<double>& out);
  /// Any body-scope expression of the mapping (colour, scale, ...) for every body.
  void body_values(const mapping::ExpressionSpec& spec, Eigen::VectorXd& out);

 private:
  void fill_body(std::size_t i);
  void fill_pair(std::uint32_t a, std::uint32_t b, double bytes, double msgs);
  std::string body_subject(std::size_t i) const;
  /// [locations] variable k (Timeline::located_names) of a body in the current interval: seconds
  /// at the name's call sites (none after the trace).
  [[nodiscard]] double located(std::size_t k, std::size_t body) const;

  bool load_from_samples_;  ///< [mass] load = "samples" (else the busy fraction)
  const trace::Timeline& tl_;
  const std::vector<Edge>& edges_;
  std::size_t bin_ = 0;
  std::vector<double> body_vars_;
  std::vector<double> pair_vars_;
  std::vector<double> degree_;
  std::vector<double> rank_;
  /// Adds `p` to the unordered pair's bytes and messages in `sums`.
  static void add_to_pair(const trace::PairTraffic& p, std::unordered_map<std::uint64_t, std::pair<double, double>>& sums);

  TrafficSums traffic_;  ///< of the interval
  TrafficSums totals_;   ///< through the interval
  std::size_t totals_through_ = 0;
  /// Bytes and messages per unordered pair (key min << 32 | max): through the interval, and in it.
  /// Kept only when a formula reads them.
  std::unordered_map<std::uint64_t, std::pair<double, double>> pair_totals_;
  std::unordered_map<std::uint64_t, std::pair<double, double>> pair_now_;
  bool need_pair_totals_ = false;
  bool need_pair_now_ = false;
  std::vector<double> load_;  ///< load of each body in the current interval
  std::vector<double> busy_;  ///< busy fraction of each body in the current interval
  std::vector<double> comm_;  ///< communicating fraction of each body in the current interval
  std::vector<double> idle_;  ///< idle fraction of each body in the current interval
  /// Seconds per body in computing, communicating and idle states through the interval
  /// (rows as StateCategory − 1), summed with the traffic totals.
  Eigen::Matrix<double, 3, Eigen::Dynamic> state_totals_;
  double peak_bytes_ = 0;
  double peak_msgs_ = 0;
  mapping::Expression mass_;
  mapping::Expression weight_;
  mapping::Expression stiffness_;
};

}  // namespace kanoko::models
