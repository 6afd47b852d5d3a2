// What a viewer session's frames cost, for `kanoko view --frame-stats FILE` and the viewer
// benchmark (bench/bench_viewer.cpp): the time to the first frame, the frame times while the
// companion views' index was building and after, and how often the replay clock would have
// jumped had a frame's wall time not been capped (max_clock_step_s()).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kanoko::scene {

/// The longest wall time one frame may move the replay clock by: a frame that took longer (work
/// blocked the loop) moves it by this much only, so playback slows down instead of jumping.
[[nodiscard]] constexpr double max_clock_step_s() { return 0.1; }

/// Percentiles of a set of durations (seconds): nearest rank, p in [0, 100]. Empty: 0.
[[nodiscard]] double percentile_s(std::vector<double> values, double p);

class FrameStats {
 public:
  /// `first_frame_s`: from the command's start to the end of the first drawn frame.
  void first_frame(double first_frame_s) { first_frame_s_ = first_frame_s; }
  /// One frame of `wall_s`; `indexing`: the views' index was still being built.
  void frame(double wall_s, bool indexing);
  /// When the views became ready (seconds from the command's start).
  void views_ready(double at_s) { views_ready_s_ = at_s; }
  /// A run simulated while it is watched (seconds from the command's start, -1: not reached):
  /// when the simulation started writing (the trace was read and the model built), when its
  /// first frames could be read, and when it was complete.
  void simulation(double writing_s, double first_frames_s) {
    writing_s_ = writing_s;
    first_frames_s_ = first_frames_s;
  }
  void simulation_complete(double at_s) { complete_s_ = at_s; }
  [[nodiscard]] std::size_t frames() const { return while_indexing_.size() + after_.size(); }
  /// Frames longer than max_clock_step_s().
  [[nodiscard]] std::size_t capped() const { return capped_; }
  /// The statistics as JSON: first frame, views ready, and per phase (indexing, after, all) the
  /// count, median, p99 and maximum frame time in milliseconds.
  [[nodiscard]] std::string json() const;

 private:
  double first_frame_s_ = -1;
  double views_ready_s_ = -1;
  double writing_s_ = -1;  ///< -1 everywhere: not a watched simulation
  double first_frames_s_ = -1;
  double complete_s_ = -1;
  std::vector<double> while_indexing_;
  std::vector<double> after_;
  std::size_t capped_ = 0;
};

}  // namespace kanoko::scene
