#include "src/trace/timeline.hpp"

#include <algorithm>
#include <cmath>

#include "src/base/check.hpp"

namespace kanoko::trace {

std::size_t Timeline::bin_of(double t) const {
  if (!(t > begin_s) || bin_count == 0) return 0;
  const auto b = static_cast<std::size_t>(std::floor((t - begin_s) / interval_s));
  return std::min(b, bin_count - 1);
}

TimelineBuilder::TimelineBuilder(TimelineOptions options) : options_(std::move(options)) {
  KANOKO_ASSERT(options_.interval_s > 0, "interval must be positive (validated by the mapping)");
  tl_.interval_s = options_.interval_s;
  tl_.pair_begin.push_back(0);
}

void TimelineBuilder::ensure_bins(std::size_t count) {
  if (count <= tl_.bin_count) return;
  tl_.bin_count = count;
  tl_.load.resize(count * tl_.entity_count(), 0.0);
  tl_.busy_s.resize(count * tl_.entity_count(), 0.0);
}

void TimelineBuilder::on_entity(const Entity& e) {
  KANOKO_ASSERT(e.index == tl_.entities.size(), "entities must arrive in index order");
  // Entities are declared before the per-bin arrays grow, in the usual case; if a trace declares
  // one later, re-lay the arrays with the new stride.
  const std::size_t old_n = tl_.entity_count();
  tl_.entities.push_back(e);
  last_load_time_s_.push_back(0);
  last_load_value_.push_back(0);
  if (tl_.bin_count > 0) {
    const std::size_t n = tl_.entity_count();
    for (auto* v : {&tl_.load, &tl_.busy_s}) {
      std::vector<double> grown(tl_.bin_count * n, 0.0);
      for (std::size_t b = 0; b < tl_.bin_count; ++b) {
        std::copy_n(v->begin() + static_cast<std::ptrdiff_t>(b * old_n), old_n,
                    grown.begin() + static_cast<std::ptrdiff_t>(b * n));
      }
      *v = std::move(grown);
    }
  }
}

void TimelineBuilder::on_link(const Link& l) { tl_.links.push_back(l); }

void TimelineBuilder::flush_traffic_until(std::size_t bin) {
  // Close every bin before `bin`: the open one gets its pairs, the ones after it none.
  while (open_bin_ < bin) {
    std::sort(open_pairs_.begin(), open_pairs_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [key, traffic] : open_pairs_) tl_.pairs.push_back(traffic);
    open_pairs_.clear();
    tl_.pair_begin.push_back(tl_.pairs.size());
    ++open_bin_;
  }
}

void TimelineBuilder::on_message(const Message& m) {
  const std::size_t bin = m.send_s > 0 ? static_cast<std::size_t>(std::floor(m.send_s / tl_.interval_s)) : 0;
  ensure_bins(bin + 1);
  flush_traffic_until(bin);
  const std::uint64_t key = (std::uint64_t{m.src} << 32U) | m.dst;
  // Few distinct pairs are active in one bin; a linear scan of the most recent ones is fast and
  // keeps no per-pair state for the whole run.
  auto it = std::find_if(open_pairs_.begin(), open_pairs_.end(), [key](const auto& p) { return p.first == key; });
  if (it == open_pairs_.end()) {
    open_pairs_.push_back({key, PairTraffic{m.src, m.dst, 0.0, 0}});
    it = open_pairs_.end() - 1;
  }
  it->second.bytes += static_cast<double>(m.bytes);
  it->second.messages += 1;
  ++tl_.message_count;
}

void TimelineBuilder::add_interval(std::vector<double>& per_bin, EntityIndex e, double begin_s, double end_s,
                                   double weight) {
  if (!(end_s > begin_s)) return;
  const double w = tl_.interval_s;
  const auto first = static_cast<std::size_t>(std::floor(begin_s / w));
  auto last = static_cast<std::size_t>(std::floor(end_s / w));
  // [begin, end) ending exactly on a boundary does not touch the next bin.
  if (last > first && static_cast<double>(last) * w >= end_s) --last;
  ensure_bins(last + 1);
  const std::size_t n = tl_.entity_count();
  for (std::size_t b = first; b <= last; ++b) {
    const double lo = std::max(begin_s, static_cast<double>(b) * w);
    const double hi = std::min(end_s, static_cast<double>(b + 1) * w);
    if (hi > lo) per_bin[b * n + e] += weight * (hi - lo);
  }
}

void TimelineBuilder::integrate_load(EntityIndex e, double until_s) {
  add_interval(tl_.load, e, last_load_time_s_[e], until_s, last_load_value_[e]);
  last_load_time_s_[e] = std::max(last_load_time_s_[e], until_s);
}

void TimelineBuilder::on_load(const LoadSample& s) {
  integrate_load(s.entity, s.time_s);
  last_load_value_[s.entity] = s.value;
  ++tl_.load_sample_count;
}

void TimelineBuilder::on_state(const StateInterval& s) {
  ++tl_.state_count;
  const bool busy = std::find(options_.busy_states.begin(), options_.busy_states.end(), s.name) !=
                    options_.busy_states.end();
  if (busy) add_interval(tl_.busy_s, s.entity, s.begin_s, s.end_s, 1.0);
}

void TimelineBuilder::on_end(double end_s) {
  KANOKO_ASSERT(!ended_, "on_end called twice");
  ended_ = true;
  tl_.begin_s = 0;
  tl_.end_s = end_s;
  const std::size_t bins =
      std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(end_s / tl_.interval_s - 1e-9)));
  ensure_bins(bins);
  for (EntityIndex e = 0; e < tl_.entity_count(); ++e) integrate_load(e, end_s);
  // Anything recorded past `end` (a state running over it) is folded into the last bin's range.
  flush_traffic_until(tl_.bin_count);
  // Loads were integrated as value × seconds; turn them into time means per bin (the last bin
  // may be partial).
  const std::size_t n = tl_.entity_count();
  for (std::size_t b = 0; b < tl_.bin_count; ++b) {
    const double lo = static_cast<double>(b) * tl_.interval_s;
    const double width = std::max(1e-300, std::min(end_s, lo + tl_.interval_s) - lo);
    for (std::size_t e = 0; e < n; ++e) tl_.load[b * n + e] /= (b + 1 == tl_.bin_count ? width : tl_.interval_s);
  }
}

Timeline TimelineBuilder::take() {
  KANOKO_ASSERT(ended_, "take() before on_end");
  return std::move(tl_);
}

}  // namespace kanoko::trace
