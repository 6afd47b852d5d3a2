#include "src/trace/timeline.hpp"

#include "src/trace/bins.hpp"
#include "src/trace/time_split.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <tuple>
#include <utility>

#include "src/base/check.hpp"
#include "src/base/error.hpp"
#include "src/base/flat_index.hpp"

namespace kanoko::trace {
namespace {

/// Sorts a bin's pair entries by key (src << 32 | dst), stably (entries of one key keep their
/// order). A bin with at least as many entries as sources (a busy bin) is sorted by counting its
/// sources, then each source's few entries by destination: two passes over the entries. A sparser
/// one by a least-significant-digit radix sort, 11 bits a pass, over a key packed to the bits the
/// bin's sources and destinations use (3 passes of counting and 3 of moving at 10,000 entities,
/// which took a fifth of the timeline's time on a 14-million-message trace; std::sort before it
/// took as much).
void sort_pairs(std::vector<std::pair<std::uint64_t, PairTraffic>>& v, std::vector<std::pair<std::uint64_t, PairTraffic>>& scratch) {
  constexpr std::size_t kSmall = 256;
  const auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
  if (v.size() < kSmall) {
    std::stable_sort(v.begin(), v.end(), by_key);
    return;
  }
  std::uint64_t dst_bits = 0;
  std::uint64_t src_bits = 0;
  std::uint64_t last_src = 0;
  for (const auto& x : v) {
    dst_bits |= x.first & 0xFFFFFFFFU;
    src_bits |= x.first >> 32U;
    last_src = std::max(last_src, x.first >> 32U);
  }
  scratch.resize(v.size());
  if (last_src < v.size()) {
    thread_local std::vector<std::size_t> start;  // per source: where its entries go
    start.assign(last_src + 2, 0);
    for (const auto& x : v) ++start[(x.first >> 32U) + 1];
    for (std::size_t src = 1; src < start.size(); ++src) start[src] += start[src - 1];
    for (const auto& x : v) scratch[start[x.first >> 32U]++] = x;
    v.swap(scratch);
    // start[src] is now where source src + 1 begins: each source's run, sorted by destination.
    constexpr std::ptrdiff_t kInsertion = 16;
    auto from = v.begin();
    for (std::size_t src = 0; src <= last_src; ++src) {
      const auto to = v.begin() + static_cast<std::ptrdiff_t>(start[src]);
      if (to - from > kInsertion) {
        std::stable_sort(from, to, by_key);
      } else {
        for (auto it = from; it != to; ++it) {
          for (auto at = it; at != from && by_key(*at, *(at - 1)); --at) std::iter_swap(at, at - 1);
        }
      }
      from = to;
    }
    return;
  }
  const auto dst_width = static_cast<unsigned>(std::bit_width(dst_bits));
  const unsigned width = dst_width + static_cast<unsigned>(std::bit_width(src_bits));
  const auto packed = [dst_width](std::uint64_t key) { return ((key >> 32U) << dst_width) | (key & 0xFFFFFFFFU); };
  constexpr unsigned kDigitBits = 11;
  constexpr std::size_t kDigits = std::size_t{1} << kDigitBits;
  for (unsigned shift = 0; shift < width; shift += kDigitBits) {
    std::array<std::size_t, kDigits> start{};
    for (const auto& x : v) ++start[(packed(x.first) >> shift) & (kDigits - 1)];
    std::size_t sum = 0;
    for (std::size_t& c : start) sum += std::exchange(c, sum);
    for (const auto& x : v) scratch[start[(packed(x.first) >> shift) & (kDigits - 1)]++] = x;
    v.swap(scratch);
  }
}

std::string format_seconds(double t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", t);
  return buf;
}

}  // namespace

std::size_t Timeline::bin_of(double t) const {
  if (!(t > begin_s) || bin_count == 0) return 0;
  const double pos = std::floor(bin_position(t - begin_s, interval_s));
  if (!(pos < static_cast<double>(bin_count - 1))) return bin_count - 1;
  return static_cast<std::size_t>(pos);
}

double Timeline::bin_width_s(std::size_t bin) const {
  const double lo = static_cast<double>(bin) * interval_s;
  if (bin + 1 < bin_count) return interval_s;
  return std::max(0.0, std::min(end_s - begin_s, lo + interval_s) - lo);
}

Timeline::BinTime Timeline::bin_time(std::size_t bin, EntityIndex e) const {
  const double width = bin_width_s(bin) * (members.empty() ? 1.0 : static_cast<double>(members[e]));
  // The one split (time_split.hpp); no-state time was added to busy_s already when gaps count
  // as computing, so the rest stays out of the three.
  const TimeSplit split = split_time(busy_s[bin * entity_count() + e], comm_at(bin, e), idle_at(bin, e), width, false);
  return BinTime{split.computing_s, split.communicating_s, split.waiting_s};
}

void Timeline::busy_fractions(std::size_t bin, std::span<double> out) const {
  const std::size_t n = entity_count();
  KANOKO_ASSERT(out.size() == n, "busy_fractions needs one value per entity");
  const double width = bin_width_s(bin);
  if (!(width > 0)) {
    std::fill(out.begin(), out.end(), 0.0);
    return;
  }
  const double* busy = busy_s.data() + bin * n;
  for (std::size_t e = 0; e < n; ++e) {
    // As bin_time: the bin's width times the entity's members.
    const double span = width * (members.empty() ? 1.0 : static_cast<double>(members[e]));
    out[e] = computing_within(busy[e], span) / width;
  }
}

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matching with one backtrack point (the last `*`): linear in practice, never
  // exponential.
  std::size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || (pattern[p] != '*' && pattern[p] == text[t]))) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

StateClassifier::StateClassifier(const std::vector<std::string>& computing,
                                 const std::vector<std::string>& communicating, const std::vector<std::string>& idle,
                                 bool mpi_call_table)
    : mpi_call_table_(mpi_call_table) {
  const std::pair<const std::vector<std::string>*, StateCategory> lists[] = {
      {&computing, StateCategory::Computing},
      {&communicating, StateCategory::Communicating},
      {&idle, StateCategory::Idle}};
  for (const auto& [list, category] : lists) {
    for (const std::string& name : *list) {
      uses_[static_cast<std::size_t>(category)] = true;
      if (name.find_first_of("*?") == std::string::npos) {
        exact_.emplace(name, category);  // the first list naming it wins (the mapping refuses repeats)
      } else {
        const auto literals = static_cast<std::size_t>(
            std::count_if(name.begin(), name.end(), [](char c) { return c != '*' && c != '?'; }));
        patterns_.push_back({name, literals, category});
      }
    }
  }
  std::stable_sort(patterns_.begin(), patterns_.end(),
                   [](const Pattern& a, const Pattern& b) { return a.literals > b.literals; });
  if (exact_.size() <= kShortList) {
    // In the lists' order, so that the first list naming a state still wins.
    for (const auto& [list, category] : lists) {
      for (const std::string& name : *list) {
        const auto it = exact_.find(name);
        const bool first = it != exact_.end() && it->second == category &&
                           std::none_of(exact_list_.begin(), exact_list_.end(), [&](const auto& e) { return e.first == name; });
        if (first) exact_list_.emplace_back(name, category);
      }
    }
    exact_.clear();
  }
}

StateCategory StateClassifier::classify(std::string_view name) {
  for (const auto& [exact, category] : exact_list_) {
    if (exact == name) return category;
  }
  if (!exact_.empty()) {
    if (const auto it = exact_.find(name); it != exact_.end()) return it->second;
  }
  if (patterns_.empty() && !mpi_call_table_) return StateCategory::None;
  if (const StateCategory* seen = recent_.find(name)) return *seen;
  if (const auto it = cache_.find(name); it != cache_.end()) {
    recent_.remember(name, it->second);
    return it->second;
  }
  StateCategory found = StateCategory::None;
  for (const Pattern& p : patterns_) {
    if (glob_match(p.glob, name)) {
      found = p.category;
      break;
    }
  }
  if (found == StateCategory::None && mpi_call_table_) {
    // The table says which MPI time is communicating or waiting; what is computing is the lists'
    // say (a mapping that lists other computing states does not get `compute` too).
    const StateCategory c = mpi_call_category(name);
    if (c != StateCategory::Computing) found = c;
  }
  // State names are few (function or state names), so the cache stays small; a trace with
  // millions of distinct names stops caching rather than growing without bound.
  if (cache_.size() < (std::size_t{1} << 16U)) cache_.emplace(std::string(name), found);
  return found;
}

bool gaps_are_computing(std::uint64_t states, std::uint64_t computing_states) {
  return states > 0 && computing_states == 0;
}

TimelineBuilder::TimelineBuilder(TimelineOptions options)
    : options_(std::move(options)),
      classifier_(options_.busy_states, options_.communicating_states, options_.idle_states, options_.mpi_call_table),
      bins_(options_.interval_s) {
  KANOKO_ASSERT(options_.interval_s > 0, "interval must be positive (validated by the mapping)");
  tl_.interval_s = options_.interval_s;
  tl_.pair_begin.push_back(0);
  // At most one record per message: reserved (address space; pages are touched as records come)
  // instead of grown by doubling, which copied hundreds of MB at 10,000 ranks.
  tl_.pairs.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(options_.expected_messages, kMaxReservedPairs)));
  recent_pairs_.resize(std::size_t{1} << kRecentPairBits);
  compact_at_ = kMinCompaction;
  if (options_.known_end_s && *options_.known_end_s > 0) {
    const double planned = std::ceil(bin_position(*options_.known_end_s, tl_.interval_s));
    if (planned <= static_cast<double>(kMaxBins)) planned_bins_ = static_cast<std::size_t>(planned);
  }
}

bool TimelineBuilder::fits(std::size_t bins, std::size_t entities) {
  return bins <= kMaxBins && (entities == 0 || bins <= kMaxCells / entities);
}

void TimelineBuilder::check_size(std::size_t bins, std::size_t entities) const {
  if (fits(bins, entities)) return;
  throw InputError(FileLoc{}, "the trace is too long for an interval of " + format_seconds(tl_.interval_s) +
                                  " s: " + std::to_string(entities) + " nodes over " + std::to_string(bins) +
                                  "+ intervals, where at most " + std::to_string(kMaxBins) + " intervals and " +
                                  std::to_string(kMaxCells) +
                                  " node-intervals are expected; use a larger 'interval' in the mapping");
}

std::size_t TimelineBuilder::bin_index(double t) const {
  if (!(t > 0)) return 0;
  const double pos = bins_.floor_position(t);
  if (!(pos < static_cast<double>(kMaxBins))) check_size(kMaxBins + 1, tl_.entity_count());
  return static_cast<std::size_t>(pos);
}

std::size_t TimelineBuilder::bins_covering(double t) const {
  if (!(t > 0)) return 0;
  const double pos = bins_.ceil_position(t);
  if (!(pos <= static_cast<double>(kMaxBins))) check_size(kMaxBins + 1, tl_.entity_count());
  return static_cast<std::size_t>(pos);
}

std::vector<double>& TimelineBuilder::seconds_of(StateCategory c) {
  switch (c) {
    case StateCategory::Communicating: return tl_.comm_s;
    case StateCategory::Idle: return tl_.idle_s;
    default: return tl_.busy_s;
  }
}

std::vector<std::vector<double>*> TimelineBuilder::per_bin_arrays() {
  std::vector<std::vector<double>*> out{&tl_.busy_s};
  if (has_load_) out.push_back(&tl_.load);
  if (has_comm_) out.push_back(&tl_.comm_s);
  if (has_idle_) out.push_back(&tl_.idle_s);
  return out;
}

void TimelineBuilder::ensure_bins(std::size_t count) {
  if (count <= tl_.bin_count) return;
  const std::size_t n = tl_.entity_count();
  check_size(count, n);
  tl_.bin_count = count;
  // With the end known (a read after a survey), the arrays are reserved whole, once: grown by
  // doubling they were allocated, zeroed and copied about twice over (a quarter of the replayed
  // read of a 1 GB trace at 10,000 ranks, most of it the kernel clearing fresh pages). Only
  // reserved: the pages are touched as the bins are reached, and an entity declared late still
  // re-lays only the bins so far.
  const std::size_t whole = fits(planned_bins_, n) ? planned_bins_ * n : 0;
  const auto arrays = per_bin_arrays();
  for (auto* v : arrays) {
    if (whole > v->capacity()) v->reserve(whole);
    v->resize(count * n, 0.0);
  }
  // A big timeline (hundreds of MB at 10,000 ranks) has its pages mapped ahead on a core the
  // reading leaves idle: the kernel clearing them was half of this thread's time.
  if (whole > 0 && !prefault_considered_) {
    prefault_considered_ = true;
    std::vector<Prefaulter::Range> ranges{{tl_.pairs.data(), tl_.pairs.capacity() * sizeof(PairTraffic)}};
    std::size_t bytes = ranges[0].bytes;
    for (const auto* v : arrays) {
      ranges.push_back({v->data(), v->capacity() * sizeof(double)});
      bytes += ranges.back().bytes;
    }
    if (bytes >= kPrefaultFrom) prefault_ = std::make_unique<Prefaulter>(std::move(ranges));
  }
  if (prefault_) {
    for (std::size_t i = 0; i < arrays.size(); ++i) prefault_->filled(i + 1, arrays[i]->size() * sizeof(double));
  }
}

void TimelineBuilder::on_entity(const Entity& e) {
  KANOKO_ASSERT(e.index == tl_.entities.size(), "entities must arrive in index order");
  // Entities are declared before the per-bin arrays grow, in the usual case; if a trace declares
  // one later, re-lay the arrays with the new stride.
  const std::size_t old_n = tl_.entity_count();
  check_size(tl_.bin_count, old_n + 1);
  tl_.entities.push_back(e);
  last_load_time_s_.push_back(0);
  last_load_value_.push_back(0);
  first_seen_s_.push_back(std::numeric_limits<double>::infinity());
  if (tl_.bin_count > 0) {
    const std::size_t n = tl_.entity_count();
    for (auto* v : per_bin_arrays()) {
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

void TimelineBuilder::forget_recent_pairs() {
  if (++epoch_ == 0) {  // wrapped: no old entry may pass for current
    for (RecentPair& r : recent_pairs_) r.epoch = 0;
    epoch_ = 1;
  }
}

void TimelineBuilder::merge_open_pairs() {
  // Sorted stably, so that a pair's entries add in the order its messages came. (The amounts are
  // whole numbers, so any order gives the same sums below 2^53 bytes.)
  sort_pairs(open_pairs_, sort_scratch_);
  std::size_t kept = 0;
  for (std::size_t k = 0; k < open_pairs_.size(); ++k) {
    if (kept > 0 && open_pairs_[kept - 1].first == open_pairs_[k].first) {
      open_pairs_[kept - 1].second.bytes += open_pairs_[k].second.bytes;
      open_pairs_[kept - 1].second.messages += open_pairs_[k].second.messages;
    } else {
      open_pairs_[kept++] = open_pairs_[k];
    }
  }
  open_pairs_.resize(kept);
  forget_recent_pairs();  // the entries moved
}

void TimelineBuilder::flush_traffic_until(std::size_t bin) {
  // Close every bin before `bin`: the open one gets its pairs, the ones after it none.
  while (open_bin_ < bin) {
    merge_open_pairs();
    for (const auto& [key, traffic] : open_pairs_) tl_.pairs.push_back(traffic);
    open_pairs_.clear();
    compact_at_ = kMinCompaction;
    tl_.pair_begin.push_back(tl_.pairs.size());
    ++open_bin_;
    if (prefault_) prefault_->filled(0, tl_.pairs.size() * sizeof(PairTraffic));
  }
}

void TimelineBuilder::seen(EntityIndex e, double t) {
  if (e < first_seen_s_.size()) first_seen_s_[e] = std::min(first_seen_s_[e], t);
}

void TimelineBuilder::on_message(const Message& m) {
  close_states_until(m.send_s);
  seen(m.src, m.send_s);
  seen(m.dst, m.recv_s >= 0 ? m.recv_s : m.send_s);
  const std::size_t bin = bin_index(m.send_s);
  ensure_bins(bin + 1);
  flush_traffic_until(bin);
  const std::uint64_t key = (std::uint64_t{m.src} << 32U) | m.dst;
  // The pair's entry if it was seen lately in this bin, else a new one. Only the open bin's pairs
  // are held, so memory follows active pairs, not the whole run: entries that pass compact_at_
  // are merged (at most twice the bin's pairs, plus kMinCompaction). A hash index over the bin's
  // pairs took an eighth of the timeline's time at 10,000 ranks, where most pairs send once a bin.
  RecentPair* recent = &recent_pairs_[fibonacci_slot(key, kRecentPairBits)];
  if (recent->epoch != epoch_ || recent->key != key) {
    if (open_pairs_.size() >= compact_at_) {
      merge_open_pairs();
      compact_at_ = std::max(kMinCompaction, 2 * open_pairs_.size());
    }
    *recent = RecentPair{key, static_cast<std::uint32_t>(open_pairs_.size()), epoch_};
    open_pairs_.push_back({key, PairTraffic{m.src, m.dst, 0.0, 0}});
  }
  PairTraffic& traffic = open_pairs_[recent->slot].second;
  traffic.bytes += static_cast<double>(m.bytes);
  traffic.messages += 1;
  ++tl_.message_count;
}

void TimelineBuilder::add_interval(std::vector<double>& per_bin, EntityIndex e, double begin_s, double end_s,
                                   double weight) {
  if (!(end_s > begin_s)) return;
  const double w = tl_.interval_s;
  // [begin, end) touches bins first..last; an end exactly on a boundary does not touch the next.
  const std::size_t first = bin_index(begin_s);
  const std::size_t covering = bins_covering(end_s);
  if (covering <= first) return;  // within rounding of a boundary: nothing to add
  const std::size_t last = covering - 1;
  ensure_bins(last + 1);
  const std::size_t n = tl_.entity_count();
  for (std::size_t b = first; b <= last; ++b) {
    // Interior boundaries are b·w; the ends are the interval's own, so the pieces add up to
    // end - begin however the boundaries round.
    const double lo = b == first ? begin_s : static_cast<double>(b) * w;
    const double hi = b == last ? end_s : static_cast<double>(b + 1) * w;
    if (hi > lo) per_bin[b * n + e] += weight * (hi - lo);
  }
}

void TimelineBuilder::integrate_load(EntityIndex e, double until_s) {
  add_interval(tl_.load, e, last_load_time_s_[e], until_s, last_load_value_[e]);
  last_load_time_s_[e] = std::max(last_load_time_s_[e], until_s);
}

void TimelineBuilder::close_states_until(double now_s) {
  const auto later_end = [](const OpenState& a, const OpenState& b) { return a.end_s > b.end_s; };
  while (!open_states_.empty() && open_states_.front().end_s <= now_s) {
    std::pop_heap(open_states_.begin(), open_states_.end(), later_end);
    const OpenState s = open_states_.back();
    open_states_.pop_back();
    add_interval(seconds_of(s.category), s.entity, s.begin_s, s.end_s, 1.0);
  }
}

void TimelineBuilder::on_load(const LoadSample& s) {
  close_states_until(s.time_s);
  seen(s.entity, s.time_s);
  if (!has_load_) {
    // The load array appears with the first sample: most traces have none (a trace of 10,000
    // ranks binned into 1,000 intervals would otherwise clear 80 MB of zeros for it).
    has_load_ = true;
    tl_.load.assign(tl_.bin_count * tl_.entity_count(), 0.0);
  }
  integrate_load(s.entity, s.time_s);
  last_load_value_[s.entity] = s.value;
  ++tl_.load_sample_count;
}

void TimelineBuilder::on_state(const StateInterval& s) {
  close_states_until(s.begin_s);
  ++tl_.state_count;
  seen(s.entity, s.begin_s);
  if (!(s.end_s > s.begin_s)) return;
  const StateCategory category = classifier_.classify(s.name);
  if (category == StateCategory::None) return;
  if (category == StateCategory::Computing) ++computing_states_;
  // The communicating and idle arrays appear with the first state that needs them.
  bool& has = category == StateCategory::Communicating ? has_comm_ : has_idle_;
  if (category != StateCategory::Computing && !has) {
    has = true;
    seconds_of(category).assign(tl_.bin_count * tl_.entity_count(), 0.0);
  }
  if (options_.known_end_s) {
    add_interval(seconds_of(category), s.entity, s.begin_s, std::min(s.end_s, *options_.known_end_s), 1.0);
    return;
  }
  // Added once the clock passes its end, so that a state running past the end of the run is cut
  // there and never grows the arrays beyond it.
  open_states_.push_back(OpenState{s.begin_s, s.end_s, s.entity, category});
  std::push_heap(open_states_.begin(), open_states_.end(),
                 [](const OpenState& a, const OpenState& b) { return a.end_s > b.end_s; });
}

void TimelineBuilder::on_collective(const Collective& c) {
  seen(c.entity, c.begin_s);
  if (c.group.empty()) return;
  const MpiCall* call = find_mpi_call(c.name);
  const CollectiveKind kind = call != nullptr && call->collective != CollectiveKind::None ? call->collective
                                                                                          : CollectiveKind::AllToAll;
  collective_parts_[std::string(c.group)].push_back(CollectivePart{c.begin_s, c.entity, c.root, c.bytes, kind});
}

void TimelineBuilder::add_gaps_as_computing() {
  const std::size_t n = tl_.entity_count();
  for (EntityIndex e = 0; e < n; ++e) {
    const double from = first_seen_s_[e];
    if (!(from < tl_.end_s)) continue;
    for (std::size_t b = bin_index(from); b < tl_.bin_count; ++b) {
      const double lo = std::max(from, static_cast<double>(b) * tl_.interval_s);
      const double hi = b + 1 < tl_.bin_count ? static_cast<double>(b + 1) * tl_.interval_s : tl_.end_s;
      const std::size_t cell = b * n + e;
      // Nested states may cover a bin more than once: the gap is never negative.
      const double covered = tl_.busy_s[cell] + tl_.comm_at(b, e) + tl_.idle_at(b, e);
      tl_.busy_s[cell] += std::max(0.0, (hi - lo) - covered);
    }
  }
}

void TimelineBuilder::add_collective_traffic() {
  struct Edge {
    std::size_t bin;
    EntityIndex src;
    EntityIndex dst;
    std::uint64_t bytes;
  };
  std::vector<Edge> edges;
  for (auto& [group, parts] : collective_parts_) {
    if (parts.size() < 2) continue;
    ++tl_.collectives;
    std::sort(parts.begin(), parts.end(), [](const CollectivePart& a, const CollectivePart& b) {
      return std::tie(a.entity, a.begin_s) < std::tie(b.entity, b.begin_s);
    });
    double last_arrival_s = 0;
    for (const CollectivePart& p : parts) last_arrival_s = std::max(last_arrival_s, p.begin_s);
    const std::size_t bin = std::min(bin_index(last_arrival_s), tl_.bin_count - 1);
    const CollectivePart& first = parts.front();
    const auto root = std::find_if(parts.begin(), parts.end(), [&](const CollectivePart& p) {
      return first.root >= 0 && p.entity == static_cast<EntityIndex>(first.root);
    });
    const bool rooted = first.kind != CollectiveKind::AllToAll && root != parts.end();
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const CollectivePart& p = parts[i];
      if (!rooted) {
        const CollectivePart& next = parts[(i + 1) % parts.size()];
        if (next.entity != p.entity) edges.push_back({bin, p.entity, next.entity, p.bytes});
      } else if (p.entity != root->entity) {
        if (first.kind == CollectiveKind::ToRoot) edges.push_back({bin, p.entity, root->entity, p.bytes});
        else edges.push_back({bin, root->entity, p.entity, root->bytes});
      }
    }
  }
  collective_parts_.clear();
  if (edges.empty()) return;
  tl_.collective_messages = edges.size();
  std::sort(edges.begin(), edges.end(),
            [](const Edge& a, const Edge& b) { return std::tie(a.bin, a.src, a.dst) < std::tie(b.bin, b.src, b.dst); });
  // Merge into the per-bin lists, both sorted by (src, dst).
  std::vector<PairTraffic> merged;
  std::vector<std::size_t> begin{0};
  merged.reserve(tl_.pairs.size() + edges.size());
  std::size_t k = 0;
  for (std::size_t b = 0; b < tl_.bin_count; ++b) {
    const auto add = [&](const PairTraffic& t) {
      if (merged.size() > begin.back() && merged.back().src == t.src && merged.back().dst == t.dst) {
        merged.back().bytes += t.bytes;
        merged.back().messages += t.messages;
      } else {
        merged.push_back(t);
      }
    };
    std::vector<PairTraffic> bin_pairs(tl_.pairs.begin() + static_cast<std::ptrdiff_t>(tl_.pair_begin[b]),
                                       tl_.pairs.begin() + static_cast<std::ptrdiff_t>(tl_.pair_begin[b + 1]));
    for (; k < edges.size() && edges[k].bin == b; ++k) {
      bin_pairs.push_back(PairTraffic{edges[k].src, edges[k].dst, static_cast<double>(edges[k].bytes), 1});
    }
    std::stable_sort(bin_pairs.begin(), bin_pairs.end(), [](const PairTraffic& x, const PairTraffic& y) {
      return std::tie(x.src, x.dst) < std::tie(y.src, y.dst);
    });
    for (const PairTraffic& t : bin_pairs) add(t);
    begin.push_back(merged.size());
  }
  tl_.pairs = std::move(merged);
  tl_.pair_begin = std::move(begin);
}

void TimelineBuilder::on_end(double end_s) {
  KANOKO_ASSERT(!ended_, "on_end called twice");
  if (options_.known_end_s && end_s != *options_.known_end_s) {
    throw InputError(FileLoc{}, "the trace ends at " + format_seconds(end_s) + " s where the read before had it end at " +
                                    format_seconds(*options_.known_end_s) + " s: did it change while it was read?");
  }
  ended_ = true;
  prefault_.reset();  // the filling is over (and the pair records may be shrunk below)
  tl_.begin_s = 0;
  tl_.end_s = end_s;
  const std::size_t bins = std::max<std::size_t>(1, bins_covering(end_s));
  ensure_bins(bins);
  close_states_until(end_s);
  for (const OpenState& s : open_states_) {
    add_interval(seconds_of(s.category), s.entity, s.begin_s, std::min(s.end_s, end_s), 1.0);
  }
  open_states_.clear();
  if (has_load_) {
    for (EntityIndex e = 0; e < tl_.entity_count(); ++e) integrate_load(e, end_s);
  }
  flush_traffic_until(tl_.bin_count);
  const std::size_t n = tl_.entity_count();
  if (tl_.bin_count > bins) {
    // Only a message sent exactly at the end can open a bin past it: fold that traffic into the
    // last bin. Loads and busy time past the end are zero by construction.
    const std::size_t from = tl_.pair_begin[bins - 1];
    std::vector<PairTraffic> tail(tl_.pairs.begin() + static_cast<std::ptrdiff_t>(from), tl_.pairs.end());
    std::stable_sort(tail.begin(), tail.end(), [](const PairTraffic& a, const PairTraffic& b) {
      return std::tie(a.src, a.dst) < std::tie(b.src, b.dst);
    });
    tl_.pairs.resize(from);
    for (const PairTraffic& p : tail) {
      if (tl_.pairs.size() > from && tl_.pairs.back().src == p.src && tl_.pairs.back().dst == p.dst) {
        tl_.pairs.back().bytes += p.bytes;
        tl_.pairs.back().messages += p.messages;
      } else {
        tl_.pairs.push_back(p);
      }
    }
    tl_.pair_begin.resize(bins + 1);
    tl_.pair_begin[bins] = tl_.pairs.size();
    tl_.bin_count = bins;
    for (auto* v : per_bin_arrays()) v->resize(bins * n);
  }
  add_collective_traffic();
  if (tl_.pairs.capacity() > 2 * tl_.pairs.size() + 4096) tl_.pairs.shrink_to_fit();  // reserved for more messages than pairs
  const bool gaps = options_.gaps == GapPolicy::Computing ||
                    (options_.gaps == GapPolicy::Auto && gaps_are_computing(tl_.state_count, computing_states_));
  if (gaps) {
    add_gaps_as_computing();
    tl_.gaps_counted_as_computing = true;
  }
  // Loads were integrated as value × seconds; turn them into time means per bin (the last bin
  // may be partial). A bin of no width (a run that ends at 0) takes the value in effect.
  for (std::size_t b = 0; has_load_ && b < tl_.bin_count; ++b) {
    const double width = tl_.bin_width_s(b);
    for (std::size_t e = 0; e < n; ++e) {
      double& v = tl_.load[b * n + e];
      v = width > 0 ? v / width : last_load_value_[e];
    }
  }
}

Timeline TimelineBuilder::take() {
  KANOKO_ASSERT(ended_, "take() before on_end");
  return std::move(tl_);
}

}  // namespace kanoko::trace
