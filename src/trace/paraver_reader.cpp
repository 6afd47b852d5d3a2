#include "src/trace/paraver_reader.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>
#include <unordered_map>

#include "src/base/error.hpp"
#include "src/base/suggest.hpp"
#include "src/trace/decompress.hpp"
#include "src/trace/event_window.hpp"
#include "src/trace/limits.hpp"
#include "src/trace/locations.hpp"
#include "src/trace/markers.hpp"
#include "src/trace/text_input.hpp"

namespace kanoko::trace {
namespace {

constexpr std::size_t kMaxThreads = std::size_t{1} << 24U;  ///< threads a header may declare
constexpr std::size_t kMaxStateNames = 1 << 20;             ///< distinct state ids named "state N"
constexpr std::int64_t kCollectiveType = 50000002;          ///< Extrae: MPI collective calls
constexpr std::int64_t kCollectiveSendSize = 50100001;      ///< Extrae: bytes sent in a global op
constexpr std::int64_t kCollectiveComm = 50100004;          ///< Extrae: communicator of a global op
// Extrae's call sites: "Caller at level N" (70000000 + N, the function) and "Caller line at level
// N" (80000000 + N, the line), N = 1 for the function making the MPI call, 2 for its caller, ...
constexpr std::int64_t kCallerType = 70000000;
constexpr std::int64_t kCallerLineType = 80000000;
constexpr std::int64_t kMaxCallerLevel = 100;
constexpr std::int64_t kFirstMpiType = 50000001;  ///< Extrae's MPI call event types (value 0: the call ends)
constexpr std::int64_t kLastMpiType = 50000099;

bool is_caller_type(std::int64_t type) { return type > kCallerType && type <= kCallerType + kMaxCallerLevel; }
bool is_caller_line_type(std::int64_t type) { return type > kCallerLineType && type <= kCallerLineType + kMaxCallerLevel; }

/// A caller value's name that says it is unknown.
bool unresolved(std::string_view name) { return name == "Unresolved" || name == "_NOT_Found" || name == "End" || name == "."; }

std::string_view trim(std::string_view s) {
  const std::size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const std::size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

template <typename T>
bool parse_int(std::string_view s, T& out) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty();
}

/// A field of a ':'-separated record with its 1-based column.
struct Field {
  std::string_view text;
  std::size_t column;
};

/// One application of the header: its tasks, each with a thread count and a node.
struct Task {
  std::uint32_t threads = 1;
  std::uint32_t node = 0;        ///< 1-based, 0 unknown
  std::int64_t entity = -1;      ///< task level: the entity; thread level: the first thread's
  std::size_t global_index = 0;  ///< position over all applications (for .row TASK labels)
  std::size_t first_thread = 0;  ///< position of its first thread over all tasks (.row THREAD labels)
};

/// A collective call still open on one entity.
struct OpenCollective {
  bool open = false;
  double begin_s = 0;
  std::int64_t value = 0;
  std::uint64_t bytes = 0;
  std::int64_t comm = -1;
};

class ParaverParser {
 public:
  ParaverParser(std::string name, TraceSink& sink, const ParaverOptions& options)
      : name_(std::move(name)), options_(options), window_(sink, std::max<std::size_t>(options.max_held, 2)), sink_(sink),
        locations_(sink) {
    if (options_.entity_level != "task" && options_.entity_level != "thread") {
      throw InputError(FileLoc{name_}, "Paraver entity level '" + shown(options_.entity_level) +
                                           "' is not known; valid levels: task, thread");
    }
  }

  // ---- .pcf ----

  void pcf_missing(const std::string& pcf_name) {
    warnings_.add("no .pcf file: states are named 'state N'", FileLoc{pcf_name});
  }

  void pcf_line(std::string_view raw, const std::string& pcf_name, std::int64_t line) {
    summary_.have_pcf = true;
    const std::string_view s = trim(raw);
    if (s.empty()) return;
    if (std::isupper(static_cast<unsigned char>(s[0])) != 0 && s.find_first_of(" \t") == std::string_view::npos) {
      if (s == "VALUES" && pcf_section_ == Section::EventType) {
        pcf_section_ = Section::Values;
        return;
      }
      pcf_section_ = s == "STATES" ? Section::States
                     : s == "STATES_COLOR" ? Section::StatesColor
                     : s == "EVENT_TYPE" ? Section::EventType
                                         : Section::Other;
      if (pcf_section_ == Section::EventType) pcf_types_.clear();
      return;
    }
    const auto bad = [&](const char* what) { warnings_.add(what, FileLoc{pcf_name, line, 1}); };
    const std::size_t sp = s.find_first_of(" \t");
    const std::string_view first = s.substr(0, sp);
    const std::string_view rest = sp == std::string_view::npos ? std::string_view{} : trim(s.substr(sp));
    std::int64_t id = 0;
    switch (pcf_section_) {
      case Section::States:
        if (!parse_int(first, id) || rest.empty()) return bad("malformed STATES line in the .pcf (ignored)");
        state_names_[id] = std::string(rest);
        return;
      case Section::StatesColor:
        if (!parse_int(first, id) || rest.size() < 2 || rest.front() != '{' || rest.back() != '}') {
          return bad("malformed STATES_COLOR line in the .pcf (ignored)");
        }
        ++summary_colors_;
        return;
      case Section::EventType: {
        // "<gradient> <type> <label>"
        const std::size_t sp2 = rest.find_first_of(" \t");
        std::int64_t type = 0;
        if (!parse_int(first, id) || !parse_int(rest.substr(0, sp2), type)) {
          return bad("malformed EVENT_TYPE line in the .pcf (ignored)");
        }
        pcf_types_.push_back(type);
        if (is_caller_type(type)) callers_ = true;
        if (sp2 != std::string_view::npos && names_iteration(trim(rest.substr(sp2)))) {
          marker_types_.emplace(type, std::string(trim(rest.substr(sp2))));  // user events marking iterations
        }
        if (sp2 != std::string_view::npos && !options_.load_event.empty()) {
          const std::string_view label = trim(rest.substr(sp2));
          const std::string_view word = label.substr(0, label.find_first_of(" \t"));
          for (const std::string_view l : {label, word}) {
            if (!l.empty()) event_labels_.emplace(std::string(l), type);  // the first definition wins
          }
        }
        return;
      }
      case Section::Values:
        if (!parse_int(first, id) || rest.empty()) return bad("malformed VALUES line in the .pcf (ignored)");
        for (const std::int64_t type : pcf_types_) {
          if (type == kCollectiveType) collective_names_[id] = std::string(rest);
          if (is_caller_type(type)) caller_functions_[id] = caller_function(rest);
          if (is_caller_line_type(type)) caller_lines_[id] = caller_line(rest, FileLoc{pcf_name, line, 1});
        }
        return;
      case Section::Other:
      case Section::None: return;
    }
  }

  // ---- .row ----

  void row_missing(const std::string& row_name) {
    warnings_.add("no .row file: entities are named 'task A.T' / 'thread A.T.H', hosts 'node N'", FileLoc{row_name});
  }

  void row_line(std::string_view raw, const std::string& row_name, std::int64_t line) {
    summary_.have_row = true;
    const std::string_view s = trim(raw);
    if (s.empty()) return;
    if (s.substr(0, 6) == "LEVEL " || s.substr(0, 6) == "LEVEL\t") {
      // LEVEL <name> SIZE <n>
      std::string_view rest = trim(s.substr(6));
      const std::size_t sp = rest.find_first_of(" \t");
      const std::string_view level = rest.substr(0, sp);
      rest = sp == std::string_view::npos ? std::string_view{} : trim(rest.substr(sp));
      std::size_t n = 0;
      if (rest.substr(0, 4) != "SIZE" || !parse_int(trim(rest.substr(4)), n)) {
        row_level_ = nullptr;
        warnings_.add("malformed LEVEL line in the .row (block ignored)", FileLoc{row_name, line, 1});
        return;
      }
      row_level_ = level == "TASK" ? &task_labels_ : level == "THREAD" ? &thread_labels_ : level == "NODE" ? &node_labels_ : nullptr;
      row_left_ = n;
      if (row_level_ != nullptr) row_level_->clear();
      return;
    }
    if (row_left_ == 0) {
      warnings_.add("label outside a LEVEL block in the .row (ignored)", FileLoc{row_name, line, 1});
      return;
    }
    --row_left_;
    if (row_level_ != nullptr) row_level_->emplace_back(s);
  }

  /// Resolves ParaverOptions::load_event once the .pcf has been read.
  void resolve_load_event(const std::string& pcf_name) {
    if (options_.load_event.empty()) return;
    const auto it = event_labels_.find(options_.load_event);
    if (it != event_labels_.end()) {
      options_.load_event_type = it->second;
      return;
    }
    if (!summary_.have_pcf) {
      throw InputError(FileLoc{pcf_name}, "the load event '" + shown(options_.load_event) +
                                              "' is named by its .pcf label, but there is no .pcf (expected next to the .prv): give its type number");
    }
    std::vector<std::string> labels;
    for (const auto& [label, type] : event_labels_) labels.push_back(label);
    std::sort(labels.begin(), labels.end());
    throw InputError(FileLoc{pcf_name}, "the .pcf defines no event type labelled '" + shown(options_.load_event) + "'" +
                                            did_you_mean(options_.load_event, labels) +
                                            " (expected in an EVENT_TYPE block; give the label's first word, the "
                                            "whole label, or the type number)");
  }

  // ---- .prv ----

  void prv_line(std::string_view line) {
    ++line_number_;
    if (const void* nul = std::memchr(line.data(), '\0', line.size())) {
      fail_at(static_cast<std::size_t>(static_cast<const char*>(nul) - line.data()) + 1,
              "binary content (NUL byte): not a text trace");
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_number_ == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
    if (!seen_header_) {
      if (trim(line).empty() || trim(line) == "new format") return;
      header(line);
      return;
    }
    if (line.empty() || line[0] == '#') return;
    const char c = line[0];
    if (c == 'c' || c == 'C' || c == 'i' || c == 'I') {
      ++summary_.communicators;
      return;
    }
    split(line);
    std::int64_t type = 0;
    if (!parse_int(fields_[0].text, type)) {
      fail(fields_[0], "expected a record type (1 state, 2 event, 3 communication), found '" + shown(fields_[0].text) + "'");
    }
    try {
      switch (type) {
        case 1: state_record(); break;
        case 2: event_record(); break;
        case 3: comm_record(); break;
        case 4: ++summary_.global_op_records; break;
        default: warn("record of unknown type (line skipped)"); break;
      }
      if (window_.late_events() != late_seen_) {
        warnings_.add("record earlier than records already passed on (out of time order beyond the reordering "
                      "window): moved to the latest time passed on", FileLoc{name_, line_number_, 0},
                      window_.late_events() - late_seen_);
        late_seen_ = window_.late_events();
      }
    } catch (const InputError& e) {
      relocate(e, 1);
      throw;
    }
  }

  ParaverSummary finish() {
    if (!seen_header_) fail_at(1, "empty trace: expected a '#Paraver (date):end:resources:applications' header");
    // Collectives still open end with the trace.
    for (std::size_t e = 0; e < open_colls_.size(); ++e) {
      if (open_colls_[e].open) close_collective(static_cast<EntityIndex>(e), max_time_);
    }
    release_pending(std::numeric_limits<double>::infinity());
    if (locations_.full()) {
      warnings_.add("more distinct call sites than the location table holds: the rest have none", FileLoc{name_});
    }
    try {
      window_.flush();
      sink_.on_end(std::max(summary_.declared_end_s, max_time_));
    } catch (const InputError& e) {
      relocate(e, 1);
      throw;
    }
    summary_.warnings = warnings_.items();
    // The header's declared end, unless a record passes it.
    summary_.end_at = end_line_ > 0 && max_time_ > summary_.declared_end_s
                          ? FileLoc{name_, end_line_, static_cast<std::int64_t>(end_column_)}
                          : FileLoc{name_, 1, static_cast<std::int64_t>(declared_end_column_)};
    return summary_;
  }

 private:
  enum class Section : std::uint8_t { None, States, StatesColor, EventType, Values, Other };

  [[noreturn]] void fail_at(std::size_t column, const std::string& msg) const {
    throw InputError(FileLoc{name_, std::max<std::int64_t>(line_number_, 1), static_cast<std::int64_t>(column)}, msg);
  }
  [[noreturn]] void fail(const Field& f, const std::string& msg) const { fail_at(f.column, msg); }
  void warn(const char* what) { warnings_.add(what, FileLoc{name_, line_number_, 0}); }
  [[nodiscard]] bool is_thread_level() const { return options_.entity_level == "thread"; }

  /// Rethrows a location-less error of the sink at this line.
  void relocate(const InputError& e, std::size_t column) const {
    const auto& ds = e.diagnostics();
    if (ds.size() == 1 && ds[0].loc.file.empty()) fail_at(column, ds[0].message);
  }

  void split(std::string_view line, std::size_t offset = 0) {
    fields_.clear();
    std::size_t pos = 0;
    for (;;) {
      const std::size_t colon = line.find(':', pos);
      const std::size_t end = colon == std::string_view::npos ? line.size() : colon;
      fields_.push_back(Field{trim(line.substr(pos, end - pos)), offset + pos + 1});
      if (colon == std::string_view::npos) break;
      pos = colon + 1;
    }
  }

  std::uint64_t unsigned_field(const Field& f, const char* what) const {
    std::uint64_t v = 0;
    if (!parse_int(f.text, v)) fail(f, std::string("expected ") + what + ", found '" + shown(f.text) + "'");
    return v;
  }
  std::int64_t signed_field(const Field& f, const char* what) const {
    std::int64_t v = 0;
    if (!parse_int(f.text, v)) fail(f, std::string("expected ") + what + ", found '" + shown(f.text) + "'");
    return v;
  }
  double time_field(const Field& f) {
    const double t = static_cast<double>(unsigned_field(f, "a time (a whole number of ticks)")) * summary_.time_unit_s;
    if (t > max_time_) {
      max_time_ = t;
      end_line_ = line_number_;
      end_column_ = f.column;
    }
    return t;
  }

  // ---- header ----

  /// Splits `s` at ':' outside parentheses.
  static std::vector<std::pair<std::string_view, std::size_t>> top_level(std::string_view s, std::size_t base) {
    std::vector<std::pair<std::string_view, std::size_t>> out;
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= s.size(); ++i) {
      if (i == s.size() || (s[i] == ':' && depth == 0)) {
        out.emplace_back(s.substr(start, i - start), base + start);
        start = i + 1;
      } else if (s[i] == '(') {
        ++depth;
      } else if (s[i] == ')') {
        --depth;
      }
    }
    return out;
  }

  /// "N(x,y,...)" → N and the items; `items` empty when there are no parentheses.
  std::uint64_t counted_list(std::string_view s, std::size_t column, std::vector<std::pair<std::string_view, std::size_t>>& items,
                             const char* what) const {
    items.clear();
    const std::size_t open = s.find('(');
    const Field count{s.substr(0, open), column};
    const std::uint64_t n = unsigned_field(count, what);
    if (n > kMaxEntities) {
      fail_at(column, std::string(what) + " is " + std::to_string(n) + ", more than the " + std::to_string(kMaxEntities) +
                          " entities a trace may declare");
    }
    if (open == std::string_view::npos) return n;
    if (s.back() != ')') fail_at(column + s.size(), "expected ')' closing the list after '" + shown(s.substr(0, open)) + "('");
    const std::string_view inner = s.substr(open + 1, s.size() - open - 2);
    std::size_t pos = 0;
    for (;;) {
      const std::size_t comma = inner.find(',', pos);
      const std::size_t end = comma == std::string_view::npos ? inner.size() : comma;
      items.emplace_back(inner.substr(pos, end - pos), column + open + 1 + pos);
      if (comma == std::string_view::npos) break;
      pos = comma + 1;
    }
    if (items.size() != n) {
      fail_at(column, std::string(what) + " says " + std::to_string(n) + " but the list holds " + std::to_string(items.size()));
    }
    return n;
  }

  void header(std::string_view line) {
    static constexpr std::string_view kMagic = "#Paraver (";
    if (line.substr(0, kMagic.size()) != kMagic) {
      fail_at(1, "not a Paraver trace: expected the header '#Paraver (date):end_time:resources:applications', found '" +
                     shown(line) + "'");
    }
    seen_header_ = true;
    const std::size_t close = line.find(')', kMagic.size());
    if (close == std::string_view::npos || close + 1 >= line.size() || line[close + 1] != ':') {
      fail_at(kMagic.size() + 1, "expected '(date):' after '#Paraver'");
    }
    const auto parts = top_level(line.substr(close + 2), close + 3);
    if (parts.size() < 4) {
      fail_at(line.size() + 1, "header too short: expected end_time:resources:number_of_applications:application...");
    }
    // End time with its unit.
    std::string_view end = parts[0].first;
    summary_.time_unit_s = 1e-6;
    for (const auto& [suffix, unit] : {std::pair<std::string_view, double>{"_ns", 1e-9}, {"_us", 1e-6}, {"_ms", 1e-3}}) {
      if (end.size() > 3 && end.substr(end.size() - 3) == suffix) {
        summary_.time_unit_s = unit;
        end.remove_suffix(3);
      }
    }
    summary_.declared_end_s = static_cast<double>(unsigned_field(Field{end, parts[0].second}, "the end time")) * summary_.time_unit_s;
    declared_end_column_ = parts[0].second;
    // Resources: 0 | nodes | nodes(cpus,...)
    std::vector<std::pair<std::string_view, std::size_t>> items;
    summary_.nodes = counted_list(parts[1].first, parts[1].second, items, "the number of nodes");
    for (const auto& [text, column] : items) cpus_ += unsigned_field(Field{text, column}, "a number of cpus");
    const std::uint64_t n_appl = unsigned_field(Field{parts[2].first, parts[2].second}, "the number of applications");
    // The applications, "N(threads:node,...)" each, separated by ':' (the format's definition) or ','
    // (what Extrae writes), then optionally ",<number of communicators>".
    std::vector<std::pair<std::string_view, std::size_t>> appls;
    {
      const std::size_t from = parts[3].second - 1;
      const std::string_view rest = line.substr(from);
      int depth = 0;
      std::size_t start = 0;
      for (std::size_t i = 0; i <= rest.size(); ++i) {
        if (i == rest.size() || ((rest[i] == ':' || rest[i] == ',') && depth == 0)) {
          appls.emplace_back(rest.substr(start, i - start), from + start + 1);
          start = i + 1;
        } else if (rest[i] == '(') {
          ++depth;
        } else if (rest[i] == ')') {
          --depth;
        }
      }
    }
    if (appls.size() == n_appl + 1 && appls.back().first.find('(') == std::string_view::npos) {
      summary_.communicators_declared = unsigned_field(Field{appls.back().first, appls.back().second}, "the number of communicators");
      appls.pop_back();
    }
    if (appls.size() != n_appl) {
      fail_at(parts[2].second, "the header declares " + std::to_string(n_appl) + " applications but lists " +
                                   std::to_string(appls.size()));
    }
    summary_.applications = n_appl;
    std::size_t threads = 0;
    for (const auto& [appl, appl_column] : appls) {
      const std::uint64_t n_tasks = counted_list(appl, appl_column, items, "the number of tasks");
      if (items.empty() && n_tasks > 0) fail_at(appl_column, "expected the tasks' threads and nodes: N(threads:node,...)");
      std::vector<Task> tasks;
      for (const auto& [text, column] : items) {
        const std::size_t colon = text.find(':');
        if (colon == std::string_view::npos) fail_at(column, "expected threads:node, found '" + shown(text) + "'");
        Task t;
        const std::uint64_t th = unsigned_field(Field{text.substr(0, colon), column}, "a number of threads");
        const std::uint64_t node = unsigned_field(Field{text.substr(colon + 1), column + colon + 1}, "a node number");
        if (th == 0) fail_at(column, "a task must have at least one thread");
        threads += th;
        if (th > kMaxThreads || threads > kMaxThreads) fail_at(column, "more than 16 M threads in the header");
        t.threads = static_cast<std::uint32_t>(th);
        t.node = static_cast<std::uint32_t>(std::min<std::uint64_t>(node, std::numeric_limits<std::uint32_t>::max()));
        if (summary_.tasks >= kMaxEntities || threads > kMaxEntities) {
          fail_at(column, "more than " + std::to_string(kMaxEntities) + " tasks or threads in the header (the most a trace may declare)");
        }
        t.global_index = summary_.tasks++;
        t.first_thread = threads - th;
        tasks.push_back(t);
      }
      apps_.push_back(std::move(tasks));
    }
    summary_.threads = threads;
    announce_entities();
  }

  void announce_entities() {
    const bool by_thread = is_thread_level();
    if (options_.application < 0 || static_cast<std::uint64_t>(options_.application) > apps_.size()) {
      fail_at(1, "application " + std::to_string(options_.application) + " was chosen but the header has " +
                     std::to_string(apps_.size()) + " (choose 1.." + std::to_string(apps_.size()) + ", or 0 for all)");
    }
    for (std::size_t a = 0; a < apps_.size(); ++a) {
      if (options_.application != 0 && static_cast<std::int64_t>(a + 1) != options_.application) continue;
      for (std::size_t k = 0; k < apps_[a].size(); ++k) {
        Task& t = apps_[a][k];
        t.entity = static_cast<std::int64_t>(entity_count_);
        const std::string host = t.node == 0 ? std::string{}
                                 : t.node <= node_labels_.size() ? node_labels_[t.node - 1]
                                                                 : "node " + std::to_string(t.node);
        const std::string task_id = std::to_string(a + 1) + "." + std::to_string(k + 1);
        for (std::uint32_t th = 0; th < (by_thread ? t.threads : 1U); ++th) {
          Entity e;
          e.index = static_cast<EntityIndex>(entity_count_++);
          e.id = static_cast<std::int64_t>(by_thread ? t.first_thread + th : t.global_index) + 1;
          e.host = host;
          e.rank = static_cast<std::int64_t>(k);
          if (by_thread) {
            e.name = t.first_thread + th < thread_labels_.size() ? thread_labels_[t.first_thread + th]
                                                                 : "thread " + task_id + "." + std::to_string(th + 1);
          } else {
            e.name = t.global_index < task_labels_.size() ? task_labels_[t.global_index] : "task " + task_id;
          }
          sink_.on_entity(e);
        }
      }
    }
    open_colls_.resize(entity_count_);
    coll_counts_.resize(entity_count_);
    if (callers_) {
      pending_.resize(entity_count_);
      recent_calls_.resize(entity_count_);
    }
  }

  /// The entity of the record's cpu:appl:task:thread at fields_[i..i+3], or -1 when its application
  /// is not read. Ids outside the header's resources are errors.
  std::int64_t entity_at(std::size_t i) {
    const std::uint64_t cpu = unsigned_field(fields_[i], "a cpu number");
    if (cpus_ > 0 && cpu > cpus_) warn("cpu number beyond the header's cpus");
    const std::uint64_t appl = unsigned_field(fields_[i + 1], "an application number");
    if (appl == 0 || appl > apps_.size()) {
      fail(fields_[i + 1], "application " + std::to_string(appl) + " is not in the header (1.." + std::to_string(apps_.size()) + ")");
    }
    const auto& tasks = apps_[appl - 1];
    const std::uint64_t task = unsigned_field(fields_[i + 2], "a task number");
    if (task == 0 || task > tasks.size()) {
      fail(fields_[i + 2], "task " + std::to_string(task) + " is not in application " + std::to_string(appl) + " (1.." +
                               std::to_string(tasks.size()) + ")");
    }
    const Task& t = tasks[task - 1];
    const std::uint64_t thread = unsigned_field(fields_[i + 3], "a thread number");
    if (thread == 0 || thread > t.threads) {
      fail(fields_[i + 3], "thread " + std::to_string(thread) + " is not in task " + std::to_string(appl) + "." +
                               std::to_string(task) + " (1.." + std::to_string(t.threads) + ")");
    }
    if (t.entity < 0) return -1;
    return is_thread_level() ? t.entity + static_cast<std::int64_t>(thread - 1) : t.entity;
  }

  void expect_fields(std::size_t n, const char* what) const {
    if (fields_.size() < n) fail_at(fields_.back().column + fields_.back().text.size(), std::string("too few fields for ") + what);
    if (fields_.size() > n) fail(fields_[n], std::string("too many fields for ") + what);
  }

  // ---- records ----

  const std::string& state_name(std::int64_t state) {
    const auto named = state_names_.find(state);
    if (named != state_names_.end()) return named->second;
    if (state_names_.size() >= kMaxStateNames) fail(fields_[7], "more than 1 M distinct state values");
    return state_names_.emplace(state, "state " + std::to_string(state)).first->second;
  }

  void state_record() {
    expect_fields(8, "a state record (1:cpu:appl:task:thread:begin:end:state)");
    ++summary_.state_records;
    const std::int64_t e = entity_at(1);
    const double begin = time_field(fields_[5]);
    const double end = time_field(fields_[6]);
    if (end < begin) fail(fields_[6], "state ends before it begins");
    const std::int64_t state = signed_field(fields_[7], "a state number");
    if (e < 0) return;
    if (callers_) {
      // Extrae writes a call's caller events after the state that starts with it: the state waits
      // for them until a later record (or another state of its entity) comes.
      release_pending(begin);
      PendingState& p = pending_[static_cast<std::size_t>(e)];
      if (p.held) emit_pending(static_cast<EntityIndex>(e));
      p = PendingState{begin, end, &state_name(state), 0, true};
      pending_list_.push_back(static_cast<EntityIndex>(e));
      pending_min_s_ = std::min(pending_min_s_, begin);
      return;
    }
    window_.state(begin, end, static_cast<EntityIndex>(e), state_name(state));
  }

  void event_record() {
    if (fields_.size() < 8 || fields_.size() % 2 != 0) {
      fail_at(fields_.back().column, "an event record is 2:cpu:appl:task:thread:time:type:value[:type:value]...");
    }
    ++summary_.event_records;
    const std::int64_t e = entity_at(1);
    const double t = time_field(fields_[5]);
    std::int64_t coll = -1;
    std::uint64_t coll_bytes = 0;
    std::int64_t coll_comm = -1;
    bool has_caller = false;
    bool call_begins = false;
    if (callers_) {
      release_pending(t);
      levels_.clear();
    }
    for (std::size_t i = 6; i + 1 < fields_.size(); i += 2) {
      const std::int64_t type = signed_field(fields_[i], "an event type");
      std::int64_t value = 0;
      std::uint64_t big = 0;
      double v = 0;
      if (parse_int(fields_[i + 1].text, value)) {
        v = static_cast<double>(value);
      } else {
        big = unsigned_field(fields_[i + 1], "an event value");
        v = static_cast<double>(big);
        value = std::numeric_limits<std::int64_t>::max();
      }
      if (e < 0) continue;
      if (type == options_.load_event_type && options_.load_event_type != 0) {
        window_.load(LoadSample{t, static_cast<EntityIndex>(e), v});
      } else if (const auto m = marker_types_.empty() ? marker_types_.end() : marker_types_.find(type);
                 m != marker_types_.end()) {
        if (v != 0) {
          window_.marker(Marker{t, static_cast<EntityIndex>(e), m->second});
          ++summary_.markers;
        }
      } else if (type == kCollectiveType) {
        coll = value;
        if (!collective_records_) {
          collective_records_ = true;  // Extrae records collectives: states are not collectives again
          sink_.on_collective_records();
        }
      } else if (type == kCollectiveSendSize) {
        coll_bytes = value > 0 ? static_cast<std::uint64_t>(value) : big;
      } else if (type == kCollectiveComm) {
        coll_comm = value;
      } else if (callers_ && (is_caller_type(type) || is_caller_line_type(type))) {
        has_caller = true;
        const bool line = is_caller_line_type(type);
        const auto level = static_cast<std::size_t>(type - (line ? kCallerLineType : kCallerType));
        if (levels_.size() < level) levels_.resize(level, {0, 0});
        (line ? levels_[level - 1].second : levels_[level - 1].first) = value;
        if (value != 0 && (line ? !caller_lines_.contains(value) : !caller_functions_.contains(value))) {
          warnings_.add(std::string(line ? "caller line" : "caller") + " value not defined in the .pcf (the .pcf's caller "
                            "table disagrees with the trace; " + (line ? "the location has no line)" : "shown as 'caller N')"),
                        FileLoc{name_, line_number_, static_cast<std::int64_t>(fields_[i + 1].column)});
        }
      } else if (callers_ && type >= kFirstMpiType && type <= kLastMpiType && value != 0) {
        call_begins = true;
      }
    }
    if (e >= 0 && (has_caller || call_begins)) {
      const LocationIndex loc = has_caller ? caller_location() : 0;
      RecentCalls& recent = recent_calls_[static_cast<std::size_t>(e)];
      recent.calls[recent.next] = CallSite{t, loc};
      recent.next = (recent.next + 1) % recent.calls.size();
      PendingState& p = pending_[static_cast<std::size_t>(e)];
      if (p.held && p.begin_s == t && has_caller) p.location = loc;
    }
    if (e < 0 || coll < 0) return;
    const auto ent = static_cast<EntityIndex>(e);
    if (open_colls_[ent].open) close_collective(ent, t);
    if (coll != 0) open_colls_[ent] = OpenCollective{true, t, coll, coll_bytes, coll_comm};
  }

  // ---- code locations ----

  /// A "Caller at level N" value's name: "short [full name]" gives the full name; "Unresolved" and
  /// "_NOT_Found" are no name.
  static std::string caller_function(std::string_view label) {
    if (label.size() > 2 && label.back() == ']') {
      const std::size_t open = label.rfind(" [");
      if (open != std::string_view::npos) label = label.substr(open + 2, label.size() - open - 3);
    }
    return unresolved(label) ? std::string{} : std::string(label);
  }

  /// A "Caller line at level N" value's name: "LINE (FILE, BINARY)" or "LINE (FILE)".
  std::pair<std::int64_t, std::string> caller_line(std::string_view label, const FileLoc& where) {
    const std::size_t sp = label.find(' ');
    std::int64_t line = 0;
    if (unresolved(label)) return {0, std::string{}};
    if (!parse_int(label.substr(0, sp), line) || line < 0 || sp == std::string_view::npos) {
      warnings_.add("malformed caller line in the .pcf (expected 'LINE (FILE, BINARY)'; the location has no line)", where);
      return {0, std::string{}};
    }
    std::string_view file = trim(label.substr(sp));
    if (file.size() >= 2 && file.front() == '(' && file.back() == ')') file = file.substr(1, file.size() - 2);
    file = trim(file.substr(0, file.find(',')));
    return {line, unresolved(file) ? std::string{} : std::string(file)};
  }

  /// The location of the event's caller levels (levels_), the outer levels as its call path.
  LocationIndex caller_location() {
    LocationIndex caller = 0;
    for (std::size_t level = levels_.size(); level-- > 0;) {
      const auto [function_value, line_value] = levels_[level];
      if (function_value == 0 && line_value == 0) continue;
      std::string_view function;
      std::string unknown;
      if (const auto f = caller_functions_.find(function_value); f != caller_functions_.end()) {
        function = f->second;
      } else if (function_value != 0) {
        unknown = "caller " + std::to_string(function_value);
        function = unknown;
      }
      std::int64_t line = 0;
      std::string_view file;
      if (const auto l = caller_lines_.find(line_value); l != caller_lines_.end()) {
        line = l->second.first;
        file = l->second.second;
      }
      caller = locations_.intern(file, line, function, caller);
    }
    return caller;
  }

  /// The call site of the latest recent MPI call of `e` that began by `t` (its send's), 0 if none.
  LocationIndex call_site_at(EntityIndex e, double t) const {
    const CallSite* best = nullptr;
    for (const CallSite& c : recent_calls_[e].calls) {
      if (c.begin_s <= t && (best == nullptr || c.begin_s > best->begin_s)) best = &c;
    }
    return best == nullptr ? 0 : best->location;
  }

  /// A state waiting for the caller events of its start.
  struct PendingState {
    double begin_s = 0;
    double end_s = 0;
    const std::string* name = nullptr;  ///< in state_names_ (its nodes do not move)
    LocationIndex location = 0;
    bool held = false;
  };

  void emit_pending(EntityIndex e) {
    PendingState& p = pending_[e];
    p.held = false;
    window_.state(p.begin_s, p.end_s, e, *p.name, p.location);
  }

  /// Passes on the held states that start before `t`: no caller event of theirs can come now.
  void release_pending(double t) {
    // Nothing starts before the earliest held state: many states at one time cost no scan each.
    if (pending_list_.empty() || t <= pending_min_s_) return;
    std::size_t kept = 0;
    pending_min_s_ = std::numeric_limits<double>::infinity();
    for (const EntityIndex e : pending_list_) {
      PendingState& p = pending_[e];
      if (!p.held) continue;
      if (p.begin_s < t) {
        emit_pending(e);
      } else {
        pending_list_[kept++] = e;
        pending_min_s_ = std::min(pending_min_s_, p.begin_s);
      }
    }
    pending_list_.resize(kept);
  }

  void close_collective(EntityIndex e, double end) {
    OpenCollective& c = open_colls_[e];
    c.open = false;
    ++summary_.collectives;
    // The k-th call of an entity on a communicator is the k-th instance of that communicator.
    const std::uint64_t k = coll_counts_[e][c.comm]++;
    const std::string group = (c.comm >= 0 ? "comm" + std::to_string(c.comm) : std::string("comm?")) + "." + std::to_string(k);
    std::string name = "collective " + std::to_string(c.value);
    const auto it = collective_names_.find(c.value);
    if (it != collective_names_.end()) {
      name = it->second;
      if (name.substr(0, 4) == "MPI_") name = name.substr(4);
      std::transform(name.begin(), name.end(), name.begin(),
                     [](char ch) { return static_cast<char>(std::tolower(static_cast<unsigned char>(ch))); });
    }
    window_.collective(Collective{c.begin_s, end, e, name, c.bytes, -1, group});
  }

  void comm_record() {
    expect_fields(15, "a communication record (3:cpu:appl:task:thread:lsend:psend:cpu:appl:task:thread:lrecv:precv:size:tag)");
    ++summary_.comm_records;
    const std::int64_t src = entity_at(1);
    const double lsend = time_field(fields_[5]);
    time_field(fields_[6]);
    const std::int64_t dst = entity_at(7);
    time_field(fields_[11]);
    const double precv = time_field(fields_[12]);
    const std::uint64_t size = unsigned_field(fields_[13], "a size in bytes");
    const std::int64_t tag = signed_field(fields_[14], "a tag");
    summary_.comm_bytes += size;
    if (precv < lsend) warn("communication received before it was sent (physical receive before logical send)");
    if (src < 0 || dst < 0) return;
    if (callers_) release_pending(lsend);
    const LocationIndex loc = callers_ ? call_site_at(static_cast<EntityIndex>(src), lsend) : 0;
    window_.message(Message{lsend, precv, static_cast<EntityIndex>(src), static_cast<EntityIndex>(dst), size, tag, loc});
  }

  std::string name_;
  ParaverOptions options_;
  EventWindow window_;
  TraceSink& sink_;
  ParaverSummary summary_;
  ReaderWarnings warnings_;
  std::uint64_t late_seen_ = 0;
  // .pcf
  Section pcf_section_ = Section::None;
  std::vector<std::int64_t> pcf_types_;
  std::unordered_map<std::string, std::int64_t> event_labels_;  ///< label and first word → type (load_event only)
  std::unordered_map<std::int64_t, std::string> state_names_;
  std::unordered_map<std::int64_t, std::string> collective_names_;
  std::unordered_map<std::int64_t, std::string> marker_types_;  ///< event types whose label names iterations → label
  std::uint64_t summary_colors_ = 0;
  // .row
  std::vector<std::string>* row_level_ = nullptr;
  std::size_t row_left_ = 0;
  std::vector<std::string> task_labels_, thread_labels_, node_labels_;
  // .prv
  std::int64_t line_number_ = 0;
  std::int64_t end_line_ = 0;          ///< the record with the latest time (0: none past 0)
  std::size_t end_column_ = 0;
  std::size_t declared_end_column_ = 1;  ///< the header's end time
  bool seen_header_ = false;
  std::uint64_t cpus_ = 0;
  std::vector<std::vector<Task>> apps_;
  std::size_t entity_count_ = 0;
  std::vector<Field> fields_;
  std::vector<OpenCollective> open_colls_;
  bool collective_records_ = false;  ///< an MPI collective call event has been read
  std::vector<std::unordered_map<std::int64_t, std::uint64_t>> coll_counts_;
  double max_time_ = 0;
  // code locations: only when the .pcf defines caller event types
  bool callers_ = false;
  std::unordered_map<std::int64_t, std::string> caller_functions_;                     ///< value → function
  std::unordered_map<std::int64_t, std::pair<std::int64_t, std::string>> caller_lines_;  ///< value → line, file
  std::vector<std::pair<std::int64_t, std::int64_t>> levels_;  ///< the event's (function, line) values per level
  /// The last MPI calls of an entity, where they began and their call sites (0: none): a
  /// communication record comes at its physical send, after its call's events.
  struct CallSite {
    double begin_s = -std::numeric_limits<double>::infinity();
    LocationIndex location = 0;
  };
  struct RecentCalls {
    std::array<CallSite, 8> calls{};
    std::size_t next = 0;
  };
  std::vector<RecentCalls> recent_calls_;  ///< per entity
  std::vector<PendingState> pending_;       ///< per entity
  std::vector<EntityIndex> pending_list_;   ///< entities with a held state (may repeat; held decides)
  double pending_min_s_ = std::numeric_limits<double>::infinity();  ///< earliest begin held (or less)
  LocationTable locations_;
};

/// The .pcf or .row of `prv` (`given` when set): the .prv name (a .gz, .xz or .zst suffix
/// removed) with `ext`, or the same with a compression suffix when only that exists.
std::filesystem::path sibling(const std::filesystem::path& prv, const std::filesystem::path& given, const char* ext) {
  if (!given.empty()) return given;
  std::filesystem::path p = without_compression_suffix(prv);
  p.replace_extension(ext);
  return existing_maybe_compressed(p);
}

std::string with_extension(const std::string& name, const char* ext) {
  std::filesystem::path p = name;
  p.replace_extension(ext);
  return p.string();
}

}  // namespace

bool looks_like_paraver(std::string_view head) {
  if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
  while (!head.empty() && (head.front() == '\n' || head.front() == '\r' || head.front() == ' ')) head.remove_prefix(1);
  if (head.substr(0, 10) == "new format") {
    const std::size_t nl = head.find('\n');
    head = nl == std::string_view::npos ? std::string_view{} : head.substr(nl + 1);
  }
  return head.substr(0, 10) == "#Paraver (";
}

ParaverSummary read_paraver_trace_text(std::string_view prv, std::string_view pcf, std::string_view row,
                                       const std::string& name, TraceSink& sink, const ParaverOptions& options) {
  ParaverParser parser(name, sink, options);
  const std::string pcf_name = with_extension(name, ".pcf");
  const std::string row_name = with_extension(name, ".row");
  const auto feed = [](std::string_view text, const std::string& file, auto&& on_line) {
    std::int64_t n = 0;
    ChunkLineSplitter s(file, [&](std::string_view l) { on_line(l, ++n); });
    s.feed(text);
    s.finish();
  };
  if (pcf.empty()) {
    parser.pcf_missing(pcf_name);
  } else {
    feed(pcf, pcf_name, [&](std::string_view l, std::int64_t n) { parser.pcf_line(l, pcf_name, n); });
  }
  if (row.empty()) {
    parser.row_missing(row_name);
  } else {
    feed(row, row_name, [&](std::string_view l, std::int64_t n) { parser.row_line(l, row_name, n); });
  }
  parser.resolve_load_event(pcf_name);
  feed(prv, name, [&](std::string_view l, std::int64_t) { parser.prv_line(l); });
  return parser.finish();
}

ParaverSummary read_paraver_trace(const std::filesystem::path& prv, TraceSink& sink, const ParaverOptions& options) {
  const std::string name = prv.string();
  ParaverParser parser(name, sink, options);
  const std::filesystem::path pcf = sibling(prv, options.pcf, ".pcf");
  const std::filesystem::path row = sibling(prv, options.row, ".row");
  std::error_code ec;
  if (std::filesystem::is_regular_file(pcf, ec)) {
    std::int64_t n = 0;
    const std::string pcf_name = pcf.string();
    for_each_file_line(pcf, [&](std::string_view l) { parser.pcf_line(l, pcf_name, ++n); });
  } else {
    parser.pcf_missing(pcf.string());
  }
  if (std::filesystem::is_regular_file(row, ec)) {
    std::int64_t n = 0;
    const std::string row_name = row.string();
    for_each_file_line(row, [&](std::string_view l) { parser.row_line(l, row_name, ++n); });
  } else {
    parser.row_missing(row.string());
  }
  parser.resolve_load_event(pcf.string());
  for_each_file_line(prv, [&](std::string_view l) { parser.prv_line(l); });
  return parser.finish();
}

std::vector<std::filesystem::path> paraver_trace_files(const std::filesystem::path& prv, const ParaverOptions& options) {
  std::vector<std::filesystem::path> files{prv};
  std::error_code ec;
  for (const auto& f : {sibling(prv, options.pcf, ".pcf"), sibling(prv, options.row, ".row")}) {
    if (std::filesystem::is_regular_file(f, ec)) files.push_back(f);
  }
  return files;
}

}  // namespace kanoko::trace
