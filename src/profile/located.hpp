// Time at named code locations, per interval and entity: what a mapping's [locations] gives its
// formulas and sound cues (docs/mapping-language.md, "Code locations"). The seconds computing,
// communicating and waiting of the states whose call site a matcher accepts, cut into the
// intervals by the profile's own rule (state_part), so that the value of an interval is the
// profile's number for that range (`kanoko profile --from --to --ranks`) summed over the matching
// rows.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "src/trace/event.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::profile {

/// Decides whether one named quantity counts a code location. Called once per location the trace
/// defines, with the location and its call-site label (site_label: "file:line function").
using LocationMatcher = std::function<bool(const trace::CodeLocation& l, const std::string& label)>;

struct LocatedOptions {
  double interval_s = 0.1;  ///< bin b is [b × interval_s, (b + 1) × interval_s), as the timeline's
  /// One per named quantity; at most kMaxQuantities.
  std::vector<LocationMatcher> matchers;
  /// State classes, as the timeline's (trace::TimelineOptions): computing, communicating, idle.
  std::vector<std::string> computing, communicating, idle;
  bool mpi_call_table = true;
};

/// The seconds of each quantity per bin and entity, by state class.
struct LocatedSeconds {
  enum Class : std::size_t { kComputing, kCommunicating, kWaiting, kClasses };
  std::size_t quantities = 0;
  std::size_t bins = 0;
  std::size_t entities = 0;
  /// [((quantity × bins + bin) × entities + entity) × kClasses + class]
  std::vector<double> seconds;
  /// Per quantity: how many of the trace's code locations it matched.
  std::vector<std::uint64_t> matched_locations;
  /// Per quantity: a few labels of the locations it matched (for messages).
  std::vector<std::vector<std::string>> examples;
  std::uint64_t locations = 0;  ///< code locations the trace defines

  [[nodiscard]] double at(std::size_t quantity, std::size_t bin, trace::EntityIndex entity, std::size_t cls) const {
    return seconds[((quantity * bins + bin) * entities + entity) * kClasses + cls];
  }
};

/// Bins the located states of a stream as they come, per entity; take() lays them out.
class LocatedTime final : public trace::TraceSink {
 public:
  static constexpr std::size_t kMaxQuantities = 64;
  /// Values kept at most (quantities × 3 × bins, summed over the entities): 512 MiB. A state that
  /// would need more is refused with an InputError (no location: the reader adds its line).
  static constexpr std::size_t kMaxValues = std::size_t{1} << 26U;

  /// Throws std::invalid_argument for more than kMaxQuantities matchers or an interval that is
  /// not > 0 (the mapping parser refuses both first).
  explicit LocatedTime(LocatedOptions options);

  void on_entity(const trace::Entity& /*e*/) override {}
  void on_link(const trace::Link& /*l*/) override {}
  void on_message(const trace::Message& /*m*/) override {}
  void on_load(const trace::LoadSample& /*s*/) override {}
  void on_state(const trace::StateInterval& s) override;
  void on_location(trace::LocationIndex index, const trace::CodeLocation& l) override;
  void on_end(double /*end_s*/) override {}

  /// The seconds in `bins` bins of `entities` entities (the timeline's): states of entities past
  /// `entities` and time past the last bin are left out.
  LocatedSeconds take(std::size_t bins, std::size_t entities);

 private:
  LocatedOptions options_;
  trace::StateClassifier classifier_;
  std::vector<std::uint64_t> mask_;  ///< per location index: the quantities that count it
  /// Per entity: [(bin × quantities + quantity) × kClasses + class], grown as its states come.
  std::vector<std::vector<double>> seconds_;
  std::size_t values_ = 0;  ///< sum of the sizes of seconds_
  LocatedSeconds result_;
};

}  // namespace kanoko::profile
