// The reader registry: a name → reader table, format detection from content, and one entry point
// (`read_trace`) that every command uses, so that a new format is one table row.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "src/trace/chrome_reader.hpp"
#include "src/trace/event.hpp"
#include "src/trace/otf2_reader.hpp"
#include "src/trace/paje_reader.hpp"
#include "src/trace/paraver_reader.hpp"
#include "src/trace/simgrid_ti_reader.hpp"

namespace kanoko::trace {

/// Options of every reader; each reads the part meant for it.
struct ReaderOptions {
  PajeOptions paje;
  ParaverOptions paraver;
  SimgridTiOptions simgrid_ti;
  Otf2Options otf2;
  ChromeOptions chrome;
  /// Threads reading a native or Pajé file (TextReadOptions::threads: 0 one per core, 1 the
  /// calling thread only).
  int threads = 0;
  bool operator==(const ReaderOptions&) const = default;  ///< same options, same events (survey_trace's memo)
};

/// The states a format counts as computing, communicating and idle when the mapping does not say
/// (names or glob patterns, StateClassifier). Names no list matches are classed by the MPI call
/// table (mpi_calls.hpp), so the lists hold only what the table does not say.
struct StateDefaults {
  std::vector<std::string> computing;
  std::vector<std::string> communicating;
  std::vector<std::string> idle;
};

/// What a format is, as columns of the reader registry: a new format is one row.
struct FormatFacts {
  StateDefaults states;        ///< default state classes
  bool message_sizes = false;  ///< its messages can carry sizes in bytes of their own
  bool entity_type = false;    ///< the [trace] key `entity_type` applies
  bool load_variable = false;  ///< the [trace] key `load_variable` applies
  bool message_bytes = false;  ///< the [trace] key `message_bytes` applies
  /// States naming collective MPI calls become collectives (CollectivesFromStates) unless the
  /// trace shows collectives of its own; false for formats whose collectives are always records
  /// (native `coll` lines, SimGrid TI replay).
  bool collectives_from_states = false;
  /// How a user records code locations in this format (one clause, for the message of a profile
  /// of a trace without them).
  std::string_view record_locations;
};

/// The facts of the reader named `format`; an unknown name gets native's.
const FormatFacts& format_facts(std::string_view format);

/// What a read found besides the event stream.
struct ReadReport {
  std::string format;        ///< the reader that read the file ("native", "paje")
  bool has_paje = false;     ///< `paje` is set (the file was a Pajé trace)
  PajeSummary paje;          ///< Pajé counts, container types and warnings
  /// Recoverable problems found by the readers other than Pajé's, one entry per kind.
  std::vector<ReaderWarning> warnings;
  /// Format-specific figures for `kanoko info` (label, value), in display order.
  std::vector<std::pair<std::string, std::string>> details;
  /// Messages delivered with a size (bytes > 0) and without (SMPI without display-sizes, Chrome
  /// flows without `message_bytes`; a message of 0 bytes counts as without).
  std::uint64_t messages_with_bytes = 0;
  std::uint64_t messages_without_bytes = 0;
  /// Code locations the trace defines (TraceSink::on_location) and the states and messages that
  /// carry one.
  std::uint64_t locations = 0;
  std::uint64_t states_with_location = 0;
  std::uint64_t messages_with_location = 0;
  /// Collectives made from states naming collective calls (CollectivesFromStates).
  std::uint64_t collectives_from_states = 0;
  /// The record that set the trace's end (its latest time, or a declared end): file:line:column
  /// for text formats, the file and record for binary ones; an empty file when the reader cannot
  /// tell (SimGrid TI, whose times are replayed).
  FileLoc end_at;
  /// One line per kind of recoverable problem ("file:line: warning: N× what"), empty if none.
  [[nodiscard]] std::vector<std::string> warning_lines() const;
};

/// The whole-file problem "the trace declares no entity", saying what declares them in `format`
/// (a reader name; another name gets a generic text).
std::string no_entities_message(std::string_view format);

/// The registered formats, in table order ("native", "paje").
std::vector<std::string> reader_names();

/// The format of a file judged from its first bytes, or "" when no reader recognises it.
std::string detect_format_text(std::string_view head);
/// The same for a file: reads its first 64 KiB. Throws InputError if it cannot be opened.
std::string detect_format(const std::filesystem::path& path);

/// Reads `path` with the reader named `format` ("auto": detected from content) into `sink`.
/// Throws InputError naming the file and the valid formats when the format is unknown or cannot
/// be detected, and whatever the reader throws for bad content.
ReadReport read_trace(const std::filesystem::path& path, TraceSink& sink, const std::string& format = "auto",
                      const ReaderOptions& options = {});

/// Every file read_trace reads for `path`, in a fixed order: the trace and what its reader also
/// opens (a Paraver trace's .pcf and .row, an OTF2 archive's definitions and per-location files,
/// the action files a SimGrid TI index lists). Throws as read_trace does for an unknown format or
/// a malformed TI index.
std::vector<std::filesystem::path> trace_files(const std::filesystem::path& path, const std::string& format = "auto",
                                               const ReaderOptions& options = {});

}  // namespace kanoko::trace
