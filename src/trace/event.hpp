// The event model every trace reader produces, delivered as a stream to a TraceSink so that no
// reader has to hold a whole trace in memory (the HYVT/JPAL "trace access layer" of the seeds).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kanoko::trace {

/// Dense index of an entity (node/process) in declaration order: 0, 1, 2, ...
using EntityIndex = std::uint32_t;

/// A container of the trace's container tree that holds an entity's host (a SimGrid zone, an OTF2
/// system-tree node, a Paraver node): its name and the name of its container type ("L1", "zone",
/// "machine", ...).
struct Enclosing {
  std::string type;
  std::string name;
  friend bool operator==(const Enclosing&, const Enclosing&) = default;
};

/// A computing node, process or thread that may become a body.
struct Entity {
  EntityIndex index = 0;  ///< dense, declaration order
  std::int64_t id = 0;    ///< the id the trace file uses
  std::string name;       ///< display name ("pe3", "rank-3")
  std::string host;       ///< machine it ran on, "" if unknown
  std::int64_t rank = -1; ///< MPI rank, -1 if unknown
  /// The containers above the host (above the entity itself when the trace gives no host), the
  /// innermost first, the trace's root container left out; empty when the format records none.
  /// docs/trace-formats.md, "Container hierarchy", says what each reader fills in.
  std::vector<Enclosing> above_host;
};

/// An interconnect link between two entities (topology, not traffic).
struct Link {
  std::int64_t id = 0;
  EntityIndex a = 0;
  EntityIndex b = 0;
  std::string name;
};

/// Index of a code location in the trace's location table (one table per trace, filled through
/// TraceSink::on_location); 0: no location. Events carry this index, not the location itself.
using LocationIndex = std::uint32_t;

/// Where in the program an event happened: a source line in a function, and the frame it was
/// called from. docs/trace-formats.md, "Code locations", says what each format records.
struct CodeLocation {
  std::string_view file;      ///< source file as the trace names it, "" unknown; valid during the callback
  std::int64_t line = 0;      ///< 1-based line, 0 unknown
  std::string_view function;  ///< function name, "" unknown; valid during the callback
  /// The location of the next frame outward on the call path (an earlier index), 0 when the
  /// call path ends here or the format records none.
  LocationIndex caller = 0;
};

/// A point-to-point message. Times in seconds since the trace start.
struct Message {
  double send_s = 0;
  double recv_s = -1;  ///< < 0 when unknown
  EntityIndex src = 0;
  EntityIndex dst = 0;
  std::uint64_t bytes = 0;
  std::int64_t tag = -1;
  LocationIndex location = 0;  ///< the send's call site, 0 unknown
};

/// A sampled load value; it holds until the next sample of the same entity.
struct LoadSample {
  double time_s = 0;
  EntityIndex entity = 0;
  double value = 0;
};

/// An entity spends [begin_s, end_s) in a named state.
struct StateInterval {
  double begin_s = 0;
  double end_s = 0;
  EntityIndex entity = 0;
  std::string_view name;  ///< valid only during the callback
  LocationIndex location = 0;  ///< the call site of the state (an MPI call's line), 0 unknown
};

/// One node's part in a collective operation (barrier, broadcast, reduction, ...). The entries of
/// one operation share `group`; together they name its participants.
struct Collective {
  double begin_s = 0;
  double end_s = 0;
  EntityIndex entity = 0;
  std::string_view name;    ///< the operation ("allreduce"); valid only during the callback
  std::uint64_t bytes = 0;  ///< bytes this node contributes
  std::int64_t root = -1;   ///< entity index of the root, -1 when the operation has none
  std::string_view group;   ///< the operation instance ("w.12"), "" if unknown; valid during the callback
};

/// A point in time an entity marks: an iteration or step start (Chrome instant events, Paraver user
/// events whose type names an iteration). Sinks that have no use for markers ignore them.
struct Marker {
  double time_s = 0;
  EntityIndex entity = 0;
  std::string_view name;  ///< what it marks ("iteration"); valid only during the callback
};

/// Consumer of a trace stream. Readers call these in non-decreasing time order of the events'
/// first time stamps; entities are announced before they are used.
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void on_entity(const Entity& e) = 0;
  virtual void on_link(const Link& l) = 0;
  virtual void on_message(const Message& m) = 0;
  virtual void on_load(const LoadSample& s) = 0;
  virtual void on_state(const StateInterval& s) = 0;
  /// Announces code location `index` (1, 2, 3, ... in order) before any event carries it. Sinks
  /// that have no use for locations ignore them; sinks that pass events on pass these on too.
  virtual void on_location(LocationIndex /*index*/, const CodeLocation& /*l*/) {}
  /// A node's part in a collective. Sinks that have no use for collectives ignore them.
  virtual void on_collective(const Collective& /*c*/) {}
  /// The trace records collective operations as events of their own (OTF2 MpiCollectiveBegin/End,
  /// Extrae's MPI collective events), so states naming collective calls are not collectives again
  /// (CollectivesFromStates). Readers call it before the first such state leaves them.
  virtual void on_collective_records() {}
  /// A marker (iteration start). Sinks that have no use for markers ignore them.
  virtual void on_marker(const Marker& /*m*/) {}
  /// The end of the trace; `end_s` is the declared or observed end time.
  virtual void on_end(double end_s) = 0;
};

}  // namespace kanoko::trace
