// Signals during long work (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE): the first one asks the
// running work to stop at its next check (it throws Interrupted, which carries the signal, and
// unwinds, removing temporary files); the command then exits 128 + the signal number. A second
// signal exits at once after removing registered temporary files from the signal handler. Writes
// to a closed pipe raise SIGPIPE again and again: only the first SIGPIPE counts.
#pragma once

#include <csignal>
#include <filesystem>
#include <stdexcept>

namespace kanoko {

/// Thrown by check_interrupt() after one of the handled signals; carries its number.
class Interrupted : public std::runtime_error {
 public:
  /// `signal`: the signal that asked the work to stop.
  explicit Interrupted(int signal = SIGINT) : std::runtime_error("interrupted"), signal_(signal) {}
  /// The signal number (SIGINT, SIGTERM, ...).
  [[nodiscard]] int signal() const noexcept { return signal_; }
  /// The shell's exit status for death by that signal: 128 + its number (130 for SIGINT).
  [[nodiscard]] int exit_code() const noexcept { return 128 + signal_; }

 private:
  int signal_;
};

/// Installs the handlers for SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE (idempotent).
void install_interrupt_handlers();
/// Throws Interrupted if a signal arrived since the handlers were installed. Call it only on the
/// thread that can unwind (not inside an OpenMP region: test interrupt_requested() there).
void check_interrupt();
/// True if a signal arrived: one relaxed atomic load, cheap enough for inner loops.
bool interrupt_requested() noexcept;
/// The first signal that arrived, 0 if none.
int interrupt_signal() noexcept;

/// Temporary files the signal handler removes if the process is killed twice.
void register_temporary_file(const std::filesystem::path& p);
/// Forgets a temporary file registered with register_temporary_file (after its rename or removal).
void unregister_temporary_file(const std::filesystem::path& p) noexcept;

}  // namespace kanoko
