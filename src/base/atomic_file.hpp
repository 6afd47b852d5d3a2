// Output files appear whole or not at all: we write to a temporary name beside the target and
// rename over it only when the content is complete. A failed or interrupted run leaves either the
// previous file or none.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kanoko {

/// A file being written under a temporary name. commit() renames it into place; destruction
/// without commit() removes it. The target is checked first (src/base/output_target.hpp): a
/// symbolic link is written through, a FIFO, device, folder or input of the command is refused.
class AtomicOutputFile {
 public:
  /// Opens "<target>.tmp-<pid>" for binary writing ("-1", "-2", ... appended if that name is
  /// taken, by another writer to the same target). Throws InputError if the target must not be
  /// replaced or the folder is not writable.
  explicit AtomicOutputFile(std::filesystem::path target);
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;
  ~AtomicOutputFile();

  /// Appends bytes; throws RunError on a write failure (disk full).
  void write(const void* data, std::size_t bytes);
  void write(std::string_view s) { write(s.data(), s.size()); }
  /// Overwrites bytes at an absolute offset (used to patch headers), then returns to the end.
  void write_at(std::uint64_t offset, const void* data, std::size_t bytes);
  /// Hands the buffered bytes to the file (so other readers of temporary() see them); with
  /// `durable`, also waits until they are on disk (fdatasync). Throws RunError on failure.
  void flush(bool durable = false);
  /// Bytes written so far.
  [[nodiscard]] std::uint64_t size() const { return size_; }
  /// Flushes, syncs and closes the temporary file without moving it into place yet (a set of files
  /// that appears together: close each, then commit each). Throws RunError on failure.
  void close();
  /// Flushes, syncs, closes (unless close() did) and renames into place.
  void commit();
  /// Removes the temporary file now (also done by the destructor).
  void discard() noexcept;

  /// The name the output was given.
  [[nodiscard]] const std::filesystem::path& target() const { return target_; }
  /// The file commit() replaces: the target, or the file a symbolic target points to.
  [[nodiscard]] const std::filesystem::path& destination() const { return destination_; }
  /// The temporary file being written.
  [[nodiscard]] const std::filesystem::path& temporary() const { return temp_; }

 private:
  [[noreturn]] void fail(const std::string& why);

  std::filesystem::path target_;
  std::filesystem::path destination_;
  std::filesystem::path temp_;
  std::FILE* file_ = nullptr;
  std::uint64_t size_ = 0;
  bool committed_ = false;
  bool closed_ = false;
};

/// The process writing `path` when it is an AtomicOutputFile's temporary "<target>.tmp-<pid>[-n]"
/// (0 otherwise): how a reader following a file being written tells whether its writer still runs.
int temporary_writer(const std::filesystem::path& path);

/// The temporaries of `target` whose writing process still runs, oldest name first: a run
/// another command is writing right now.
std::vector<std::filesystem::path> live_temporaries(const std::filesystem::path& target);

/// True while process `pid` exists.
bool process_running(int pid);

/// Writes a whole text file atomically.
void write_file_atomically(const std::filesystem::path& target, std::string_view content);

/// Reads a whole file into a string; throws InputError naming the file when it cannot be read.
std::string read_file(const std::filesystem::path& path);

}  // namespace kanoko
