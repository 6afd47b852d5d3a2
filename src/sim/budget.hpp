// Every run is bounded before it starts: the steps, stored frames, output bytes and peak memory of
// a run are estimated from the mapping and the binned trace before any physics, and a run beyond
// the budget is refused naming its cause (the record that sets the trace's end, or the mapping
// key). `simulate` and `check --trace` both call estimate_run and enforce_budget, so they agree.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "src/base/error.hpp"
#include "src/ingest/schema.hpp"
#include "src/mapping/mapping.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::sim {

/// How a run's steps follow from the step, the settling time and the binning.
struct StepPlan {
  double dt_s = 0;                       ///< the step used: the largest ≤ dt that divides the interval
  std::uint64_t steps_per_interval = 0;  ///< steps in one binning interval
  std::uint64_t forced_steps = 0;        ///< steps over the trace (intervals × steps_per_interval)
  std::uint64_t settle_steps = 0;        ///< steps after the trace ([simulation] settle)
  std::uint64_t total_steps = 0;         ///< forced_steps + settle_steps
  std::uint64_t frames = 0;              ///< stored frames: frame 0, every frame_every steps and the last
};

/// The step plan of `m` over `intervals` intervals of `interval_s` seconds. Every count is checked
/// in floating point before it is converted: a step, settling time or interval whose counts would
/// overflow (beyond 2^53), or a step that underflows to 0, is an InputError located at the mapping
/// key that set it (simulation.dt, simulation.settle, simulation.interval).
StepPlan plan_steps(const mapping::Mapping& m, double interval_s, std::uint64_t intervals);

/// What a run will cost, computed before any work.
struct RunEstimate {
  StepPlan plan;
  std::size_t bodies = 0;
  std::size_t intervals = 0;
  double interval_s = 0;
  double trace_s = 0;                 ///< trace time covered by the intervals
  std::uint64_t output_bytes = 0;     ///< size of the trajectory file (saturates at 2^64 − 1)
  std::uint64_t memory_bytes = 0;     ///< peak memory of the run, timeline included (saturates)
  double wall_s = 0;                  ///< rough wall time (kBodyEvaluationsPerSecond)
  /// One line: "12000 steps, 12001 frames of 8 bodies, 3.1 MiB of output, 40 MiB of memory, about 2 s".
  [[nodiscard]] std::string str() const;
  /// Long enough to announce before starting: more than 10 s or more than 1 GiB of output or memory.
  [[nodiscard]] bool long_run() const;
};

/// Body-derivative evaluations per second assumed by RunEstimate::wall_s (a slow machine's pace,
/// without repulsion; all-pairs repulsion adds a factor of the body count).
inline constexpr double kBodyEvaluationsPerSecond = 2e7;

/// The estimate for `m` (its interval, dt, settle, frame_every, integrator and repulsion) on `tl`.
/// Throws as plan_steps does.
RunEstimate estimate_run(const mapping::Mapping& m, const trace::Timeline& tl);

/// Limits a run must stay within.
struct Budget {
  std::uint64_t max_output_bytes = 0;
  std::uint64_t max_memory_bytes = 0;
  std::uint64_t max_steps = 0;
  /// The defaults' reasons, for messages ("free space of /tmp − 1 GiB").
  std::string output_reason;
  std::string memory_reason;
};

/// Default step limit (--max-steps): 2·10⁹ steps, beyond a day of computing for a few bodies.
inline constexpr std::uint64_t kDefaultMaxSteps = 2'000'000'000;

/// The default budget for a run written into `output`: output ≤ min(free space of its folder −
/// 1 GiB, 16 GiB), memory ≤ half the RAM, steps ≤ kDefaultMaxSteps.
Budget default_budget(const std::filesystem::path& output);

/// A size such as "20G", "512M", "1.5T", "64k" or "1000" (bytes; binary multiples, an optional
/// trailing B or iB). Throws InputError at `option` for anything else or a size beyond 2^64.
std::uint64_t parse_size(const std::string& text, const std::string& option);

/// "1.5 GiB", "12 MiB", "800 B".
std::string format_bytes(std::uint64_t bytes);

/// Where the trace's end comes from: its time and the record that set it (file:line, or the
/// record of a binary format). An empty `at.file`: unknown.
struct TraceEnd {
  double time_s = 0;
  FileLoc at;
};

/// Throws InputError if `e` passes `b`: the message gives the estimate, the limit, the cause and
/// the fixes. The error is located at the cause: `dt` when it makes more than 1000 steps per
/// interval (and was not calibrated), `settle` when settling takes most of the steps,
/// else the record that sets the trace's end (`end`), else the interval key.
void enforce_budget(const RunEstimate& e, const Budget& b, const mapping::Mapping& m, const TraceEnd& end);

/// Where the end of the run read by `r` comes from: the record that set the trace's end
/// (ReadReport::end_at), unless the mapping's window ([trace] to) cuts the trace.
TraceEnd trace_end(const mapping::Mapping& m, const trace::Timeline& tl, const ingest::SelectionReport& r);

/// What `simulate` and `check --trace` both do before any physics: estimate_run, then
/// enforce_budget with the trace's end from `r`. A mapping with calibrate = "auto" gets its dt
/// from a probe run later: it is bounded with one step per interval, a lower bound of its cost
/// (simulate bounds the calibrated run again). Returns the estimate.
RunEstimate bound_run(const mapping::Mapping& m, const trace::Timeline& tl, const ingest::SelectionReport& r,
                      const Budget& b);

/// What `check` does without a trace: the step plan of one interval (of the mapping's interval, or
/// of one step when the interval follows the trace) plus the settling, bounded by `b`. Catches a
/// dt, settle or interval that overflows, underflows or passes the step limit on its own.
RunEstimate bound_mapping(const mapping::Mapping& m, const Budget& b);

}  // namespace kanoko::sim
