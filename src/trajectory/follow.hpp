// Following a run while it is written: `kanoko view TRACE` plays the frames of the simulation it
// started as soon as their blocks are on disk, `kanoko view RUN` those of another `kanoko simulate`.
// The Follower looks for new blocks (Reader::refresh), tells how far the run has got, and says so
// when it stops growing before its completion record: the writer died, or failed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "src/trajectory/trajectory.hpp"

namespace kanoko::trajectory {

/// Follows `reader` (opened with Open::partial) as its file grows. Not thread-safe: poll() calls
/// Reader::refresh(), so no other thread may read the run while it runs.
class Follower {
 public:
  using Clock = std::chrono::steady_clock;
  enum class State {
    growing,   ///< frames are still being added
    complete,  ///< the completion record is there: every frame can be read
    stalled,   ///< no growth for the time-out, or the writer is known to be gone
    damaged,   ///< a block appended since opening is corrupt: the frames before it play
  };

  /// `stall_timeout_s`: wall seconds without any growth of the file after which the run counts
  /// as stalled. `writer_problem`, if given, returns "" while the writer runs, else why it does
  /// not ("process 4711 no longer runs", "the simulation failed: ..."): the run is then stalled
  /// as soon as the file stops growing, without waiting for the time-out.
  Follower(Reader& reader, double stall_timeout_s, std::function<std::string()> writer_problem = {});

  /// Looks for appended blocks (at most every `poll_period`); true when frames were added or the
  /// run completed (earlier FrameViews are then invalid).
  bool poll(Clock::time_point now = Clock::now());

  [[nodiscard]] State state() const { return state_; }
  [[nodiscard]] bool complete() const { return state_ == State::complete; }
  /// Trace time of the last frame that can be read (the run's end once complete).
  [[nodiscard]] double frontier_s() const;
  /// Trace time the run ends at once written: the end its planned frames reach (at least the
  /// trace's end), the real end once complete.
  [[nodiscard]] double planned_end_s() const;
  /// Fraction of the planned frames that can be read (1 once complete).
  [[nodiscard]] double fraction() const;
  /// One line for a status bar: how far the simulation has got, or why it stopped; "" once
  /// complete.
  [[nodiscard]] std::string status() const;
  /// Wall seconds the file has not grown (0 while it grows or once complete).
  [[nodiscard]] double idle_s(Clock::time_point now = Clock::now()) const;

  /// How often poll() looks at the file.
  static constexpr std::chrono::milliseconds poll_period{100};

 private:
  Reader& reader_;
  double stall_timeout_s_;
  std::function<std::string()> writer_problem_;
  State state_ = State::growing;
  std::string why_;  ///< why the run stalled or is damaged
  std::uint64_t bytes_ = 0;
  Clock::time_point last_growth_;
  Clock::time_point last_poll_{};
};

}  // namespace kanoko::trajectory
