// The source lines around a code location, for the viewer's source panel (docs/profile.md, "In the
// viewer"). The file a trace names is looked for under the source search paths the user gives, and
// nothing outside them is read: every candidate is canonicalised (symbolic links resolved) and must
// lie inside a canonicalised search path. Whatever goes wrong (no search path, a missing file, a
// line past its end, a binary or huge file, a name with control characters or invalid UTF-8, a
// symbolic link out of the search paths) comes back as a status with a one-line note, never an
// exception: the panel shows it as text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kanoko::profile {

struct SourceExcerpt {
  enum class Status : std::uint8_t {
    ok,              ///< lines around the chosen line
    no_search_path,  ///< the user gave no source search path
    no_file,         ///< the location names no file
    bad_name,        ///< the file name has control characters or is not UTF-8
    not_found,       ///< no such file under the search paths
    outside,         ///< found only through a link that leads out of the search paths: not read
    line_past_end,   ///< the file is shorter than the line (its last lines are shown)
    binary,          ///< the file holds NUL bytes
    too_large,       ///< the file is larger than SourceLimits::max_bytes
    unreadable       ///< found but could not be read
  };
  Status status = Status::not_found;
  std::filesystem::path path;  ///< the file read (canonical), when one was found
  std::int64_t line = 0;       ///< the chosen line
  std::int64_t first_line = 0; ///< the number of lines[0] (1-based)
  std::int64_t file_lines = 0; ///< lines in the file, when it was read
  /// The lines shown, printable: tabs expanded, control characters and bytes that are not UTF-8
  /// as \xNN, each cut at SourceLimits::max_line_chars.
  std::vector<std::string> lines;
  std::string note;  ///< one line saying what went wrong, or "" when status is ok
};

struct SourceLimits {
  std::size_t context = 7;                       ///< lines shown before and after the chosen one
  std::uintmax_t max_bytes = std::uintmax_t{8} << 20U;  ///< larger files are not read
  std::size_t max_line_chars = 240;
  std::size_t max_candidates = 64;  ///< path suffixes tried per search path
};

/// The canonical forms of the search paths; throws InputError naming `where` for one that is not
/// an existing folder.
[[nodiscard]] std::vector<std::filesystem::path> checked_source_roots(const std::vector<std::string>& roots,
                                                                      std::string_view where);

/// True when `path` (canonical) lies inside `root` (canonical) or is it.
[[nodiscard]] bool path_inside(const std::filesystem::path& path, const std::filesystem::path& root);

/// The lines around line `line` of the file a trace names `file`, looked for under `roots` (each
/// canonical, checked_source_roots): as given when relative, then by shorter and shorter ends of
/// the name ("/home/u/app/src/late.c" tries src/late.c, then late.c, under each root); an absolute
/// name is also tried as it is. The first candidate inside a root wins.
[[nodiscard]] SourceExcerpt source_excerpt(const std::vector<std::filesystem::path>& roots, std::string_view file,
                                           std::int64_t line, const SourceLimits& limits = {});

/// The excerpt as text: a header line (file:line or the note), then the lines numbered, the chosen
/// one marked with '>'.
[[nodiscard]] std::string excerpt_text(const SourceExcerpt& e);

}  // namespace kanoko::profile
