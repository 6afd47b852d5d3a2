// The profile by code location (issue 19, docs/profile.md): per call site, function or call path,
// the calls, the time computing, communicating and waiting, the bytes sent, and how that time is
// spread over the ranks. Built in one pass over the event stream, as a TraceSink; the same numbers
// serve the CLI (`kanoko profile`), and any view that shows a location.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/trace/event.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::profile {

/// What one profile row stands for.
enum class GroupBy : std::uint8_t {
  Line,      ///< a call site: file, line and function
  Function,  ///< a function (a location without one: its file)
  Path       ///< a call site with the call path leading to it
};

/// "line", "function", "path" → GroupBy; false for another word.
bool parse_group_by(std::string_view word, GroupBy& out);

struct ProfileOptions {
  GroupBy by = GroupBy::Line;
  /// Only the part of each state inside [from_s, to_s), and messages sent inside it.
  double from_s = -std::numeric_limits<double>::infinity();
  double to_s = std::numeric_limits<double>::infinity();
  /// Ranks to count (Entity::rank, or the entity index when the rank is unknown); empty: all.
  std::vector<std::int64_t> ranks;
  /// State classes (names or glob patterns, trace::StateClassifier): the format's defaults.
  std::vector<std::string> computing, communicating, idle;
  /// Frames of a call path shown at most (GroupBy::Path); deeper ones are cut with "...".
  std::size_t max_path_frames = 32;
};

/// How the time at a row is spread over the ranks that spent any there.
struct Spread {
  std::size_t ranks = 0;
  double min_s = 0;
  double mean_s = 0;
  double max_s = 0;
  double imbalance = 0;  ///< max / mean (1 when balanced), 0 without time
};

struct ProfileRow {
  std::string label;     ///< "file:line function", "function" or the call path, as read (raw bytes)
  std::string file;      ///< "" unknown (and for function rows)
  std::int64_t line = 0;
  std::string function;
  bool located = true;   ///< false for the row of the events without a location
  std::uint64_t calls = 0;  ///< states at the row
  double computing_s = 0;
  double communicating_s = 0;
  double waiting_s = 0;
  std::uint64_t bytes = 0;     ///< bytes of the messages sent from here
  std::uint64_t messages = 0;
  Spread spread;  ///< of computing + communicating + waiting per rank
  [[nodiscard]] double time_s() const { return computing_s + communicating_s + waiting_s; }
};

struct Profile {
  GroupBy by = GroupBy::Line;
  /// Sorted by waiting time, then by time, then by label; the row of the events without a location
  /// (located = false) takes part like any other.
  std::vector<ProfileRow> rows;
  std::uint64_t locations = 0;             ///< locations the trace defines
  std::uint64_t states_with_location = 0;  ///< counted states (in the range and ranks)
  std::uint64_t states = 0;
  std::uint64_t messages_with_location = 0;
  std::size_t ranks = 0;  ///< ranks counted
  double from_s = 0;      ///< the range counted (the trace's span when not given)
  double to_s = 0;
};

/// A code location as a sink keeps it (the texts of TraceSink::on_location copied).
struct KeptLocation {
  std::string file;
  std::int64_t line = 0;
  std::string function;
  trace::LocationIndex caller = 0;  ///< an earlier index (a caller defined later is dropped), 0 none
};

/// Builds a Profile from a trace stream.
class ProfileBuilder final : public trace::TraceSink {
 public:
  explicit ProfileBuilder(ProfileOptions options);

  void on_entity(const trace::Entity& e) override;
  void on_link(const trace::Link& /*l*/) override {}
  void on_message(const trace::Message& m) override;
  void on_load(const trace::LoadSample& /*s*/) override {}
  void on_state(const trace::StateInterval& s) override;
  void on_location(trace::LocationIndex index, const trace::CodeLocation& l) override;
  void on_end(double end_s) override;

  /// The profile (after on_end). Moves it out.
  Profile take();

 private:
  using Location = KeptLocation;
  /// The row of a location (0: the row of no location), made on first use.
  std::uint32_t row_of(trace::LocationIndex location);
  [[nodiscard]] std::string row_key(trace::LocationIndex location) const;

  ProfileOptions options_;
  trace::StateClassifier classifier_;
  std::vector<bool> counted_;                  ///< per entity: its rank is selected
  std::vector<Location> locations_;            ///< [index - 1]
  std::vector<std::uint32_t> location_row_;    ///< per location index + 1: row + 1, 0 not made yet
  std::unordered_map<std::string, std::uint32_t> row_index_;
  std::unordered_map<std::uint64_t, double> rank_time_;  ///< (row << 32 | entity) → seconds
  Profile profile_;
  double first_s_ = std::numeric_limits<double>::infinity();
  double end_s_ = 0;
};

/// The seconds of state `s` inside [from_s, to_s), or a negative value when the state is not
/// counted there (outside the range; a state of no length counts, with 0 s, when it begins in the
/// range). The one rule of the profile's rows and of the per-interval time at named locations
/// (LocatedTime, located.hpp), so that both give the same numbers for the same range.
[[nodiscard]] double state_part(const trace::StateInterval& s, double from_s, double to_s);

/// A call site as profile rows of `--by line` name it: "file:line function", "?:line" without a
/// file, parts left out when unknown.
[[nodiscard]] std::string site_label(std::string_view file, std::int64_t line, std::string_view function);

/// The text of a trace-given name for a terminal or a CSV cell: control characters and bytes that
/// are not UTF-8 escaped as \xNN.
std::string printable(std::string_view raw);

/// The profile as an aligned text table (the first `top` rows, 0 all), a JSON object, or CSV
/// with a header row.
std::string profile_text(const Profile& p, std::size_t top);
std::string profile_json(const Profile& p, std::size_t top);
std::string profile_csv(const Profile& p, std::size_t top);

}  // namespace kanoko::profile
