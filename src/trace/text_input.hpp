// Shared pieces of the text trace readers: reading a file in large chunks with interrupt checks,
// and quoting user text safely inside error messages.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace kanoko::trace {

/// Reads `path` in 1 MiB chunks and passes each to `consume`, checking for Ctrl-C between
/// chunks. Throws InputError naming the file when it cannot be opened or read.
void for_each_file_chunk(const std::filesystem::path& path, const std::function<void(std::string_view)>& consume);

/// User text for an error message: at most 40 bytes, control characters escaped as \xNN.
std::string shown(std::string_view s);

/// Splits successive chunks of a text file into lines (without the '\n'; a '\r' before it is
/// kept), carrying a partial last line over to the next chunk. A line longer than `max_bytes` is
/// refused with an InputError at its line number.
class ChunkLineSplitter {
 public:
  ChunkLineSplitter(std::string name, std::function<void(std::string_view)> on_line, std::size_t max_bytes = 16 << 20);
  void feed(std::string_view chunk);
  /// Passes the last line if the file does not end with a newline.
  void finish();
  /// Number of lines passed so far.
  [[nodiscard]] std::int64_t lines() const { return lines_; }

 private:
  std::string name_;
  std::function<void(std::string_view)> on_line_;
  std::size_t max_bytes_;
  std::string carry_;
  std::int64_t lines_ = 0;
};

/// Reads `path` in chunks (for_each_file_chunk) and passes every line to `on_line`.
void for_each_file_line(const std::filesystem::path& path, const std::function<void(std::string_view)>& on_line);

}  // namespace kanoko::trace
