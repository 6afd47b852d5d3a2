// Shared pieces of the text trace readers: reading a file in large chunks with interrupt checks,
// and quoting user text safely inside error messages.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace kanoko::trace {

/// Reads `path` in 1 MiB chunks and passes each to `consume`, checking for Ctrl-C between
/// chunks; a gzip, xz or zstd file is decompressed (DecompressedInput). Throws InputError naming
/// the file when it cannot be opened or read, or its compressed data is corrupt or truncated.
void for_each_file_chunk(const std::filesystem::path& path, const std::function<void(std::string_view)>& consume);

/// Parses all of `s` as std::from_chars does for a double (same grammar, same correctly
/// rounded result), with a fast path for the plain decimals traces are made of: no exponent, and
/// at most 15 digits, or at most 19 whose integer m (the digits without the point) is at most
/// 2^53 (SimGrid's "1000000000.000000"). Such a number is an integer m <= 2^53 over an exact
/// power of ten (at most 10^19), and one IEEE division rounds it correctly (Clinger's fast
/// path). Returns false when `s` is not a number or not all of it is; `out` may then hold
/// anything.
inline bool parse_double(std::string_view s, double& out) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const char* p = s.data();
  const char* const end = p + s.size();
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  std::uint64_t m = 0;
  int digits = 0;
  while (p < end && static_cast<unsigned>(*p - '0') < 10U) {
    m = m * 10 + static_cast<unsigned>(*p - '0');
    ++p;
    ++digits;
  }
  int decimals = 0;
  if (p < end && *p == '.') {
    ++p;
    while (p < end && static_cast<unsigned>(*p - '0') < 10U) {
      m = m * 10 + static_cast<unsigned>(*p - '0');
      ++p;
      ++decimals;
    }
    digits += decimals;
  }
  // Up to 19 digits, m cannot overflow; up to 15 it is below 10^15 < 2^53.
  if (p == end && digits > 0 && (digits <= 15 || (digits <= 19 && m <= (std::uint64_t{1} << 53U)))) {
    // An integer needs no division (m < 2^53 is exact).
    const double v = decimals == 0 ? static_cast<double>(m) : static_cast<double>(m) / kPow10[decimals];
    out = negative ? -v : v;
    return true;
  }
  const auto r = std::from_chars(s.data(), end, out);
  return r.ec == std::errc() && r.ptr == end;
}

/// User text for an error message: at most 40 bytes, control characters escaped (escaped_excerpt).
std::string shown(std::string_view s);

/// The longest line a text trace reader takes ("line is longer than 16 MiB: not a … (binary
/// file?)"): a longer one is a file of another kind.
inline constexpr std::size_t kMaxTextLineBytes = std::size_t{16} << 20U;

/// Splits successive chunks of a text file into lines (without the '\n'; a '\r' before it is
/// kept), carrying a partial last line over to the next chunk. A line longer than `max_bytes` is
/// refused with an InputError at its line number.
class ChunkLineSplitter {
 public:
  ChunkLineSplitter(std::string name, std::function<void(std::string_view)> on_line, std::size_t max_bytes = kMaxTextLineBytes);
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

/// Reads `path` in chunks (for_each_file_chunk, decompressed) and passes every line to `on_line`.
void for_each_file_line(const std::filesystem::path& path, const std::function<void(std::string_view)>& on_line);
/// The same until `on_line` returns false: the rest of the file is not read.
void for_each_file_line_while(const std::filesystem::path& path, const std::function<bool(std::string_view)>& on_line);

}  // namespace kanoko::trace
