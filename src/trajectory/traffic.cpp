#include "src/trajectory/traffic.hpp"

#include <algorithm>
#include <cmath>

namespace kanoko::trajectory {

namespace {

/// Key of the unordered pair {a, b}.
std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) {
  const auto lo = std::min(a, b);
  const auto hi = std::max(a, b);
  return (static_cast<std::uint64_t>(lo) << 32U) | hi;
}

}  // namespace

IntervalTraffic::IntervalTraffic(const trajectory::Metadata& meta) : meta_(&meta) {
  edge_of_pair_.reserve(meta.edges.size());
  for (std::size_t e = 0; e < meta.edges.size(); ++e) {
    edge_of_pair_.emplace(pair_key(meta.edges[e][0], meta.edges[e][1]), e);
  }
  spring_bytes_.assign(meta.edges.size(), 0.0);
}

void IntervalTraffic::set_interval(std::size_t bin) {
  if (bin == bin_) return;
  bin_ = bin;
  std::fill(spring_bytes_.begin(), spring_bytes_.end(), 0.0);
  max_spring_bytes_ = 0;
  flashes_.clear();
  pair_bytes_.clear();
  for (const trajectory::PairTraffic& p : meta_->traffic_in(bin)) {
    if (p.src == p.dst) continue;  // a body talking to itself has no line to draw
    pair_bytes_[pair_key(p.src, p.dst)] += p.bytes;
  }
  double largest = 0;
  for (const auto& [key, bytes] : pair_bytes_) {
    largest = std::max(largest, bytes);
    if (const auto it = edge_of_pair_.find(key); it != edge_of_pair_.end()) {
      spring_bytes_[it->second] = bytes;
      max_spring_bytes_ = std::max(max_spring_bytes_, bytes);
    }
    flashes_.push_back(
        {static_cast<std::uint32_t>(key >> 32U), static_cast<std::uint32_t>(key & 0xffffffffU), bytes, 0.0F});
  }
  // Largest first; ties by pair, so the drawing does not depend on the hash map's order.
  const auto larger = [](const Flash& x, const Flash& y) {
    return x.bytes != y.bytes ? x.bytes > y.bytes : (x.a != y.a ? x.a < y.a : x.b < y.b);
  };
  const std::size_t keep = std::min(kMaxFlashes, flashes_.size());
  std::partial_sort(flashes_.begin(), flashes_.begin() + static_cast<std::ptrdiff_t>(keep), flashes_.end(), larger);
  flashes_.resize(keep);
  for (Flash& f : flashes_) {
    // Square root: a pair with a hundredth of the traffic is still visible, at a tenth.
    f.intensity = largest > 0 ? static_cast<float>(std::sqrt(f.bytes / largest)) : 0.0F;
  }
}

const std::unordered_map<std::uint32_t, Partner>& PartnerTotals::through(const trajectory::Metadata& meta,
                                                                         std::uint32_t body, std::size_t bin) {
  const std::size_t end = std::min(bin + 1, meta.traffic_intervals());
  if (!valid_ || body != body_ || end < through_) {
    partners_.clear();
    body_ = body;
    through_ = 0;
    valid_ = true;
  }
  for (; through_ < end; ++through_) {
    for (const trajectory::PairTraffic& p : meta.traffic_in(through_)) {
      if (p.src == body && p.dst != body) {
        Partner& q = partners_[p.dst];
        q.body = p.dst;
        q.sent.bytes += p.bytes;
        q.sent.messages += p.messages;
      } else if (p.dst == body && p.src != body) {
        Partner& q = partners_[p.src];
        q.body = p.src;
        q.received.bytes += p.bytes;
        q.received.messages += p.messages;
      }
    }
  }
  return partners_;
}

std::vector<Partner> PartnerTotals::top(const trajectory::Metadata& meta, std::uint32_t body, std::size_t bin,
                                        std::size_t limit) {
  const auto& all = through(meta, body, bin);
  std::vector<Partner> out;
  out.reserve(all.size());
  for (const auto& [index, partner] : all) out.push_back(partner);
  const auto larger = [](const Partner& x, const Partner& y) {
    return x.total_bytes() != y.total_bytes() ? x.total_bytes() > y.total_bytes() : x.body < y.body;
  };
  const std::size_t keep = std::min(limit, out.size());
  std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keep), out.end(), larger);
  out.resize(keep);
  return out;
}

std::array<Flow, 2> interval_flows(const trajectory::Metadata& meta, std::uint32_t a, std::uint32_t b,
                                   std::size_t bin) {
  std::array<Flow, 2> flows{};
  for (const trajectory::PairTraffic& p : meta.traffic_in(bin)) {
    const int way = p.src == a && p.dst == b ? 0 : (p.src == b && p.dst == a ? 1 : -1);
    if (way < 0) continue;
    flows[static_cast<std::size_t>(way)].bytes += p.bytes;
    flows[static_cast<std::size_t>(way)].messages += p.messages;
  }
  return flows;
}

}  // namespace kanoko::trajectory
