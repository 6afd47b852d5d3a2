// Streaming reader of Pajé traces (SimGrid, PajeNG, StarPU, ...), docs/trace-formats.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/error.hpp"
#include "src/trace/event.hpp"
#include "src/trace/line_batches.hpp"

namespace kanoko::trace {

/// Events held back to restore time order (a state is known at its pop, a message at its end).
/// Past this, the oldest open state is emitted in pieces and the oldest unmatched link start is
/// dropped with a warning.
inline constexpr std::size_t kPajeMaxHeld = std::size_t{1} << 20U;

/// What the Pajé reader turns into Kanoko events.
struct PajeOptions {
  /// Container type (alias or name) whose containers become entities. Empty: the default rule
  /// (docs/trace-formats.md): type `MPI` if defined, else the leaf container types that have a
  /// state type, else `HOST`, else every leaf container type.
  std::string entity_type;
  /// Variable type (alias or name) whose values become LoadSamples of the entities. Empty: none.
  std::string load_variable;
  /// Bound of the reordering window (tests lower it to exercise the bound).
  std::size_t max_held = kPajeMaxHeld;
  /// Threads and batches for reading a file (lines are split into fields on worker threads).
  /// Batches of 64 KiB: the fields a worker splits a batch into (about five times its bytes)
  /// are still in the core's cache when the parser reads them (on a 24 MB SMPI trace, 9 % less
  /// CPU time than with 256 KiB on one thread, 14 % less on two).
  TextReadOptions read{0, std::size_t{64} << 10U};
  bool operator==(const PajeOptions&) const = default;  ///< same options, same events (survey_trace's memo)
};

/// One kind of recoverable problem: how often it happened and where first.
struct PajeWarning {
  std::string what;
  std::uint64_t count = 0;
  FileLoc first;
};

/// What one read found besides the event stream: counts in pj_dump's terms (containers include
/// the root container `0`), the chosen entity type and the warnings.
struct PajeSummary {
  std::uint64_t containers = 1;       ///< created containers + the root, as pj_dump counts them
  std::uint64_t states = 0;           ///< Set/PushState entries (each is one state interval)
  std::uint64_t links = 0;            ///< matched Start/EndLink pairs
  std::uint64_t platform_links = 0;   ///< Links reported from the platform graph (entity pairs)
  std::uint64_t variable_events = 0;  ///< Set/Add/SubVariable entries
  std::uint64_t point_events = 0;     ///< PajeNewEvent entries
  std::vector<std::pair<std::string, std::uint64_t>> containers_by_type;  ///< type name → count
  std::string entity_type;             ///< name of the type(s) chosen as entities, comma-separated
  std::vector<PajeWarning> warnings;   ///< empty when the trace had no recoverable problem
  /// The record that set the trace's end: where its latest time (or a declared end) was read.
  FileLoc end_at;
  [[nodiscard]] std::uint64_t warning_count() const;
};

/// Reads a Pajé trace and streams it to `sink` in non-decreasing time order. Throws InputError
/// (file:line:column) for malformed lines, undefined event ids and time going backwards; counts
/// unmatched links, pops without pushes and references to undeclared containers or types as
/// warnings. Memory is bounded by the containers, the open states and the pending links, plus a
/// reordering window of at most options.max_held events.
PajeSummary read_paje_trace(const std::filesystem::path& path, TraceSink& sink, const PajeOptions& options = {});

/// The same for text already in memory; `name` is used in error locations.
PajeSummary read_paje_trace_text(std::string_view text, const std::string& name, TraceSink& sink,
                                 const PajeOptions& options = {});

}  // namespace kanoko::trace
