// The profile by code location as the viewer shows it (docs/profile.md, "In the viewer"): a
// trace's states and messages kept in memory once, so that the profile of any body and any range
// is made again by ProfileBuilder (the code of `kanoko profile`, no second aggregation), and where
// a chosen location dominates: over the bodies and over time. No OpenSceneGraph here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/profile/profile.hpp"
#include "src/trace/event.hpp"

namespace kanoko::profile {

/// The events a profile counts (entities, code locations, states, messages), kept per entity.
class RecordedTrace final : public trace::TraceSink {
 public:
  /// States and messages kept at most (about 24 to 32 bytes each); past it the detail is dropped
  /// and complete() is false.
  static constexpr std::size_t kMaxRecords = std::size_t{1} << 23U;

  // What a profile counts is kept; links and loads are not.
  void on_location(trace::LocationIndex index, const trace::CodeLocation& l) override;
  void on_entity(const trace::Entity& e) override;
  void on_state(const trace::StateInterval& s) override;
  void on_message(const trace::Message& m) override;
  void on_end(double end_s) override;
  void on_link(const trace::Link& /*l*/) override {}
  void on_load(const trace::LoadSample& /*s*/) override {}

  [[nodiscard]] const std::vector<trace::Entity>& entities() const { return entities_; }
  [[nodiscard]] std::size_t locations() const { return locations_.size(); }
  [[nodiscard]] bool complete() const { return records_ <= kMaxRecords; }
  [[nodiscard]] std::size_t records() const { return records_; }
  [[nodiscard]] double begin_s() const { return begin_s_; }
  [[nodiscard]] double end_s() const { return end_s_; }

  /// Streams to `sink` what a trace reader would for the entities `only` (all when empty): those
  /// entities, the code locations their events use (with their callers), their states and the
  /// messages they send, then on_end.
  void replay(trace::TraceSink& sink, std::span<const trace::EntityIndex> only = {}) const;

  /// A state as kept: its name is names()[name].
  struct State {
    double begin_s;
    double end_s;
    std::uint32_t name;
    trace::LocationIndex location;
  };
  /// The states of entity `e` in the order they came (empty past the entities).
  [[nodiscard]] std::span<const State> states(trace::EntityIndex e) const {
    return e < states_.size() ? std::span<const State>(states_[e]) : std::span<const State>{};
  }
  /// Location `index` (1 .. locations()); its texts live as long as the trace.
  [[nodiscard]] trace::CodeLocation location(trace::LocationIndex index) const {
    const Location& l = locations_.at(index - 1);
    return {l.file, l.line, l.function, l.caller};
  }

 private:
  using Location = KeptLocation;
  struct Sent {
    double send_s;
    double recv_s;
    std::uint64_t bytes;
    trace::EntityIndex dst;
    trace::LocationIndex location;
  };
  std::vector<trace::Entity> entities_;
  std::vector<Location> locations_;  ///< [index - 1]
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> name_index_;
  std::vector<std::vector<State>> states_;  ///< per entity
  std::vector<std::vector<Sent>> sent_;     ///< per sending entity
  std::size_t records_ = 0;
  double begin_s_ = 0;
  double end_s_ = 0;
  bool any_time_ = false;
};

/// A trace read for the viewer's location panels.
struct LocationSource {
  RecordedTrace trace;
  std::string format;       ///< the reader that read it
  ProfileOptions defaults;  ///< the format's state classes (as `kanoko profile` uses them)
  /// "" when the trace carries code locations, else the one line saying how to record them.
  std::string no_locations;
  std::vector<std::string> warnings;
};

/// ProfileOptions with the state classes of `format` (a reader name), as `kanoko profile` sets them.
[[nodiscard]] ProfileOptions profile_defaults(const std::string& format);
/// "PATH: no code locations in this FORMAT trace; HOW (docs/profile.md)": what `kanoko profile`
/// and the viewer say of a trace without locations.
[[nodiscard]] std::string no_locations_message(const std::string& path, const std::string& format);

/// Reads a trace (format "auto": detected) into a LocationSource. Throws InputError for bad input.
[[nodiscard]] LocationSource read_location_source(const std::filesystem::path& path, const std::string& format = "auto");

/// The profile of one entity (`entity` set) or of all, with `options` (by, range; its ranks are
/// ignored), made by ProfileBuilder from the recorded events.
[[nodiscard]] Profile profile_of(const RecordedTrace& trace, ProfileOptions options,
                                 std::optional<trace::EntityIndex> entity = std::nullopt);

/// The columns a location table sorts by.
enum class SortBy : std::uint8_t { waiting, communicating, computing, calls, time, location };
/// Sorts the rows by `key`, the largest first (by label: A first), or the other way round when
/// `reverse`; ties keep the profile's order (waiting, time, label).
void sort_rows(Profile& p, SortBy key, bool reverse = false);

/// True when the two rows stand for the same location (label, file, line, function).
[[nodiscard]] bool same_row(const ProfileRow& a, const ProfileRow& b);

/// Where a chosen row dominates. The measure is its waiting time, or its total time when it has
/// no waiting in the whole run. It dominates a body (or a time bin, over all bodies) when, by that
/// measure, it is the body's first row or holds at least kDominantShare of the body's total.
struct Dominance {
  static constexpr double kDominantShare = 0.25;
  bool by_waiting = true;                 ///< the measure: waiting (else total time)
  std::vector<double> share;              ///< per entity: the row's share of the measure, 0..1
  std::vector<bool> dominant;             ///< per entity
  std::vector<std::pair<double, double>> spans;  ///< times where it dominates (merged bins)
  double bin_s = 0;
};
/// The dominance of `row` (a row of a profile made with `options`) over the entities and over
/// `bins` equal bins of the trace's span.
[[nodiscard]] Dominance dominance(const RecordedTrace& trace, const ProfileOptions& options, const ProfileRow& row,
                                  std::size_t bins = 100);

/// The inspect panel's lines for one body: its first `top` rows in the current interval and in
/// the whole run (waiting, communicating, computing seconds, calls, location).
[[nodiscard]] std::string locations_text(const Profile& interval, const Profile& run, std::size_t top = 5);

}  // namespace kanoko::profile
