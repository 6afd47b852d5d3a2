// Input errors: bad files and bad command lines are expected, so they are reported with a location
// and the program exits non-zero. Several problems found in one pass travel together.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kanoko {

/// Where a value or problem sits in an input file. line and column are 1-based; 0 means unknown.
/// For binary files, `record` names the record (frame, section) instead of a line.
struct FileLoc {
  std::string file;
  std::int64_t line = 0;
  std::int64_t column = 0;

  /// "file:line:column", "file:line" or "file" depending on what is known.
  [[nodiscard]] std::string str() const;
};

/// One problem with an input: where, and what.
struct Diagnostic {
  FileLoc loc;
  std::string message;

  /// "file:line:column: error: message"
  [[nodiscard]] std::string str() const;
};

/// Thrown for bad input. Carries one or more diagnostics; what() is all of them, one per line.
class InputError : public std::runtime_error {
 public:
  explicit InputError(Diagnostic d);
  explicit InputError(std::vector<Diagnostic> ds);
  InputError(FileLoc loc, const std::string& message);

  [[nodiscard]] const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

/// Collects diagnostics during one pass and throws them together.
class DiagnosticList {
 public:
  void add(FileLoc loc, std::string message);
  [[nodiscard]] bool empty() const { return items_.empty(); }
  [[nodiscard]] std::size_t size() const { return items_.size(); }
  /// Throws InputError holding everything collected, if anything was.
  void throw_if_any() const;

 private:
  std::vector<Diagnostic> items_;
};

/// A run-time failure of the simulation that the user can fix (numerical blow-up, for example).
class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace kanoko
