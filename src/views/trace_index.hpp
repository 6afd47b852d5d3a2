// The trace index every companion view reads: built once, in one streaming pass over a trace
// (read_trace), into per-entity state segments, messages, exact totals and a fixed number of time
// bins. Memory is bounded: the bins have a fixed count (their width doubles as the trace gets
// longer), and the raw detail (segments, messages) is kept only up to a record limit, after which
// the views fall back to the bins (VENUS's "performance data buffer" idea, without the disk).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/trace/event.hpp"
#include "src/trace/time_split.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::views {

using trace::EntityIndex;

/// The three program states of VENUS, which are trace::StateCategory's: useful work (computing),
/// parallelisation overhead (communicating) and waiting (idle), split as trace::split_time says
/// (docs/statistics.md). Time in no classified state (before the first state, after the last, in
/// gaps, in states no rule classes) is in none of them (None: not waiting), or busy when the
/// trace's gaps count as computing (TraceIndex::gaps_computing).
enum class StateClass : std::uint8_t { Busy = 0, Overhead = 1, Idle = 2, None = 3 };
/// Classes with seconds in ClassSeconds (None is the range's remainder).
inline constexpr std::size_t kClassCount = 3;
/// A class's index into ClassSeconds and the per-class arrays.
constexpr std::size_t cls_index(StateClass c) { return static_cast<std::size_t>(c); }
/// "busy", "overhead", "idle", "no state".
const char* class_name(StateClass c);

/// Seconds per state class, indexed by StateClass (no-state time is not in it).
using ClassSeconds = std::array<double, kClassCount>;

/// Which state names fall in which class: the timeline's trace::StateClassifier (names, globs,
/// then the MPI call table) with the lists below, each list left empty taking the format's default
/// (trace::format_facts). A collective operation no rule classes is idle (it waits for the last
/// participant).
struct ClassRules {
  std::vector<std::string> busy{};      ///< computing states; empty: the format's
  std::vector<std::string> overhead{};  ///< communicating states; empty: the format's
  std::vector<std::string> idle{};      ///< waiting states; empty: the format's
  /// The format whose defaults fill the empty lists ("" native); build_trace_index sets the one
  /// it reads when this is empty.
  std::string format;
  /// Time in no classified state: idle, busy, or busy when states were seen and none is busy.
  trace::GapPolicy gaps = trace::GapPolicy::Auto;
  /// The classifier these rules make.
  [[nodiscard]] trace::StateClassifier classifier() const;
};

/// How the index is built.
struct IndexOptions {
  ClassRules rules;
  /// Number of time bins over the whole run (the resolution of the fallback and of the traffic
  /// histogram). Reduced automatically when entities × bins would pass kMaxBinCells.
  std::size_t bins = 2048;
  /// Raw segments + messages kept; past it the raw detail is dropped and views use the bins.
  std::size_t max_detail_records = std::size_t{1} << 24U;
  static constexpr std::size_t kMaxBinCells = std::size_t{1} << 22U;
};

/// A stretch of time one entity spends in one state. An entity's segments are sorted and do not
/// overlap: nested states are resolved in favour of the innermost (most recently begun) one.
struct Segment {
  double begin_s = 0;
  double end_s = 0;
  std::uint16_t name = 0;  ///< index into TraceIndex::state_names
  StateClass cls = StateClass::Busy;
};

/// A message as the views need it. recv_s < 0 when the trace does not say.
struct MessageRecord {
  double send_s = 0;
  double recv_s = -1;
  EntityIndex src = 0;
  EntityIndex dst = 0;
  std::uint64_t bytes = 0;
};

/// Messages and bytes from one entity to another.
struct PairAgg {
  EntityIndex src = 0;
  EntityIndex dst = 0;
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
};

/// Whole-run totals of one entity (exact, whatever the detail limit).
struct EntityTotals {
  ClassSeconds class_s{};  ///< busy includes no-state time when gaps_computing; the rest is no state
  std::uint64_t messages_sent = 0;
  std::uint64_t messages_received = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
};

/// The index. Times are trace seconds; the run is [begin_s, end_s].
struct TraceIndex {
  double begin_s = 0;
  double end_s = 0;
  std::vector<trace::Entity> entities;
  std::vector<std::string> state_names;
  std::vector<StateClass> state_classes;  ///< class of each state name
  /// Raw detail, complete only when detail_complete.
  std::vector<std::vector<Segment>> segments;  ///< per entity
  std::vector<MessageRecord> messages;         ///< sorted by send time
  double max_latency_s = 0;                    ///< largest recv - send seen
  bool detail_complete = true;
  /// Bins: bin b covers [begin_s + b * bin_width_s, ... + bin_width_s); they cover the run.
  double bin_width_s = 0;
  std::size_t bin_count = 0;
  /// Seconds in named states per class: bin_class_s[entity][bin * 3 + class] (no-state time is
  /// not in it; class_time adds it to busy when gaps_computing).
  std::vector<std::vector<double>> bin_class_s;
  /// Traffic per bin by send time, each sorted by (src, dst).
  std::vector<std::vector<PairAgg>> bin_traffic;
  std::vector<EntityTotals> totals;
  std::vector<PairAgg> matrix_total;  ///< whole run, sorted by (src, dst)
  std::uint64_t message_count = 0;    ///< all messages, kept or not
  std::uint64_t state_count = 0;      ///< state and collective entries read
  /// Time in no classified state counts as computing (the rules' GapPolicy); else it is in no class.
  bool gaps_computing = false;

  [[nodiscard]] std::size_t entity_count() const { return entities.size(); }
  [[nodiscard]] double span_s() const { return end_s - begin_s; }
  /// Seconds entity e spends in each class during [t0, t1) (busy includes no-state time when
  /// gaps_computing). Exact from the segments when the detail is complete, else from the bins
  /// (uniform within a bin).
  [[nodiscard]] ClassSeconds class_time(EntityIndex e, double t0, double t1) const;
  /// The same as the one split (trace::split_time): computing, communicating, waiting and no state.
  [[nodiscard]] trace::TimeSplit split(EntityIndex e, double t0, double t1) const;
  /// The same from the bins alone, whatever the detail (uniform within a bin).
  [[nodiscard]] ClassSeconds class_time_from_bins(EntityIndex e, double t0, double t1) const;
  /// Index of the first message sent at or after t.
  [[nodiscard]] std::size_t first_message_at(double t) const;
  /// Bin holding time t, clamped to the valid range.
  [[nodiscard]] std::size_t bin_of(double t) const;
  /// Entity by name or index text ("pe3", "3"), or -1.
  [[nodiscard]] std::int64_t find_entity(const std::string& text) const;
};

/// How far an index build is, shared between the thread that builds and the one that shows it
/// (every member is atomic). The builder publishes its counters every kIndexProgressStride
/// records and checks `cancel` at the same moments.
struct IndexProgress {
  std::atomic<std::uint64_t> records{0};  ///< trace records (entities, states, messages, ...) read
  std::atomic<double> trace_time_s{0};    ///< latest event time read (readers go in time order)
  std::atomic<bool> finishing{false};     ///< reading is over, the index is being completed
  std::atomic<bool> done{false};          ///< the build ended (finished, failed or cancelled)
  std::atomic<bool> cancel{false};        ///< set to stop the build: it throws IndexBuildCancelled
  /// The span the trace is expected to cover (the run's metadata knows it); with it fraction()
  /// can estimate the part read. NaN: unknown.
  std::atomic<double> expected_begin_s{0};
  std::atomic<double> expected_end_s{std::numeric_limits<double>::quiet_NaN()};
  /// 0..1: the trace time read over the expected span (capped at 0.95 until reading is over,
  /// 1 when done), or -1 when the span is unknown and only records() tells how far it is.
  [[nodiscard]] double fraction() const;
  /// "indexing trace: 42 % (1.2 M records)" or "indexing trace: 1.2 M records read".
  [[nodiscard]] std::string text() const;
};
inline constexpr std::uint64_t kIndexProgressStride = 4096;

/// Thrown out of a build whose IndexProgress::cancel was set.
class IndexBuildCancelled : public std::exception {
 public:
  [[nodiscard]] const char* what() const noexcept override { return "index build cancelled"; }
};

/// A TraceSink that builds a TraceIndex in one pass.
class TraceIndexBuilder final : public trace::TraceSink {
 public:
  explicit TraceIndexBuilder(IndexOptions options = {});
  /// Publishes progress into `progress` (which must outlive the build) and stops with
  /// IndexBuildCancelled when it is cancelled. nullptr: no progress.
  void set_progress(IndexProgress* progress);
  ~TraceIndexBuilder() override;
  TraceIndexBuilder(const TraceIndexBuilder&) = delete;
  TraceIndexBuilder& operator=(const TraceIndexBuilder&) = delete;

  void on_entity(const trace::Entity& e) override;
  void on_link(const trace::Link& l) override;
  void on_message(const trace::Message& m) override;
  void on_load(const trace::LoadSample& s) override;
  void on_state(const trace::StateInterval& s) override;
  void on_collective(const trace::Collective& c) override;
  void on_end(double end_s) override;

  /// The finished index (after on_end). Moves it out.
  TraceIndex take();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Reads a trace file (format "auto" detects it) into an index. Throws InputError for bad input.
/// With `progress` (may be nullptr), the build publishes its progress there and throws
/// IndexBuildCancelled when progress->cancel is set.
TraceIndex build_trace_index(const std::filesystem::path& trace, const IndexOptions& options = {},
                             const std::string& format = "auto", IndexProgress* progress = nullptr);

/// An index built on a thread of its own, so that a viewer can open at once, show the progress
/// and cancel: start it, poll ready() and progress() each frame, then take() the index.
///
///   IndexBuildJob job(trace, {}, "auto", run.metadata().trace_end_s);
///   ... each frame: if (job.ready()) index = job.take(); else show job.progress().text();
class IndexBuildJob {
 public:
  /// Starts building the index of `trace`. `expected_end_s` (NaN: unknown) is the trace's end
  /// time if known, for progress().fraction().
  IndexBuildJob(std::filesystem::path trace, IndexOptions options = {}, std::string format = "auto",
                double expected_end_s = std::numeric_limits<double>::quiet_NaN());
  /// Cancels a build still running and waits for its thread.
  ~IndexBuildJob();
  IndexBuildJob(const IndexBuildJob&) = delete;
  IndexBuildJob& operator=(const IndexBuildJob&) = delete;

  [[nodiscard]] const IndexProgress& progress() const { return *progress_; }
  /// True when the build has ended (take() will not block).
  [[nodiscard]] bool ready() const;
  /// Asks the build to stop (take() then throws IndexBuildCancelled).
  void cancel() { progress_->cancel.store(true); }
  /// The index, once (waits if the build is still running). Rethrows what the build threw
  /// (InputError for a bad trace, IndexBuildCancelled).
  TraceIndex take();

 private:
  std::unique_ptr<IndexProgress> progress_;
  std::future<TraceIndex> result_;
};

}  // namespace kanoko::views
