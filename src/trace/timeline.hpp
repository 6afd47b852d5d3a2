// The timeline: a trace binned into fixed intervals (the paper sampled every 0.1 s). It is what
// the model reads: per interval, traffic per ordered pair and load per entity. Built in one
// streaming pass; memory grows with entities × intervals and active pairs, not with events.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/base/prefault.hpp"
#include "src/trace/bins.hpp"
#include "src/trace/event.hpp"
#include "src/trace/mpi_calls.hpp"
#include "src/trace/recent_names.hpp"

namespace kanoko::trace {

/// Traffic from one entity to another within one interval.
struct PairTraffic {
  EntityIndex src = 0;
  EntityIndex dst = 0;
  double bytes = 0;
  std::uint32_t messages = 0;
};

/// What a binned trace holds.
struct Timeline {
  double begin_s = 0;     ///< trace time of the start of bin 0
  double interval_s = 0;  ///< bin width
  double end_s = 0;       ///< end of the traced run
  std::vector<Entity> entities;
  std::vector<Link> links;
  std::size_t bin_count = 0;
  /// Time-mean of the sampled load over each bin, [bin * entity_count + entity]; empty when the
  /// trace has no load samples (load_at is then 0 everywhere).
  std::vector<double> load;
  /// Seconds spent in a busy (computing) state during each bin, [bin * entity_count + entity].
  std::vector<double> busy_s;
  /// The same for communicating and idle states; empty (every value 0) until a state of that
  /// category occurs, so that traces without them need no memory for them.
  std::vector<double> comm_s;
  std::vector<double> idle_s;
  /// Traffic of bin b is pairs[pair_begin[b] .. pair_begin[b+1]), sorted by (src, dst).
  std::vector<std::size_t> pair_begin;
  std::vector<PairTraffic> pairs;
  std::uint64_t message_count = 0;  ///< point-to-point messages (in `pairs`)
  /// Pair messages made from collective operations by the traffic model (also in `pairs`, not in
  /// message_count): the traffic of `pairs` counts message_count + collective_messages messages.
  std::uint64_t collective_messages = 0;
  std::uint64_t collectives = 0;  ///< collective instances turned into traffic
  /// Time outside any classified state was counted as computing (TimelineOptions::gaps).
  bool gaps_counted_as_computing = false;
  std::uint64_t load_sample_count = 0;
  std::uint64_t state_count = 0;
  /// Entities that each timeline entity stands for (a body grouping a host's ranks has several);
  /// empty: one each. A bin holds members × its width of state time (bin_time).
  std::vector<std::uint32_t> members;
  /// Seconds at a mapping's named code locations ([locations], filled by the ingest with
  /// profile::LocatedTime): located_names holds their variables, three per name (computing,
  /// communicating, waiting); located_s[((k × bin_count + bin) × entity_count + entity) × 3 + c]
  /// for the k-th name and c = 0 computing, 1 communicating, 2 waiting. Empty without names.
  std::vector<std::string> located_names;
  std::vector<double> located_s;
  [[nodiscard]] double located_at(std::size_t k, std::size_t bin, EntityIndex e, std::size_t c) const {
    return located_s[((k * bin_count + bin) * entity_count() + e) * 3 + c];
  }

  [[nodiscard]] std::size_t entity_count() const { return entities.size(); }
  [[nodiscard]] std::span<const PairTraffic> traffic(std::size_t bin) const {
    return {pairs.data() + pair_begin[bin], pair_begin[bin + 1] - pair_begin[bin]};
  }
  [[nodiscard]] double load_at(std::size_t bin, EntityIndex e) const {
    return load.empty() ? 0.0 : load[bin * entity_count() + e];
  }
  /// Seconds of one bin an entity spent computing, communicating and idle.
  struct BinTime {
    double busy_s = 0;
    double comm_s = 0;
    double idle_s = 0;
  };
  /// The bin's time of an entity, fitted into the bin: overlapping states (nested ones, or
  /// several threads folded into one entity) can add up to more than the bin's width times its
  /// members, so computing counts first, then communicating in what remains, then idle. Only a
  /// real excess is cut, not rounding, so that the pieces of a state still add up to its length.
  [[nodiscard]] BinTime bin_time(std::size_t bin, EntityIndex e) const;
  /// Fraction of the bin spent in busy states (of bin_time; summed over a group's members, so up
  /// to their count). The last bin may be partial (it ends at end_s), so the fraction is of its own
  /// width, as its load is; a bin of no width is not busy.
  [[nodiscard]] double busy_fraction(std::size_t bin, EntityIndex e) const {
    const double width = bin_width_s(bin);
    return width > 0 ? bin_time(bin, e).busy_s / width : 0.0;
  }
  /// busy_fraction(bin, e) of every entity e, into `out` (entity_count() values): the same values,
  /// for a whole bin at once (a model's masses read every body's every interval).
  void busy_fractions(std::size_t bin, std::span<double> out) const;
  /// Fractions of the bin spent in communicating and idle states, as busy_fraction.
  [[nodiscard]] double comm_fraction(std::size_t bin, EntityIndex e) const {
    const double width = bin_width_s(bin);
    return width > 0 ? bin_time(bin, e).comm_s / width : 0.0;
  }
  [[nodiscard]] double idle_fraction(std::size_t bin, EntityIndex e) const {
    const double width = bin_width_s(bin);
    return width > 0 ? bin_time(bin, e).idle_s / width : 0.0;
  }
  /// Seconds of one bin in communicating and idle states (0 when none was classified).
  [[nodiscard]] double comm_at(std::size_t bin, EntityIndex e) const {
    return comm_s.empty() ? 0.0 : comm_s[bin * entity_count() + e];
  }
  [[nodiscard]] double idle_at(std::size_t bin, EntityIndex e) const {
    return idle_s.empty() ? 0.0 : idle_s[bin * entity_count() + e];
  }
  /// Width of a bin in seconds: interval_s, except for a partial last bin.
  [[nodiscard]] double bin_width_s(std::size_t bin) const;
  /// Bin holding time t (clamped to [0, bin_count - 1]). A time within rounding of a boundary
  /// belongs to the bin that starts there (0.3 with an interval of 0.1 is in bin 3).
  [[nodiscard]] std::size_t bin_of(double t) const;

};

/// True when `text` matches the glob `pattern`: `*` matches any run of characters (also none),
/// `?` one character; everything else matches itself.
bool glob_match(std::string_view pattern, std::string_view text);

/// Sorts state names into computing, communicating and idle. Each list holds names and glob
/// patterns (with `*` or `?`). A name listed exactly wins; otherwise the matching pattern with
/// the most literal characters wins (`MPI_Wait*` before `MPI_*` before `*`); between patterns
/// of equal length, computing before communicating before idle. A name no list matches is
/// classed by the MPI call table (mpi_call_category: `PMPI_Recv` idle, `MPI_Send`
/// communicating; its computing rows are left to the lists) unless `mpi_call_table` is false.
/// Results are cached per name.
class StateClassifier {
 public:
  StateClassifier() = default;
  StateClassifier(const std::vector<std::string>& computing, const std::vector<std::string>& communicating,
                  const std::vector<std::string>& idle, bool mpi_call_table = true);
  [[nodiscard]] StateCategory classify(std::string_view name);
  /// True when the category has any name or pattern.
  [[nodiscard]] bool uses(StateCategory c) const { return uses_[static_cast<std::size_t>(c)]; }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Pattern {
    std::string glob;
    std::size_t literals;
    StateCategory category;
  };
  /// Exact names: a short list is searched in order (cheaper than hashing for the usual one to
  /// twenty names), a long one through the map.
  std::vector<std::pair<std::string, StateCategory>> exact_list_;
  std::unordered_map<std::string, StateCategory, Hash, std::equal_to<>> exact_;
  static constexpr std::size_t kShortList = 24;
  std::vector<Pattern> patterns_;  ///< most literal characters first
  std::unordered_map<std::string, StateCategory, Hash, std::equal_to<>> cache_;  ///< pattern results
  /// The last few names found in cache_, compared before hashing.
  RecentNames<StateCategory> recent_;
  bool uses_[4] = {false, false, false, false};
  bool mpi_call_table_ = false;
};

/// What the timeline does with the time of an entity that no classified state covers.
enum class GapPolicy : std::uint8_t {
  Uncounted,  ///< in no category
  Computing,  ///< added to busy_s
  /// Computing when the trace has states but none classified computing (gaps_are_computing),
  /// else uncounted: SMPI without `tracing/smpi/computing`, Score-P with only MPI regions.
  Auto
};

/// The rule of GapPolicy::Auto: true when `states` states were seen and none of them
/// (`computing_states` is 0) was classified computing. A trace without states (load samples
/// only) keeps its gaps uncounted.
bool gaps_are_computing(std::uint64_t states, std::uint64_t computing_states);

/// Options of the binning.
struct TimelineOptions {
  double interval_s = 0.1;
  /// State names (or glob patterns, StateClassifier) counted as busy in busy_s.
  std::vector<std::string> busy_states{"compute"};
  /// State names (or patterns) counted in comm_s and idle_s; empty: those arrays stay empty.
  std::vector<std::string> communicating_states{};
  std::vector<std::string> idle_states{};
  /// Names no list matches are classed by the MPI call table (StateClassifier).
  bool mpi_call_table = true;
  /// Time between an entity's first event and the end of the run outside classified states;
  /// an ingest that wants SMPI's and Score-P's computing sets GapPolicy::Auto.
  GapPolicy gaps = GapPolicy::Uncounted;
  /// The end the stream will give on_end, when a survey has read it before: a state is then
  /// added as it arrives, cut at that end, instead of held until the clock passes its end (the
  /// same intervals, sooner; the order of the additions differs only between overlapping states
  /// of one entity). on_end with another end is an InputError (the trace changed between reads).
  std::optional<double> known_end_s{};
  /// The messages the stream will bring, when a survey has counted them (0: not known): the
  /// traffic's pair records, at most one per message, are reserved at once instead of grown.
  std::uint64_t expected_messages = 0;
};

/// A TraceSink that bins the stream into a Timeline.
///
/// Bins cover [0, end): a message sent exactly at the end goes to the last bin, and states that
/// run past the end are cut there. A trace that would need more than kMaxBins bins, or more than
/// kMaxCells bins × entities, is refused with an InputError without a file location (the reader
/// feeding the builder adds the line); the message suggests a larger interval.
class TimelineBuilder final : public TraceSink {
 public:
  explicit TimelineBuilder(TimelineOptions options);

  void on_entity(const Entity& e) override;
  void on_link(const Link& l) override;
  void on_message(const Message& m) override;
  void on_load(const LoadSample& s) override;
  void on_state(const StateInterval& s) override;
  /// Collects a collective's part; at the end each instance (one `group`) becomes pair traffic
  /// (docs/trace-formats.md, "Collectives as traffic"): ToRoot operations send from each
  /// participant to the root, FromRoot ones from the root to each, and the others (or a rooted
  /// one whose root is not a participant) send around a ring of the participants in entity
  /// order, so an instance of P participants makes P - 1 or P messages. Each carries the bytes
  /// of its sender's part and lands in the bin of the last participant's arrival. Parts without
  /// a group and instances of one participant make no traffic.
  void on_collective(const Collective& c) override;
  void on_end(double end_s) override;

  /// The finished timeline (after on_end). Moves it out.
  Timeline take();

  /// Limits on the binned arrays (16.7 M bins, 64 M bin × entity cells, 512 MiB per array of load, busy,
  /// communicating and idle
  /// time): far above real runs (an hour at 0.1 s is 36 000 bins), low enough that a hostile
  /// `end 1e300` is an error instead of an allocation failure.
  static constexpr std::size_t kMaxBins = std::size_t{1} << 24U;
  static constexpr std::size_t kMaxCells = std::size_t{1} << 26U;
  /// The most pair records reserved ahead for TimelineOptions::expected_messages (1.5 GiB of
  /// address space); more grow as they come.
  static constexpr std::uint64_t kMaxReservedPairs = std::uint64_t{1} << 26U;
  /// The recent pairs of the open bin: 8192 (128 KiB).
  static constexpr unsigned kRecentPairBits = 13;
  /// The open bin's entries are merged when they pass this many, or twice the pairs after the
  /// last merge if more.
  static constexpr std::size_t kMinCompaction = std::size_t{1} << 16U;

 private:
  /// A classified state not yet finished at the current trace time; it is added to busy_s,
  /// comm_s or idle_s when the clock passes its end, or cut at the end of the run.
  struct OpenState {
    double begin_s;
    double end_s;
    EntityIndex entity;
    StateCategory category;
  };
  /// The per-bin seconds array of a category.
  std::vector<double>& seconds_of(StateCategory c);
  /// The per-bin arrays in use (busy_s, and load / comm_s / idle_s once such a sample or state
  /// occurred).
  std::vector<std::vector<double>*> per_bin_arrays();
  bool has_load_ = false;
  bool has_comm_ = false;
  bool has_idle_ = false;
  [[nodiscard]] std::size_t bin_index(double t) const;
  [[nodiscard]] std::size_t bins_covering(double t) const;
  /// Whether `bins` bins of `entities` entities stay within kMaxBins and kMaxCells.
  [[nodiscard]] static bool fits(std::size_t bins, std::size_t entities);
  void check_size(std::size_t bins, std::size_t entities) const;
  void close_states_until(double now_s);
  void ensure_bins(std::size_t count);
  void flush_traffic_until(std::size_t bin);
  void merge_open_pairs();
  void forget_recent_pairs();
  void integrate_load(EntityIndex e, double until_s);
  void add_interval(std::vector<double>& per_bin, EntityIndex e, double begin_s, double end_s, double weight);
  void seen(EntityIndex e, double t);
  void add_gaps_as_computing();
  void add_collective_traffic();

  TimelineOptions options_;
  StateClassifier classifier_;
  Timeline tl_;
  /// bin_index and bins_covering of times that come in order.
  mutable BinFinder bins_;
  bool ended_ = false;
  /// The bins up to the known end (0 when it is not known or past kMaxBins): the per-bin arrays
  /// are reserved for them at once.
  std::size_t planned_bins_ = 0;
  /// Maps the reserved arrays and pair records a little ahead of the filling (a hint: see
  /// src/base/prefault.hpp); range 0 the pair records, then the per-bin arrays.
  std::unique_ptr<Prefaulter> prefault_;
  bool prefault_considered_ = false;  ///< decided once, when the arrays are first reserved whole
  /// Reserved memory from which mapping it ahead pays for a thread: 64 MiB.
  static constexpr std::size_t kPrefaultFrom = std::size_t{64} << 20U;
  // Traffic of the bin being filled, keyed by (src << 32 | dst); merged and flushed in sorted
  // order. A pair may have several entries (its messages the recent pairs missed): merged when
  // the bin closes, or when the entries pass compact_at_.
  std::size_t open_bin_ = 0;
  std::vector<std::pair<std::uint64_t, PairTraffic>> open_pairs_;
  std::size_t compact_at_ = 0;
  /// The open bin's recently seen pairs, direct-mapped by key: a pair's next message adds to its
  /// entry without a search. An entry counts for the bin while its epoch is the current one.
  struct RecentPair {
    std::uint64_t key = 0;
    std::uint32_t slot = 0;
    std::uint32_t epoch = 0;
  };
  std::vector<RecentPair> recent_pairs_;
  std::uint32_t epoch_ = 1;
  std::vector<std::pair<std::uint64_t, PairTraffic>> sort_scratch_;  ///< the radix sort's other buffer
  std::vector<double> last_load_time_s_;
  std::vector<double> last_load_value_;
  std::vector<OpenState> open_states_;  ///< a min-heap on end_s
  std::vector<double> first_seen_s_;     ///< per entity: its first event's time (+inf before)
  std::uint64_t computing_states_ = 0;   ///< states classified computing
  /// A collective's part kept until the end: the instances are complete only then.
  struct CollectivePart {
    double begin_s;
    EntityIndex entity;
    std::int64_t root;
    std::uint64_t bytes;
    CollectiveKind kind;
  };
  std::unordered_map<std::string, std::vector<CollectivePart>> collective_parts_;  ///< by group
};

}  // namespace kanoko::trace
