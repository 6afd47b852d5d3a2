#include "models/model.hpp"

#include <algorithm>
#include <cmath>

#include "models/layout.hpp"
#include "src/base/check.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::models {

using mapping::CommunicationMode;
using mapping::CommunicationQuantity;

Model::Model(const mapping::Mapping& m, const trace::Timeline& timeline) : mapping_(m), timeline_(timeline) {
  const std::size_t n = timeline.entity_count();
  if (n == 0) {
    throw InputError(m.where("bodies"), "no body to simulate: the trace declares no entity or [bodies] leaves them all "
                                        "out (expected at least one body)");
  }
  Layout layout = build_layout(m, n, &timeline);
  initial_positions_ = std::move(layout.positions);
  initial_centroid_ = initial_positions_.rowwise().mean();
  edges_ = std::move(layout.edges);
  spring_k_.assign(edges_.size(), m.springs.k);
  if (m.mass.expression || m.springs.k_expression || (m.communication && m.communication->weight)) {
    quantities_ = std::make_unique<Quantities>(m, timeline, edges_);
  }
  for (const auto& e : edges_) {
    spring_length_.push_back(m.springs.length ? *m.springs.length
                                              : (initial_positions_.col(e[0]) - initial_positions_.col(e[1])).norm());
  }
  if (m.communication) {
    const bool bytes = m.communication->quantity == CommunicationQuantity::Bytes;
    if (m.communication->normalize) {
      double peak = 0;
      for (const auto& p : timeline.pairs) peak = std::max(peak, bytes ? p.bytes : static_cast<double>(p.messages));
      communication_scale_ = peak > 0 ? m.communication->gain / peak : 0.0;
    } else {
      communication_scale_ = m.communication->gain / timeline.interval_s;  // per byte (or message) per second
    }
  }
  if (m.repulsion) {
    repulsion_params_.strength = m.repulsion->strength;
    repulsion_params_.softening = m.repulsion->softening;
    repulsion_params_.theta = m.repulsion->theta;
    switch (m.repulsion->evaluator) {
      case mapping::ForceEvaluator::Auto: repulsion_params_.evaluator = integrators::Evaluator::Auto; break;
      case mapping::ForceEvaluator::Direct: repulsion_params_.evaluator = integrators::Evaluator::Direct; break;
      case mapping::ForceEvaluator::BarnesHut: repulsion_params_.evaluator = integrators::Evaluator::BarnesHut; break;
    }
    repulsion_params_.multipole = m.repulsion->multipole == mapping::Multipole::Quadrupole
                                      ? integrators::Multipole::Quadrupole
                                      : integrators::Multipole::Monopole;
  }
  const auto cols = static_cast<Eigen::Index>(n);
  force_.resize(3, cols);
  mass_ = Eigen::VectorXd::Constant(cols, m.mass.base);
  if (m.mass.smoothing > 1) {
    load_prefix_.assign((timeline.bin_count + 1) * n, 0.0);
    for (std::size_t bin = 0; bin < timeline.bin_count; ++bin) {
      for (std::size_t i = 0; i < n; ++i) {
        load_prefix_[(bin + 1) * n + i] = load_prefix_[bin * n + i] + load_of(bin, static_cast<trace::EntityIndex>(i));
      }
    }
  }
  totals_ = Eigen::Matrix<double, 4, Eigen::Dynamic>::Zero(4, cols);
  interval_traffic_ = Eigen::Matrix<double, 4, Eigen::Dynamic>::Zero(4, cols);
  set_interval(0);
}

double Model::load_of(std::size_t bin, trace::EntityIndex e) const {
  return mapping_.mass.load == mapping::LoadSource::Samples ? timeline_.load_at(bin, e) : timeline_.busy_fraction(bin, e);
}

void Model::rest_at(const Eigen::Matrix3Xd& x) {
  KANOKO_ASSERT(x.cols() == initial_positions_.cols(), "rest_at needs one position per body");
  initial_positions_ = x;
  initial_centroid_ = initial_positions_.rowwise().mean();
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
  const std::size_t window = std::min<std::size_t>(std::max<std::uint32_t>(mapping_.mass.smoothing, 1), source_bin + 1);
  for (std::size_t i = 0; i < n; ++i) {
    double load = 0;
    if (window > 1) {
      load = (load_prefix_[(source_bin + 1) * n + i] - load_prefix_[(source_bin + 1 - window) * n + i]) /
             static_cast<double>(window);
    } else {
      load = load_of(source_bin, static_cast<trace::EntityIndex>(i));
    }
    mass_[static_cast<Eigen::Index>(i)] = mapping_.mass.base + mapping_.mass.load_gain * load;
  }
  if (quantities_) {
    quantities_->set_interval(bin);
    if (quantities_->has_mass()) quantities_->masses(mass_);
    if (quantities_->has_stiffness()) quantities_->stiffness(spring_k_);
  }
  // Communication pulls and traffic statistics.
  pulls_.clear();
  interval_traffic_.setZero();
  if (forcing) {
    const bool bytes = !mapping_.communication || mapping_.communication->quantity == CommunicationQuantity::Bytes;
    for (const auto& p : timeline_.traffic(bin)) {
      if (p.src != p.dst && quantities_ && quantities_->has_weight()) {
        const double w = quantities_->weight(p);
        if (w > 0) pulls_.push_back({p.src, p.dst, w});
      } else if (p.src != p.dst && communication_scale_ > 0) {
        pulls_.push_back({p.src, p.dst, communication_scale_ * (bytes ? p.bytes : static_cast<double>(p.messages))});
      }
      add_pair_traffic(p, interval_traffic_);
    }
  }
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

void Model::derivative(double /*t*/, const Eigen::VectorXd& y, Eigen::VectorXd& dydt) {
  const auto n = static_cast<Eigen::Index>(body_count());
  KANOKO_ASSERT(y.size() == 6 * n && dydt.size() == 6 * n, "state vector has the wrong size");
  const Eigen::Map<const Eigen::Matrix3Xd> x(y.data(), 3, n);
  const Eigen::Map<const Eigen::Matrix3Xd> v(y.data() + 3 * n, 3, n);
  Eigen::Map<Eigen::Matrix3Xd> dx(dydt.data(), 3, n);
  Eigen::Map<Eigen::Matrix3Xd> dv(dydt.data() + 3 * n, 3, n);
  dx = v;
  force_.setZero();

  for (std::size_t s = 0; s < edges_.size(); ++s) {
    const double k = spring_k_[s];
    const auto a = static_cast<Eigen::Index>(edges_[s][0]);
    const auto b = static_cast<Eigen::Index>(edges_[s][1]);
    const Eigen::Vector3d d = x.col(a) - x.col(b);
    const double r = d.norm();
    if (r == 0.0) continue;
    const Eigen::Vector3d f = (k * (spring_length_[s] - r) / r) * d;
    force_.col(a) += f;
    force_.col(b) -= f;
  }
  if (repulsion_params_.strength > 0) {
    integrators::RepulsionParams p = repulsion_params_;
    p.reuse_tree = step_started_ && evaluations_in_step_ > 0;
    ++evaluations_in_step_;
    integrators::add_repulsion(x, p, scratch_, force_);
  }
  if (!pulls_.empty()) {
    const bool symmetric = mapping_.communication->mode == CommunicationMode::Symmetric;
    for (const Pull& p : pulls_) {
      const Eigen::Vector3d d = x.col(p.to) - x.col(p.from);
      const double r = d.norm();
      if (r < 1e-12) continue;
      const Eigen::Vector3d f = (p.weight / r) * d;
      force_.col(p.from) += f;
      if (symmetric) force_.col(p.to) -= f;
    }
  }
  if (mapping_.centre && mapping_.centre->strength > 0) {
    force_ -= mapping_.centre->strength * (x.colwise() - initial_centroid_);
  }
  dv = force_.array().rowwise() / mass_.transpose().array();
  if (mapping_.friction && mapping_.friction->beta > 0) dv -= mapping_.friction->beta * v;
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
  const auto n = static_cast<Eigen::Index>(body_count());
  const auto located = static_cast<Eigen::Index>(timeline_.located_names.size());
  out.resize(kFixedStats + located, n);
  const std::size_t source_bin = std::min(bin_, timeline_.bin_count - 1);
  const bool forcing = bin_ < timeline_.bin_count;
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto e = static_cast<trace::EntityIndex>(i);
    out(0, i) = forcing ? (mapping_.mass.load == mapping::LoadSource::Samples ? timeline_.load_at(source_bin, e)
                                                                              : timeline_.busy_fraction(source_bin, e))
                        : 0.0;
    out(1, i) = mass_[i];
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

double Model::energy(const Eigen::VectorXd& y) const {
  const auto n = static_cast<Eigen::Index>(body_count());
  const Eigen::Map<const Eigen::Matrix3Xd> x(y.data(), 3, n);
  double e = kinetic_energy(y);
  for (std::size_t s = 0; s < edges_.size(); ++s) {
    const double stretch = (x.col(edges_[s][0]) - x.col(edges_[s][1])).norm() - spring_length_[s];
    e += 0.5 * spring_k_[s] * stretch * stretch;
  }
  if (repulsion_params_.strength > 0) {
    integrators::ForceScratch scratch;  // energy() is called rarely; keep the stepping scratch apart
    e += integrators::repulsion_potential(x, repulsion_params_, scratch);
  }
  if (mapping_.centre && mapping_.centre->strength > 0) {
    e += 0.5 * mapping_.centre->strength * (x.colwise() - initial_centroid_).colwise().squaredNorm().sum();
  }
  return e;
}

double Model::kinetic_energy(const Eigen::VectorXd& y) const {
  const auto n = static_cast<Eigen::Index>(body_count());
  const Eigen::Map<const Eigen::Matrix3Xd> v(y.data() + 3 * n, 3, n);
  return 0.5 * (v.colwise().squaredNorm().transpose().array() * mass_.array()).sum();
}

double Model::forcing_power(const Eigen::VectorXd& y) const {
  if (pulls_.empty()) return 0.0;
  const auto n = static_cast<Eigen::Index>(body_count());
  const Eigen::Map<const Eigen::Matrix3Xd> x(y.data(), 3, n);
  const Eigen::Map<const Eigen::Matrix3Xd> v(y.data() + 3 * n, 3, n);
  const bool symmetric = mapping_.communication->mode == CommunicationMode::Symmetric;
  double p = 0;
  for (const Pull& pull : pulls_) {
    const Eigen::Vector3d d = x.col(pull.to) - x.col(pull.from);
    const double r = d.norm();
    if (r < 1e-12) continue;  // the same cut-off as derivative()
    const Eigen::Vector3d f = (pull.weight / r) * d;
    p += f.dot(v.col(pull.from));
    if (symmetric) p -= f.dot(v.col(pull.to));
  }
  return p;
}

double Model::friction_power(const Eigen::VectorXd& y) const {
  if (!mapping_.friction || mapping_.friction->beta <= 0) return 0.0;
  const auto n = static_cast<Eigen::Index>(body_count());
  const Eigen::Map<const Eigen::Matrix3Xd> v(y.data() + 3 * n, 3, n);
  return mapping_.friction->beta * (v.colwise().squaredNorm().transpose().array() * mass_.array()).sum();
}

}  // namespace kanoko::models
