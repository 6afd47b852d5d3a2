// Helpers shared by the test suites: temporary folders, running the kanoko binary, paths.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kanoko::test {

/// A fresh folder under the system temp dir, removed with its content on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

/// The result of running a command.
struct CommandResult {
  int exit_code = -1;
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

/// Path of the built `kanoko` executable (KANOKO_BINARY overrides).
std::string kanoko_binary();
/// Runs the built `kanoko` binary with arguments (no shell), capturing output.
CommandResult run_kanoko(const std::vector<std::string>& args);
/// Runs `kanoko` under `sh -c 'ulimit -f BLOCKS; exec kanoko ARGS...'`: a file it writes cannot
/// grow past BLOCKS of the shell's unit (512 bytes for Debian's sh), as on a full disk.
CommandResult run_kanoko_with_file_limit(int blocks, const std::vector<std::string>& args);
/// Runs any program with arguments (no shell), capturing output.
CommandResult run_program(const std::vector<std::string>& argv);
/// Starts a program (no shell) with its stdout and stderr going to files, stdin from /dev/null,
/// and returns its process id at once (waitpid it).
int start_program(const std::vector<std::string>& argv, const std::filesystem::path& out_path,
                  const std::filesystem::path& err_path);

/// The repository root (KANOKO_SOURCE_DIR overrides).
std::filesystem::path source_dir();
/// ../shared next to the repository (KANOKO_SHARED_DIR overrides).
std::filesystem::path shared_dir();

/// Writes a text file (creating folders).
void write_text(const std::filesystem::path& p, const std::string& content);
/// Reads a whole file.
std::string read_text(const std::filesystem::path& p);
/// The 1-based number of the first line of `file` that holds `marker` (traces/smpi/late.c marks
/// its MPI calls "/* RECEIVE */", ...), or -1 (a test failure is recorded).
long long line_with(const std::filesystem::path& file, const std::string& marker);
/// Lists the entries of a folder (names only, sorted).
std::vector<std::string> list_dir(const std::filesystem::path& p);

}  // namespace kanoko::test
