// A `kanoko simulate` run on a worker thread, so that `kanoko view TRACE` shows its frames while
// it integrates them: the same sim::simulate, with its cancel flag and progress, plus where the
// growing output can be followed (the writer's temporary file, trajectory::Follower).
#pragma once

#include <atomic>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "src/sim/simulate.hpp"

namespace kanoko::sim {

/// One background simulation. Call its members from one thread (the viewer's); the simulation
/// runs on its own. Destroying a job that still runs cancels it: no output is left.
class SimulationJob {
 public:
  /// Starts simulate(options) now. options.cancel, on_progress and on_writing are the job's own;
  /// options.progress is turned off (nothing is printed from the worker).
  explicit SimulationJob(SimulateOptions options);
  ~SimulationJob();
  SimulationJob(const SimulationJob&) = delete;
  SimulationJob& operator=(const SimulationJob&) = delete;

  /// True once simulate() returned or threw.
  [[nodiscard]] bool done() const { return done_.load(); }
  /// Fraction of the steps done (0..1).
  [[nodiscard]] double progress() const { return progress_.load(); }
  /// The file the frames are being written to (the writer's temporary, readable with
  /// trajectory::Open::partial), once writing started; after the run, the output itself.
  [[nodiscard]] std::optional<std::filesystem::path> writing() const;
  /// The run's summary once done without failure.
  [[nodiscard]] std::optional<SimulateSummary> summary() const;
  /// "" while running or after success; else why it failed ("the simulation failed: ...").
  [[nodiscard]] std::string problem() const;
  /// Rethrows the failure of a finished job (InputError, RunError, Interrupted as simulate threw
  /// them); nothing for a running or successful one.
  void rethrow() const;
  /// Stops the run (its output is discarded) and waits for the worker.
  void cancel();
  /// Waits until the worker has finished.
  void wait();

 private:
  SimulateOptions options_;
  std::thread worker_;
  std::atomic<bool> cancel_{false};
  std::atomic<bool> done_{false};
  std::atomic<double> progress_{0.0};
  mutable std::mutex mutex_;  ///< guards writing_, summary_, failure_, message_
  std::optional<std::filesystem::path> writing_;
  std::optional<SimulateSummary> summary_;
  std::exception_ptr failure_;
  std::string message_;
};

}  // namespace kanoko::sim
