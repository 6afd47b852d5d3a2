// A progress bar on stderr for long work: fraction, rate and time remaining. It appears only when
// the work lasts over half a second, then redraws at most ten times a second on a terminal, or
// prints a line every 10 % otherwise (logs, CI), and at least every `log_every` (30 s by default)
// so that a slow run's log keeps moving.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace kanoko {

class ProgressBar {
 public:
  /// `label` names the work ("simulate"), `total` the units, `unit` their name ("steps").
  ProgressBar(std::string label, std::uint64_t total, std::string unit, bool enabled = true,
              std::chrono::milliseconds log_every = std::chrono::seconds(30));
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ~ProgressBar();

  /// Reports `done` units finished (absolute, not a delta).
  void update(std::uint64_t done);
  /// Draws the final state and ends the line.
  void finish();

 private:
  void draw(bool final);

  std::string label_;
  std::string unit_;
  std::uint64_t total_;
  std::uint64_t done_ = 0;
  bool enabled_;
  bool tty_;
  bool finished_ = false;
  bool drawn_ = false;
  int last_decile_ = -1;
  std::chrono::milliseconds log_every_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

/// "1.2 s", "3 min 04 s", "2 h 05 min".
std::string format_duration(double seconds);
/// A span of trace time with an SI prefix and three significant digits: "150 µs", "2.5 ms", "30 s".
std::string format_seconds(double seconds);

}  // namespace kanoko
