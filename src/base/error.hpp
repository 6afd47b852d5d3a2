// Input errors: bad files and bad command lines are expected, so they are reported with a location
// and the program exits non-zero. Several problems found in one pass travel together.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kanoko {

/// Where a value or problem sits in an input file. line and column are 1-based; 0 means unknown.
/// For binary files, `record` names the record (frame, section) and `byte` its offset instead of
/// a line.
struct FileLoc {
  FileLoc() = default;
  /// A place in a text file (or just the file, with line 0).
  FileLoc(std::string file_name, std::int64_t line_number = 0, std::int64_t column_number = 0)
      : file(std::move(file_name)), line(line_number), column(column_number) {}

  std::string file;
  std::int64_t line = 0;
  std::int64_t column = 0;
  std::string record;     ///< binary files: "header", "section 'meta'", "frame 12"; "" if unknown
  std::int64_t byte = -1;  ///< binary files: byte offset from the start of the file; -1 if unknown

  /// "file:line:column", "file:line", "file (record, byte N)" or "file" depending on what is known.
  [[nodiscard]] std::string str() const;
  /// A place in a binary file: a record and, if known (>= 0), its byte offset.
  static FileLoc in_record(std::string file_name, std::string record_name, std::int64_t byte_offset = -1) {
    FileLoc l(std::move(file_name));
    l.record = std::move(record_name);
    l.byte = byte_offset;
    return l;
  }
  /// True when a line, a record or a byte offset is known (not just the file).
  [[nodiscard]] bool located() const { return line > 0 || !record.empty() || byte >= 0; }
};

/// Input text quoted in a message: control characters escaped as \xNN (so the message stays one
/// printable line), at most `max_bytes` bytes of input shown (a UTF-8 character is not cut), then
/// "...(N more bytes)".
std::string escaped_excerpt(std::string_view text, std::size_t max_bytes = 200);

/// The longest message line Diagnostic::str() produces, in bytes; longer ones are cut.
inline constexpr std::size_t kMaxMessageLine = 1000;

/// `text` as one printable line (control characters escaped) of at most kMaxMessageLine bytes,
/// the cut end replaced by "...(N more bytes)".
std::string message_line(std::string_view text);

/// One problem with an input: where, and what.
struct Diagnostic {
  FileLoc loc;
  std::string message;

  /// "file:line:column: error: message", one line (control characters escaped) of at most
  /// kMaxMessageLine bytes.
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

/// What the process is working on, for errors that carry no location of their own (out of memory,
/// a numerical blow-up): a library step (reading a trace, simulating) sets it for its duration,
/// and the top-level handler names it. Scopes nest; the innermost one is current. A scope that an
/// exception leaves is remembered until the next scope opens, so that the handler, which runs
/// after unwinding, can still name it. One per process (the commands run on the main thread).
class CurrentInput {
 public:
  /// Sets `activity` ("reading the trace", "simulating") on `input` (a file) until destruction.
  CurrentInput(std::string activity, std::string input);
  ~CurrentInput();
  CurrentInput(const CurrentInput&) = delete;
  CurrentInput& operator=(const CurrentInput&) = delete;

  /// "while simulating ring.kntr with mapping ring.toml" for the innermost open scope, else for the
  /// innermost scope the last exception left, else "".
  [[nodiscard]] static std::string describe();

 private:
  std::string activity_;
  std::string input_;
  const CurrentInput* outer_;
  int uncaught_;  ///< std::uncaught_exceptions() at construction
};

}  // namespace kanoko
