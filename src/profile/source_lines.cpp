#include "src/profile/source_lines.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <system_error>

#include "src/base/error.hpp"
#include "src/profile/profile.hpp"

namespace kanoko::profile {
namespace {

namespace fs = std::filesystem;
using Status = SourceExcerpt::Status;

/// The canonical form of an existing path, or empty.
fs::path canonical_or_empty(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::canonical(p, ec);
  return ec ? fs::path{} : c;
}

/// The candidates for `name` under `root`: the name itself (relative), then its ends.
std::vector<fs::path> candidates(const fs::path& root, const fs::path& name, std::size_t max) {
  std::vector<fs::path> parts;
  for (const fs::path& part : name.relative_path()) {
    if (!part.empty()) parts.push_back(part);
  }
  std::vector<fs::path> out;
  const std::size_t skip_from = parts.size() > max ? parts.size() - max : 0;
  for (std::size_t first = skip_from; first < parts.size(); ++first) {
    fs::path p = root;
    for (std::size_t k = first; k < parts.size(); ++k) p /= parts[k];
    out.push_back(p);
  }
  return out;
}

/// A source line for a panel: tabs to spaces (to the next multiple of 4), the rest printable, cut.
std::string shown_line(std::string_view raw, std::size_t max_chars) {
  std::string expanded;
  for (const char c : raw) {
    if (c == '\t') {
      expanded.append(4 - expanded.size() % 4, ' ');
    } else {
      expanded += c;
    }
    if (expanded.size() > 4 * max_chars) break;  // enough to cut from
  }
  std::string p = printable(expanded);
  if (p.size() > max_chars) {
    std::size_t cut = max_chars;
    while (cut > 0 && (static_cast<unsigned char>(p[cut]) & 0xC0U) == 0x80U) --cut;  // not inside a character
    p.resize(cut);
    p += " ...";
  }
  return p;
}

}  // namespace

std::vector<fs::path> checked_source_roots(const std::vector<std::string>& roots, std::string_view where) {
  std::vector<fs::path> out;
  for (const std::string& r : roots) {
    std::error_code ec;
    if (r.empty() || !fs::is_directory(r, ec)) {
      throw InputError(FileLoc{std::string(where)}, "'" + printable(r) + "' is not a folder (a source search path)");
    }
    out.push_back(canonical_or_empty(r));
    if (out.back().empty()) throw InputError(FileLoc{std::string(where)}, "cannot resolve the folder '" + printable(r) + "'");
  }
  return out;
}

bool path_inside(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (r->empty()) continue;  // a trailing separator
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

SourceExcerpt source_excerpt(const std::vector<fs::path>& roots, std::string_view file, std::int64_t line,
                             const SourceLimits& limits) {
  SourceExcerpt e;
  e.line = line;
  const std::string shown_name = printable(file);
  if (file.empty()) {
    e.status = Status::no_file;
    e.note = "the location names no source file";
    return e;
  }
  if (shown_name != file || file.find('\0') != std::string_view::npos) {
    e.status = Status::bad_name;
    e.note = "the file name '" + shown_name + "' has control characters or is not UTF-8: not looked for";
    return e;
  }
  if (roots.empty()) {
    e.status = Status::no_search_path;
    e.note = shown_name + ": no source search path (kanoko view --source-path DIR)";
    return e;
  }
  const fs::path name(file);
  fs::path found;
  bool escaped = false;
  for (const fs::path& root : roots) {
    std::vector<fs::path> tries = candidates(root, name, limits.max_candidates);
    if (name.is_absolute()) tries.insert(tries.begin(), name);
    for (const fs::path& c : tries) {
      std::error_code ec;
      if (!fs::exists(c, ec)) continue;
      const fs::path canon = canonical_or_empty(c);
      if (canon.empty() || !fs::is_regular_file(canon, ec)) continue;
      if (!path_inside(canon, root)) {
        // Not under this root (an absolute name elsewhere, or a link out of it).
        if (!name.is_absolute() || c != name) escaped = true;
        continue;
      }
      found = canon;
      break;
    }
    if (!found.empty()) break;
  }
  if (found.empty()) {
    e.status = escaped ? Status::outside : Status::not_found;
    e.note = escaped ? shown_name + ": found only outside the source search paths (a link or .. leads out): not read"
                     : shown_name + ": not found under the source search paths";
    return e;
  }
  e.path = found;
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(found, ec);
  if (ec) {
    e.status = Status::unreadable;
    e.note = found.string() + ": cannot read its size";
    return e;
  }
  if (size > limits.max_bytes) {
    e.status = Status::too_large;
    e.note = found.string() + ": " + std::to_string(size) + " bytes, larger than " + std::to_string(limits.max_bytes) +
             ": not read";
    return e;
  }
  std::ifstream in(found, std::ios::binary);
  std::string text;
  if (in) {
    text.resize(static_cast<std::size_t>(size));
    in.read(text.data(), static_cast<std::streamsize>(size));
    text.resize(static_cast<std::size_t>(in.gcount()));
  }
  if (!in && !in.eof()) {
    e.status = Status::unreadable;
    e.note = found.string() + ": cannot be read";
    return e;
  }
  if (text.find('\0') != std::string::npos) {
    e.status = Status::binary;
    e.note = found.string() + ": a binary file (NUL bytes): not shown";
    return e;
  }
  // Line starts, then the window around the chosen line.
  std::vector<std::size_t> starts{0};
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && i + 1 < text.size()) starts.push_back(i + 1);
  }
  if (text.empty()) starts.clear();
  e.file_lines = static_cast<std::int64_t>(starts.size());
  const auto context = static_cast<std::int64_t>(limits.context);
  std::int64_t centre = line;
  e.status = Status::ok;
  if (line < 1 || line > e.file_lines) {
    e.status = Status::line_past_end;
    e.note = found.string() + " has " + std::to_string(e.file_lines) + " lines, not line " + std::to_string(line) +
             (e.file_lines > 0 ? ": its last lines are shown" : "");
    centre = e.file_lines;
  }
  const std::int64_t first = std::max<std::int64_t>(1, centre - context);
  const std::int64_t last = std::min(e.file_lines, centre + context);
  e.first_line = first;
  for (std::int64_t k = first; k <= last; ++k) {
    const std::size_t b = starts[static_cast<std::size_t>(k - 1)];
    std::size_t end = k < e.file_lines ? starts[static_cast<std::size_t>(k)] : text.size();
    while (end > b && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
    e.lines.push_back(shown_line(std::string_view(text).substr(b, end - b), limits.max_line_chars));
  }
  return e;
}

std::string excerpt_text(const SourceExcerpt& e) {
  std::string t = e.status == Status::ok ? e.path.string() + ":" + std::to_string(e.line) : e.note;
  t += '\n';
  char num[32];
  for (std::size_t k = 0; k < e.lines.size(); ++k) {
    const std::int64_t n = e.first_line + static_cast<std::int64_t>(k);
    std::snprintf(num, sizeof num, "%c%5lld  ", n == e.line ? '>' : ' ', static_cast<long long>(n));
    t += num + e.lines[k] + '\n';
  }
  return t;
}

}  // namespace kanoko::profile
