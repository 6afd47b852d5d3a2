// `kanoko simulate`: trace + mapping → trajectory file, cached by the hash of its inputs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "src/mapping/mapping.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::sim {

struct SimulateOptions {
  std::filesystem::path trace;
  std::filesystem::path mapping;
  std::filesystem::path output;
  bool force = false;     ///< recompute even if the output's input hash matches
  bool progress = true;   ///< progress bar on stderr
};

/// What a run did, for the summary line.
struct SimulateSummary {
  bool reused = false;  ///< the existing output matched the inputs and was kept
  std::uint64_t steps = 0;
  std::uint64_t evaluations = 0;
  std::uint64_t frames = 0;
  std::size_t bodies = 0;
  std::size_t springs = 0;
  double dt_s = 0;          ///< the step actually used
  double simulated_s = 0;   ///< trace time covered
  double wall_s = 0;
  double max_speed = 0;
  double final_energy = 0;
  std::uint64_t input_hash = 0;
};

/// Digest of everything that determines the trajectory: trace bytes, mapping text, integrator,
/// trajectory format version. Reads the trace file once.
std::uint64_t input_hash(const std::filesystem::path& trace, const mapping::Mapping& m);

/// Reads a trace into a timeline with the mapping's interval and busy states.
trace::Timeline read_timeline(const std::filesystem::path& trace, const mapping::Mapping& m);

/// Runs the whole pipeline. Throws InputError for bad inputs, RunError for a numerical blow-up
/// (naming the step, time and body), Interrupted on Ctrl-C; in every failure no output file is
/// left (a previous output stays untouched).
SimulateSummary simulate(const SimulateOptions& options);

}  // namespace kanoko::sim
