// Ctrl-C and kill during long work: the first signal asks the running loop to stop at its next
// check (it throws Interrupted and unwinds, removing temporary files); a second one exits at once
// after removing registered temporary files from the signal handler.
#pragma once

#include <filesystem>
#include <stdexcept>

namespace kanoko {

/// Thrown by check_interrupt() after SIGINT/SIGTERM.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

/// Installs SIGINT/SIGTERM handlers (idempotent).
void install_interrupt_handlers();
/// Throws Interrupted if a signal arrived since the handlers were installed.
void check_interrupt();
/// True if a signal arrived.
bool interrupt_requested() noexcept;

/// Temporary files the signal handler removes if the process is killed twice.
void register_temporary_file(const std::filesystem::path& p);
void unregister_temporary_file(const std::filesystem::path& p) noexcept;

}  // namespace kanoko
