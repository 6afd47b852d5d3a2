#include "models/quantities.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace kanoko::models {

using mapping::Scope;

namespace {
std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) {
  return (std::uint64_t{std::min(a, b)} << 32U) | std::uint64_t{std::max(a, b)};
}
bool reads(const std::optional<mapping::ExpressionSpec>& e, std::initializer_list<const char*> names) {
  if (!e) return false;
  for (const char* n : names) {
    if (std::find(e->used.begin(), e->used.end(), n) != e->used.end()) return true;
  }
  return false;
}
}  // namespace

void add_pair_traffic(const trace::PairTraffic& p, TrafficSums& sums) {
  sums(0, p.src) += p.bytes;
  sums(1, p.dst) += p.bytes;
  sums(2, p.src) += p.messages;
  sums(3, p.dst) += p.messages;
}

void Quantities::add_to_pair(const trace::PairTraffic& p,
                             std::unordered_map<std::uint64_t, std::pair<double, double>>& sums) {
  auto& t = sums[pair_key(p.src, p.dst)];
  t.first += p.bytes;
  t.second += p.messages;
}

Quantities::Quantities(const mapping::Mapping& m, const trace::Timeline& tl, const std::vector<Edge>& edges)
    : load_from_samples_(m.mass.load == mapping::LoadSource::Samples),
      tl_(tl),
      edges_(edges),
      body_vars_(mapping::kBodyVarCount + mapping::location_variables(m).size(), 0.0),
      pair_vars_(mapping::kPairVarCount + mapping::pair_location_variables(m).size(), 0.0) {
  const std::size_t n = tl.entity_count();
  if (tl.located_names != mapping::location_variables(m)) {
    throw std::logic_error("the timeline's located time does not follow the mapping's [locations]");
  }
  degree_.assign(n, 0.0);
  for (const auto& e : edges) {
    degree_[e[0]] += 1;
    degree_[e[1]] += 1;
  }
  rank_.resize(n);
  for (std::size_t i = 0; i < n; ++i) rank_[i] = tl.entities[i].rank >= 0 ? static_cast<double>(tl.entities[i].rank) : static_cast<double>(i);
  for (const auto& p : tl.pairs) {
    peak_bytes_ = std::max(peak_bytes_, p.bytes);
    peak_msgs_ = std::max(peak_msgs_, static_cast<double>(p.messages));
  }
  traffic_ = TrafficSums::Zero(4, static_cast<Eigen::Index>(n));
  totals_ = traffic_;
  state_totals_.setZero(3, static_cast<Eigen::Index>(n));
  if (m.mass.expression) mass_ = mapping::Expression(*m.mass.expression, body_vars_.data());
  if (m.communication && m.communication->weight) weight_ = mapping::Expression(*m.communication->weight, pair_vars_.data());
  if (m.springs.k_expression) stiffness_ = mapping::Expression(*m.springs.k_expression, pair_vars_.data());
  const std::optional<mapping::ExpressionSpec> no_weight;
  const auto& weight = m.communication ? m.communication->weight : no_weight;
  need_pair_totals_ = reads(weight, {"bytes_total", "msgs_total"}) || reads(m.springs.k_expression, {"bytes_total", "msgs_total"});
  need_pair_now_ = m.springs.k_expression.has_value();
  load_.assign(n, 0.0);
  busy_.assign(n, 0.0);
  comm_.assign(n, 0.0);
  idle_.assign(n, 0.0);
  set_interval(0);
}

void Quantities::set_interval(std::size_t bin) {
  bin_ = bin;
  traffic_.setZero();
  pair_now_.clear();
  const bool forcing = bin < tl_.bin_count;
  if (bin < totals_through_) {
    totals_.setZero();
    state_totals_.setZero();
    pair_totals_.clear();
    totals_through_ = 0;
  }
  const std::size_t through = std::min(bin + 1, tl_.bin_count);
  for (; totals_through_ < through; ++totals_through_) {
    for (const auto& p : tl_.traffic(totals_through_)) {
      add_pair_traffic(p, totals_);
      if (need_pair_totals_) add_to_pair(p, pair_totals_);
    }
    for (std::size_t i = 0; i < load_.size(); ++i) {
      const auto e = static_cast<trace::EntityIndex>(i);
      const auto c = static_cast<Eigen::Index>(i);
      const trace::Timeline::BinTime t = tl_.bin_time(totals_through_, e);  // the same time as the fractions
      state_totals_(0, c) += t.busy_s;
      state_totals_(1, c) += t.comm_s;
      state_totals_(2, c) += t.idle_s;
    }
  }
  if (forcing) {
    for (const auto& p : tl_.traffic(bin)) {
      add_pair_traffic(p, traffic_);
      if (need_pair_now_) add_to_pair(p, pair_now_);
    }
  }
  // After the trace (settling), the last interval's load holds, as it does for the masses
  // without formulas.
  if (tl_.bin_count == 0) return;
  const std::size_t source = std::min(bin, tl_.bin_count - 1);
  for (std::size_t i = 0; i < load_.size(); ++i) {
    const auto e = static_cast<trace::EntityIndex>(i);
    busy_[i] = tl_.busy_fraction(source, e);
    comm_[i] = tl_.comm_fraction(source, e);
    idle_[i] = tl_.idle_fraction(source, e);
    load_[i] = load_from_samples_ ? tl_.load_at(source, e) : busy_[i];
  }
}

double Quantities::load(std::size_t i) const { return load_[i]; }

void Quantities::fill_body(std::size_t i) {
  auto& v = body_vars_;
  const auto c = static_cast<Eigen::Index>(i);
  v[mapping::kBodyIndex] = static_cast<double>(i);
  v[mapping::kBodyRank] = rank_[i];
  v[mapping::kBodyCount] = static_cast<double>(tl_.entity_count());
  v[mapping::kBodyDegree] = degree_[i];
  v[mapping::kBodyLoad] = load_[i];
  v[mapping::kBodyBusy] = busy_[i];
  v[mapping::kBodyCommunicating] = comm_[i];
  v[mapping::kBodyIdle] = idle_[i];
  v[mapping::kBodyBytesSent] = traffic_(0, c);
  v[mapping::kBodyBytesRecv] = traffic_(1, c);
  v[mapping::kBodyMsgsSent] = traffic_(2, c);
  v[mapping::kBodyMsgsRecv] = traffic_(3, c);
  v[mapping::kBodyBytesSentTotal] = totals_(0, c);
  v[mapping::kBodyBytesRecvTotal] = totals_(1, c);
  v[mapping::kBodyMsgsSentTotal] = totals_(2, c);
  v[mapping::kBodyMsgsRecvTotal] = totals_(3, c);
  v[mapping::kBodyBusyTotal] = state_totals_(0, c);
  v[mapping::kBodyCommunicatingTotal] = state_totals_(1, c);
  v[mapping::kBodyIdleTotal] = state_totals_(2, c);
  v[mapping::kBodyPeakBytes] = peak_bytes_;
  v[mapping::kBodyPeakMsgs] = peak_msgs_;
  v[mapping::kBodyInterval] = tl_.interval_s;
  v[mapping::kBodyTime] = tl_.begin_s + static_cast<double>(bin_) * tl_.interval_s;
  // [locations]: seconds of the interval at each name's call sites.
  for (std::size_t k = 0; k < tl_.located_names.size(); ++k) v[mapping::kBodyVarCount + k] = located(k, i);
}

void Quantities::fill_pair(std::uint32_t a, std::uint32_t b, double bytes, double msgs) {
  auto& v = pair_vars_;
  const auto it = need_pair_totals_ ? pair_totals_.find(pair_key(a, b)) : pair_totals_.end();
  v[mapping::kPairBytes] = bytes;
  v[mapping::kPairMsgs] = msgs;
  v[mapping::kPairBytesTotal] = it != pair_totals_.end() ? it->second.first : 0.0;
  v[mapping::kPairMsgsTotal] = it != pair_totals_.end() ? it->second.second : 0.0;
  v[mapping::kPairPeakBytes] = peak_bytes_;
  v[mapping::kPairPeakMsgs] = peak_msgs_;
  v[mapping::kPairSrcIndex] = a;
  v[mapping::kPairDstIndex] = b;
  v[mapping::kPairSrcLoad] = load_[a];
  v[mapping::kPairDstLoad] = load_[b];
  v[mapping::kPairSrcDegree] = degree_[a];
  v[mapping::kPairDstDegree] = degree_[b];
  v[mapping::kPairCount] = static_cast<double>(tl_.entity_count());
  v[mapping::kPairInterval] = tl_.interval_s;
  v[mapping::kPairTime] = tl_.begin_s + static_cast<double>(bin_) * tl_.interval_s;
  // [locations]: the sender's, then the receiver's.
  const std::size_t n = tl_.located_names.size();
  for (std::size_t k = 0; k < 2 * n; ++k) v[mapping::kPairVarCount + k] = located(k % n, k < n ? a : b);
}

double Quantities::located(std::size_t k, std::size_t body) const {
  return bin_ < tl_.bin_count ? tl_.located_at(k / 3, bin_, static_cast<trace::EntityIndex>(body), k % 3) : 0.0;
}

std::string Quantities::body_subject(std::size_t i) const {
  std::ostringstream os;
  os << "body " << i << " '" << tl_.entities[i].name << "' in interval " << bin_ << " (t = "
     << tl_.begin_s + static_cast<double>(bin_) * tl_.interval_s << " s)";
  return os.str();
}

void Quantities::masses(Eigen::VectorXd& out) {
  const std::size_t n = tl_.entity_count();
  out.resize(static_cast<Eigen::Index>(n));
  for (std::size_t i = 0; i < n; ++i) {
    fill_body(i);
    const double m = mass_.eval();
    if (!(m > 0) || !std::isfinite(m)) mass_.throw_bad_value(body_subject(i), m, "finite and > 0");
    out[static_cast<Eigen::Index>(i)] = m;
  }
}

double Quantities::weight(const trace::PairTraffic& p) {
  fill_pair(p.src, p.dst, p.bytes, static_cast<double>(p.messages));
  const double w = weight_.eval();
  if (!(w >= 0) || !std::isfinite(w)) {
    weight_.throw_bad_value("the pair " + tl_.entities[p.src].name + " → " + tl_.entities[p.dst].name + " in interval " +
                                std::to_string(bin_),
                            w, "finite and ≥ 0");
  }
  return w;
}

void Quantities::stiffness(std::vector<double>& out) {
  out.resize(edges_.size());
  for (std::size_t s = 0; s < edges_.size(); ++s) {
    const auto [a, b] = edges_[s];
    const auto it = pair_now_.find(pair_key(a, b));
    fill_pair(a, b, it != pair_now_.end() ? it->second.first : 0.0, it != pair_now_.end() ? it->second.second : 0.0);
    const double k = stiffness_.eval();
    if (!(k >= 0) || !std::isfinite(k)) {
      stiffness_.throw_bad_value("the spring " + tl_.entities[a].name + " – " + tl_.entities[b].name + " in interval " +
                                     std::to_string(bin_),
                                 k, "finite and ≥ 0");
    }
    out[s] = k;
  }
}

void Quantities::body_values(const mapping::ExpressionSpec& spec, Eigen::VectorXd& out) {
  const mapping::Expression e(spec, body_vars_.data());
  const std::size_t n = tl_.entity_count();
  out.resize(static_cast<Eigen::Index>(n));
  for (std::size_t i = 0; i < n; ++i) {
    fill_body(i);
    const double v = e.eval();
    if (!std::isfinite(v)) e.throw_bad_value(body_subject(i), v, "finite");
    out[static_cast<Eigen::Index>(i)] = v;
  }
}

}  // namespace kanoko::models
