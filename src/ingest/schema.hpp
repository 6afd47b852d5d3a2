// The mapping's [trace] section applied to a trace: which entities become bodies (selection by
// name, grouping by host or by a parent table), which states count as computing, and the
// reader options (format, Pajé entity type and load variable). A BodySelector sits between a
// reader and the timeline builder and renumbers the event stream from entities to bodies.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/ingest/survey.hpp"
#include "src/ingest/window.hpp"
#include "src/mapping/mapping.hpp"
#include "src/mapping/pattern.hpp"
#include "src/trace/event.hpp"
#include "src/trace/readers.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::ingest {

using mapping::Mapping;

/// What became of one trace entity.
struct EntityMatch {
  std::string entity;  ///< its name in the trace
  std::string body;    ///< the body it belongs to, "" when it was left out
  std::string reason;  ///< why it was left out
};

/// What applying [trace] to a trace did.
struct SelectionReport {
  std::string format;                         ///< the reader used
  std::vector<EntityMatch> entities;          ///< every entity, in declaration order
  std::vector<std::string> bodies;            ///< body names, body order
  std::vector<std::size_t> members;           ///< entities per body
  std::uint64_t dropped_messages = 0;         ///< messages with an end that is not a body
  std::uint64_t internal_messages = 0;        ///< messages between entities of one body
  std::uint64_t dropped_links = 0;            ///< links with an end that is not a body, or within one
  std::vector<std::string> computing;         ///< the states counted as computing (busy)
  std::vector<std::string> communicating;     ///< the states (names or globs) counted as communicating
  std::vector<std::string> idle;              ///< the states (names or globs) counted as idle
  std::map<std::string, std::uint64_t> states;  ///< state name → intervals seen
  std::map<std::string, trace::StateCategory> categories;  ///< state name → how it counts
  std::vector<Diagnostic> warnings;           ///< recoverable problems (located in the mapping)
  /// What the bodies' stream held (entities are bodies here), read in the same pass; without the
  /// pairs' totals (TraceSurvey::pairs is empty: the timeline has each interval's).
  TraceSurvey survey;
  /// What the ingest chose by itself, one line each ("interval: 0.15 ms, so that ...").
  std::vector<std::string> notes;
};

/// Renumbers a trace stream from entities to bodies as [trace] says and forwards it.
class BodySelector final : public trace::TraceSink {
 public:
  BodySelector(const Mapping& m, trace::TraceSink& downstream);
  BodySelector(const BodySelector&) = delete;  // it points into its own report
  BodySelector& operator=(const BodySelector&) = delete;

  void on_entity(const trace::Entity& e) override;
  void on_link(const trace::Link& l) override;
  void on_message(const trace::Message& msg) override;
  void on_load(const trace::LoadSample& s) override;
  void on_state(const trace::StateInterval& s) override;
  void on_collective(const trace::Collective& c) override;
  void on_location(trace::LocationIndex index, const trace::CodeLocation& l) override { down_.on_location(index, l); }
  void on_end(double end_s) override;

  /// The report so far (complete after on_end).
  [[nodiscard]] SelectionReport& report() { return report_; }

 private:
  static constexpr std::uint32_t kNone = 0xffffffffU;
  /// The body key of an entity, or "" with `why` set.
  std::string body_key(const trace::Entity& e, std::string& why) const;
  /// The body of an entity, kNone when it was left out.
  [[nodiscard]] std::uint32_t body(trace::EntityIndex e) const;

  const Mapping& mapping_;
  trace::TraceSink& down_;
  std::optional<mapping::Rewrite> rename_;     ///< [trace] rename, when given
  std::optional<mapping::Rewrite> host_rule_;  ///< [trace] host_from_name, when given
  std::optional<mapping::Pattern> select_;     ///< [trace] select, when given
  std::optional<mapping::Pattern> exclude_;    ///< [trace] exclude, when given
  std::vector<std::uint32_t> body_of_;            ///< entity index → body, kNone if left out
  std::map<std::string, std::uint32_t> body_index_;
  std::vector<std::vector<std::uint32_t>> members_;  ///< body → entities
  std::vector<double> last_load_;                 ///< entity → latest load sample
  std::vector<bool> has_load_;
  SelectionReport report_;
  std::string last_state_;                      ///< the name of the last state counted
  std::uint64_t* last_state_count_ = nullptr;  ///< its counter in report_.states (map nodes stay put)
};

/// The states each format counts as computing, communicating and idle when the mapping does not
/// say (names or glob patterns, trace::StateClassifier): the reader registry's column.
using StateDefaults = trace::StateDefaults;
/// The defaults of a reader ("native", "paje", "paraver", ...); an unknown name gets native's.
StateDefaults default_states(const std::string& format);

/// "computing", "communicating", "idle", or "not classified".
const char* category_name(trace::StateCategory c);

/// The timeline options (interval, state categories) for a trace of `format`: each category the
/// mapping does not give ([trace] `computing` or [mass] `busy_states`, `communicating`, `idle`)
/// takes the format's default.
trace::TimelineOptions timeline_options(const Mapping& m, const std::string& format);
/// Reader options from [trace] for a trace of `format`: `entity_type` (Pajé container type,
/// Paraver `task`/`thread`), `load_variable` (Pajé variable, Chrome counter, OTF2 metric,
/// Paraver event type) and `message_bytes` (Chrome `args` key). Throws InputError located at the
/// key for a value the format cannot use, and for `message_bytes` with a format whose message
/// sizes are fixed. A key that does not apply to the format and changes nothing (an entity type
/// or load variable for a native trace) is a warning added to `warnings` when given.
trace::ReaderOptions reader_options(const Mapping& m, const std::string& format,
                                    std::vector<Diagnostic>* warnings = nullptr);

/// Every file read_body_timeline reads for `path` (trace::trace_files with [trace]'s format and
/// options), in a fixed order.
std::vector<std::filesystem::path> body_trace_files(const std::filesystem::path& path, const Mapping& m);

/// The time window of [trace] `from` and `to`.
TimeWindow trace_window(const Mapping& m);

/// Reads `path` as [trace] says into a timeline of bodies. Throws InputError for a bad trace, an
/// unknown format, or a selection that leaves no body (located in the mapping). When `report`
/// is given, fills it.
trace::Timeline read_body_timeline(const std::filesystem::path& path, const Mapping& m,
                                   SelectionReport* report = nullptr);

}  // namespace kanoko::ingest
