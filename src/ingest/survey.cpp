#include "src/ingest/survey.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>

#include "src/base/error.hpp"
#include "src/base/file_version.hpp"
#include "src/trace/markers.hpp"

namespace kanoko::ingest {

void EventHistogram::add(double t) {
  if (t >= fast_lo_s && t < fast_hi_s) {
    ++counts[fast_bin];
    return;
  }
  if (!(t >= 0) || !std::isfinite(t)) t = 0;
  // Coarsen by merging neighbours until t fits; events arrive in time order, so a coarsening
  // never has to split a bin.
  while (t >= width_s * static_cast<double>(kBins)) {
    for (std::size_t k = 0; k < kBins / 2; ++k) counts[k] = counts[2 * k] + counts[2 * k + 1];
    std::fill(counts.begin() + kBins / 2, counts.end(), 0);
    width_s *= 2;
  }
  const std::size_t k = std::min(kBins - 1, static_cast<std::size_t>(t / width_s));
  ++counts[k];
  // t / width_s rounds by about 1e-16: inside these bounds it is k point something, exactly as
  // computed. (The last bin also takes every later time: left to the division.)
  if (k + 1 < kBins) {
    fast_lo_s = static_cast<double>(k) * width_s * (1 + 1e-12);
    fast_hi_s = static_cast<double>(k + 1) * width_s * (1 - 1e-12);
    fast_bin = k;
  }
}

double EventHistogram::busiest_share(double interval_s, std::size_t intervals) const {
  std::uint64_t total = 0;
  for (std::uint64_t c : counts) total += c;
  if (total == 0 || !(interval_s > 0)) return 0;
  // Events per interval, at the histogram's resolution (an interval narrower than a bin takes
  // the whole bin: the share is then an upper bound).
  std::map<std::uint64_t, std::uint64_t> per_interval;
  for (std::size_t k = 0; k < kBins; ++k) {
    if (counts[k] == 0) continue;
    const double mid = (static_cast<double>(k) + 0.5) * width_s;
    per_interval[static_cast<std::uint64_t>(mid / interval_s)] += counts[k];
  }
  std::vector<std::uint64_t> sizes;
  sizes.reserve(per_interval.size());
  for (const auto& kv : per_interval) sizes.push_back(kv.second);
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  std::uint64_t top = 0;
  for (std::size_t i = 0; i < std::min(intervals, sizes.size()); ++i) top += sizes[i];
  return static_cast<double>(top) / static_cast<double>(total);
}

void SurveySink::saw(double t, const char* kind, trace::EntityIndex e) {
  out_.histogram.add(t);
  if (t >= out_.last.time_s) {
    out_.last.time_s = t;
    last_kind_ = kind;
    last_entity_ = e;
  }
}

void SurveySink::on_entity(const trace::Entity& e) { out_.entities.push_back(e); }

void SurveySink::on_link(const trace::Link& l) { out_.links.push_back(l); }

void SurveySink::on_message(const trace::Message& m) {
  ++out_.messages;
  saw(m.send_s, "message", m.src);
  if (m.bytes > 0) ++out_.messages_with_bytes;
  out_.bytes += static_cast<double>(m.bytes);
  if (m.src == m.dst) {
    ++out_.self_messages;
    return;
  }
  if (!pairs_wanted_) return;
  const auto [slot, added] = pair_slot_.try_emplace(m.src, m.dst, static_cast<std::uint32_t>(pairs_.size()));
  if (added) pairs_.push_back(PairTotal{.src = m.src, .dst = m.dst});
  PairTotal& p = pairs_[*slot];
  ++p.messages;
  p.bytes += static_cast<double>(m.bytes);
}

void SurveySink::on_load(const trace::LoadSample& s) {
  ++out_.load_samples;
  saw(s.time_s, "load sample", s.entity);
}

void SurveySink::on_state(const trace::StateInterval& s) {
  ++out_.state_count;
  saw(s.begin_s, "state", s.entity);
  StateTotal* total = nullptr;
  if (StateTotal* const* seen = recent_states_.find(s.name)) {
    total = *seen;
  } else {
    auto it = out_.states.find(s.name);
    if (it == out_.states.end()) it = out_.states.emplace(std::string(s.name), StateTotal{}).first;
    total = &it->second;
    recent_states_.remember(s.name, total);
  }
  ++total->count;
  if (s.end_s > s.begin_s) total->seconds += s.end_s - s.begin_s;
}

void SurveySink::on_collective(const trace::Collective& c) {
  ++out_.collectives;
  saw(c.begin_s, "collective", c.entity);
}

void SurveySink::on_end(double end_s) {
  out_.end_s = end_s;
  if (out_.last.time_s >= 0) {
    out_.last.kind = last_kind_;
    out_.last.entity =
        last_entity_ < out_.entities.size() ? out_.entities[last_entity_].name : std::to_string(last_entity_);
  }
  out_.pairs = pairs_;
  std::sort(out_.pairs.begin(), out_.pairs.end(),
            [](const PairTotal& a, const PairTotal& b) { return a.src != b.src ? a.src < b.src : a.dst < b.dst; });
}

std::uint64_t MarkerSeries::count() const {
  std::uint64_t n = 0;
  for (const auto& t : times) n += t.size();
  return n;
}

std::size_t MarkerSeries::entities() const {
  return static_cast<std::size_t>(std::count_if(times.begin(), times.end(), [](const auto& t) { return !t.empty(); }));
}

std::size_t MarkerSeries::iterations() const {
  std::size_t n = 0;
  for (const auto& t : times) n = std::max(n, t.size());
  return n;
}

double MarkerSeries::start(std::size_t k) const {
  double first = std::numeric_limits<double>::infinity();
  for (const auto& t : times) {
    if (k >= 1 && t.size() >= k) first = std::min(first, t[k - 1]);
  }
  return first;
}

double MarkerSeries::end(std::size_t k) const { return k < iterations() ? start(k + 1) : std::max(end_s, start(k)); }

double MarkerSeries::mean_period() const {
  const std::size_t n = iterations();
  return n < 2 ? 0.0 : (start(n) - start(1)) / static_cast<double>(n - 1);
}

const MarkerSeries* TraceMarkers::find(std::string_view name) const {
  for (const MarkerSeries& s : series) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const MarkerSeries* TraceMarkers::detected() const {
  // series is sorted: iteration names first, each group by count.
  if (!series.empty() && trace::names_iteration(series.front().name)) return &series.front();
  for (const MarkerSeries& s : series) {
    if (!s.from_states && s.count() >= 2) return &s;
  }
  return nullptr;
}

void MarkerSink::on_entity(const trace::Entity& e) { entities_ = std::max(entities_, std::size_t{e.index} + 1); }

MarkerSeries* MarkerSink::series(std::string_view name, bool from_states) {
  if (!from_states) {
    if (!wanted_.empty() && name != wanted_) return nullptr;
    auto it = point_index_.find(name);
    if (it == point_index_.end()) {
      it = point_index_.emplace(std::string(name), out_.series.size()).first;
      out_.series.push_back(MarkerSeries{std::string(name), false, {}, 0});
    }
    return &out_.series[it->second];
  }
  auto it = state_index_.find(name);
  if (it == state_index_.end()) {
    const bool wanted = wanted_.empty() ? trace::names_iteration(name) : name == wanted_;
    it = state_index_.emplace(std::string(name), wanted ? static_cast<std::ptrdiff_t>(out_.series.size()) : -1).first;
    if (wanted) out_.series.push_back(MarkerSeries{std::string(name), true, {}, 0});
  }
  return it->second < 0 ? nullptr : &out_.series[static_cast<std::size_t>(it->second)];
}

void MarkerSink::on_state(const trace::StateInterval& s) {
  if (MarkerSeries* m = series(s.name, true)) {
    if (m->times.size() <= s.entity) m->times.resize(std::size_t{s.entity} + 1);
    m->times[s.entity].push_back(s.begin_s);
  }
}

void MarkerSink::on_marker(const trace::Marker& mk) {
  if (MarkerSeries* m = series(mk.name, false)) {
    if (m->times.size() <= mk.entity) m->times.resize(std::size_t{mk.entity} + 1);
    m->times[mk.entity].push_back(mk.time_s);
  }
}

void MarkerSink::on_end(double end_s) {
  for (MarkerSeries& m : out_.series) {
    m.end_s = end_s;
    if (m.times.size() < entities_) m.times.resize(entities_);
  }
  std::stable_sort(out_.series.begin(), out_.series.end(), [](const MarkerSeries& a, const MarkerSeries& b) {
    const bool ia = trace::names_iteration(a.name);
    const bool ib = trace::names_iteration(b.name);
    return ia != ib ? ia : a.count() > b.count();
  });
}

TraceMarkers find_markers(const std::filesystem::path& path, const std::string& format,
                          const trace::ReaderOptions& options, const std::string& marker) {
  TraceMarkers out;
  MarkerSink sink(out, marker);
  trace::read_trace(path, sink, format, options);
  return out;
}

namespace {

std::string seconds_text(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%g s", s);
  return b;
}

}  // namespace

TimeWindow resolve_window(const std::optional<WindowBound>& from, const std::optional<WindowBound>& to,
                          const std::filesystem::path& path, const std::string& format,
                          const trace::ReaderOptions& options, const std::string& marker) {
  TimeWindow w;
  if (from) w.from_s = from->seconds;
  if (to) w.to_s = to->seconds;
  if ((from && from->is_iteration()) || (to && to->is_iteration())) {
    const TraceMarkers markers = find_markers(path, format, options, marker);
    const MarkerSeries* s = marker.empty() ? markers.detected() : markers.find(marker);
    if (s == nullptr) {
      std::string words;
      for (const std::string_view word : trace::kIterationWords) words += (words.empty() ? "'" : ", '") + std::string(word) + "'";
      throw InputError(FileLoc{path.string()},
                       marker.empty()
                           ? "iter:K needs iteration markers and this trace has none: looked for instant events, Pajé "
                             "point events and Paraver user events seen at least twice, and for states, regions and "
                             "event types whose name contains " + words + " (name one with --marker)"
                           : "iter:K: no marker and no state named '" + marker + "' in this trace");
    }
    const auto check = [&](std::size_t k) {
      if (k > s->iterations()) {
        throw InputError(FileLoc{path.string()}, "iter:" + std::to_string(k) + ": the trace has only " +
                                                     std::to_string(s->iterations()) + " iterations by its '" + s->name +
                                                     "' markers");
      }
    };
    if (from && from->is_iteration()) {
      check(from->iteration);
      w.from_s = s->start(from->iteration);
    }
    if (to && to->is_iteration()) {
      check(to->iteration);
      w.to_s = s->end(to->iteration);
    }
  }
  if (!(w.to_s > w.from_s)) {
    throw InputError(FileLoc{path.string()}, "the time window is empty: its end (" + seconds_text(w.to_s) +
                                                 ") is not later than its start (" + seconds_text(w.from_s) + ")");
  }
  return w;
}

std::size_t auto_interval_count(std::uint64_t events, std::size_t entities) {
  constexpr std::uint64_t kMin = 200, kMax = 1000;
  const std::uint64_t per = 2 * std::max<std::uint64_t>(1, entities);
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(events / per, kMin, kMax));
}

namespace {

/// What a survey was made of: the files (FileVersion), the reader that
/// read them, its options (threads aside: they change the speed, not the events) and the window.
struct SurveyKey {
  std::vector<FileVersion> files;
  std::string format;
  trace::ReaderOptions options;
  TimeWindow window;
  bool operator==(const SurveyKey&) const = default;
};

/// The key of a survey of `path`, or nullopt when the files cannot be listed or stat'ed (the
/// read then reports why).
std::optional<SurveyKey> survey_key(const std::filesystem::path& path, const std::string& format,
                                    const trace::ReaderOptions& options, const TimeWindow& window) {
  try {
    SurveyKey k;
    k.format = format.empty() || format == "auto" ? trace::detect_format(path) : format;
    auto versions = file_versions(trace::trace_files(path, k.format, options));
    if (!versions) return std::nullopt;
    k.files = std::move(*versions);
    k.options = options;
    k.options.threads = 0;
    k.options.paje.read.threads = 0;
    k.window = window;
    return k;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

/// The last survey made in this process and its key, and the stream it recorded when asked to.
struct SurveyMemo {
  std::mutex mutex;
  std::optional<SurveyKey> key;
  std::shared_ptr<const TraceSurvey> survey;
  std::shared_ptr<const trace::EventLog> events;  ///< complete, or null
};

SurveyMemo& survey_memo() {
  static SurveyMemo memo;
  return memo;
}

}  // namespace

TraceSurvey survey_trace(const std::filesystem::path& path, const std::string& format,
                         const trace::ReaderOptions& options, const TimeWindow& window, std::size_t keep_events_bytes) {
  const std::optional<SurveyKey> key = survey_key(path, format, options, window);
  SurveyMemo& memo = survey_memo();
  if (key) {
    const std::lock_guard lock(memo.mutex);
    if (memo.survey && memo.key == key) return *memo.survey;
  }
  TraceSurvey s;
  s.path = path.string();
  SurveySink sink(s);
  WindowSink windowed(window, sink);
  trace::TraceSink& surveyed = window.whole() ? static_cast<trace::TraceSink&>(sink) : windowed;
  // The log records what the reader delivers, before the window: a replay goes where a read would.
  std::shared_ptr<trace::EventLog> events = keep_events_bytes > 0 && key ? std::make_shared<trace::EventLog>(keep_events_bytes) : nullptr;
  std::optional<TeeSink> recorded;
  if (events) recorded.emplace(surveyed, *events);
  s.read = trace::read_trace(path, recorded ? static_cast<trace::TraceSink&>(*recorded) : surveyed, format, options);
  // Kept only if the files did not change while they were read.
  if (key && survey_key(path, format, options, window) == key) {
    const std::lock_guard lock(memo.mutex);
    memo.key = key;
    memo.survey = std::make_shared<const TraceSurvey>(s);
    memo.events = events && events->complete() ? std::move(events) : nullptr;
  }
  return s;
}

std::optional<RecordedRead> take_survey_events(const std::filesystem::path& path, const std::string& format,
                                               const trace::ReaderOptions& options, const TimeWindow& window) {
  SurveyMemo& memo = survey_memo();
  {
    const std::lock_guard lock(memo.mutex);
    if (!memo.events) return std::nullopt;
  }
  // The files are stat'ed outside the lock; the key is compared under it.
  const std::optional<SurveyKey> key = survey_key(path, format, options, window);
  const std::lock_guard lock(memo.mutex);
  if (!key || !memo.events || memo.key != key) return std::nullopt;
  RecordedRead r{std::move(memo.events), memo.survey->read};
  memo.events = nullptr;
  return r;
}

void forget_survey_events() {
  SurveyMemo& memo = survey_memo();
  const std::lock_guard lock(memo.mutex);
  memo.events = nullptr;
}

}  // namespace kanoko::ingest
