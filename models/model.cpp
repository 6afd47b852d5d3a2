#include "models/model.hpp"

#include <algorithm>
#include <cmath>

#include "models/layout.hpp"
#include "src/base/check.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::models {

using mapping::CommunicationMode;
using mapping::CommunicationQuantity;

namespace {

/// The mean of the columns of x, the same bits wherever the result is kept. Eigen evaluates a row
/// sum of a 3×N matrix either as part of a two-row packet (adding four columns pairwise before the
/// running sum) or alone (a plain running sum), as the alignment of the destination decides, so the
/// last bits of the centre pull's anchor once depended on where the model sat in memory. A 16-byte
/// aligned destination fixes the choice (rows x, y as a packet, z alone), the one the model made.
Eigen::Vector3d centroid(const Eigen::Matrix3Xd& x) {
  alignas(16) Eigen::Vector3d c = x.rowwise().mean();
  return c;
}

}  // namespace

Model::Model(const mapping::Mapping& m, const trace::Timeline& timeline, const Layout* given_layout)
    : timeline_(timeline),
      mass_base_(m.mass.base),
      mass_load_gain_(m.mass.load_gain),
      mass_smoothing_(m.mass.smoothing),
      load_from_samples_(m.mass.load == mapping::LoadSource::Samples),
      pulls_by_bytes_(!m.communication || m.communication->quantity == CommunicationQuantity::Bytes) {
  const std::size_t n = timeline.entity_count();
  if (n == 0) {
    throw InputError(m.where("bodies"), "no body to simulate: the trace declares no entity or [bodies] leaves them all "
                                        "out (expected at least one body)");
  }
  Layout layout = given_layout != nullptr ? *given_layout : build_layout(m, n, &timeline);
  KANOKO_ASSERT(static_cast<std::size_t>(layout.positions.cols()) == n, "the layout given has another body count");
  initial_positions_ = std::move(layout.positions);
  terms_.centre = centroid(initial_positions_);
  terms_.spring_edges = std::move(layout.edges);
  terms_.spring_k.assign(terms_.spring_edges.size(), m.springs.k);
  if (m.mass.expression || m.springs.k_expression || (m.communication && m.communication->weight)) {
    quantities_ = std::make_unique<Quantities>(m, timeline, terms_.spring_edges);
  }
  for (const auto& e : terms_.spring_edges) {
    terms_.spring_length.push_back(m.springs.length
                                       ? *m.springs.length
                                       : (initial_positions_.col(e[0]) - initial_positions_.col(e[1])).norm());
  }
  if (m.communication) {
    if (m.communication->normalize) {
      double peak = 0;
      for (const auto& p : timeline.pairs) peak = std::max(peak, pulls_by_bytes_ ? p.bytes : static_cast<double>(p.messages));
      communication_scale_ = peak > 0 ? m.communication->gain / peak : 0.0;
    } else {
      communication_scale_ = m.communication->gain / timeline.interval_s;  // per byte (or message) per second
    }
    terms_.symmetric_pulls = m.communication->mode == CommunicationMode::Symmetric;
  }
  if (m.repulsion) {
    terms_.repulsion.strength = m.repulsion->strength;
    terms_.repulsion.softening = m.repulsion->softening;
    terms_.repulsion.theta = m.repulsion->theta;
    terms_.repulsion.evaluator = m.repulsion->evaluator;
    terms_.repulsion.multipole = m.repulsion->multipole;
  }
  if (m.centre) terms_.centre_strength = m.centre->strength;
  if (m.friction) terms_.friction = m.friction->beta;
  const auto cols = static_cast<Eigen::Index>(n);
  terms_.mass = Eigen::VectorXd::Constant(cols, mass_base_);
  loads_.resize(n);
  // With no load gain the load adds nothing to a mass (the calibration probe's model).
  if (mass_smoothing_ > 1 && mass_load_gain_ != 0) {
    load_prefix_.assign((timeline.bin_count + 1) * n, 0.0);
    for (std::size_t bin = 0; bin < timeline.bin_count; ++bin) {
      loads_of(bin, loads_);
      for (std::size_t i = 0; i < n; ++i) load_prefix_[(bin + 1) * n + i] = load_prefix_[bin * n + i] + loads_[i];
    }
  }
  totals_ = Eigen::Matrix<double, 4, Eigen::Dynamic>::Zero(4, cols);
  interval_traffic_ = Eigen::Matrix<double, 4, Eigen::Dynamic>::Zero(4, cols);
  set_interval(0);
}

double Model::load_of(std::size_t bin, trace::EntityIndex e) const {
  return load_from_samples_ ? timeline_.load_at(bin, e) : timeline_.busy_fraction(bin, e);
}

void Model::loads_of(std::size_t bin, std::span<double> out) const {
  if (load_from_samples_) {
    const std::size_t n = body_count();
    if (timeline_.load.empty()) {
      std::fill_n(out.begin(), n, 0.0);  // no load samples
    } else {
      std::copy_n(timeline_.load.begin() + static_cast<std::ptrdiff_t>(bin * n), n, out.begin());
    }
  } else {
    timeline_.busy_fractions(bin, out);
  }
}

void Model::rest_at(const Eigen::Matrix3Xd& x) {
  KANOKO_ASSERT(x.cols() == initial_positions_.cols(), "rest_at needs one position per body");
  initial_positions_ = x;
  terms_.centre = centroid(initial_positions_);
}

void Model::hold_repulsion() {
  if (!(terms_.repulsion.strength > 0)) return;
  integrators::ForceScratch scratch;
  terms_.fixed_force = Eigen::Matrix3Xd::Zero(3, initial_positions_.cols());
  integrators::add_repulsion(initial_positions_, terms_.repulsion, scratch, terms_.fixed_force);
  terms_.repulsion.strength = 0;
}

Eigen::VectorXd Model::initial_state() const {
  const auto n = static_cast<Eigen::Index>(body_count());
  Eigen::VectorXd y = Eigen::VectorXd::Zero(6 * n);
  Eigen::Map<Eigen::Matrix3Xd>(y.data(), 3, n) = initial_positions_;
  return y;
}

void Model::set_interval(std::size_t bin) {
  bin_ = bin;
  const std::size_t n = body_count();
  const bool forcing = bin < timeline_.bin_count;
  const std::size_t source_bin = std::min(bin, timeline_.bin_count - 1);
  // Mass from load (averaged over the last `smoothing` intervals when asked).
  const std::size_t window = std::min<std::size_t>(std::max<std::uint32_t>(mass_smoothing_, 1), source_bin + 1);
  if (mass_load_gain_ != 0 && window == 1) loads_of(source_bin, loads_);
  for (std::size_t i = 0; i < n; ++i) {
    double load = 0;
    if (mass_load_gain_ == 0) {
      // the load adds nothing to the mass
    } else if (window > 1) {
      load = (load_prefix_[(source_bin + 1) * n + i] - load_prefix_[(source_bin + 1 - window) * n + i]) /
             static_cast<double>(window);
    } else {
      load = loads_[i];
    }
    terms_.mass[static_cast<Eigen::Index>(i)] = mass_base_ + mass_load_gain_ * load;
  }
  if (quantities_) {
    quantities_->set_interval(bin);
    if (quantities_->has_mass()) quantities_->masses(terms_.mass);
    if (quantities_->has_stiffness()) quantities_->stiffness(terms_.spring_k);
  }
  // Communication pulls and traffic statistics.
  std::vector<integrators::Pull>& pulls = terms_.pulls;
  pulls.clear();
  if (traffic_statistics_) interval_traffic_.setZero();
  if (forcing) {
    for (const auto& p : timeline_.traffic(bin)) {
      if (p.src != p.dst && quantities_ && quantities_->has_weight()) {
        const double w = quantities_->weight(p);
        if (w > 0) pulls.push_back({p.src, p.dst, w});
      } else if (p.src != p.dst && communication_scale_ > 0) {
        pulls.push_back({p.src, p.dst, communication_scale_ * (pulls_by_bytes_ ? p.bytes : static_cast<double>(p.messages))});
      }
      if (traffic_statistics_) add_pair_traffic(p, interval_traffic_);
    }
  }
  if (!traffic_statistics_) return;
  // Running totals through this interval (recomputed if we went backwards).
  if (bin < totals_through_) {
    totals_.setZero();
    totals_through_ = 0;
  }
  const std::size_t through = std::min(bin + 1, timeline_.bin_count);
  for (; totals_through_ < through; ++totals_through_) {
    for (const auto& p : timeline_.traffic(totals_through_)) add_pair_traffic(p, totals_);
  }
}

void Model::set_interval_mean(std::size_t first, std::size_t count) {
  KANOKO_ASSERT(count >= 1 && first + count <= timeline_.bin_count, "set_interval_mean needs intervals of the trace");
  if (count == 1) {
    set_interval(first);
    return;
  }
  const double share = 1.0 / static_cast<double>(count);
  Eigen::VectorXd mass = Eigen::VectorXd::Zero(terms_.mass.size());
  std::vector<double> spring_k(terms_.spring_k.size(), 0.0);
  std::vector<integrators::Pull> pulls;
  for (std::size_t bin = first; bin < first + count; ++bin) {
    set_interval(bin);
    mass += terms_.mass;
    for (std::size_t s = 0; s < spring_k.size(); ++s) spring_k[s] += terms_.spring_k[s];
    for (const integrators::Pull& p : terms_.pulls) pulls.push_back({p.from, p.to, p.weight * share});
  }
  terms_.mass = mass * share;
  for (std::size_t s = 0; s < spring_k.size(); ++s) terms_.spring_k[s] = spring_k[s] * share;
  terms_.pulls = std::move(pulls);
}

void Model::derivative(double /*t*/, const Eigen::VectorXd& y, Eigen::VectorXd& dydt) {
  const bool reuse_tree = step_started_ && evaluations_in_step_ > 0;
  // A repulsion taken from the last evaluation built no tree: the step's next one builds it.
  if (!integrators::derivative(terms_, y, reuse_tree, scratch_, dydt)) ++evaluations_in_step_;
}

namespace {
constexpr Eigen::Index kFixedStats = 13;  ///< the trajectory::stat rows, before the [locations] ones
}  // namespace

std::vector<std::string> Model::stat_names(const mapping::Mapping& m) {
  namespace st = trajectory::stat;
  std::vector<std::string> names{st::kLoad, st::kMass, st::kBytesSent, st::kBytesRecv, st::kMsgsSent, st::kMsgsRecv,
                                 st::kBytesSentTotal, st::kBytesRecvTotal, st::kMsgsSentTotal, st::kMsgsRecvTotal,
                                 st::kBusy, st::kCommunicating, st::kIdle};
  for (std::string& v : mapping::location_variables(m)) names.push_back(std::move(v));
  return names;
}

void Model::current_stats(Eigen::MatrixXd& out) const {
  KANOKO_ASSERT(traffic_statistics_, "current_stats of a model that skips its traffic statistics");
  const auto n = static_cast<Eigen::Index>(body_count());
  const auto located = static_cast<Eigen::Index>(timeline_.located_names.size());
  out.resize(kFixedStats + located, n);
  const std::size_t source_bin = std::min(bin_, timeline_.bin_count - 1);
  const bool forcing = bin_ < timeline_.bin_count;
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto e = static_cast<trace::EntityIndex>(i);
    out(0, i) = forcing ? load_of(source_bin, e) : 0.0;
    out(1, i) = terms_.mass[i];
    out(10, i) = forcing ? timeline_.busy_fraction(source_bin, e) : 0.0;
    out(11, i) = forcing ? timeline_.comm_fraction(source_bin, e) : 0.0;
    out(12, i) = forcing ? timeline_.idle_fraction(source_bin, e) : 0.0;
    for (Eigen::Index k = 0; k < located; ++k) {
      const auto q = static_cast<std::size_t>(k);
      out(kFixedStats + k, i) = forcing ? timeline_.located_at(q / 3, source_bin, e, q % 3) : 0.0;
    }
  }
  out.middleRows(2, 4) = interval_traffic_;
  out.middleRows(6, 4) = totals_;
}

double Model::energy(const Eigen::VectorXd& y) const { return integrators::mechanical_energy(terms_, y); }

double Model::kinetic_energy(const Eigen::VectorXd& y) const { return integrators::kinetic_energy(terms_, y); }

double Model::forcing_power(const Eigen::VectorXd& y) const { return integrators::forcing_power(terms_, y); }

double Model::friction_power(const Eigen::VectorXd& y) const { return integrators::friction_power(terms_, y); }

}  // namespace kanoko::models
