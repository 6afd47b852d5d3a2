// The whole-program mutation harness (kanoko_mutate): deterministic mutants of every seed input
// run through the real `kanoko` binary, each under a wall-time, memory and output bound, and
// classified (README.md here lists the classes).
#pragma once

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace kanoko::fuzz {

/// How one run of kanoko on a mutant ended, from best to worst.
enum class Outcome {
  ok,          ///< exit 0, no sanitizer report, nothing left behind
  located,     ///< an error naming the input and a position in it (line, column, record, byte, ...)
  whole_file,  ///< an error naming the input but no position (a message about the whole file)
  unlocated,   ///< an error that does not name the input
  crash,       ///< a signal, an exit status >= 128, a sanitizer report or an uncaught exception
  hang,        ///< killed at the wall-time bound
  runaway,     ///< over the memory or output bound
  leftover,    ///< a file left in the output folder after a failure, or in the temp folder after any run
};
/// Number of Outcome values.
inline constexpr std::size_t kOutcomeCount = 8;
/// The outcome's name as printed in the report ("whole-file", ...).
[[nodiscard]] std::string_view outcome_name(Outcome o);
/// Whether the outcome makes the harness exit non-zero (crash, hang, runaway, leftover; and
/// unlocated too when `strict`).
[[nodiscard]] bool is_failure(Outcome o, bool strict);

/// Applies 1 to 3 edits to `input`, chosen by `rng`: bit flips, random bytes, erased runs or
/// inserted tokens (tests/trace/mutation.hpp), truncation, a duplicated or deleted line, a
/// number replaced by a huge, negative or non-finite one, a very long token, or two numbers
/// (timestamps) swapped between lines.
[[nodiscard]] std::string mutate(std::string input, std::mt19937_64& rng);

/// The bounds one run lives under.
struct Limits {
  double timeout_s = 10;            ///< wall time; then the process group is killed (hang)
  std::uint64_t memory_mb = 2048;   ///< resident memory (polled) and, unless `address_space` is off, RLIMIT_AS
  bool address_space = true;        ///< also set RLIMIT_AS (off for AddressSanitizer programs)
  std::uint64_t output_mb = 256;    ///< bytes the run may write (RLIMIT_FSIZE + a size check)
};

/// What one bounded run did.
struct RunResult {
  int exit_code = -1;                  ///< exit status, or -1 when killed by a signal
  int signal = 0;                      ///< the terminating signal, 0 if none
  bool timed_out = false;              ///< killed at the wall-time bound
  bool memory_exceeded = false;        ///< killed at the resident-memory bound
  bool output_exceeded = false;        ///< wrote more than the output bound
  std::string err;                     ///< stderr (the first 64 KiB)
  std::uintmax_t output_bytes = 0;     ///< bytes in the output folder, stdout and stderr
  std::vector<std::string> leftovers;  ///< unexpected files (relative to the run folder)
};

/// Runs `argv` (argv[0] a path) in its own process group with cwd `out_dir`, TMPDIR `tmp_dir`,
/// stdout and stderr to files in `log_dir`, under `limits`. `expected` names the files a
/// successful run may leave in `out_dir`; anything else there (after success), anything at all
/// there (after a failure) and anything in `tmp_dir` is reported as a leftover.
[[nodiscard]] RunResult run_bounded(const std::vector<std::string>& argv, const std::filesystem::path& out_dir,
                                    const std::filesystem::path& tmp_dir, const std::filesystem::path& log_dir,
                                    const std::vector<std::string>& expected, const Limits& limits);

/// Classifies a run whose input file is `input` (its path as given to kanoko).
[[nodiscard]] Outcome classify(const RunResult& r, const std::string& input);

/// Whether an error line names `input` with a position: `input:LINE[:COL]`, or `input: record N`,
/// `byte N`, `offset N`, `line N`, `event N`, `frame N`, `block N` or `section N`.
[[nodiscard]] bool names_position(std::string_view line, std::string_view input);

/// Whether the program file is built with AddressSanitizer (it holds `__asan_init`).
[[nodiscard]] bool uses_asan(const std::filesystem::path& program);

}  // namespace kanoko::fuzz
