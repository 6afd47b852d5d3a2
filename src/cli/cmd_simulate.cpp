#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "integrators/forces/repulsion.hpp"
#include "integrators/steppers/steppers.hpp"
#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"
#include "src/base/output_target.hpp"
#include "src/base/progress.hpp"
#include "src/cli/options.hpp"
#include "src/cli/run_setup.hpp"
#include "sonify/cues.hpp"
#include "src/sim/simulate.hpp"
#if KANOKO_WITH_MPI
#include "src/sim/mpi_run.hpp"
#endif
#include "src/trajectory/trajectory.hpp"

namespace kanoko::cli {

namespace {

/// Started by Open MPI's mpirun. A build without MPI still runs as one process under `mpirun -np 1`.
bool sim_under_mpirun() {
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  return size != nullptr && (KANOKO_WITH_MPI != 0 || std::string(size) != "1");
}

#if KANOKO_WITH_MPI
/// The one line this process would print for `e` (as main does).
std::string describe(const std::exception& e) {
  if (dynamic_cast<const InputError*>(&e) != nullptr) return e.what();
  return std::string("kanoko simulate: error: ") + e.what();
}

/// simulate() as one rank of an MPI run. Rank 0 alone prints. A failure before the ranks share the
/// work is agreed on at a checkpoint: every rank ends with the same error, rank 0 printing it. A
/// failure after that (the output cannot be written, a numerical blow-up) ends the whole run with
/// MPI_Abort once this rank has unwound (removing its temporary output) and rank 0 has reported.
/// Returns nullopt after such an agreed failure (reported by rank 0).
std::optional<sim::SimulateSummary> simulate_as_rank(sim::MpiRun& mpi, const sim::SimulateOptions& so) {
  const bool first = mpi.part() == 0;
  try {
    try {
      return sim::simulate(so);
    } catch (const sim::GroupError&) {
      throw;
    } catch (const Interrupted&) {
      throw;  // every rank got the signal (mpirun forwards it, or sends SIGTERM when a rank died)
    } catch (const std::exception& e) {
      if (mpi.running()) {
        if (first) std::cerr << describe(e) << '\n';
        mpi.abort(1);
      }
      sim::fail_in_group(mpi, describe(e));  // throws the group's error
    }
  } catch (const sim::GroupError& e) {
    if (first) std::cerr << e.what() << '\n';
    return std::nullopt;
  }
}
#endif

}  // namespace

int cmd_simulate(const Args& args) {
  std::string integrators_text;
  for (const auto& e : integrators::registry()) {
    integrators_text += "  " + e.name + " (order " + std::to_string(e.order) + ", " +
                        std::to_string(e.evaluations_per_step) + " force evaluation" +
                        (e.evaluations_per_step == 1 ? "" : "s") + " per step): " + e.description + "\n";
  }
  auto listed = [](const std::vector<std::string>& names) {
    std::string text;
    for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
    return text;
  };
  const std::string evaluators_text = listed(integrators::evaluator_names());
  const std::string evaluator_help = "repulsion evaluator: " + evaluators_text;
  const std::string multipole_help = "Barnes-Hut far field: " + listed(integrators::multipole_names());
  const CommandSpec spec{
      "simulate", "TRACE [--mapping MAP | --purpose P] -o RUN.kntj [--from T --to T] [--force] [--integrator NAME] ...",
      "Reads TRACE (any format of kanoko info), bins it into the mapping's intervals, builds the physical\n"
      "system the mapping describes (without --mapping, one inferred from the trace for --purpose:\n"
      "balance, communication, waiting or placement; kanoko init writes it, docs/zero-configuration.md),\n"
      "integrates its equations of motion and writes the trajectory\n"
      "file RUN (docs/trajectory-format.md). Steps never straddle an interval boundary: the step dt is\n"
      "reduced to divide the interval, and the adaptive integrator's substeps land on every step's end.\n"
      "If RUN already exists and was made from the same trace, mapping, integrator and force settings\n"
      "(command-line overrides included), it is reused (use --force to recompute). On any error, or\n"
      "Ctrl-C, no output file is left behind and a previous RUN is untouched. At the end a summary gives\n"
      "the steps, force evaluations, wall time, body-steps per second, the energy put in by forcing and\n"
      "taken out by friction, and the largest speed (scene units per trace second). While it runs,\n"
      "'kanoko view RUN' plays the frames written so far and follows the run as it grows\n"
      "(docs/viewer.md, \"Watching a simulation\").\n\n"
      "Every run is bounded before it starts: its steps, frames, output size and memory are estimated\n"
      "from the trace and the mapping (printed when the run is long), and a run beyond the budget is\n"
      "refused naming the cause (the record that sets the trace's end, or the mapping key). Defaults:\n"
      "output <= min(free space - 1 GiB, 16 GiB), memory <= half the RAM, 2e9 steps; raise them with\n"
      "--max-output, --max-memory, --max-steps.\n\n"
      "Integrators (choose with 'integrator' in [simulation] of the mapping, or --integrator):\n" +
          integrators_text +
          "\nRepulsion evaluators (choose with 'evaluator' in [forces.repulsion], or --evaluator): " +
          evaluators_text +
          ".\n  direct: exact all-pairs sum, O(N^2), SIMD and multi-threaded.\n"
          "  barnes-hut: octree rebuilt every evaluation, O(N log N); opening angle theta (default 0.5),\n"
          "    monopole or quadrupole far field.\n"
          "  auto: direct up to " + std::to_string(integrators::kAutoDirectMaxBodies) +
          " bodies, Barnes-Hut above.\n"
          "The trajectory is bit-identical for every --threads value and every CPU's SIMD width.\n\n"
          "Under Open MPI's mpirun (mpirun -np P kanoko simulate ...) the ranks share every force\n"
          "evaluation by bodies and rank 0 alone writes RUN, bit for bit the file one process writes.\n"
          "Every rank reads the same trace and mapping (they compare them first and stop, rank 0 saying\n"
          "which differs, if they do not agree); P may not exceed the number of bodies; --threads 0 then\n"
          "means the host's cores shared among its ranks. If a rank dies, mpirun ends the others and no\n"
          "RUN is written (docs/engine-performance.md, \"MPI\").",
      "  kanoko simulate traces/smpi/pipeline8-flat.trace -o pipeline.kntj\n"
      "  kanoko simulate traces/smpi/farm8-fattree.trace --purpose waiting -o farm.kntj\n"
      "  kanoko simulate after.trace -o after.kntj --calibrate-like before.kntj\n"
      "  kanoko simulate traces/fib22-ring.kntr --mapping mappings/paper-fibonacci.toml -o ring.kntj\n"
      "  kanoko simulate traces/mesh-skewed-light.kntr --mapping mappings/paper-mesh.toml -o mesh.kntj\n"
      "  mpirun -np 2 kanoko simulate big.kntr --mapping mappings/ring.toml -o big.kntj\n"};
  po::options_description options("Options");
  std::string trace, output;
  add_mapping_options(options, true);
  add_budget_options(options);
  options.add_options()("trace", po::value(&trace)->required(), "trace file (any format of kanoko info)")(
      "output,o", po::value(&output)->required(), "trajectory file to write (.kntj)")(
      "force,f", po::bool_switch(), "recompute even when the cached trajectory matches")(
      "quiet,q", po::bool_switch(), "no progress bar or summary")(
      "format", po::value<std::string>(), "trace format, overriding [trace] format: auto or a reader name (kanoko info --help)")(
      "integrator", po::value<std::string>(), "integrator, overriding [simulation] integrator (see below)")(
      "evaluator", po::value<std::string>(), evaluator_help.c_str())(
      "theta", po::value<double>(), "Barnes-Hut opening angle, 0 to 1 (default 0.5)")(
      "multipole", po::value<std::string>(), multipole_help.c_str())(
      "threads,j", po::value<int>()->default_value(0), "threads for the force evaluation (0 = all cores)");
  po::positional_options_description positional;
  positional.add("trace", 1);
  po::variables_map vm;
  if (!parse_command_line(spec, options, positional, args, vm)) return 0;

  const bool quiet = vm["quiet"].as<bool>();
  sim::SimulateOptions so;
  so.trace = trace;
  choose_mapping(vm, trace, "simulate", quiet, so);
  (void)checked_output_target(output);  // before the reuse check reads it and before the (slow) run
  so.output = output;
  so.force = vm["force"].as<bool>();
  if (vm.count("format") != 0U) so.format = vm["format"].as<std::string>();
  if (vm.count("integrator") != 0U) so.integrator = vm["integrator"].as<std::string>();
  if (vm.count("evaluator") != 0U) so.evaluator = vm["evaluator"].as<std::string>();
  if (vm.count("theta") != 0U) so.theta = vm["theta"].as<double>();
  if (vm.count("multipole") != 0U) so.multipole = vm["multipole"].as<std::string>();
  so.threads = vm["threads"].as<int>();
  if (so.threads < 0) throw InputError(FileLoc{"kanoko simulate --threads"}, "--threads must be 0 (all cores) or more");
  so.progress = !quiet;
  so.budget = budget_from(vm, output);
  sim::SimulateSummary s;
  if (sim_under_mpirun()) {
#if KANOKO_WITH_MPI
    sim::MpiRun mpi(std::string("kanoko ") + KANOKO_VERSION);
    so.group = &mpi;
    if (so.threads == 0) {
      // The cores are shared among this host's ranks.
      so.threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / sim::mpi_local_processes());
    }
    if (mpi.part() != 0) so.progress = false;
    const std::optional<sim::SimulateSummary> done = simulate_as_rank(mpi, so);
    if (!done) return 1;            // rank 0 has said why
    if (mpi.part() != 0) return 0;  // rank 0 reports
    s = *done;
#else
    throw InputError(FileLoc{"mpirun"}, "this kanoko was built without MPI, so it cannot share a run among mpirun's "
                                        "processes (install libopenmpi-dev and rebuild, or run it without mpirun)");
#endif
  } else {
    s = sim::simulate(so);
  }
  if (quiet) return 0;
  if (s.reused) {
    std::cerr << "kanoko simulate: " << output
              << " is up to date (same trace, mapping, integrator and force settings); reusing it. Use --force to "
                 "recompute.\n";
    return 0;
  }
  print_notes("simulate", s);
  {
    // A sound cue set that never fires leaves the run silent: say so (docs/sound.md).
    const trajectory::Reader run(output);
    const mapping::AudioSpec audio = sonify::stored_audio_section(run, output);
    const std::vector<sonify::CueRule> rules = sonify::resolve_cue_rules(audio, run.meta());
    if (!rules.empty() && sonify::detect_cues(run, rules).empty()) {
      std::cerr << "kanoko simulate: warning: " << (audio.present ? "the [audio] cues fire" : "the default sound cue fires")
                << " no cue over this run, so it plays silently; widen the cues' rate ranges (or use bounds "
                   "relative to the run, e.g. rate = [\"mean_rate + 3 * sd_rate\", inf], docs/sound.md)\n";
    }
  }
  char line[1024];
  const double body_steps_per_s =
      s.wall_s > 0 ? static_cast<double>(s.steps) * static_cast<double>(s.bodies) / s.wall_s : 0.0;
  std::string forces = s.evaluator.empty()
                           ? std::string("no repulsion")
                           : s.evaluator + " repulsion (" + s.simd + ", " + std::to_string(s.threads) + " threads)";
  std::string substeps;
  if (s.substeps != s.steps) {
    substeps = " (" + std::to_string(s.substeps) + " substeps, " + std::to_string(s.rejected_substeps) + " rejected)";
  }
  const double balance = s.final_energy - s.initial_energy -
                         (s.energy_from_forcing - s.energy_to_friction + s.energy_from_mass_changes);
  std::snprintf(line, sizeof line,
                "kanoko simulate: wrote %s: %zu bodies, %zu springs, %llu frames over %.3g s of trace time\n"
                "  %s: %llu steps of dt = %.4g s%s, %llu force evaluations, %s\n"
                "  %s wall (%.3g body-steps/s; trajectory writing %.1f %%), largest speed %.3g units/s, median body moved %.2g spacings\n"
                "  energy: %.4g at the start, %+.4g from forcing, %+.4g to friction, %+.4g from mass changes,"
                " %.4g at the end (unaccounted %.2g)\n",
                output.c_str(), s.bodies, s.springs, static_cast<unsigned long long>(s.frames), s.simulated_s,
                s.integrator.c_str(), static_cast<unsigned long long>(s.steps), s.dt_s, substeps.c_str(),
                static_cast<unsigned long long>(s.evaluations), forces.c_str(), format_duration(s.wall_s).c_str(),
                body_steps_per_s, s.wall_s > 0 ? 100.0 * s.write_wall_s / s.wall_s : 0.0, s.max_speed, s.median_motion,
                s.initial_energy, s.energy_from_forcing, -s.energy_to_friction, s.energy_from_mass_changes,
                s.final_energy, balance);
  std::cerr << line;
  return 0;
}

}  // namespace kanoko::cli
