// Collectives recorded only as states (SimGrid SMPI without tracing/smpi/internals, Chrome slices
// named "MPI_Allreduce", OTF2 regions without MpiCollectiveBegin/End, Paraver states named after
// MPI calls): one format-independent stage that turns such states into Collective events, so that
// the timeline pulls the ranks that take part together (docs/trace-formats.md).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/base/flat_index.hpp"
#include "src/trace/event.hpp"
#include "src/trace/mpi_calls.hpp"

namespace kanoko::trace {

/// Forwards a stream and adds a Collective after every state that names a collective MPI call
/// with an `MPI_`/`PMPI_` prefix (a runtime's own "barrier" state stays a state). The k-th call of
/// an operation on an entity is instance k of that operation (group "allreduce#k"), among the
/// entities that make it: states name no communicator, so all of them. Stops adding once the trace
/// shows collectives of its own (on_collective_records, or a Collective from upstream), so that a
/// collective is never counted twice.
class CollectivesFromStates final : public TraceSink {
 public:
  explicit CollectivesFromStates(TraceSink& down) : down_(down) {}

  void on_entity(const Entity& e) override { down_.on_entity(e); }
  void on_link(const Link& l) override { down_.on_link(l); }
  void on_message(const Message& m) override { down_.on_message(m); }
  void on_load(const LoadSample& s) override { down_.on_load(s); }
  void on_state(const StateInterval& s) override;
  void on_location(LocationIndex index, const CodeLocation& l) override { down_.on_location(index, l); }
  void on_collective(const Collective& c) override;
  void on_collective_records() override;
  void on_marker(const Marker& m) override { down_.on_marker(m); }
  void on_end(double end_s) override { down_.on_end(end_s); }

  /// Collectives added from states so far.
  [[nodiscard]] std::uint64_t added() const { return added_; }
  /// Whether states still become collectives (false once the trace showed its own).
  [[nodiscard]] bool active() const { return active_; }

 private:
  /// The collective call a state name stands for, or nullptr (cached per distinct name).
  const MpiCall* collective_call(std::string_view name);
  /// The same for any state name, MPI-prefixed or not, through a small table of the names seen
  /// last (a trace's states take a few names in turn: no prefix test or digest per state).
  const MpiCall* state_call(std::string_view name);

  TraceSink& down_;
  bool active_ = true;
  std::uint64_t added_ = 0;
  FlatStringIndex names_;                     ///< MPI-prefixed state name → index in calls_
  std::vector<const MpiCall*> calls_;         ///< its collective call or nullptr
  std::unordered_map<std::uint64_t, std::uint64_t> counts_;  ///< (entity << 32 | call row) → calls so far
  std::string group_;                         ///< the group text of the collective being added
  struct Recent {
    std::string name;
    const MpiCall* call = nullptr;
    bool used = false;
  };
  std::array<Recent, 8> recent_;  ///< state_call's table, by length and last byte
};

}  // namespace kanoko::trace
