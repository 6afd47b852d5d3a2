// Outputs never destroy: before a command writes a file it checks what the name points at. A
// symbolic link is written through (the file it points to is replaced, the link stays); a
// dangling link, anything that is not a regular file (FIFO, device, folder, socket) and any of
// the command's own inputs are refused. The inputs are a process-wide list that the command line
// fills, so writers deep inside need no extra parameters.
#pragma once

#include <filesystem>
#include <vector>

namespace kanoko {

/// Notes that this command reads `path`: an output that is the same file (same device and inode,
/// whatever the name, hard links included) is refused. Paths that do not exist are ignored.
void note_command_input(const std::filesystem::path& path);
/// Notes several inputs (a trace's companion files, for instance).
void note_command_inputs(const std::vector<std::filesystem::path>& paths);
/// Forgets every noted input (for tests and for the viewer between runs).
void forget_command_inputs();

/// Checks that `target` may be written by replacing it with a new file, and returns the path to
/// replace: `target` itself, or the file a symbolic link points to. Throws InputError naming
/// `target` ("refusing to write: it is a FIFO", ...) for anything that must not be replaced.
std::filesystem::path checked_output_target(const std::filesystem::path& target);

}  // namespace kanoko
