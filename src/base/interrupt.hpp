// Signals during long work (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE): the first one asks the
// running work to stop at its next check (it throws Interrupted, which carries the signal, and
// unwinds, removing temporary files); the command then exits 128 + the signal number. A second
// signal exits at once after removing registered temporary files from the signal handler. Writes
// to a closed pipe raise SIGPIPE again and again: only the first SIGPIPE counts.
//
// Some work has no check for a while (writing a frame of a million bodies, building a model,
// releasing gigabytes while unwinding): with the watchdog on, a first signal that has not ended the
// process within kInterruptGraceMs is treated as a second one, so a run stops within about a
// fifth of a second at any size and in any phase.
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

/// How long the watchdog gives the work to stop by itself after the first signal.
inline constexpr int kInterruptGraceMs = 150;

/// Installs the handlers for SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE (idempotent). With
/// `watchdog`, a thread waits for the first signal and, if the process is still running
/// kInterruptGraceMs later, removes the registered temporary files, prints "kanoko COMMAND:
/// interrupted (SIGxxx); no output was written" and exits with 128 + the signal. Commands that
/// must stop child processes themselves (capture) go without it. `command` names the command in
/// that message (copied; at most 63 characters are kept).
void install_interrupt_handlers(const char* command = "", bool watchdog = false);
/// Tells the watchdog that the interruption is being reported (the command has unwound): it then
/// leaves the exit to the caller.
void interrupt_reported() noexcept;
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
