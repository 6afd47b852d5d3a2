// What `simulate`, `view TRACE`, `suggest` and `init` share: the options that choose a mapping
// (a file, or one inferred for a purpose), the time window and a shared calibration, and the
// cache folder where `view TRACE` keeps its runs.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "src/cli/options.hpp"
#include "src/ingest/infer.hpp"
#include "src/sim/simulate.hpp"
#include "src/views/trace_index.hpp"

namespace kanoko::cli {

/// Adds --mapping, --purpose, --from, --to, --marker and (when `calibrate_like`) --calibrate-like.
void add_mapping_options(po::options_description& options, bool calibrate_like);

/// The window of --from / --to (whole trace when absent): trace seconds, or iter:K resolved by
/// the markers of `trace` (--marker's name, or the detected one; --format's reader). Throws
/// InputError for a malformed bound, an empty window, or iter:K on a trace without markers.
ingest::TimeWindow window_from(const po::variables_map& vm, const std::string& trace);

/// The mapping the options choose for `trace`: --mapping's file, or one inferred for --purpose
/// (default "balance"), whose one-line summary and warnings are printed on stderr prefixed with
/// `command` unless `quiet`. Fills the mapping fields and the window of `so`.
void choose_mapping(const po::variables_map& vm, const std::string& trace, const std::string& command, bool quiet,
                    sim::SimulateOptions& so);

/// Where `kanoko view TRACE` caches its runs: $XDG_CACHE_HOME/kanoko, else ~/.cache/kanoko, else
/// the system's temporary folder; created when missing.
std::filesystem::path cache_folder();

/// The cached run of `trace` under the given mapping choice: one file per trace path and choice.
std::filesystem::path cached_run(const std::string& trace, const po::variables_map& vm);

/// Adds --max-output, --max-memory and --max-steps (the run's budget, src/sim/budget.hpp).
void add_budget_options(po::options_description& options);

/// The budget of a run written into `output`: the defaults (sim::default_budget) with the limits
/// the options raise or lower. Throws InputError naming the option for a malformed size.
sim::Budget budget_from(const po::variables_map& vm, const std::filesystem::path& output);

/// How the companion views index the trace of `input` (a run or a trace) so that they split time
/// as its simulation did (docs/statistics.md): a run's mapping's computing, communicating and
/// idle lists (ingest::timeline_options) and its gap rule; a bare trace, or a run without its
/// mapping's text, the format's defaults. `format` is the trace's ("auto": detected).
views::IndexOptions view_index_options(const std::string& input, const std::filesystem::path& trace,
                                       const std::string& format);

/// Prints a simulate summary's notes and warnings on stderr, prefixed with `command`.
void print_notes(const std::string& command, const sim::SimulateSummary& s);

}  // namespace kanoko::cli
