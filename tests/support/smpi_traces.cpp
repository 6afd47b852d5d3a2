#include "tests/support/smpi_traces.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include "src/base/atomic_file.hpp"
#include "src/base/error.hpp"
#include "src/base/hash.hpp"
#include "src/trace/text_input.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::test {

std::filesystem::path smpi_dir() { return source_dir() / "traces" / "smpi"; }

std::string smpi_unavailable_reason() {
  for (const char* tool : {"smpicc", "smpirun"}) {
    if (run_program({"sh", "-c", std::string("command -v ") + tool}).exit_code != 0) {
      return std::string(tool) + " not found: SMPI traces cannot be generated (apt-get install libsimgrid-dev)";
    }
  }
  return "";
}

std::filesystem::path smpi_cache_dir() {
  const char* env = std::getenv("KANOKO_SMPI_CACHE");
  return env != nullptr ? std::filesystem::path(env) : std::filesystem::path(KANOKO_TEST_SMPI_CACHE);
}

namespace {

/// The shortest text that reads back as `v`.
std::string shortest(double v) {
  std::array<char, 32> buf{};
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return {buf.data(), r.ptr};
}

/// A digest of every file of traces/smpi except the traces themselves, and of `platform` when it
/// is a file outside that folder: any change to a program, a platform or the generator changes it.
std::uint64_t sources_digest(const std::string& platform) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(smpi_dir())) {
    if (e.is_regular_file() && e.path().extension() != ".trace") files.push_back(e.path());
  }
  if (platform.find('/') != std::string::npos) files.emplace_back(platform);
  std::sort(files.begin(), files.end());
  Fnv1a64 h;
  for (const auto& f : files) {
    h.update(f.lexically_relative(smpi_dir()).string());
    h.update(read_file(f));
  }
  return h.digest();
}

}  // namespace

std::filesystem::path smpi_trace(const SmpiRun& run) {
  std::vector<std::string> argv{"sh", (smpi_dir() / "generate.sh").string(), "--program", run.program,
                                "--ranks", std::to_string(run.ranks), "--platform", run.platform,
                                "--scale", run.scale, "--work-scale", shortest(run.work_scale)};
  if (run.sizes) argv.emplace_back("--sizes");
  if (!run.computing) argv.emplace_back("--no-computing");
  if (run.internals) argv.emplace_back("--internals");
  if (run.resources) argv.emplace_back("--resources");
  if (run.locations) argv.emplace_back("--locations");
  const std::size_t options_end = argv.size();
  argv.emplace_back("--");
  argv.insert(argv.end(), run.args.begin(), run.args.end());

  Fnv1a64 key;
  for (std::size_t i = 2; i < argv.size(); ++i) {
    key.update(argv[i]);
    key.update("\n");
  }
  key.update_value(sources_digest(run.platform));
  std::array<char, 17> hex{};
  std::to_chars(hex.data(), hex.data() + 16, key.digest(), 16);
  const std::string stem = std::filesystem::path(run.platform).stem().string();
  const auto trace = smpi_cache_dir() / (run.program + "-n" + std::to_string(run.ranks) + "-" + stem + "-" +
                                         run.scale + "-" + hex.data() + ".trace");
  if (std::filesystem::exists(trace)) return trace;

  std::filesystem::create_directories(smpi_cache_dir());
  argv.insert(argv.begin() + static_cast<std::ptrdiff_t>(options_end), {"--output", trace.string()});
  const CommandResult r = run_program(argv);
  if (r.exit_code != 0 || !std::filesystem::exists(trace)) {
    throw std::runtime_error("traces/smpi/generate.sh failed (exit " + std::to_string(r.exit_code) + ") for " +
                             trace.filename().string() + ":\n" + r.err);
  }
  return trace;
}

namespace {

/// A field of a data line: its bytes [begin, end) in the file's text, quotes included.
struct Span {
  std::size_t begin = 0;
  std::size_t end = 0;
};

/// Splits the line text[begin, end) into whitespace-separated fields; a field that starts with
/// '"' runs to the next '"'. Returns false on an unterminated quote.
bool split_fields(std::string_view text, std::size_t begin, std::size_t end, std::vector<Span>& out) {
  out.clear();
  std::size_t i = begin;
  while (true) {
    while (i < end && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
    if (i >= end) return true;
    const std::size_t start = i;
    if (text[i] == '"') {
      i = text.find('"', i + 1);
      if (i == std::string_view::npos || i >= end) return false;
      ++i;
    } else {
      while (i < end && text[i] != ' ' && text[i] != '\t' && text[i] != '\r') ++i;
    }
    out.push_back({start, i});
  }
}

/// What to rewrite in the lines of one event definition: its `date` fields and, for
/// PajeStartLink, its `Size` field (field numbers count from 0 after the event id).
struct EventFields {
  std::vector<std::size_t> dates;
  std::optional<std::size_t> size;
};

}  // namespace

void transform_paje(const std::filesystem::path& in, const std::filesystem::path& out, const PajeTransform& t) {
  const std::string text = read_file(in);
  std::map<std::string, EventFields, std::less<>> events;
  EventFields* defining = nullptr;
  std::string defining_name;
  std::size_t field_count = 0;
  std::string result;
  result.reserve(text.size() + text.size() / 8);
  std::vector<Span> fields;
  std::int64_t line_no = 0;
  const auto fail = [&](std::size_t line_begin, std::size_t at, const std::string& what) {
    throw std::runtime_error(
        FileLoc{in.string(), line_no, static_cast<std::int64_t>(at - line_begin) + 1}.str() + ": " + what);
  };
  for (std::size_t begin = 0; begin < text.size();) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    ++line_no;
    if (!split_fields(text, begin, end, fields)) fail(begin, begin, "unterminated quoted string");
    const auto word = [&](std::size_t k) {
      return std::string_view(text).substr(fields[k].begin, fields[k].end - fields[k].begin);
    };
    std::size_t copied = begin;
    if (!fields.empty() && text[fields[0].begin] == '%') {
      // Header: "%EventDef NAME ID", "% FIELD TYPE" lines, "%EndEventDef".
      const std::string_view first = word(0);
      if (first == "%EventDef") {
        if (fields.size() < 3) fail(begin, fields[0].begin, "%EventDef without a name and an id");
        defining_name = std::string(word(1));
        defining = &events[std::string(word(2))];
        *defining = EventFields{};
        field_count = 0;
      } else if (first == "%EndEventDef") {
        defining = nullptr;
      } else if (defining != nullptr) {
        const bool split = first.size() == 1;  // "% Name type" or "%Name type"
        const std::size_t name_at = split ? 1 : 0;
        if (fields.size() < name_at + 2) fail(begin, fields[0].begin, "event field without a name and a type");
        const std::string_view name = split ? word(1) : first.substr(1);
        if (word(name_at + 1) == "date") defining->dates.push_back(field_count);
        if (defining_name == "PajeStartLink" && name == "Size") defining->size = field_count;
        ++field_count;
      }
    } else if (!fields.empty() && text[fields[0].begin] != '#') {
      const auto ev = events.find(word(0));
      if (ev == events.end()) fail(begin, fields[0].begin, "event id " + std::string(word(0)) + " is not defined");
      std::vector<std::pair<std::size_t, bool>> rewrite;  // field number, is a date
      for (const std::size_t d : ev->second.dates) rewrite.emplace_back(d, true);
      // SimGrid omits the declared Size on some link starts (platform links with display-sizes):
      // those have no size to scale.
      if (ev->second.size && *ev->second.size + 1 < fields.size()) rewrite.emplace_back(*ev->second.size, false);
      std::sort(rewrite.begin(), rewrite.end());
      for (const auto& [k, is_date] : rewrite) {
        if (k + 1 >= fields.size()) fail(begin, end, "missing time field " + std::to_string(k + 1));
        const Span s = fields[k + 1];
        const std::string_view v = word(k + 1);
        result.append(text, copied, s.begin - copied);
        copied = s.end;
        std::uint64_t n = 0;
        double x = 0;
        const auto r = std::from_chars(v.data(), v.data() + v.size(), n);
        if (!is_date && r.ec == std::errc() && r.ptr == v.data() + v.size()) {
          result += std::to_string(n * t.size_factor);
        } else if (trace::parse_double(v, x)) {
          result += shortest(is_date ? x * t.time_factor : x * static_cast<double>(t.size_factor));
        } else {
          fail(begin, s.begin, "'" + trace::shown(v) + "' is not a number");
        }
      }
    }
    result.append(text, copied, std::min(end + 1, text.size()) - copied);
    begin = end + 1;
  }
  write_file_atomically(out, result);
}

std::optional<PjDumpCounts> pj_dump_counts(const std::filesystem::path& trace, std::string* why) {
  const CommandResult d = run_program({"pj_dump", trace.string()});
  if (d.exit_code != 0) {
    if (why != nullptr) {
      *why = d.exit_code == 127 ? "pj_dump not installed (apt-get install pajeng)"
                                : "pj_dump refuses " + trace.filename().string() + ": " + d.err.substr(0, 200);
    }
    return std::nullopt;
  }
  PjDumpCounts c;
  const std::map<std::string_view, std::uint64_t*> kinds{{"Container", &c.containers},
                                                        {"State", &c.states},
                                                        {"Link", &c.links},
                                                        {"Variable", &c.variables},
                                                        {"Event", &c.events}};
  const std::string_view all(d.out);
  for (std::size_t begin = 0; begin < all.size();) {
    std::size_t end = all.find('\n', begin);
    if (end == std::string_view::npos) end = all.size();
    const std::string_view line = all.substr(begin, end - begin);
    const auto kind = kinds.find(line.substr(0, line.find(',')));
    if (kind != kinds.end()) ++*kind->second;
    begin = end + 1;
  }
  return c;
}

}  // namespace kanoko::test
