#include "src/views/trace_index.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "src/base/background.hpp"
#include "src/base/check.hpp"
#include "src/base/error.hpp"
#include "src/trace/readers.hpp"
#include "src/views/draw.hpp"

namespace kanoko::views {

const char* class_name(StateClass c) {
  switch (c) {
    case StateClass::Busy: return "busy";
    case StateClass::Overhead: return "overhead";
    case StateClass::Idle: return "idle";
    case StateClass::None: return "no state";
  }
  return "?";
}

namespace {

/// The view class of a timeline category; None has none (the caller decides).
StateClass class_of(trace::StateCategory c) {
  switch (c) {
    case trace::StateCategory::Computing: return StateClass::Busy;
    case trace::StateCategory::Communicating: return StateClass::Overhead;
    default: return StateClass::Idle;
  }
}

// Adds the traffic of `from` into the sorted list `into`.
void merge_traffic(std::vector<PairAgg>& into, const std::vector<PairAgg>& from) {
  if (from.empty()) return;
  std::vector<PairAgg> merged;
  merged.reserve(into.size() + from.size());
  auto a = into.begin();
  auto b = from.begin();
  const auto key = [](const PairAgg& p) { return (std::uint64_t{p.src} << 32U) | p.dst; };
  while (a != into.end() || b != from.end()) {
    if (b == from.end() || (a != into.end() && key(*a) < key(*b))) {
      merged.push_back(*a++);
    } else if (a == into.end() || key(*b) < key(*a)) {
      merged.push_back(*b++);
    } else {
      PairAgg sum = *a++;
      sum.messages += b->messages;
      sum.bytes += b->bytes;
      ++b;
      merged.push_back(sum);
    }
  }
  into = std::move(merged);
}

void add_traffic(std::vector<PairAgg>& list, EntityIndex src, EntityIndex dst, std::uint64_t bytes) {
  const auto key = [](EntityIndex s, EntityIndex d) { return (std::uint64_t{s} << 32U) | d; };
  const std::uint64_t k = key(src, dst);
  auto it = std::lower_bound(list.begin(), list.end(), k,
                             [&](const PairAgg& p, std::uint64_t v) { return key(p.src, p.dst) < v; });
  if (it == list.end() || it->src != src || it->dst != dst) it = list.insert(it, PairAgg{src, dst, 0, 0});
  ++it->messages;
  it->bytes += bytes;
}

}  // namespace

trace::StateClassifier ClassRules::classifier() const {
  const trace::StateDefaults& d = trace::format_facts(format).states;
  return trace::StateClassifier(busy.empty() ? d.computing : busy, overhead.empty() ? d.communicating : overhead,
                                idle.empty() ? d.idle : idle);
}

// ------------------------------------------------------------------------------------------
// Queries
// ------------------------------------------------------------------------------------------

std::size_t TraceIndex::bin_of(double t) const {
  if (bin_count == 0 || !(bin_width_s > 0)) return 0;
  const double x = std::floor((t - begin_s) / bin_width_s);
  if (!(x > 0)) return 0;
  if (x >= static_cast<double>(bin_count - 1)) return bin_count - 1;
  return static_cast<std::size_t>(x);
}

namespace {

// The named seconds of [t0, t1) as the one split (trace::split_time) makes them.
ClassSeconds with_gap(const ClassSeconds& named, double t0, double t1, bool gaps_computing) {
  const trace::TimeSplit s = trace::split_time(named[0], named[1], named[2], t1 - t0, gaps_computing);
  return {s.computing_s, s.communicating_s, s.waiting_s};
}

}  // namespace

ClassSeconds TraceIndex::class_time(EntityIndex e, double t0, double t1) const {
  if (!detail_complete) return class_time_from_bins(e, t0, t1);
  ClassSeconds out{};
  if (!(t1 > t0) || e >= entity_count()) return out;
  const auto& segs = segments[e];
  auto it = std::upper_bound(segs.begin(), segs.end(), t0,
                             [](double t, const Segment& s) { return t < s.end_s; });
  for (; it != segs.end() && it->begin_s < t1; ++it) {
    const double overlap = std::min(t1, it->end_s) - std::max(t0, it->begin_s);
    if (overlap > 0) out[cls_index(it->cls)] += overlap;
  }
  return with_gap(out, t0, t1, gaps_computing);
}

ClassSeconds TraceIndex::class_time_from_bins(EntityIndex e, double t0, double t1) const {
  ClassSeconds out{};
  if (!(t1 > t0) || e >= entity_count() || bin_count == 0) return out;
  const auto& bins = bin_class_s[e];
  for (std::size_t b = bin_of(t0); b < bin_count; ++b) {
    const double b0 = begin_s + static_cast<double>(b) * bin_width_s;
    if (b0 >= t1) break;
    // The bin's time lies within the run: a bin the end cuts spreads it over its part before the end.
    const double b1 = end_s > b0 ? std::min(b0 + bin_width_s, end_s) : b0 + bin_width_s;
    const double overlap = std::min(t1, b1) - std::max(t0, b0);
    if (overlap <= 0) continue;
    const double frac = overlap / (b1 - b0);
    for (std::size_t c = 0; c < kClassCount; ++c) out[c] += bins[b * kClassCount + c] * frac;
  }
  return with_gap(out, t0, t1, gaps_computing);
}

trace::TimeSplit TraceIndex::split(EntityIndex e, double t0, double t1) const {
  const ClassSeconds c = class_time(e, t0, t1);
  return trace::split_time(c[0], c[1], c[2], std::max(0.0, t1 - t0), false);
}

std::size_t TraceIndex::first_message_at(double t) const {
  return static_cast<std::size_t>(
      std::lower_bound(messages.begin(), messages.end(), t,
                       [](const MessageRecord& m, double v) { return m.send_s < v; }) -
      messages.begin());
}

std::int64_t TraceIndex::find_entity(const std::string& text) const {
  for (const auto& e : entities) {
    if (e.name == text) return e.index;
  }
  std::int64_t value = -1;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc{} && ptr == text.data() + text.size() && value >= 0 &&
      value < static_cast<std::int64_t>(entity_count())) {
    return value;
  }
  return -1;
}

// ------------------------------------------------------------------------------------------
// Builder
// ------------------------------------------------------------------------------------------

struct TraceIndexBuilder::Impl {
  // A state not yet over: the innermost (last begun) open state of an entity owns the time.
  struct Open {
    double begin_s;
    double end_s;
    std::uint16_t name;
    StateClass cls;
  };

  IndexOptions options;
  trace::StateClassifier classifier;
  TraceIndex ix;
  std::vector<bool> classified;             // per state name: a rule classes it
  std::uint64_t states = 0;                 // state entries (not collectives)
  std::uint64_t busy_states = 0;            // of them, classed busy
  std::size_t bins = 0;                          // number of bins in use (fixed unless shrunk)
  std::vector<std::vector<Open>> open;           // per entity, in begin order
  std::vector<double> cursor;                    // per entity: time up to which states are settled
  std::unordered_map<std::string, std::uint16_t> name_ids;
  std::size_t detail_records = 0;
  double observed_end_s = 0;
  bool ended = false;
  IndexProgress* progress = nullptr;
  std::uint64_t records = 0;
  double latest_s = 0;

  // Counts a record at time t; every kIndexProgressStride records publishes the progress and
  // honours a cancel.
  void tick(double t) {
    if (std::isfinite(t) && t > latest_s) latest_s = t;
    if (++records % kIndexProgressStride != 0 || progress == nullptr) return;
    publish();
  }
  void publish() {
    progress->records.store(records, std::memory_order_relaxed);
    progress->trace_time_s.store(latest_s, std::memory_order_relaxed);
    if (progress->cancel.load(std::memory_order_relaxed)) throw IndexBuildCancelled();
  }

  explicit Impl(IndexOptions o) : options(std::move(o)), classifier(options.rules.classifier()) {
    bins = std::max<std::size_t>(16, options.bins);
    ix.bin_width_s = 1e-6;
    ix.bin_count = bins;
    ix.bin_traffic.resize(bins);
  }

  double coverage_end() const { return ix.begin_s + ix.bin_width_s * static_cast<double>(bins); }

  // Merges groups of 2^shift bins: the width grows by 2^shift. With `shrink` (shift 1), the bin
  // count halves instead and the coverage stays.
  void merge_bins(unsigned shift, bool shrink) {
    const std::size_t kept = shrink ? bins / 2 : bins;
    const auto target = [&](std::size_t b) { return shift >= 63U ? std::size_t{0} : b >> shift; };
    for (auto& per_entity : ix.bin_class_s) {
      std::vector<double> merged(kept * kClassCount, 0.0);
      for (std::size_t b = 0; b < bins; ++b) {
        for (std::size_t c = 0; c < kClassCount; ++c) merged[target(b) * kClassCount + c] += per_entity[b * kClassCount + c];
      }
      per_entity = std::move(merged);
    }
    std::vector<std::vector<PairAgg>> traffic(kept);
    for (std::size_t b = 0; b < bins; ++b) merge_traffic(traffic[target(b)], ix.bin_traffic[b]);
    ix.bin_traffic = std::move(traffic);
    if (!shrink) ix.bin_width_s = std::ldexp(ix.bin_width_s, static_cast<int>(shift));
    else ix.bin_width_s *= 2;
    bins = kept;
    ix.bin_count = bins;
  }

  void cover(double t) {
    if (!std::isfinite(t) || t <= coverage_end()) return;
    unsigned shift = 0;
    double reach = coverage_end() - ix.begin_s;
    while (ix.begin_s + reach < t && shift < 2000U) {
      reach *= 2;
      ++shift;
    }
    merge_bins(shift, false);
  }

  void add_to_bins(EntityIndex e, double b, double end, StateClass cls) {
    cover(end);
    auto& per_entity = ix.bin_class_s[e];
    for (std::size_t k = ix.bin_of(b); k < bins; ++k) {
      const double k0 = ix.begin_s + static_cast<double>(k) * ix.bin_width_s;
      if (k0 >= end) break;
      const double overlap = std::min(end, k0 + ix.bin_width_s) - std::max(b, k0);
      if (overlap > 0) per_entity[k * kClassCount + cls_index(cls)] += overlap;
    }
  }

  void count_detail() {
    if (!ix.detail_complete) return;
    if (++detail_records <= options.max_detail_records) return;
    ix.detail_complete = false;
    std::vector<std::vector<Segment>>(ix.segments.size()).swap(ix.segments);
    std::vector<MessageRecord>().swap(ix.messages);
  }

  void emit(EntityIndex e, double b, double end, std::uint16_t name, StateClass cls) {
    if (!(end > b)) return;
    ix.totals[e].class_s[cls_index(cls)] += end - b;
    add_to_bins(e, b, end, cls);
    if (!ix.detail_complete) return;
    auto& segs = ix.segments[e];
    if (!segs.empty() && segs.back().name == name && segs.back().end_s == b) {
      segs.back().end_s = end;
      return;
    }
    count_detail();
    if (ix.detail_complete) segs.push_back(Segment{b, end, name, cls});
  }

  // Settles entity e's time up to t: the innermost open state owns each stretch.
  void advance(EntityIndex e, double t) {
    auto& stack = open[e];
    double& c = cursor[e];
    while (c < t) {
      while (!stack.empty() && stack.back().end_s <= c) stack.pop_back();
      if (stack.empty()) {
        c = t;
        break;
      }
      const Open top = stack.back();
      const double until = std::min(t, top.end_s);
      emit(e, c, until, top.name, top.cls);
      c = until;
    }
  }

  std::uint16_t name_id(std::string_view name, bool collective) {
    std::string key(name);
    if (collective) key.insert(0, "coll:");
    const auto it = name_ids.find(key);
    if (it != name_ids.end()) return it->second;
    if (ix.state_names.size() >= std::numeric_limits<std::uint16_t>::max()) {
      throw InputError(FileLoc{}, "more than 65535 distinct state names; the views cannot tell them apart");
    }
    const auto id = static_cast<std::uint16_t>(ix.state_names.size());
    const std::string plain(name);
    ix.state_names.push_back(plain);
    const trace::StateCategory category = classifier.classify(plain);
    ix.state_classes.push_back(class_of(category));
    classified.push_back(collective || category != trace::StateCategory::None);
    name_ids.emplace(std::move(key), id);
    return id;
  }

  void add_state(EntityIndex e, double b, double end, std::string_view name, bool collective) {
    KANOKO_ASSERT(e < open.size(), "state of an undeclared entity");
    ++ix.state_count;
    observed_end_s = std::max(observed_end_s, end);
    if (!collective) ++states;  // the timeline's state_count: also those of no duration
    b = std::max(b, cursor[e]);  // a reader that breaks time order only loses the overlap
    if (!(end > b)) return;
    const std::uint16_t id = name_id(name, collective);
    if (!classified[id]) return;  // its time is a gap, as in the timeline
    if (!collective && ix.state_classes[id] == StateClass::Busy) ++busy_states;
    advance(e, b);
    open[e].push_back(Open{b, end, id, ix.state_classes[id]});
  }
};

TraceIndexBuilder::TraceIndexBuilder(IndexOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
TraceIndexBuilder::~TraceIndexBuilder() = default;

void TraceIndexBuilder::set_progress(IndexProgress* progress) { impl_->progress = progress; }

void TraceIndexBuilder::on_entity(const trace::Entity& e) {
  auto& s = *impl_;
  s.tick(s.ix.begin_s);
  const std::size_t n = std::max<std::size_t>(s.ix.entities.size(), std::size_t{e.index} + 1);
  s.ix.entities.resize(n);
  s.ix.entities[e.index] = e;
  s.ix.segments.resize(n);
  s.ix.totals.resize(n);
  s.open.resize(n);
  s.cursor.resize(n, s.ix.begin_s);
  s.ix.bin_class_s.resize(n, std::vector<double>(s.bins * kClassCount, 0.0));
  while (n * s.bins > IndexOptions::kMaxBinCells && s.bins >= 32) s.merge_bins(1, true);
}

void TraceIndexBuilder::on_link(const trace::Link& /*l*/) {}
void TraceIndexBuilder::on_load(const trace::LoadSample& /*s*/) {}

void TraceIndexBuilder::on_message(const trace::Message& m) {
  auto& s = *impl_;
  KANOKO_ASSERT(m.src < s.ix.entity_count() && m.dst < s.ix.entity_count(), "message of an undeclared entity");
  s.tick(m.send_s);
  ++s.ix.message_count;
  s.observed_end_s = std::max({s.observed_end_s, m.send_s, m.recv_s});
  s.cover(m.send_s);
  add_traffic(s.ix.bin_traffic[s.ix.bin_of(m.send_s)], m.src, m.dst, m.bytes);
  auto& from = s.ix.totals[m.src];
  auto& to = s.ix.totals[m.dst];
  ++from.messages_sent;
  from.bytes_sent += m.bytes;
  ++to.messages_received;
  to.bytes_received += m.bytes;
  if (m.recv_s >= m.send_s) s.ix.max_latency_s = std::max(s.ix.max_latency_s, m.recv_s - m.send_s);
  s.count_detail();
  if (s.ix.detail_complete) s.ix.messages.push_back(MessageRecord{m.send_s, m.recv_s, m.src, m.dst, m.bytes});
}

void TraceIndexBuilder::on_state(const trace::StateInterval& st) {
  impl_->tick(st.begin_s);
  impl_->add_state(st.entity, st.begin_s, st.end_s, st.name, false);
}

void TraceIndexBuilder::on_collective(const trace::Collective& c) {
  impl_->tick(c.begin_s);
  impl_->add_state(c.entity, c.begin_s, c.end_s, c.name, true);
}

void TraceIndexBuilder::on_end(double end_s) {
  auto& s = *impl_;
  KANOKO_ASSERT(!s.ended, "on_end called twice");
  if (s.progress != nullptr) {
    s.publish();
    s.progress->finishing.store(true);
  }
  s.ended = true;
  s.ix.end_s = std::isfinite(end_s) && end_s > s.ix.begin_s ? end_s : std::max(s.ix.begin_s, s.observed_end_s);
  s.cover(s.ix.end_s);
  const trace::GapPolicy gaps = s.options.rules.gaps;
  const bool gaps_busy = gaps == trace::GapPolicy::Computing ||
                         (gaps == trace::GapPolicy::Auto && trace::gaps_are_computing(s.states, s.busy_states));
  s.ix.gaps_computing = gaps_busy;
  for (EntityIndex e = 0; e < s.ix.entity_count(); ++e) {
    s.advance(e, s.ix.end_s);
    auto& t = s.ix.totals[e];
    t.class_s = with_gap(t.class_s, s.ix.begin_s, s.ix.end_s, gaps_busy);
  }
  for (const auto& bin : s.ix.bin_traffic) merge_traffic(s.ix.matrix_total, bin);
  std::vector<std::vector<Impl::Open>>().swap(s.open);
}

TraceIndex TraceIndexBuilder::take() {
  KANOKO_ASSERT(impl_->ended, "take() before on_end");
  return std::move(impl_->ix);
}

TraceIndex build_trace_index(const std::filesystem::path& trace, const IndexOptions& options,
                             const std::string& format, IndexProgress* progress) {
  IndexOptions with_format = options;
  if (with_format.rules.format.empty()) {
    // An undetectable format is left to read_trace, which reports it.
    with_format.rules.format = format == "auto" ? trace::detect_format(trace) : format;
  }
  TraceIndexBuilder builder(std::move(with_format));
  builder.set_progress(progress);
  trace::read_trace(trace, builder, format);
  return builder.take();
}

// ------------------------------------------------------------------------------------------
// Progress and the background build
// ------------------------------------------------------------------------------------------

double IndexProgress::fraction() const {
  if (done.load()) return 1.0;
  const double b = expected_begin_s.load();
  const double e = expected_end_s.load();
  if (!std::isfinite(e) || !(e > b)) return finishing.load() ? 0.95 : -1.0;
  if (finishing.load()) return 0.95;
  return std::clamp((trace_time_s.load() - b) / (e - b), 0.0, 1.0) * 0.95;
}

std::string IndexProgress::text() const {
  const double f = fraction();
  const std::string count = format_count(static_cast<double>(records.load()));
  if (done.load()) return "trace indexed (" + count + " records)";
  if (f < 0) return "indexing trace: " + count + " records read";
  return "indexing trace: " + std::to_string(static_cast<int>(std::floor(100 * f))) + " % (" + count + " records)";
}

IndexBuildJob::IndexBuildJob(std::filesystem::path trace, IndexOptions options, std::string format,
                             double expected_end_s)
    : progress_(std::make_unique<IndexProgress>()) {
  progress_->expected_end_s.store(expected_end_s);
  IndexProgress* p = progress_.get();
  result_ = background_async([trace = std::move(trace), options = std::move(options),
                              format = std::move(format), p]() {
    struct MarkDone {
      IndexProgress* p;
      ~MarkDone() { p->done.store(true); }
    } mark{p};
    return build_trace_index(trace, options, format, p);
  });
}

IndexBuildJob::~IndexBuildJob() {
  if (result_.valid()) {
    cancel();
    result_.wait();
  }
}

bool IndexBuildJob::ready() const {
  return !result_.valid() || result_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

TraceIndex IndexBuildJob::take() {
  KANOKO_ASSERT(result_.valid(), "IndexBuildJob::take() called twice");
  return result_.get();
}

}  // namespace kanoko::views
