// Compressed text traces: a gzip, xz or zstd file is read as its decompressed bytes, streaming
// (memory bounded by the codec's window and one input buffer, never by the file), recognised by
// its magic bytes and not by its name. Concatenated gzip members, xz streams and zstd frames
// read as one text.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kanoko::trace {

/// How a file's bytes are stored.
enum class Compression : std::uint8_t { none, gzip, xz, zstd };

/// "none", "gzip", "xz" or "zstd".
[[nodiscard]] const char* compression_name(Compression c);

/// The compression whose magic bytes start `head`: gzip 1f 8b, xz fd '7zXZ' 00, zstd 28 b5 2f fd
/// (or a zstd skippable frame, 5x 2a 4d 18); none otherwise.
[[nodiscard]] Compression compression_of(std::string_view head);

/// The compression of the file at `path` from its first bytes; none for a file that cannot be
/// read (the reader reports that).
[[nodiscard]] Compression file_compression(const std::filesystem::path& path);

/// `path` without a trailing .gz, .xz or .zst (the name of the text a compressed file holds).
[[nodiscard]] std::filesystem::path without_compression_suffix(const std::filesystem::path& path);

/// The first of `path`, `path`.gz, `path`.xz, `path`.zst that is a regular file, or `path`
/// when none is (for finding the companion files of a trace that may be compressed).
[[nodiscard]] std::filesystem::path existing_maybe_compressed(const std::filesystem::path& path);

/// A file read front to back as its decompressed bytes (its own bytes when not compressed).
class DecompressedInput {
 public:
  /// Opens `path` and reads its first bytes to recognise the compression. Throws InputError
  /// naming the file when it cannot be opened or read (a directory included).
  explicit DecompressedInput(const std::filesystem::path& path);
  ~DecompressedInput();
  DecompressedInput(const DecompressedInput&) = delete;
  DecompressedInput& operator=(const DecompressedInput&) = delete;

  /// Puts up to `n` next bytes at `out`; returns how many, 0 only at the end. Throws InputError
  /// on a read error and on corrupt or truncated compressed data, naming the file, the byte
  /// offset in the compressed file and the line of the text reached so far.
  std::size_t read(char* out, std::size_t n);

  [[nodiscard]] Compression compression() const { return compression_; }
  [[nodiscard]] const std::string& name() const { return name_; }

  /// A codec's streaming state (gzip, xz, zstd; in decompress.cpp).
  class Decoder;

 private:
  /// Reads raw bytes of the file; 0 at its end.
  std::size_t read_raw(char* out, std::size_t n);
  [[noreturn]] void fail(const std::string& what) const;

  std::string name_;
  int fd_ = -1;
  Compression compression_ = Compression::none;
  std::array<char, 8> head_{};   ///< the first bytes, read to recognise the compression
  std::size_t head_size_ = 0;
  std::size_t head_pos_ = 0;     ///< head bytes already handed out (plain files)
  std::unique_ptr<Decoder> decoder_;
  std::vector<unsigned char> in_;  ///< compressed bytes read, not all decoded yet
  std::size_t in_pos_ = 0;
  std::size_t in_size_ = 0;
  std::uint64_t in_base_ = 0;    ///< offset in the file of in_[0]
  bool eof_ = false;             ///< the file's end was read
  bool finished_ = false;        ///< the decoder found the end of the compressed data
  std::int64_t newlines_ = 0;    ///< '\n' handed out so far (compressed files only)
};

/// A file as plain bytes on disk, for readers that read at random offsets: the file itself when
/// it is not compressed, else a temporary copy of its decompressed text (in the system temp
/// folder, removed on destruction). The copy stops with an InputError at the first line longer
/// than `max_line_bytes` ("line is longer than 16 MiB: not a <what> (binary file?)"), so a
/// decompression bomb of one endless line ends there.
class PlainFile {
 public:
  PlainFile(const std::filesystem::path& path, std::size_t max_line_bytes, const char* what);
  ~PlainFile();
  PlainFile(const PlainFile&) = delete;
  PlainFile& operator=(const PlainFile&) = delete;
  PlainFile(PlainFile&& o) noexcept;
  PlainFile& operator=(PlainFile&&) = delete;

  /// Where the plain bytes are.
  [[nodiscard]] const std::filesystem::path& path() const { return copy_.empty() ? source_ : copy_; }
  [[nodiscard]] Compression compression() const { return compression_; }

 private:
  std::filesystem::path source_;  ///< the file given, never removed
  std::filesystem::path copy_;    ///< the temporary copy this object made and removes; empty if none
  Compression compression_ = Compression::none;
};

}  // namespace kanoko::trace
