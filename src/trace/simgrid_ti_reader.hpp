// Reader of SimGrid time-independent (TI) traces (`smpirun -trace-ti`): one file holding every
// rank's actions, or an index file listing one action file per rank. The actions carry volumes
// (flops, bytes), not times; the reader replays them with a simple cost model into timed events.
// docs/trace-formats.md describes the actions read and the model.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "src/trace/event.hpp"
#include "src/trace/event_window.hpp"

namespace kanoko::trace {

/// The replay's cost model (docs/trace-formats.md, "SimGrid time-independent").
struct SimgridTiOptions {
  double flop_rate = 1e9;    ///< flop/s of every rank: `compute F` takes F / flop_rate seconds
  double bandwidth = 1.25e8; ///< bytes/s of a transfer (1 Gbit/s)
  double latency_s = 5e-5;   ///< seconds added to every transfer and to every step of a collective
  /// Bound of the reordering window: events wait in it while some rank is blocked since earlier;
  /// when it fills, open waits are emitted in pieces (tests lower it to exercise the bound).
  std::size_t max_held = std::size_t{1} << 16U;
  bool operator==(const SimgridTiOptions&) const = default;  ///< same options, same events (survey_trace's memo)
};

/// What one replay found besides the event stream.
struct SimgridTiSummary {
  bool indexed = false;           ///< the trace was an index of per-rank files
  std::uint64_t ranks = 0;
  std::uint64_t actions = 0;      ///< action lines replayed
  double flops = 0;               ///< flops of every compute (and of reductions)
  std::uint64_t sends = 0;        ///< send, isend and the send half of sendRecv
  std::uint64_t receives = 0;     ///< recv, irecv and the receive half of sendRecv
  std::uint64_t bytes = 0;        ///< bytes of the point-to-point messages
  std::uint64_t collectives = 0;  ///< collective operations (each counted once, not per rank)
  double end_s = 0;               ///< replayed end time: the last rank's finish
  std::vector<ReaderWarning> warnings;
};

/// Replays a TI trace (an action file, or an index file whose lines name per-rank action files
/// relative to its folder) and streams the timed events to `sink` in time order. Throws
/// InputError (file:line:column) for malformed or unknown actions, ranks not in the trace,
/// mismatched collectives and deadlocks; messages never received and requests never completed are
/// warnings. Memory is bounded by the ranks, the pending messages and requests, and the window.
SimgridTiSummary read_simgrid_ti_trace(const std::filesystem::path& path, TraceSink& sink,
                                       const SimgridTiOptions& options = {});

/// The files read_simgrid_ti_trace reads: `path`, then, for an index, the action files it lists
/// (checked as the reader checks them).
std::vector<std::filesystem::path> simgrid_ti_files(const std::filesystem::path& path);

/// The same for a single-file trace in memory; `name` is used in error locations.
SimgridTiSummary read_simgrid_ti_text(std::string_view text, const std::string& name, TraceSink& sink,
                                      const SimgridTiOptions& options = {});

/// True when `head` (the first bytes of a file) looks like a TI action file ("0 init", "3 compute
/// 1e6", ...) or a TI index (every line one relative path).
bool looks_like_simgrid_ti(std::string_view head);

}  // namespace kanoko::trace
