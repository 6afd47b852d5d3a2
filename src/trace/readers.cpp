#include "src/trace/readers.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <functional>

#include "src/base/error.hpp"
#include "src/base/suggest.hpp"
#include "src/trace/native_reader.hpp"

namespace kanoko::trace {
namespace {

/// The first word of each line of `head` that is not blank or a comment, in order.
template <typename F>
void for_each_line_start(std::string_view head, F&& f) {
  if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
  std::size_t pos = 0;
  while (pos < head.size()) {
    std::size_t end = head.find('\n', pos);
    if (end == std::string_view::npos) end = head.size();
    std::string_view line = head.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string_view::npos || line[b] == '#') continue;
    if (!f(line.substr(b))) return;
  }
}

bool looks_native(std::string_view head) {
  bool found = false;
  for_each_line_start(head, [&](std::string_view line) {
    found = line.substr(0, 4) == "kntr" && (line.size() == 4 || line[4] == ' ' || line[4] == '\t' || line[4] == '\r');
    return false;  // only the first entry counts
  });
  return found;
}

bool looks_paje(std::string_view head) {
  bool found = false;
  for_each_line_start(head, [&](std::string_view line) {
    if (line[0] != '%') return true;
    line.remove_prefix(1);
    const std::size_t b = line.find_first_not_of(" \t");
    found = b != std::string_view::npos && line.substr(b, 8) == "EventDef";
    return !found;
  });
  return found;
}

struct Reader {
  const char* name;
  const char* description;
  bool (*detect)(std::string_view head);
  std::function<void(const std::filesystem::path&, TraceSink&, const ReaderOptions&, ReadReport&)> read;
};

const std::array<Reader, 2>& readers() {
  static const std::array<Reader, 2> table{{
      {"native", "Kanoko native text trace (.kntr)", looks_native,
       [](const std::filesystem::path& p, TraceSink& sink, const ReaderOptions&, ReadReport&) {
         read_native_trace(p, sink);
       }},
      {"paje", "Pajé trace (SimGrid, PajeNG, StarPU)", looks_paje,
       [](const std::filesystem::path& p, TraceSink& sink, const ReaderOptions& o, ReadReport& r) {
         r.paje = read_paje_trace(p, sink, o.paje);
         r.has_paje = true;
       }},
  }};
  return table;
}

std::string valid_list() {
  std::string s;
  for (const Reader& r : readers()) s += (s.empty() ? "" : ", ") + std::string(r.name);
  return s;
}

}  // namespace

std::vector<std::string> ReadReport::warning_lines() const {
  std::vector<std::string> out;
  if (!has_paje) return out;
  for (const PajeWarning& w : paje.warnings) {
    out.push_back(w.first.str() + ": warning: " + std::to_string(w.count) + "x " + w.what);
  }
  return out;
}

std::vector<std::string> reader_names() {
  std::vector<std::string> names;
  for (const Reader& r : readers()) names.emplace_back(r.name);
  return names;
}

std::string detect_format_text(std::string_view head) {
  for (const Reader& r : readers()) {
    if (r.detect(head)) return r.name;
  }
  return {};
}

std::string detect_format(const std::filesystem::path& path) {
  const std::string name = path.string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(FileLoc{name}, std::string("cannot open trace: ") + std::strerror(errno));
  std::string head(64 * 1024, '\0');
  std::size_t have = 0;
  while (have < head.size()) {
    const ssize_t n = ::read(fd, head.data() + have, head.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      if (err == EISDIR) throw InputError(FileLoc{name}, "is a directory, expected a trace file");
      throw InputError(FileLoc{name}, std::string("read failed: ") + std::strerror(err));
    }
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  ::close(fd);
  head.resize(have);
  return detect_format_text(head);
}

ReadReport read_trace(const std::filesystem::path& path, TraceSink& sink, const std::string& format,
                      const ReaderOptions& options) {
  std::string chosen = format;
  if (format == "auto") {
    chosen = detect_format(path);
    if (chosen.empty()) {
      throw InputError(FileLoc{path.string()}, "unknown trace format: no reader recognises the content (native "
                                               "traces start with 'kntr 1', Pajé traces with %EventDef lines); "
                                               "name one with --format: " + valid_list());
    }
  }
  for (const Reader& r : readers()) {
    if (chosen != r.name) continue;
    ReadReport report;
    report.format = r.name;
    r.read(path, sink, options, report);
    return report;
  }
  throw InputError(FileLoc{path.string()}, "unknown trace format '" + format + "'" + did_you_mean(format, reader_names()) +
                                               "; valid formats: auto, " + valid_list());
}

}  // namespace kanoko::trace
