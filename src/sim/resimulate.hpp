// The paper's interactive modelling: while paused, the user changes force parameters; the run is
// re-simulated in the background from the frame on screen (frames before it are kept), playback
// goes on with the new run when it is ready, and the changed parameters can be saved as a new
// mapping file. Parameters are edited in the mapping's text (comments and layout are kept), so
// what is simulated is exactly what is saved. No drawing here: `kanoko view` hands this driver to
// the viewer through scene::Resimulator (src/scene/resimulator.hpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "src/mapping/edit.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::sim {

/// One viewer's re-simulations. Not thread-safe: call it from the viewer's thread; the
/// simulation itself runs on a worker thread.
class Resimulation {
 public:
  /// `run` is the run on screen: its metadata names the trace and holds the mapping's text.
  /// Re-simulated runs are written to `work_folder` (created; removed with its files when this
  /// object is destroyed).
  Resimulation(const trajectory::Reader& run, std::filesystem::path work_folder);
  ~Resimulation();
  Resimulation(const Resimulation&) = delete;
  Resimulation& operator=(const Resimulation&) = delete;

  /// The parameters and their current values.
  [[nodiscard]] const std::vector<mapping::Tunable>& parameters() const { return parameters_; }
  /// The mapping text with every change so far.
  [[nodiscard]] const std::string& mapping_text() const { return text_; }
  /// True once a parameter was changed.
  [[nodiscard]] bool edited() const { return edited_; }

  /// Multiplies parameter `index` by `factor` and starts re-simulating from frame `frame` of
  /// `shown` (the run on screen, which must stay alive until the next change or destruction),
  /// cancelling a re-simulation still running.
  void change(std::size_t index, double factor, const trajectory::Reader& shown, std::size_t frame);

  /// Fraction done of the running re-simulation, or nothing when none runs.
  [[nodiscard]] std::optional<double> progress() const;
  /// The finished run, once (null if none finished since the last call). This object keeps it
  /// alive until it is destroyed.
  [[nodiscard]] const trajectory::Reader* take_finished();
  /// Why the last re-simulation failed ("" if it did not).
  [[nodiscard]] std::string error() const;
  /// One line for the status bar: progress, failure, or "" when idle.
  [[nodiscard]] std::string status() const;
  /// Waits for the running re-simulation (tests).
  void wait();

  /// Writes the edited mapping to folder/STEM-tuned-NNN.toml (the first free NNN; STEM from the
  /// run's mapping file) atomically and returns its path. Throws InputError if it cannot.
  std::filesystem::path save_mapping(const std::filesystem::path& folder) const;

 private:
  void stop();

  std::filesystem::path trace_;
  std::string mapping_name_;
  std::filesystem::path folder_;
  std::string text_;
  std::vector<mapping::Tunable> parameters_;
  bool edited_ = false;
  int runs_started_ = 0;

  std::thread worker_;
  std::atomic<bool> cancel_{false};
  std::atomic<double> progress_{0.0};
  std::atomic<bool> running_{false};
  mutable std::mutex mutex_;  ///< guards finished_ and error_
  std::unique_ptr<trajectory::Reader> finished_;
  std::string error_;
  std::vector<std::unique_ptr<trajectory::Reader>> shown_runs_;  ///< every run handed out
};

}  // namespace kanoko::sim
