// Reader of OTF2 archives (Score-P, Scalasca, Vampir, TAU) through Debian's
// libopen-trace-format2, docs/trace-formats.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "src/trace/event.hpp"
#include "src/trace/event_window.hpp"

namespace kanoko::trace {

/// What the OTF2 reader turns into Kanoko events.
struct Otf2Options {
  /// Metric member (e.g. "PAPI_TOT_CYC") whose values become load samples. Empty: the first
  /// member of the first metric class or instance the trace records events for. Accumulated
  /// metrics are read as rates (per second), absolute and relative ones as values.
  std::string metric;
  /// Bound of the reordering window (tests lower it to exercise the bound).
  std::size_t max_held = kDefaultEventWindow;
  bool operator==(const Otf2Options&) const = default;  ///< same options, same events (survey_trace's memo)
};

/// What one read found besides the event stream, in otf2-print's terms.
struct Otf2Summary {
  std::uint64_t location_groups = 0;
  std::uint64_t locations = 0;        ///< locations that became entities
  std::uint64_t regions = 0;
  std::uint64_t enters = 0;
  std::uint64_t leaves = 0;
  std::uint64_t sends = 0;            ///< MpiSend + MpiIsend events
  std::uint64_t receives = 0;         ///< MpiRecv + MpiIrecv events
  std::uint64_t messages = 0;         ///< matched send/receive pairs
  std::uint64_t collectives = 0;      ///< MpiCollectiveEnd events
  std::uint64_t metric_events = 0;
  std::uint64_t load_samples = 0;
  std::string metric;                 ///< the metric member read as load ("" if none)
  std::uint64_t timer_resolution = 0; ///< ticks per second
  std::vector<ReaderWarning> warnings;
  /// The event with the latest time: the location's event file, "event N" (1-based, in that
  /// location's order) as its record.
  FileLoc end_at;
};

/// The anchor file of an OTF2 archive given as its anchor file or as its directory (which must
/// hold exactly one `*.otf2`); throws InputError when there is none.
std::filesystem::path otf2_anchor(const std::filesystem::path& path);
/// The files read_otf2_trace reads: the anchor, its global definitions (.def) and every file of
/// the archive's folder, in a fixed order.
std::vector<std::filesystem::path> otf2_trace_files(const std::filesystem::path& path);

/// True for the anchor file of an OTF2 archive (its first bytes) or a directory holding one.
bool looks_like_otf2_anchor(std::string_view head);
bool is_otf2_directory(const std::filesystem::path& path);

/// Reads an OTF2 archive and streams it to `sink` in time order: locations become entities,
/// Enter/Leave states, MPI point-to-point events matched messages, MPI collectives collectives and
/// one metric load. Throws InputError naming the file for archives the library cannot read.
Otf2Summary read_otf2_trace(const std::filesystem::path& path, TraceSink& sink, const Otf2Options& options = {});

}  // namespace kanoko::trace
