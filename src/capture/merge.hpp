// Merges the per-rank capture files (rank-N.kcap, written by libkanoko-capture) into one native
// trace (.kntr): clock-offset correction, send/receive matching, one time-sorted stream.
// Used by the library itself at MPI_Finalize (on rank 0) and by `kanoko capture --merge`.
// Depends on nothing but the standard library, so it can live inside the preloaded library.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kanoko::capture {

/// Clock alignment of one rank, as measured by the library (see docs/capture.md).
struct RankClock {
  int rank = 0;
  int sync_points = 0;       ///< 1 (init only) or 2 (init and finalize)
  double offset_init_s = 0;  ///< add to the rank's local clock to get rank 0's clock, at init
  double bound_init_s = 0;   ///< |error| of offset_init_s is at most this (half the best round trip)
  double offset_fin_s = 0;   ///< the same at finalize (equal to init when there is one point)
  double bound_fin_s = 0;
  bool finished = false;     ///< the rank reached MPI_Finalize (its file ends with `fin`)
  double overhead_s = 0;     ///< time spent in the capture library's own bookkeeping
  double run_s = 0;          ///< wall time from MPI_Init to MPI_Finalize (or last event)
  std::uint64_t events = 0;  ///< records read from the rank's file
};

/// What a merge did, for the caller's report.
struct MergeSummary {
  int ranks = 0;                       ///< ranks found (files) out of `size`
  int size = 0;                        ///< MPI_COMM_WORLD size the files declare
  bool partial = false;                ///< a rank is missing or did not reach MPI_Finalize
  std::uint64_t messages = 0;          ///< msg entries written
  std::uint64_t unmatched_sends = 0;   ///< sends whose receive was not recorded (written without recv=)
  std::uint64_t unmatched_recvs = 0;   ///< receives whose send was not recorded (dropped)
  std::uint64_t clamped_recvs = 0;     ///< receive times moved up to their send time (clock error)
  std::uint64_t collectives = 0;       ///< coll entries written
  std::uint64_t truncated_lines = 0;   ///< incomplete last lines ignored (a rank killed mid-write)
  double max_clock_bound_s = 0;        ///< largest alignment bound over ranks and sync points
  double max_overhead_fraction = 0;    ///< max over ranks of overhead_s / run_s
  double end_s = 0;                    ///< the trace's end time
  std::vector<RankClock> clocks;       ///< per rank found
  std::vector<std::string> notes;      ///< human-readable remarks (missing ranks, ...)
  std::uint64_t call_sites = 0;          ///< call sites recorded (over ranks)
  std::uint64_t located_call_sites = 0;  ///< of which resolved to a location
  std::uint64_t locations = 0;           ///< code locations written (loc entries)
  std::uint64_t located_events = 0;      ///< states and messages with a location
  /// Call sites named symbol+offset only (objects without line information: no -g).
  std::vector<std::string> location_notes;
  /// "file:line: ..." for damaged call-site records, objects gone since the run, ...: their
  /// calls keep their times but have no location.
  std::vector<std::string> location_warnings;
};

/// Merges every rank-N.kcap in `dir` into the native trace `output` (written to a temporary file
/// and renamed, so it appears whole or not at all). Throws std::runtime_error with a clear message
/// when the folder holds no capture files, a file is malformed, or the output cannot be written.
MergeSummary merge_capture_dir(const std::filesystem::path& dir, const std::filesystem::path& output);

/// Lines (without a prefix) that say what became of the call sites: how many were located, the
/// notes (symbol+offset only) and the warnings (damaged records, objects gone), at most 20.
std::vector<std::string> call_site_report(const MergeSummary& s);

/// The per-rank file name for `rank`: "rank-<rank>.kcap".
std::string rank_file_name(int rank);

}  // namespace kanoko::capture
