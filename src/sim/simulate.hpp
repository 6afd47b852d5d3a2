// `kanoko simulate`: trace + mapping → trajectory file, cached by the hash of its inputs.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "integrators/forces/repulsion.hpp"
#include "src/base/error.hpp"
#include "src/mapping/mapping.hpp"
#include "src/sim/budget.hpp"
#include "src/trace/timeline.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::sim {

/// The processes that share one run: the ranks of `mpirun -np P kanoko simulate` (MpiRun,
/// src/sim/mpi_run.hpp). simulate() splits every force evaluation among them by bodies
/// (integrators::Partition) and only the first writes the output; all of them compute the same
/// states. Before any shared work they meet at checkpoints, where they compare their inputs and
/// learn of a failure on any of them, so that a problem on one process ends every process with the
/// same error instead of leaving the others waiting.
class RunGroup : public integrators::Partition {
 public:
  /// Every process's `values` (the same count on each), concatenated in part order (collective).
  virtual std::vector<std::uint64_t> gather(const std::vector<std::uint64_t>& values) = 0;
  /// Every process's `text`, in part order (collective).
  virtual std::vector<std::string> gather_text(const std::string& text) = 0;
  /// What identifies this build of kanoko; the processes of a run must agree on it.
  [[nodiscard]] virtual std::string version() const = 0;
  /// True once simulate() is past its last checkpoint (the processes share the force evaluations):
  /// a failure from then on can no longer be agreed on and ends the whole run.
  [[nodiscard]] bool running() const { return running_; }
  void set_running(bool running) { running_ = running; }

 private:
  bool running_ = false;
};

/// Thrown on every process of a RunGroup, with the same message, when one of them failed before a
/// checkpoint or their inputs differ.
class GroupError : public RunError {
 public:
  using RunError::RunError;
};

/// For a process whose simulate() failed with `message` before the group was running: meets the
/// others at the checkpoint they wait at, reporting the failure, then throws the GroupError they
/// throw too.
[[noreturn]] void fail_in_group(RunGroup& group, const std::string& message);

struct SimulateOptions {
  std::filesystem::path trace;
  std::filesystem::path mapping;
  std::filesystem::path output;
  bool force = false;     ///< recompute even if the output's input hash matches
  bool progress = true;   ///< progress bar on stderr
  // Command-line overrides of the mapping (part of the input hash, like the mapping itself).
  std::optional<std::string> integrator;  ///< [simulation] integrator
  std::optional<std::string> evaluator;   ///< [forces.repulsion] evaluator
  std::optional<double> theta;            ///< [forces.repulsion] theta
  std::optional<std::string> multipole;   ///< [forces.repulsion] multipole
  std::optional<std::string> format;      ///< [trace] format: a reader name or "auto"
  /// [trace] from and to: the time window (written into the mapping text, so hashed and kept
  /// with the run).
  std::optional<double> from_s;
  std::optional<double> to_s;
  /// A calibrated run whose interval, step, friction, gain, stiffness and repulsion this run
  /// takes, so that two runs compare fairly (--calibrate-like). Empty: none.
  std::filesystem::path calibrate_like;
  /// Threads for the force evaluation, 0 = all cores. Not hashed: the trajectory is bit-identical
  /// for every thread count.
  int threads = 0;
  /// Threads of the calibration's relaxation and probe, which run before the first frame is
  /// written; -1: `threads`. The viewer gives them every core (it has nothing to draw before the
  /// first frames) and the run one fewer. Not hashed, like `threads`.
  int calibration_threads = -1;
  /// Mapping text to use instead of reading the file `mapping` (which then only names it in
  /// messages): the viewer's re-simulation with changed parameters.
  std::optional<std::string> mapping_text;
  /// Names mapping_text in messages when `mapping` is empty ("t.trace (inferred mapping, ...)").
  std::string mapping_label;
  /// Continue an earlier run of the same trace: its frames 0..resume_frame are copied and the
  /// integration goes on from the state of frame resume_frame, with this mapping's forces. The
  /// run must have the same bodies, step, frame interval and start (else InputError).
  const trajectory::Reader* resume_from = nullptr;
  std::size_t resume_frame = 0;
  /// The limits of the run, checked before any work (budget.hpp); unset: default_budget(output).
  std::optional<Budget> budget;
  /// Polled every few hundred steps: once true, the run stops with RunError and leaves no file.
  const std::atomic<bool>* cancel = nullptr;
  /// Called with the fraction of steps done (0..1) every few hundred steps, on the simulating
  /// thread.
  std::function<void(double)> on_progress;
  /// The processes sharing this run (not owned); null = this process alone. Only the first
  /// process (part 0) writes `output`; the others write nothing.
  RunGroup* group = nullptr;
  /// Called once the output is being written (its header and sections on disk), with the
  /// temporary file a trajectory::Reader opened with Open::partial can follow (SimulationJob).
  std::function<void(const std::filesystem::path&)> on_writing;
  /// How many of the run's steps the calibration probe takes as one (0: kProbeStepFactor). Hashed
  /// when it differs from kProbeStepFactor; tests set 1 to compare with a probe at the run's step.
  std::uint64_t probe_step_factor = 0;
  /// Whether the calibration probe may hold the repulsion at its resting value where the springs
  /// dominate its stiffness (models::Model::hold_repulsion). Hashed when false; tests set false to
  /// compare with a probe that sums the repulsion at every step.
  bool probe_holds_repulsion = true;
};

/// The calibration probe (calibrate = "auto") measures how far the median body moves over the
/// whole run, a scale for the gain, not a trajectory: it steps kProbeStepFactor times coarser than
/// the run with velocity Verlet (dt <= 0.8 / omega instead of 0.1 / omega, inside Verlet's
/// stability limit of 2 / omega; a step spans several intervals, their forcing averaged, when an
/// interval has fewer steps than that), and again at the run's step if that diverged. Where the
/// springs dominate the repulsion's stiffness, it holds the repulsion at its value in the relaxed
/// layout instead of summing it at every step.
inline constexpr std::uint64_t kProbeStepFactor = 8;

/// What a run did, for the summary line.
struct SimulateSummary {
  bool reused = false;  ///< the existing output matched the inputs and was kept
  /// Why an existing output with the same inputs was not reused (incomplete, damaged), or "".
  std::string recompute_reason;
  std::uint64_t steps = 0;
  std::uint64_t evaluations = 0;
  std::uint64_t frames = 0;
  std::size_t bodies = 0;
  std::size_t springs = 0;
  double dt_s = 0;          ///< the step actually used
  double simulated_s = 0;   ///< trace time covered
  double wall_s = 0;
  double max_speed = 0;     ///< largest body speed at the end of any step
  double final_energy = 0;
  std::uint64_t input_hash = 0;
  std::uint64_t substeps = 0;           ///< integrator steps (more than `steps` for adaptive ones)
  std::uint64_t rejected_substeps = 0;  ///< substeps rejected by an adaptive integrator
  std::string integrator;               ///< the integrator used
  std::string evaluator;                ///< the repulsion evaluator used ("auto" resolved), or ""
  std::string simd;                     ///< the SIMD kernels of the force evaluation
  int threads = 0;                      ///< threads of the force evaluation
  // Energy account (mapping units): final − initial = forcing − friction + mass changes + the
  // integration (and Barnes–Hut) error. Work terms integrate power over every step (trapezoid rule).
  double initial_energy = 0;         ///< mechanical energy at t = 0 (Model::energy)
  double energy_from_forcing = 0;    ///< work done by the communication pulls
  double energy_to_friction = 0;     ///< energy dissipated by friction (≥ 0)
  double energy_from_mass_changes = 0;  ///< kinetic energy change when masses jump between intervals
  double write_wall_s = 0;           ///< wall time spent writing the trajectory (in wall_s)
  double interval_s = 0;             ///< the binning interval used (trace seconds)
  std::size_t intervals = 0;         ///< how many
  /// The median over bodies of each body's largest distance from its start, in neighbour spacings
  /// (0 when not measured: one body, or a continued run).
  double median_motion = 0;
  /// What the run chose by itself (interval, calibrated values), one line each.
  std::vector<std::string> notes;
  /// Degenerate inputs or results (no forcing, constant mass, bodies that do not move, ...), one
  /// line each with the fix.
  std::vector<std::string> warnings;
};

/// Applies the command-line overrides in `options` to `m`. Throws InputError (located on the
/// command line) for an unknown integrator, evaluator or multipole, a θ outside [0, 1], or an
/// evaluator override without [forces.repulsion].
void apply_overrides(const SimulateOptions& options, mapping::Mapping& m);

/// Digest of everything that determines the trajectory: trace bytes, mapping text, the effective
/// integrator, tolerance and repulsion evaluator, θ and multipole (so command-line overrides count),
/// trajectory format version. Reads the trace file once.
std::uint64_t input_hash(const std::filesystem::path& trace, const mapping::Mapping& m);


/// Runs the whole pipeline. Throws InputError for bad inputs, RunError for a numerical blow-up
/// (naming the step, time and body), Interrupted on Ctrl-C; in every failure no output file is
/// left (a previous output stays untouched).
SimulateSummary simulate(const SimulateOptions& options);

}  // namespace kanoko::sim
