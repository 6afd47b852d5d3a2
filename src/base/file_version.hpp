// Which version of a file is on disk now, for results memoised within a process (a trace's survey,
// its digest): the same file, unchanged, has the same version; a write changes its size or its
// modification time, a replacement its inode.
#pragma once

#include <sys/stat.h>

#include <compare>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace kanoko {

struct FileVersion {
  std::string path;  ///< absolute, normalised
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t size = 0;
  std::int64_t modified_ns = 0;
  auto operator<=>(const FileVersion&) const = default;
};

/// The version of `file`, or nullopt when it cannot be examined.
inline std::optional<FileVersion> file_version(const std::filesystem::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return std::nullopt;
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(file, ec);
  if (ec) return std::nullopt;
  return FileVersion{absolute.lexically_normal().string(), static_cast<std::uint64_t>(st.st_dev),
                     static_cast<std::uint64_t>(st.st_ino), static_cast<std::int64_t>(st.st_size),
                     static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

/// The versions of `files`, in order, or nullopt when one of them cannot be examined.
inline std::optional<std::vector<FileVersion>> file_versions(const std::vector<std::filesystem::path>& files) {
  std::vector<FileVersion> out;
  for (const auto& f : files) {
    auto v = file_version(f);
    if (!v) return std::nullopt;
    out.push_back(std::move(*v));
  }
  return out;
}

}  // namespace kanoko
