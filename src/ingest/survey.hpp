// A survey of a trace: one streaming pass that records what the trace holds (entities, links,
// traffic per pair, message sizes, states with their time, load samples, collectives, when the
// events happen), so that the ingest can choose an interval and infer a mapping before binning.
// Memory grows with entities, active pairs and distinct state names, not with events.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/base/flat_index.hpp"
#include "src/ingest/window.hpp"
#include "src/trace/event.hpp"
#include "src/trace/event_log.hpp"
#include "src/trace/readers.hpp"
#include "src/trace/recent_names.hpp"
#include "src/trace/tee.hpp"

namespace kanoko::ingest {

/// Whole-run traffic from one entity to another.
struct PairTotal {
  trace::EntityIndex src = 0;
  trace::EntityIndex dst = 0;
  std::uint64_t messages = 0;
  double bytes = 0;
};

/// Time spent in one state name, over all entities.
struct StateTotal {
  std::uint64_t count = 0;
  double seconds = 0;
};

/// Event times at a fixed resolution that coarsens as the trace gets longer: `counts[k]` events
/// happened in [k w, (k + 1) w). Events are counted by their first time stamp.
struct EventHistogram {
  static constexpr std::size_t kBins = 4096;
  double width_s = 1e-9;
  std::array<std::uint64_t, kBins> counts{};
  void add(double t);
  /// The inside of the last bin counted into, short of rounding at both ends (a relative 1e-12):
  /// a time there is counted there without a division. Empty until the first time.
  double fast_lo_s = 1, fast_hi_s = 0;
  std::size_t fast_bin = 0;
  /// Fraction of all events that fall in the `intervals` intervals of width `interval_s` holding
  /// the most events (resolved at this histogram's width).
  [[nodiscard]] double busiest_share(double interval_s, std::size_t intervals) const;
};

/// The last event of a trace: where its end comes from.
struct LastEvent {
  double time_s = -1;
  std::string kind;    ///< "message", "state", "load sample", "collective"
  std::string entity;  ///< the entity's name
};

/// What a trace holds.
struct TraceSurvey {
  std::string path;
  trace::ReadReport read;                  ///< the reader's report (format, warnings, details)
  std::vector<trace::Entity> entities;
  std::vector<trace::Link> links;
  std::vector<PairTotal> pairs;            ///< sorted by (src, dst); src != dst
  std::uint64_t messages = 0;
  std::uint64_t messages_with_bytes = 0;   ///< messages whose size is known and non-zero
  std::uint64_t self_messages = 0;
  double bytes = 0;
  std::map<std::string, StateTotal, std::less<>> states;  ///< by name (looked up without a copy)
  std::uint64_t state_count = 0;
  std::uint64_t load_samples = 0;
  std::uint64_t collectives = 0;
  double end_s = 0;                        ///< the trace's (or window's) end, from 0
  EventHistogram histogram;
  LastEvent last;
  /// Events of any kind (messages, states, samples, collectives).
  [[nodiscard]] std::uint64_t events() const { return messages + state_count + load_samples + collectives; }
};

/// Reads `path` (format "auto" or a reader name) once into a survey, restricted to `window`. The
/// process keeps its last survey: asked again for the same files (unchanged sizes and
/// modification times), reader, options and window, it returns that one without reading (zero
/// configuration surveys a trace to infer the mapping, and the timeline's interval = "auto"
/// surveys it again before binning).
///
/// `keep_events_bytes` > 0: the survey also records the stream the reader delivered
/// (trace::EventLog, within that many bytes) for take_survey_events, so that the read that follows
/// it replays the trace from memory instead of parsing it again.
TraceSurvey survey_trace(const std::filesystem::path& path, const std::string& format,
                         const trace::ReaderOptions& options, const TimeWindow& window = {},
                         std::size_t keep_events_bytes = 0);

/// A stream survey_trace recorded, and what its read reported.
struct RecordedRead {
  std::shared_ptr<const trace::EventLog> events;  ///< complete: replays the whole read
  trace::ReadReport report;
};

/// The stream that the last survey_trace(..., keep_events_bytes > 0) recorded of the same files
/// (unchanged), reader, options and window, handed over once: the process forgets it here.
/// nullopt when there is none, or when it did not fit its budget.
std::optional<RecordedRead> take_survey_events(const std::filesystem::path& path, const std::string& format,
                                               const trace::ReaderOptions& options, const TimeWindow& window = {});

/// Frees a recorded stream that nothing will replay (a run reused from the cache).
void forget_survey_events();

/// A sink that surveys a stream (survey_trace uses it; the ingest chains it after a BodySelector).
class SurveySink final : public trace::TraceSink {
 public:
  /// `pairs`: whether it totals each pair's traffic (TraceSurvey::pairs, one hash lookup per
  /// message). The survey beside a timeline leaves them out: the timeline has them per interval.
  explicit SurveySink(TraceSurvey& out, bool pairs = true) : out_(out), pairs_wanted_(pairs) {}
  void on_entity(const trace::Entity& e) override;
  void on_link(const trace::Link& l) override;
  void on_message(const trace::Message& m) override;
  void on_load(const trace::LoadSample& s) override;
  void on_state(const trace::StateInterval& s) override;
  void on_collective(const trace::Collective& c) override;
  void on_end(double end_s) override;

 private:
  /// Counts an event at time t in the histogram and keeps the latest one (its names are filled
  /// at the end, so that the hot path copies no string).
  void saw(double t, const char* kind, trace::EntityIndex e);
  TraceSurvey& out_;
  bool pairs_wanted_ = true;
  PairIndex pair_slot_;          ///< (src, dst) → index in pairs_
  std::vector<PairTotal> pairs_;  ///< in order of first message
  const char* last_kind_ = "";
  trace::EntityIndex last_entity_ = 0;
  /// The totals of the states seen last (in out_.states, whose entries stay where they are).
  trace::RecentNames<StateTotal*> recent_states_;
};

/// One stream to two sinks (trace/tee.hpp).
using trace::TeeSink;

/// The markers of one name: point markers (trace::Marker) or the begins of states of that name,
/// per entity in time order. Iteration K starts at the K-th marker of the entity that reaches it
/// first.
struct MarkerSeries {
  std::string name;
  bool from_states = false;                ///< begins of states (else point markers)
  std::vector<std::vector<double>> times;  ///< per entity index
  double end_s = 0;                        ///< the trace's end (where the last iteration ends)
  /// Markers of all entities.
  [[nodiscard]] std::uint64_t count() const;
  /// Entities that have at least one.
  [[nodiscard]] std::size_t entities() const;
  /// Iterations: the most markers one entity has.
  [[nodiscard]] std::size_t iterations() const;
  /// Start of iteration k (1 <= k <= iterations()): the earliest k-th marker over the entities.
  [[nodiscard]] double start(std::size_t k) const;
  /// End of iteration k: the start of iteration k + 1, or the trace's end for the last one.
  [[nodiscard]] double end(std::size_t k) const;
  /// Mean time between iteration starts; 0 with fewer than two iterations.
  [[nodiscard]] double mean_period() const;
};

/// The markers a trace holds: every point-marker name, and state names that name iterations
/// (trace::names_iteration), or only the one asked for.
struct TraceMarkers {
  std::vector<MarkerSeries> series;  ///< iteration names first, then by count, most first
  /// The series named `name`, or nullptr.
  [[nodiscard]] const MarkerSeries* find(std::string_view name) const;
  /// The series that marks iterations when no name is given: the most frequent name that names
  /// iterations, else the most frequent point marker seen at least twice; nullptr when none.
  [[nodiscard]] const MarkerSeries* detected() const;
};

/// Collects markers from a stream. With `wanted` set, only markers and states of that name.
class MarkerSink final : public trace::TraceSink {
 public:
  explicit MarkerSink(TraceMarkers& out, std::string wanted = {}) : out_(out), wanted_(std::move(wanted)) {}
  void on_entity(const trace::Entity& e) override;
  void on_link(const trace::Link&) override {}
  void on_message(const trace::Message&) override {}
  void on_load(const trace::LoadSample&) override {}
  void on_state(const trace::StateInterval& s) override;
  void on_marker(const trace::Marker& m) override;
  void on_end(double end_s) override;

 private:
  /// The series of `name` (point markers or state begins), or nullptr when it is not collected.
  MarkerSeries* series(std::string_view name, bool from_states);
  TraceMarkers& out_;
  std::string wanted_;
  std::size_t entities_ = 0;
  std::map<std::string, std::size_t, std::less<>> point_index_;  ///< marker name → series
  std::map<std::string, std::ptrdiff_t, std::less<>> state_index_;  ///< state name → series, -1: not one
};

/// Reads the markers of `path` (`marker`: only that name, "" all candidates).
TraceMarkers find_markers(const std::filesystem::path& path, const std::string& format,
                          const trace::ReaderOptions& options, const std::string& marker = {});

/// The window [from, to) for bounds as written (absent: the trace's start / end). Iteration bounds
/// are looked up in the markers of `path`: the series named `marker`, or the detected one; `from
/// iter:K` is the start of iteration K, `to iter:K` its end. Throws InputError naming the trace
/// (and the words looked for) when it has no markers or fewer iterations than asked, and for an
/// empty window.
TimeWindow resolve_window(const std::optional<WindowBound>& from, const std::optional<WindowBound>& to,
                          const std::filesystem::path& path, const std::string& format,
                          const trace::ReaderOptions& options, const std::string& marker = {});

/// How many intervals a run with `events` events over `entities` entities gets when the mapping
/// says `interval = "auto"`: about two events per entity and interval, between 200 and 1000, so
/// that a 20 ms run and a 30 s run both animate in a few hundred steps of forcing. It depends on
/// counts only, never on the duration: the same run traced 100× slower gets the same intervals.
std::size_t auto_interval_count(std::uint64_t events, std::size_t entities);

}  // namespace kanoko::ingest
