#include "src/trace/native_reader.hpp"
#include "src/trace/limits.hpp"
#include "src/trace/line_batches.hpp"
#include "src/trace/locations.hpp"
#include "src/trace/text_input.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "src/base/error.hpp"
#include "src/base/flat_index.hpp"
#include "src/base/suggest.hpp"

namespace kanoko::trace {
namespace {

constexpr int kSupportedMajor = 1;

struct NativeToken {
  std::string_view text;   ///< unquoted content
  std::size_t column = 0;  ///< 1-based column of the token's first character
  std::size_t end_column = 0;  ///< 1-based column just past its last character (quotes included)
  bool quoted = false;        ///< a whole quoted string (always positional)
  bool quoted_value = false;  ///< key="value": text is key=value, unescaped
  std::size_t eq = std::string_view::npos;  ///< position of the first '=' in text (not for quoted strings)
};

/// Text from the input as shown in a message: at most 40 bytes, control characters escaped, so
/// that an error stays one short line whatever the input holds.

const std::vector<std::string> kEntryTypes{"node", "link", "loc", "msg", "load", "state", "coll", "end"};

/// A line as a worker thread pre-parsed it: a msg, state or load entry in its plain spelling
/// (scan_common_entry), or Other for every line the full parser must read.
struct ScannedLine {
  enum class Kind : std::uint8_t { Other, Msg, State, Load };
  Kind kind = Kind::Other;
  bool has_tag = false;
  bool has_second = false;  ///< msg: recv= given
  bool has_loc = false;     ///< loc= given
  std::uint32_t offset = 0;  ///< the line in its batch's text
  std::uint32_t length = 0;
  std::uint32_t time_column = 0;    ///< 1-based column of the time field
  std::uint32_t second_column = 0;  ///< of the recv= value (msg) or the duration (state)
  double time = 0;
  double value = 0;  ///< msg: receive time; state: end time; load: the load
  std::int64_t a = 0;  ///< node id (msg: the sender)
  std::int64_t b = 0;  ///< msg: the receiver's node id
  std::int64_t c = 0;  ///< msg: bytes
  std::int64_t tag = 0;
  std::int64_t loc = 0;   ///< the loc= id, when has_loc
  std::string_view name;  ///< state: its name (in the batch's text)
};

/// Bytes of a plain word: all but separators, '#', NUL, '"' and '='.
constexpr std::array<bool, 256> kScanWordChar = [] {
  std::array<bool, 256> a{};
  a.fill(true);
  for (const char c : {' ', '\t', '\r', '#', '\0', '"', '='}) a[static_cast<unsigned char>(c)] = false;
  return a;
}();

/// A cursor over one line for scan_common_entry: each field is parsed as it is scanned.
class LineScan {
 public:
  explicit LineScan(std::string_view line) : p_(line.data()), begin_(line.data()), end_(line.data() + line.size()) {}

  [[nodiscard]] std::uint32_t column() const { return static_cast<std::uint32_t>(p_ - begin_) + 1; }
  /// Skips spaces; true when at least one was there.
  bool spaces() {
    const char* const from = p_;
    while (p_ < end_ && *p_ == ' ') ++p_;
    return p_ != from;
  }
  /// Skips spaces; true when nothing else follows.
  bool at_end() {
    spaces();
    return p_ == end_;
  }
  /// `text` and then a space (the entry type) or '=' (an option's key).
  bool literal(std::string_view text, char after) {
    if (static_cast<std::size_t>(end_ - p_) <= text.size() || p_[text.size()] != after ||
        std::memcmp(p_, text.data(), text.size()) != 0) {
      return false;
    }
    p_ += text.size() + 1;
    return true;
  }
  /// A word of plain bytes ending at a space or the end.
  bool word(std::string_view& out) {
    const char* const from = p_;
    while (p_ < end_ && kScanWordChar[static_cast<unsigned char>(*p_)]) ++p_;
    if (p_ == from || !boundary()) return false;
    out = std::string_view(from, static_cast<std::size_t>(p_ - from));
    return true;
  }
  /// 1 to 18 decimal digits, after a '-' when `signed_value` allows one: the integers the full
  /// parser reads without from_chars, with the same value.
  bool integer(std::int64_t& out, bool signed_value = false) {
    const bool minus = signed_value && p_ < end_ && *p_ == '-';
    if (minus) ++p_;
    const char* const from = p_;
    std::int64_t v = 0;
    while (p_ < end_ && p_ - from < 18 && static_cast<unsigned>(*p_ - '0') < 10U) v = v * 10 + (*p_++ - '0');
    if (p_ == from || !boundary()) return false;  // a 19th digit is no boundary
    out = minus ? -v : v;
    return true;
  }
  /// A finite number, as the full parser reads it (parse_double).
  bool number(double& out) {
    std::string_view w;
    return word(w) && parse_double(w, out) && std::isfinite(out);
  }
  bool time(double& out) { return number(out) && out >= 0; }

 private:
  [[nodiscard]] bool boundary() const { return p_ == end_ || *p_ == ' '; }
  const char* p_;
  const char* const begin_;
  const char* const end_;
};

/// Pre-parses the common entries (msg, state, load) written the plain way: words of plain bytes
/// separated by spaces, the fields valid, each option once. False for anything else, which the
/// full parser reads (and reports) on the calling thread.
bool scan_common_entry(std::string_view line, ScannedLine& r) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  LineScan s(line);
  s.spaces();
  ScannedLine::Kind kind = ScannedLine::Kind::Other;
  if (s.literal("msg", ' ')) {
    kind = ScannedLine::Kind::Msg;
  } else if (s.literal("state", ' ')) {
    kind = ScannedLine::Kind::State;
  } else if (s.literal("load", ' ')) {
    kind = ScannedLine::Kind::Load;
  } else {
    return false;
  }
  s.spaces();
  r.time_column = s.column();
  if (!s.time(r.time) || !s.spaces() || !s.integer(r.a) || !s.spaces()) return false;
  switch (kind) {
    case ScannedLine::Kind::Msg: {
      if (!s.integer(r.b) || !s.spaces() || !s.integer(r.c)) return false;
      r.has_tag = false;
      r.has_second = false;
      r.has_loc = false;
      while (!s.at_end()) {
        if (s.literal("tag", '=') && !r.has_tag) {
          if (!s.integer(r.tag, true)) return false;
          r.has_tag = true;
        } else if (s.literal("recv", '=') && !r.has_second) {
          r.second_column = s.column();
          if (!s.time(r.value) || r.value < r.time) return false;
          r.has_second = true;
        } else if (s.literal("loc", '=') && !r.has_loc) {
          if (!s.integer(r.loc)) return false;
          r.has_loc = true;
        } else {
          return false;
        }
      }
      break;
    }
    case ScannedLine::Kind::State: {
      double duration = 0;
      r.second_column = s.column();
      if (!s.number(duration) || duration < 0 || !s.spaces() || !s.word(r.name)) return false;
      r.has_loc = false;
      if (!s.at_end()) {
        if (!s.literal("loc", '=') || !s.integer(r.loc) || !s.at_end()) return false;
        r.has_loc = true;
      }
      r.value = r.time + duration;
      if (!std::isfinite(r.value)) return false;
      break;
    }
    case ScannedLine::Kind::Load:
      if (!s.number(r.value) || r.value < 0 || !s.at_end()) return false;
      break;
    case ScannedLine::Kind::Other: return false;
  }
  r.kind = kind;
  return true;
}

/// A worker's part of reading a batch: one ScannedLine per line.
void scan_batch(const LineBatch& batch, std::vector<ScannedLine>& out) {
  out.clear();
  // A batch with a NUL byte anywhere goes to the full parser line by line.
  const bool nul_free = std::memchr(batch.text.data(), '\0', batch.text.size()) == nullptr;
  for_each_line(batch, [&](std::string_view line) {
    ScannedLine& r = out.emplace_back();
    r.offset = static_cast<std::uint32_t>(line.data() - batch.text.data());
    r.length = static_cast<std::uint32_t>(line.size());
    if (!nul_free || line.size() > 4096 || !scan_common_entry(line, r)) r.kind = ScannedLine::Kind::Other;
  });
}

/// Parser state for one file: the line being parsed, the declared ids, the clock.
class NativeParser {
 public:
  NativeParser(std::string name, TraceSink& sink) : name_(std::move(name)), sink_(sink) {}

  void parse_line(std::string_view line) {
    ++line_number_;
    if (line.size() > kMaxTextLineBytes) fail_at(line_number_, 1, "line is longer than 16 MiB: not a native trace (binary file?)");
    const void* nul = nul_free_ ? nullptr : std::memchr(line.data(), '\0', line.size());
    if (nul != nullptr) {
      const auto column = static_cast<std::size_t>(static_cast<const char*>(nul) - line.data()) + 1;
      fail_at(line_number_, column, "binary content (NUL byte): not a text trace");
    }
    tokenize(line);
    if (tokens_.empty()) return;
    try {
      dispatch();
    } catch (const InputError& e) {
      // A sink may refuse an event (a timeline too long to bin) without knowing where it came
      // from; point at the entry's time field.
      relocate(e, line_number_, tokens_.size() > 1 ? tokens_[1].column : tokens_[0].column);
      throw;
    }
  }

  void finish() {
    if (!seen_header_) fail_at(std::max<std::int64_t>(line_number_, 1), 1, "empty trace: expected 'kntr 1' as the first entry");
    try {
      sink_.on_end(declared_end_ >= 0 ? declared_end_ : max_time_);
    } catch (const InputError& e) {
      if (end_line_ > 0) relocate(e, end_line_, end_column_);
      relocate(e, std::max<std::int64_t>(line_number_, 1), 1);
      throw;
    }
  }

  /// Where the end of the run was set: the entry with the latest time, or the declared end.
  [[nodiscard]] FileLoc end_at() const {
    return end_line_ > 0 ? FileLoc{name_, end_line_, static_cast<std::int64_t>(end_column_)} : FileLoc{name_};
  }

  /// The number the next line will have.
  [[nodiscard]] std::int64_t next_line_number() const { return line_number_ + 1; }

  /// Parses line `number` (the lines before it were given, by either call).
  void parse_line_numbered(std::string_view line, std::int64_t number) {
    line_number_ = number - 1;
    parse_line(line);
  }

  /// Takes line `number` as a worker pre-parsed it (scan_common_entry); returns false, having
  /// changed nothing, when the line needs the full parser: the header is not read yet, a node is
  /// not declared, the clock goes backwards, or the line comes after 'end'. The full parser then
  /// reports such a line exactly as it does when it reads every line.
  bool take_scanned(const ScannedLine& r, std::int64_t number) {
    if (!seen_header_ || declared_end_ >= 0 || r.time < last_time_) return false;
    const std::uint32_t* a = node_index_.find(static_cast<std::uint64_t>(r.a));
    if (a == nullptr) return false;
    const std::uint32_t* b = nullptr;
    if (r.kind == ScannedLine::Kind::Msg) {
      b = node_index_.find(static_cast<std::uint64_t>(r.b));
      if (b == nullptr) return false;
    }
    LocationIndex location = 0;
    if (r.has_loc) {
      const auto l = location_ids_.find(r.loc);
      if (l == location_ids_.end()) return false;
      location = l->second;
    }
    line_number_ = number;
    last_time_ = r.time;
    note_time_at(r.time_column, r.time);
    try {
      switch (r.kind) {
        case ScannedLine::Kind::Msg: {
          Message m;
          m.send_s = r.time;
          m.src = *a;
          m.dst = *b;
          m.bytes = static_cast<std::uint64_t>(r.c);
          if (r.has_tag) m.tag = r.tag;
          m.location = location;
          if (r.has_second) {
            m.recv_s = r.value;
            note_time_at(r.second_column, r.value);
          }
          sink_.on_message(m);
          break;
        }
        case ScannedLine::Kind::State: {
          StateInterval s;
          s.begin_s = r.time;
          s.end_s = r.value;
          s.entity = *a;
          s.name = r.name;
          s.location = location;
          note_time_at(r.second_column, s.end_s);
          sink_.on_state(s);
          break;
        }
        case ScannedLine::Kind::Load:
          sink_.on_load(LoadSample{r.time, *a, r.value});
          break;
        case ScannedLine::Kind::Other: break;
      }
    } catch (const InputError& e) {
      relocate(e, line_number_, r.time_column);
      throw;
    }
    return true;
  }

  /// Tells the parser that the lines it gets until the next call hold no NUL byte (the splitter
  /// checked their whole chunk at once), so that parse_line need not look for one.
  void set_nul_free(bool nul_free) { nul_free_ = nul_free; }

 private:
  /// Rethrows a location-less single diagnostic from a sink at line:column of this file; returns
  /// (so that the caller rethrows unchanged) for errors that already have a location.
  void relocate(const InputError& e, std::int64_t line, std::size_t column) const {
    const auto& ds = e.diagnostics();
    if (ds.size() == 1 && ds[0].loc.file.empty() && ds[0].loc.line == 0) fail_at(line, column, ds[0].message);
  }

  /// Records a time the run reaches, and where, for the observed end.
  void note_time(const NativeToken& t, double time) { note_time_at(t.column, time); }
  void note_time_at(std::size_t column, double time) {
    if (time > max_time_) {
      max_time_ = time;
      end_line_ = line_number_;
      end_column_ = column;
    }
  }

  [[noreturn]] void fail_at(std::int64_t line, std::size_t column, const std::string& msg) const {
    throw InputError(FileLoc{name_, line, static_cast<std::int64_t>(column)}, msg);
  }
  [[noreturn]] void fail(const NativeToken& t, const std::string& msg) const { fail_at(line_number_, t.column, msg); }

  /// Parses a quoted string starting at line[open] == '"'; returns the index after the closing
  /// quote and appends the unescaped text to `out`.
  std::size_t parse_quoted(std::string_view line, std::size_t open, std::string& out) const {
    std::size_t j = open + 1;
    while (j < line.size()) {
      const char c = line[j];
      if (c == '\\' && j + 1 < line.size() && (line[j + 1] == '"' || line[j + 1] == '\\')) {
        out += line[j + 1];
        j += 2;
      } else if (c == '"') {
        return j + 1;
      } else {
        if (c == '\0') fail_at(line_number_, j + 1, "binary content (NUL byte): not a text trace");
        out += c;
        ++j;
      }
    }
    fail_at(line_number_, open + 1, "unterminated quoted string");
  }

  static bool is_separator(char c) { return c == ' ' || c == '\t' || c == '\r'; }
  /// Bytes a word continues with and that need no check: all but separators, '#', NUL, '"', '='.
  static constexpr std::array<bool, 256> kPlainWordChar = [] {
    std::array<bool, 256> a{};
    a.fill(true);
    for (const char c : {' ', '\t', '\r', '#', '\0', '"', '='}) a[static_cast<unsigned char>(c)] = false;
    return a;
  }();

  void tokenize(std::string_view line) {
    tokens_.clear();
    unescaped_.clear();
    std::size_t i = 0;
    const std::size_t n = line.size();
    // A UTF-8 byte order mark (Windows editors write one) is not part of the first entry.
    if (line_number_ == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
    while (i < n) {
      const char c = line[i];
      if (is_separator(c)) {
        ++i;
        continue;
      }
      if (c == '#') break;
      if (c == '\0') fail_at(line_number_, i + 1, "binary content (NUL byte): not a text trace");
      NativeToken t;
      t.column = i + 1;
      if (c == '"') {
        // A quoted positional string. Unescaped text lives in a per-line arena.
        t.quoted = true;
        std::string s;
        i = parse_quoted(line, i, s);
        t.end_column = i + 1;
        unescaped_.push_back(std::move(s));
      } else {
        std::size_t j = i;
        while (j < n && !is_separator(line[j]) && line[j] != '#') {
          while (j < n && kPlainWordChar[static_cast<unsigned char>(line[j])]) ++j;  // the common bytes at once
          if (j == n || is_separator(line[j]) || line[j] == '#') break;
          if (line[j] == '=') {
            if (t.eq == std::string_view::npos) t.eq = j - i;
            ++j;
            continue;
          }
          if (line[j] == '\0') fail_at(line_number_, j + 1, "binary content (NUL byte): not a text trace");
          if (line[j] == '"') {
            // key="quoted value": the token is key= followed by the unescaped value.
            if (j == i || line[j - 1] != '=' || line.substr(i, j - i).find('=') != j - i - 1) {
              fail_at(line_number_, j + 1, "unexpected '\"' inside a word");
            }
            std::string s(line.substr(i, j - i));
            j = parse_quoted(line, j, s);
            if (j < n && !is_separator(line[j]) && line[j] != '#') {
              fail_at(line_number_, j + 1, "expected a space after the closing quote");
            }
            unescaped_.push_back(std::move(s));
            t.quoted_value = true;
            break;
          }
          ++j;
        }
        if (!t.quoted_value) t.text = line.substr(i, j - i);
        t.end_column = j + 1;
        i = j;
      }
      tokens_.push_back(t);
    }
    // Unescaped strings live in unescaped_, whose growth may move them: point the views now.
    std::size_t q = 0;
    for (auto& t : tokens_) {
      if (t.quoted || t.quoted_value) t.text = unescaped_[q++];
    }
  }

  // ---- field parsers ----

  double time_field(const NativeToken& t) const {
    double v = 0;
    if (!t.quoted) {
      // Entries often repeat the last time stamp: reuse its value.
      if (!time_text_.empty() && FlatStringIndex::equal(time_text_, t.text)) return time_value_;
      if (parse_double(t.text, v) && std::isfinite(v) && v >= 0) {
        if (t.text.size() <= 32) {
          time_text_.assign(t.text);
          time_value_ = v;
        }
        return v;
      }
    }
    const auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (t.quoted || r.ec != std::errc() || r.ptr != t.text.data() + t.text.size()) {
      if (r.ec == std::errc::result_out_of_range) fail(t, "time '" + shown(t.text) + "' is out of range");
      fail(t, "expected a time in seconds, found '" + shown(t.text) + "'");
    }
    if (!std::isfinite(v)) fail(t, "time must be finite, found '" + shown(t.text) + "'");
    if (v < 0) fail(t, "time must be >= 0, found " + shown(t.text));
    return v;
  }

  double number_field(const NativeToken& t, const char* what) const {
    double v = 0;
    if (t.quoted || !parse_double(t.text, v) || !std::isfinite(v)) {
      fail(t, std::string("expected ") + what + ", found '" + shown(t.text) + "'");
    }
    return v;
  }

  std::int64_t integer_field(const NativeToken& t, const char* what, std::int64_t min_value = 0) const {
    // Fast path: 1 to 18 digits cannot overflow.
    if (!t.quoted && !t.text.empty() && t.text.size() <= 18) {
      // Unsigned: a non-digit byte makes garbage (discarded), never an overflow.
      std::uint64_t fast = 0;
      bool digits = true;
      for (const char c : t.text) {
        const auto d = static_cast<unsigned>(c - '0');
        digits = digits && d <= 9;
        fast = fast * 10 + d;
      }
      if (digits && static_cast<std::int64_t>(fast) >= min_value) return static_cast<std::int64_t>(fast);
    }
    std::int64_t v = 0;
    const auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (t.quoted || r.ec != std::errc() || r.ptr != t.text.data() + t.text.size()) {
      if (r.ec == std::errc::result_out_of_range) {
        fail(t, std::string(what) + " '" + shown(t.text) + "' is too large (max 9223372036854775807)");
      }
      fail(t, std::string("expected ") + what + " (an integer), found '" + shown(t.text) + "'");
    }
    if (v < min_value) fail(t, std::string(what) + " must be >= " + std::to_string(min_value) + ", found " + shown(t.text));
    return v;
  }

  EntityIndex node_field(const NativeToken& t) const {
    const std::int64_t id = integer_field(t, "node id");
    const std::uint32_t* index = node_index_.find(static_cast<std::uint64_t>(id));
    if (index == nullptr) fail(t, "node " + std::to_string(id) + " is not declared (declare it with a 'node' entry first)");
    return *index;
  }

  // ---- entries ----

  void expect_positional(std::size_t count, const char* shape) {
    positional_ = 0;
    while (positional_ < tokens_.size() && (tokens_[positional_].quoted || tokens_[positional_].eq == std::string_view::npos)) {
      ++positional_;
    }
    if (positional_ < count) {
      // Just after the last positional field, where the missing one belongs.
      fail_at(line_number_, tokens_[positional_ - 1].end_column,
              "missing field: expected '" + std::string(shape) + "'");
    }
    if (positional_ > count) fail(tokens_[count], "unexpected extra field '" + shown(tokens_[count].text) + "'; expected '" + shape + "'");
  }

  /// Parses key=value options after the positional fields. `allowed` lists valid keys.
  template <std::size_t K>
  std::array<const NativeToken*, K> options(const std::array<const char*, K>& allowed, std::array<NativeToken, K>& values) {
    std::array<const NativeToken*, K> found{};
    for (std::size_t i = positional_; i < tokens_.size(); ++i) {
      const NativeToken& t = tokens_[i];
      const std::size_t eq = t.quoted ? std::string_view::npos : t.eq;
      if (t.quoted || eq == std::string_view::npos) fail(t, "expected key=value after the fields, found '" + shown(t.text) + "'");
      const std::string_view key = t.text.substr(0, eq);
      std::size_t k = 0;
      while (k < K && key != allowed[k]) ++k;
      if (k == K) {
        if (K == 0) fail(t, "unknown option '" + shown(key) + "': this entry takes none");
        std::string valid;
        const std::vector<std::string> names(allowed.begin(), allowed.end());
        for (const auto& a : names) valid += (valid.empty() ? "" : ", ") + a;
        fail(t, "unknown option '" + shown(key) + "'" + did_you_mean(key, names) + "; valid options: " + valid);
      }
      if (found[k] != nullptr) fail(t, "option '" + shown(key) + "' given twice");
      NativeToken v;
      v.column = t.column + eq + 1;
      v.quoted = t.quoted_value;
      v.text = t.text.substr(eq + 1);
      if (v.text.empty() && !t.quoted_value) fail(t, "option '" + shown(key) + "' has no value");
      values[k] = v;
      found[k] = &values[k];
    }
    return found;
  }

  void advance_clock(const NativeToken& t, double time) {
    if (time < last_time_) {
      fail(t, "time goes backwards: " + shown(t.text) + " after " + format_time(last_time_) +
                  " (entries must be sorted by time)");
    }
    last_time_ = time;
    note_time(t, time);
  }

  static std::string format_time(double t) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", t);
    return buf;
  }

  void dispatch() {
    const NativeToken& type = tokens_[0];
    if (!seen_header_) {
      if (type.quoted || type.text != "kntr") fail(type, "expected 'kntr 1' as the first entry, found '" + shown(type.text) + "' (is this a Kanoko native trace?)");
      expect_positional(2, "kntr VERSION");
      const std::int64_t major = integer_field(tokens_[1], "format version", 1);
      if (major > kSupportedMajor) fail(tokens_[1], "native trace version " + std::to_string(major) + " is newer than this kanoko reads (" + std::to_string(kSupportedMajor) + ")");
      options<0>({}, empty_values_);
      seen_header_ = true;
      return;
    }
    // An entry type is a bare word; a quoted one is a string, never a type.
    const std::string_view kind = type.quoted ? std::string_view() : type.text;
    if (declared_end_ >= 0) fail(type, "entry after 'end'");
    // The frequent entries first.
    if (kind == "msg") {
      entry_msg();
    } else if (kind == "state") {
      entry_state();
    } else if (kind == "load") {
      entry_load();
    } else if (kind == "coll") {
      entry_coll();
    } else if (kind == "node") {
      entry_node();
    } else if (kind == "loc") {
      entry_loc();
    } else if (kind == "link") {
      entry_link();
    } else if (kind == "end") {
      expect_positional(2, "end TIME");
      const double t = time_field(tokens_[1]);
      advance_clock(tokens_[1], t);
      options<0>({}, empty_values_);
      declared_end_ = t;
      end_line_ = line_number_;
      end_column_ = tokens_[1].column;
    } else if (kind == "kntr") {
      fail(type, "'kntr' header given twice");
    } else {
      fail(type, "unknown entry type '" + shown(type.text) + "'" + did_you_mean(type.text, kEntryTypes) +
                     "; valid: node, link, loc, msg, load, state, coll, end");
    }
  }

  void entry_node() {
    expect_positional(3, "node TIME ID [name=S] [host=S] [rank=N]");
    const double t = time_field(tokens_[1]);
    advance_clock(tokens_[1], t);
    Entity e;
    e.id = integer_field(tokens_[2], "node id");
    std::array<NativeToken, 3> values;
    const auto opt = options<3>({"name", "host", "rank"}, values);
    if (node_index_.find(static_cast<std::uint64_t>(e.id)) != nullptr) {
      fail(tokens_[2], "node " + std::to_string(e.id) + " is declared twice");
    }
    e.index = static_cast<EntityIndex>(node_index_.size());
    if (node_index_.size() >= kMaxEntities) {
      fail(tokens_[2], "more than " + std::to_string(kMaxEntities) + " nodes: the most a trace may declare");
    }
    e.name = opt[0] != nullptr ? std::string(opt[0]->text) : "node" + std::to_string(e.id);
    e.host = opt[1] != nullptr ? std::string(opt[1]->text) : std::string();
    e.rank = opt[2] != nullptr ? integer_field(*opt[2], "rank") : static_cast<std::int64_t>(e.index);
    node_index_.try_emplace(static_cast<std::uint64_t>(e.id), e.index);
    sink_.on_entity(e);
  }

  void entry_link() {
    expect_positional(5, "link TIME ID NODE_A NODE_B [name=S]");
    const double t = time_field(tokens_[1]);
    advance_clock(tokens_[1], t);
    Link l;
    l.id = integer_field(tokens_[2], "link id");
    l.a = node_field(tokens_[3]);
    l.b = node_field(tokens_[4]);
    if (l.a == l.b) fail(tokens_[4], "a link must join two different nodes");
    std::array<NativeToken, 1> values;
    const auto opt = options<1>({"name"}, values);
    if (!link_ids_.emplace(l.id).second) fail(tokens_[2], "link " + std::to_string(l.id) + " is declared twice");
    l.name = opt[0] != nullptr ? std::string(opt[0]->text) : "link" + std::to_string(l.id);
    sink_.on_link(l);
  }

  /// `loc TIME ID [file=S] [line=N] [function=S] [caller=ID]`: a code location (docs/native-trace-format.md).
  void entry_loc() {
    expect_positional(3, "loc TIME ID [file=S] [line=N] [function=S] [caller=ID]");
    const double t = time_field(tokens_[1]);
    advance_clock(tokens_[1], t);
    const std::int64_t id = integer_field(tokens_[2], "location id");
    std::array<NativeToken, 4> values;
    const auto opt = options<4>({"file", "line", "function", "caller"}, values);
    if (location_ids_.count(id) != 0) fail(tokens_[2], "location " + std::to_string(id) + " is declared twice");
    const std::int64_t line = opt[1] != nullptr ? integer_field(*opt[1], "line") : 0;
    const LocationIndex caller = opt[3] != nullptr ? location_field(*opt[3]) : 0;
    location_ids_.emplace(id, locations_.intern(opt[0] != nullptr ? opt[0]->text : std::string_view(), line,
                                                opt[2] != nullptr ? opt[2]->text : std::string_view(), caller));
  }

  /// A loc= value: a declared location id → its index (0 for a location with no part known).
  LocationIndex location_field(const NativeToken& t) const {
    const std::int64_t id = integer_field(t, "location id");
    const auto it = location_ids_.find(id);
    if (it == location_ids_.end()) fail(t, "location " + std::to_string(id) + " is not declared (declare it with a 'loc' entry first)");
    return it->second;
  }

  void entry_msg() {
    expect_positional(5, "msg TIME SRC DST BYTES [tag=N] [recv=T] [loc=ID]");
    Message m;
    m.send_s = time_field(tokens_[1]);
    advance_clock(tokens_[1], m.send_s);
    m.src = node_field(tokens_[2]);
    m.dst = node_field(tokens_[3]);
    m.bytes = static_cast<std::uint64_t>(integer_field(tokens_[4], "byte count"));
    std::array<NativeToken, 3> values;
    const auto opt = options<3>({"tag", "recv", "loc"}, values);
    if (opt[0] != nullptr) m.tag = integer_field(*opt[0], "tag", std::numeric_limits<std::int64_t>::min());
    if (opt[2] != nullptr) m.location = location_field(*opt[2]);
    if (opt[1] != nullptr) {
      m.recv_s = time_field(*opt[1]);
      if (m.recv_s < m.send_s) fail(*opt[1], "receive time is before the send time");
      note_time(*opt[1], m.recv_s);
    }
    sink_.on_message(m);
  }

  void entry_load() {
    expect_positional(4, "load TIME NODE VALUE");
    LoadSample s;
    s.time_s = time_field(tokens_[1]);
    advance_clock(tokens_[1], s.time_s);
    s.entity = node_field(tokens_[2]);
    s.value = number_field(tokens_[3], "a load value (a finite number >= 0)");
    if (s.value < 0) fail(tokens_[3], "load must be >= 0, found " + std::string(tokens_[3].text));
    options<0>({}, empty_values_);
    sink_.on_load(s);
  }

  void entry_state() {
    expect_positional(5, "state TIME NODE DURATION NAME [loc=ID]");
    StateInterval s;
    s.begin_s = time_field(tokens_[1]);
    advance_clock(tokens_[1], s.begin_s);
    s.entity = node_field(tokens_[2]);
    const double duration = number_field(tokens_[3], "a duration in seconds");
    if (duration < 0) fail(tokens_[3], "duration must be >= 0, found " + std::string(tokens_[3].text));
    s.end_s = s.begin_s + duration;
    if (!std::isfinite(s.end_s)) fail(tokens_[3], "state end time overflows");
    if (tokens_[4].text.empty()) fail(tokens_[4], "state name is empty");
    s.name = tokens_[4].text;
    std::array<NativeToken, 1> values;
    const auto opt = options<1>({"loc"}, values);
    if (opt[0] != nullptr) s.location = location_field(*opt[0]);
    note_time(tokens_[3], s.end_s);
    sink_.on_state(s);
  }

  void entry_coll() {
    expect_positional(6, "coll TIME NODE DURATION NAME BYTES [root=NODE] [group=S]");
    Collective c;
    c.begin_s = time_field(tokens_[1]);
    advance_clock(tokens_[1], c.begin_s);
    c.entity = node_field(tokens_[2]);
    const double duration = number_field(tokens_[3], "a duration in seconds");
    if (duration < 0) fail(tokens_[3], "duration must be >= 0, found " + shown(tokens_[3].text));
    c.end_s = c.begin_s + duration;
    if (!std::isfinite(c.end_s)) fail(tokens_[3], "collective end time overflows");
    if (tokens_[4].text.empty()) fail(tokens_[4], "collective name is empty");
    c.name = tokens_[4].text;
    c.bytes = static_cast<std::uint64_t>(integer_field(tokens_[5], "byte count"));
    std::array<NativeToken, 2> values;
    const auto opt = options<2>({"root", "group"}, values);
    if (opt[0] != nullptr) c.root = static_cast<std::int64_t>(node_field(*opt[0]));
    if (opt[1] != nullptr) c.group = opt[1]->text;
    note_time(tokens_[3], c.end_s);
    sink_.on_collective(c);
  }

  std::string name_;
  TraceSink& sink_;
  std::int64_t line_number_ = 0;
  bool nul_free_ = false;
  mutable std::string time_text_;  ///< the last valid time field (up to 32 bytes) and its value
  mutable double time_value_ = 0;
  std::vector<NativeToken> tokens_;
  std::vector<std::string> unescaped_;
  std::size_t positional_ = 0;
  std::array<NativeToken, 0> empty_values_{};
  bool seen_header_ = false;
  double last_time_ = 0;
  double max_time_ = 0;
  std::int64_t end_line_ = 0;    ///< where the end of the run was set (declared or observed)
  std::size_t end_column_ = 0;
  double declared_end_ = -1;
  FlatIndex node_index_;  ///< node id (>= 0) → entity index
  LocationTable locations_{sink_};
  std::unordered_map<std::int64_t, LocationIndex> location_ids_;  ///< loc id → location index
  std::unordered_set<std::int64_t> link_ids_;
};

/// Feeds complete lines from successive chunks to the parser, keeping the partial last line.
class NativeLineSplitter {
 public:
  explicit NativeLineSplitter(NativeParser& p, std::string name) : parser_(p), name_(std::move(name)) {}

  void feed(std::string_view chunk) {
    std::size_t pos = 0;
    if (!carry_.empty()) {
      const char* nl = static_cast<const char*>(std::memchr(chunk.data(), '\n', chunk.size()));
      if (nl == nullptr) {
        carry_.append(chunk);
        check_length();
        return;
      }
      const auto len = static_cast<std::size_t>(nl - chunk.data());
      carry_.append(chunk.substr(0, len));
      parser_.set_nul_free(false);
      parser_.parse_line(carry_);
      carry_.clear();
      pos = len + 1;
    }
    parser_.set_nul_free(std::memchr(chunk.data() + pos, '\0', chunk.size() - pos) == nullptr);
    while (pos < chunk.size()) {
      const char* nl = static_cast<const char*>(std::memchr(chunk.data() + pos, '\n', chunk.size() - pos));
      if (nl == nullptr) {
        carry_.assign(chunk.substr(pos));
        check_length();
        return;
      }
      const auto end = static_cast<std::size_t>(nl - chunk.data());
      parser_.parse_line(chunk.substr(pos, end - pos));
      pos = end + 1;
    }
  }

  void finish() {
    parser_.set_nul_free(false);
    if (!carry_.empty()) parser_.parse_line(carry_);
    carry_.clear();
    parser_.finish();
  }

 private:
  void check_length() const {
    // Bounds memory while a line is still being read; parse_line checks complete lines.
    if (carry_.size() > kMaxTextLineBytes) {
      throw InputError(FileLoc{name_, parser_.next_line_number(), 1},
                       "line is longer than 16 MiB: not a native trace (binary file?)");
    }
  }
  NativeParser& parser_;
  std::string name_;
  std::string carry_;
};

}  // namespace

FileLoc read_native_trace_text(std::string_view text, const std::string& name, TraceSink& sink) {
  NativeParser parser(name, sink);
  NativeLineSplitter splitter(parser, name);
  splitter.feed(text);
  splitter.finish();
  return parser.end_at();
}

FileLoc read_native_trace(const std::filesystem::path& path, TraceSink& sink, const TextReadOptions& options) {
  const std::string name = path.string();
  NativeParser parser(name, sink);
  read_line_batches<std::vector<ScannedLine>>(
      path, options, kMaxTextLineBytes, scan_batch, "native trace",
      [&parser](const LineBatch& batch, const std::vector<ScannedLine>& lines, std::int64_t before) {
        std::int64_t line = before;
        for (const ScannedLine& r : lines) {
          ++line;
          if (r.kind != ScannedLine::Kind::Other && parser.take_scanned(r, line)) continue;
          parser.parse_line_numbered(std::string_view(batch.text).substr(r.offset, r.length), line);
        }
        return static_cast<std::int64_t>(lines.size());
      });
  parser.finish();
  return parser.end_at();
}

}  // namespace kanoko::trace
