// Streaming reader of Paraver traces (.prv + .pcf + .row; Extrae, nsys2prv, Dimemas output),
// docs/trace-formats.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "src/trace/event.hpp"
#include "src/trace/event_window.hpp"

namespace kanoko::trace {

/// Records held back to restore time order: Extrae writes a communication record at its physical
/// send time, after records that start later. A record earlier than what was already emitted (more
/// than this many records out of order) is moved to the time of the last emitted one, with a warning.
inline constexpr std::size_t kParaverMaxHeld = std::size_t{1} << 16U;

/// What the Paraver reader turns into Kanoko events.
struct ParaverOptions {
  /// "task" (default): each (application, task) is an entity, an MPI rank. "thread": each thread.
  std::string entity_level = "task";
  /// Only tasks of this application (1-based) become entities; 0: every application. The default
  /// is the first: Extrae puts the MPI ranks there and adds pseudo-applications (uncore counters).
  std::int64_t application = 1;
  /// Event type whose values become load samples of the entity (e.g. 42000050, instructions);
  /// 0: none.
  std::int64_t load_event_type = 0;
  /// The same event type named by its `.pcf` EVENT_TYPE label: the whole label ("PAPI_TOT_INS
  /// ([Instr completed])") or its first word ("PAPI_TOT_INS"). Looked up once the `.pcf` is read;
  /// a name the `.pcf` does not define (or a missing `.pcf`) is an InputError with suggestions.
  /// Empty: load_event_type decides.
  std::string load_event;
  /// The .pcf and .row files; empty: the .prv path with its extension replaced.
  std::filesystem::path pcf;
  std::filesystem::path row;
  /// Bound of the reordering window (tests lower it to exercise the bound).
  std::size_t max_held = kParaverMaxHeld;
  bool operator==(const ParaverOptions&) const = default;  ///< same options, same events (survey_trace's memo)
};

/// What one read found besides the event stream.
struct ParaverSummary {
  double time_unit_s = 1e-6;       ///< seconds per trace tick (header suffix, default µs)
  double declared_end_s = 0;       ///< the header's end time
  std::uint64_t nodes = 0;         ///< nodes in the header's resource part
  std::uint64_t applications = 0;  ///< applications in the header
  std::uint64_t tasks = 0;         ///< tasks over all applications
  std::uint64_t threads = 0;       ///< threads over all tasks
  std::uint64_t communicators_declared = 0;  ///< the header's number of communicators
  std::uint64_t communicators = 0; ///< communicator lines after the header
  std::uint64_t state_records = 0;
  std::uint64_t event_records = 0;  ///< type-2 records (each may hold several type:value pairs)
  std::uint64_t comm_records = 0;
  std::uint64_t global_op_records = 0;  ///< old type-4 records, counted and skipped
  std::uint64_t comm_bytes = 0;
  std::uint64_t collectives = 0;  ///< MPI collective calls found in the events (type 50000002)
  std::uint64_t markers = 0;      ///< user events (value ≠ 0) of a type whose .pcf label names iterations
  bool have_pcf = false;
  bool have_row = false;
  std::vector<ReaderWarning> warnings;  ///< recoverable problems, one entry per kind
  /// The record that set the trace's end: where its latest time (or a declared end) was read.
  FileLoc end_at;
};

/// Reads `prv` with its .pcf and .row and streams it to `sink` in non-decreasing time order.
/// Throws InputError (file:line:column) for a malformed header or record, ids outside the header's
/// resources, and out-of-range times; a missing .pcf/.row is a warning (generic names are used).
/// Memory is bounded by the resources, the open collectives and the reordering window.
ParaverSummary read_paraver_trace(const std::filesystem::path& prv, TraceSink& sink, const ParaverOptions& options = {});

/// The files read_paraver_trace reads: `prv`, then its .pcf and .row where they exist.
std::vector<std::filesystem::path> paraver_trace_files(const std::filesystem::path& prv, const ParaverOptions& options = {});

/// The same for texts in memory; `name` is used in error locations, `pcf`/`row` may be empty
/// (treated as missing) and are named `name` with .pcf/.row in messages.
ParaverSummary read_paraver_trace_text(std::string_view prv, std::string_view pcf, std::string_view row,
                                       const std::string& name, TraceSink& sink, const ParaverOptions& options = {});

/// True when `head` (the first bytes of a file) starts like a Paraver trace ("#Paraver (").
bool looks_like_paraver(std::string_view head);

}  // namespace kanoko::trace
