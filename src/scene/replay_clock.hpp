// The replay clock: trace time as the viewer shows it, driven by wall time. Time is ours, not
// OpenSceneGraph's (the osganimate pattern): the viewer loop asks the clock for the trace time,
// sets the scene to it and calls viewer.frame(t). No OSG here, so it is tested without a display.
#pragma once

#include <optional>
#include <span>

namespace kanoko::scene {

/// Play/pause, speed, direction and seeking over a run [begin, end] of trace time.
class ReplayClock {
 public:
  /// Playback speed for which the whole run lasts about 20 s of wall time (1 if the run is empty).
  [[nodiscard]] static double default_speed(double begin_s, double end_s);

  /// Starts playing forward at `begin_s` with `speed` trace seconds per wall second (clamped to
  /// the allowed range, see min_speed()/max_speed()). `end_s` < `begin_s` is a programmer error.
  ReplayClock(double begin_s, double end_s, double speed);

  /// Moves time by `wall_dt_s` × speed in the current direction unless paused. Reaching either
  /// end of the run clamps there and pauses, or with loop() on starts over from the other end.
  void advance(double wall_dt_s);

  /// Current trace time, always within [begin_s(), end_s()].
  [[nodiscard]] double time_s() const { return time_s_; }
  /// First trace time of the run.
  [[nodiscard]] double begin_s() const { return begin_s_; }
  /// Last trace time of the run.
  [[nodiscard]] double end_s() const { return end_s_; }
  /// True while time stands still.
  [[nodiscard]] bool paused() const { return paused_; }
  /// True when playing backwards.
  [[nodiscard]] bool reversed() const { return reversed_; }
  /// Trace seconds per wall second (always positive; the direction is separate).
  [[nodiscard]] double speed() const { return speed_; }
  /// Slowest speed: a millionth of the run per wall second.
  [[nodiscard]] double min_speed() const;
  /// Fastest speed: the whole run in a tenth of a wall second.
  [[nodiscard]] double max_speed() const;

  /// Resumes. At the end of the run (or at its start when reversed) it starts over from the
  /// other end, so "play" after the run finished replays it.
  void play();
  /// Stops time where it is.
  void pause();
  /// play() if paused, pause() otherwise.
  void toggle_pause();
  /// Sets the speed, clamped to [min_speed(), max_speed()]. Non-finite or non-positive values
  /// are a programmer error (the command line validates --speed).
  void set_speed(double speed);
  /// Doubles the speed (clamped).
  void faster();
  /// Halves the speed (clamped).
  void slower();
  /// Flips the playing direction.
  void reverse();
  /// Playing past an end starts over from the other end instead of pausing.
  void set_loop(bool on) { loop_ = on; }
  [[nodiscard]] bool loop() const { return loop_; }
  /// Jumps to trace time t, clamped to the run.
  void seek(double t_s);
  /// Ends the run earlier, at `end_s` (no later than today's end, no earlier than the start):
  /// time beyond it is clamped there and playing forward stops there. For a run whose later
  /// frames are damaged.
  void limit_end(double end_s);
  /// Back to the start of the run, playing forward (the pause state is kept).
  void restart();

  // A run still being simulated (docs/viewer.md, "Watching a simulation"): frames exist only up
  // to the frontier. Time never passes it: playing forward holds there (without pausing) until it
  // moves on, and a seek beyond it holds there and is remembered, then done once the frontier
  // reaches it. Without a frontier (the default) the whole run is there.

  /// Sets how far the frames go (clamped to the run); moving it on completes a pending seek.
  void set_frontier(double frontier_s);
  /// The last time with frames: end_s() for a whole run.
  [[nodiscard]] double frontier_s() const { return frontier_s_; }
  /// The time a seek beyond the frontier waits for, if any.
  [[nodiscard]] std::optional<double> pending_seek() const { return pending_seek_; }
  /// True while the playhead is held at the frontier: a pending seek, or playing forward into it.
  [[nodiscard]] bool waiting() const;
  /// The run turned out to end at `end_s` (a finished simulation's last frame, a little before or
  /// after its planned end): the run becomes [begin_s(), end_s], all of it with frames.
  void set_end(double end_s);
  /// Pauses and moves `delta` stored frames forward (positive) or backward (negative) from the
  /// current time; `frame_times_s` are the stored frame times, sorted. Clamped to the first and
  /// last frame.
  void step_frames(int delta, std::span<const double> frame_times_s);

 private:
  double begin_s_;
  double end_s_;
  double time_s_;
  double speed_;
  bool paused_ = false;
  bool reversed_ = false;
  bool loop_ = false;
  double frontier_s_;
  std::optional<double> pending_seek_;
};

}  // namespace kanoko::scene
