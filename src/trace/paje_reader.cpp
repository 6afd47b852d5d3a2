#include "src/trace/paje_reader.hpp"
#include "src/trace/text_input.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
#include <unordered_map>
#include <vector>

#include "src/base/interrupt.hpp"
#include "src/base/suggest.hpp"

namespace kanoko::trace {
namespace {

constexpr std::size_t kMaxLineBytes = 16 << 20;
constexpr std::size_t kMaxDepth = 100000;  ///< state nesting per container and type
constexpr std::size_t kSmallIds = 4096;  ///< event ids below this are looked up in a vector

/// Hash for string-keyed maps looked up by string_view without building a string per line.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <typename V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

/// Text from the input as shown in a message: at most 40 bytes, control characters escaped.

enum class Ev : std::uint8_t {
  DefContainerType, DefStateType, DefEventType, DefVariableType, DefLinkType, DefEntityValue,
  CreateContainer, DestroyContainer, SetState, PushState, PopState, ResetState,
  SetVariable, AddVariable, SubVariable, StartLink, EndLink, NewEvent, Unsupported
};

struct EvName {
  const char* name;
  Ev ev;
};
constexpr std::array<EvName, 18> kEvents{{
    {"PajeDefineContainerType", Ev::DefContainerType}, {"PajeDefineStateType", Ev::DefStateType},
    {"PajeDefineEventType", Ev::DefEventType},         {"PajeDefineVariableType", Ev::DefVariableType},
    {"PajeDefineLinkType", Ev::DefLinkType},           {"PajeDefineEntityValue", Ev::DefEntityValue},
    {"PajeCreateContainer", Ev::CreateContainer},      {"PajeDestroyContainer", Ev::DestroyContainer},
    {"PajeSetState", Ev::SetState},                    {"PajePushState", Ev::PushState},
    {"PajePopState", Ev::PopState},                    {"PajeResetState", Ev::ResetState},
    {"PajeSetVariable", Ev::SetVariable},              {"PajeAddVariable", Ev::AddVariable},
    {"PajeSubVariable", Ev::SubVariable},              {"PajeStartLink", Ev::StartLink},
    {"PajeEndLink", Ev::EndLink},                      {"PajeNewEvent", Ev::NewEvent},
}};

enum Field : std::uint8_t {
  fTime, fAlias, fType, fContainer, fName, fValue, fStartContainer, fEndContainer, fKey, fSize,
  fStartContainerType, fEndContainerType, kFieldCount
};

/// Field names, including SimGrid's deprecated spellings, mapped to the fields Kanoko reads.
Field field_of(std::string_view n) {
  if (n == "Time") return fTime;
  if (n == "Alias") return fAlias;
  if (n == "Type" || n == "ContainerType" || n == "EntityType") return fType;
  if (n == "Container") return fContainer;
  if (n == "Name") return fName;
  if (n == "Value") return fValue;
  if (n == "StartContainer" || n == "SourceContainer") return fStartContainer;
  if (n == "EndContainer" || n == "DestContainer") return fEndContainer;
  if (n == "Key") return fKey;
  if (n == "Size") return fSize;
  if (n == "StartContainerType" || n == "SourceContainerType") return fStartContainerType;
  if (n == "EndContainerType" || n == "DestContainerType") return fEndContainerType;
  return kFieldCount;
}

constexpr std::array<const char*, kFieldCount> kFieldNames{
    "Time", "Alias", "Type", "Container", "Name", "Value", "StartContainer", "EndContainer", "Key", "Size",
    "StartContainerType", "EndContainerType"};

/// The fields an event cannot do without.
std::vector<Field> required_fields(Ev ev) {
  switch (ev) {
    case Ev::DefContainerType:
    case Ev::DefStateType:
    case Ev::DefEventType:
    case Ev::DefVariableType:
    case Ev::DefEntityValue: return {fType, fName};
    case Ev::DefLinkType: return {fType, fStartContainerType, fEndContainerType, fName};
    case Ev::CreateContainer: return {fTime, fType, fContainer, fName};
    case Ev::DestroyContainer: return {fTime, fType, fName};
    case Ev::SetState:
    case Ev::PushState:
    case Ev::SetVariable:
    case Ev::AddVariable:
    case Ev::SubVariable:
    case Ev::NewEvent: return {fTime, fType, fContainer, fValue};
    case Ev::PopState:
    case Ev::ResetState: return {fTime, fType, fContainer};
    case Ev::StartLink: return {fTime, fType, fContainer, fValue, fStartContainer, fKey};
    case Ev::EndLink: return {fTime, fType, fContainer, fValue, fEndContainer, fKey};
    case Ev::Unsupported: return {};
  }
  return {};
}

struct EventDef {
  Ev ev = Ev::Unsupported;
  std::string name;
  std::array<int, kFieldCount> pos{};  ///< token position after the id, -1 when absent
  std::size_t field_count = 0;
  bool complete = false;
};

enum class Kind : std::uint8_t { Container, State, Variable, Link, Event };

struct Type {
  std::string alias;
  std::string name;
  Kind kind = Kind::Container;
  int parent = -1;
  bool has_child_container = false;
  bool has_state = false;
  bool chosen = false;
};

struct Container {
  std::string alias;
  std::string name;
  int type = 0;
  int parent = -1;
  std::int64_t entity = -1;  ///< the entity it belongs to (itself or its nearest chosen ancestor)
  bool is_entity = false;    ///< chosen itself: its states and variables reach the sink
  std::vector<std::uint32_t> state_types;  ///< state types it has stacks for
};

struct OpenState {
  double begin_s;
  std::string value;
  std::uint64_t blocker;  ///< sequence number in the blocker queue, kNone when not tracked
};

struct PendingLink {
  bool is_start;
  double time_s;
  int other;  ///< the start or end container
  std::uint64_t bytes;
  std::int64_t line;
  std::uint64_t blocker;
};

constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();

/// An event waiting for every earlier-starting event to be known.
struct Held {
  double t;
  std::uint64_t seq;
  enum class What : std::uint8_t { State, Message, Load } what;
  int a;  ///< container (the state's, the load's, the message's sender)
  int b;  ///< the message's receiver container
  double t2;
  std::uint64_t bytes;
  std::string name;
};
struct HeldLater {
  bool operator()(const Held& x, const Held& y) const { return x.t != y.t ? x.t > y.t : x.seq > y.seq; }
};

/// Something still open whose first time bounds what may be emitted.
struct Blocker {
  double t;
  bool alive;
  bool is_link;
  std::uint64_t stack_key;
  std::string link_key;
};

enum Warn : std::uint8_t {
  wEndWithoutStart, wStartWithoutEnd, wPopWithoutPush, wUndeclaredContainer, wUndeclaredType,
  wUnknownEventId, wUnsupportedEvent, wDuplicateContainer, wCount
};
constexpr std::array<const char*, wCount> kWarnText{
    "link end without a matching start",
    "link start without a matching end",
    "pop of an empty state stack",
    "reference to an undeclared container (line skipped)",
    "reference to an undeclared type (line skipped)",
    "event id not defined in the header (line skipped)",
    "event Kanoko does not read (line skipped)",
    "container alias or name declared twice (the later one wins)",
};

class PajeParser {
 public:
  PajeParser(std::string name, TraceSink& sink, const PajeOptions& options)
      : name_(std::move(name)), sink_(sink), options_(options) {
    Type root;
    root.alias = "0";
    root.name = "0";
    types_.push_back(root);
    type_index_.emplace("0", 0);
    Container c;
    c.alias = "0";
    c.name = "0";
    containers_.push_back(c);
    container_index_.emplace("0", 0);
    decided_ = !options_.entity_type.empty();
    small_ids_.assign(kSmallIds, -1);
  }

  void parse_line(std::string_view line) {
    ++line_number_;
    if (line.size() > kMaxLineBytes) fail_at(1, "line is longer than 16 MiB: not a Pajé trace (binary file?)");
    bom_ = 0;
    if (line_number_ == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") {
      line.remove_prefix(3);
      bom_ = 3;
    }
    std::size_t i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    if (i < line.size() && line[i] == '%') {
      tokenize(line, i + 1);
      header_line();
      return;
    }
    tokenize(line, i);
    if (tokens_.empty()) return;
    if (in_def_ >= 0) fail(tokens_[0], "event line inside an %EventDef block (missing %EndEventDef?)");
    try {
      body_line();
    } catch (const InputError& e) {
      // A sink may refuse an event (a timeline too long to bin) without knowing where it came from.
      const auto& ds = e.diagnostics();
      if (ds.size() == 1 && ds[0].loc.file.empty()) fail_at(tokens_[0].column, ds[0].message);
      throw;
    }
    if (held_.size() > options_.max_held || blockers_.size() > 4 * options_.max_held) relieve();
  }

  PajeSummary finish() {
    if (in_def_ >= 0) fail_at(1, "the trace ends inside an %EventDef block (missing %EndEventDef)");
    if (defs_.empty()) fail_at(1, "no %EventDef header: not a Pajé trace");
    if (!decided_) decide();
    if (!options_.entity_type.empty() && !any_chosen_) {
      std::string valid;
      std::vector<std::string> names;
      for (const Type& t : types_) {
        if (t.kind == Kind::Container && &t != types_.data()) {
          names.push_back(t.name);
          valid += (valid.empty() ? "" : ", ") + t.name;
        }
      }
      throw InputError(FileLoc{name_}, "entity type '" + options_.entity_type + "' is not a container type of this trace" +
                                           did_you_mean(options_.entity_type, names) + "; container types: " +
                                           (valid.empty() ? "none" : valid));
    }
    // States still open end with the trace; link starts still pending are dropped.
    for (std::size_t c = 0; c < containers_.size(); ++c) close_all_states(static_cast<int>(c), last_time_);
    for (auto& [key, list] : pending_) {
      for (const PendingLink& p : list) warn_at(p.is_start ? wStartWithoutEnd : wEndWithoutStart, p.line);
    }
    pending_.clear();
    blockers_.clear();
    try {
      drain(std::numeric_limits<double>::infinity());
      sink_.on_end(last_time_);
    } catch (const InputError& e) {
      const auto& ds = e.diagnostics();
      if (ds.size() == 1 && ds[0].loc.file.empty()) fail_at(1, ds[0].message);
      throw;
    }

    PajeSummary s;
    s.containers = containers_.size();
    s.states = states_;
    s.links = links_;
    s.variable_events = variables_;
    s.point_events = point_events_;
    std::vector<std::uint64_t> per_type(types_.size(), 0);
    for (std::size_t c = 1; c < containers_.size(); ++c) ++per_type[static_cast<std::size_t>(containers_[c].type)];
    // Types are reported by name: SimGrid defines a HOST type per zone level, with one name.
    std::vector<std::string> chosen;
    for (std::size_t t = 0; t < types_.size(); ++t) {
      const std::string& n = types_[t].name;
      if (per_type[t] > 0) {
        const auto it = std::find_if(s.containers_by_type.begin(), s.containers_by_type.end(),
                                     [&](const auto& e) { return e.first == n; });
        if (it == s.containers_by_type.end()) {
          s.containers_by_type.emplace_back(n, per_type[t]);
        } else {
          it->second += per_type[t];
        }
      }
      if (types_[t].chosen && std::find(chosen.begin(), chosen.end(), n) == chosen.end()) {
        chosen.push_back(n);
        s.entity_type += (s.entity_type.empty() ? "" : ",") + n;
      }
    }
    for (std::size_t w = 0; w < wCount; ++w) {
      if (warn_count_[w] > 0) s.warnings.push_back(PajeWarning{kWarnText[w], warn_count_[w], FileLoc{name_, warn_line_[w], 0}});
    }
    return s;
  }

  [[nodiscard]] std::int64_t next_line_number() const { return line_number_ + 1; }

 private:
  struct Token {
    std::string_view text;
    std::size_t column;
  };

  [[noreturn]] void fail_at(std::size_t column, const std::string& msg) const {
    throw InputError(FileLoc{name_, std::max<std::int64_t>(line_number_, 1), static_cast<std::int64_t>(column)}, msg);
  }
  [[noreturn]] void fail(const Token& t, const std::string& msg) const { fail_at(t.column, msg); }

  void warn_at(Warn w, std::int64_t line) {
    if (warn_count_[w]++ == 0) warn_line_[w] = line;
  }
  void warn(Warn w) { warn_at(w, line_number_); }

  void tokenize(std::string_view line, std::size_t i) {
    tokens_.clear();
    const std::size_t n = line.size();
    while (i < n) {
      const char c = line[i];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++i;
        continue;
      }
      if (c == '#') break;
      if (c == '\0') fail_at(i + 1 + bom_, "binary content (NUL byte): not a text trace");
      if (c == '"') {
        const std::size_t close = line.find('"', i + 1);
        if (close == std::string_view::npos) fail_at(i + 1 + bom_, "unterminated quoted string");
        const std::string_view s = line.substr(i + 1, close - i - 1);
        if (s.find('\0') != std::string_view::npos) fail_at(i + 2 + s.find('\0') + bom_, "binary content (NUL byte): not a text trace");
        tokens_.push_back(Token{s, i + 1 + bom_});
        i = close + 1;
        continue;
      }
      std::size_t j = i;
      while (j < n && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') {
        if (line[j] == '\0') fail_at(j + 1 + bom_, "binary content (NUL byte): not a text trace");
        if (line[j] == '"') fail_at(j + 1 + bom_, "unexpected '\"' inside a word");
        ++j;
      }
      tokens_.push_back(Token{line.substr(i, j - i), i + 1 + bom_});
      i = j;
    }
  }

  // ---- header ----

  void header_line() {
    if (tokens_.empty()) {
      if (in_def_ >= 0) return;  // a bare '%' line
      fail_at(1, "expected %EventDef or %EndEventDef");
    }
    const Token& first = tokens_[0];
    if (first.text == "EventDef") {
      if (in_def_ >= 0) fail(first, "%EventDef inside another %EventDef block (missing %EndEventDef?)");
      if (tokens_.size() < 3) fail_at(tokens_.back().column + tokens_.back().text.size(), "missing field: expected '%EventDef NAME ID'");
      if (tokens_.size() > 3) fail(tokens_[3], "unexpected extra field '" + shown(tokens_[3].text) + "' after '%EventDef NAME ID'");
      EventDef d;
      d.name = std::string(tokens_[1].text);
      d.pos.fill(-1);
      for (const EvName& e : kEvents) {
        if (tokens_[1].text == e.name) d.ev = e.ev;
      }
      const std::string_view id = tokens_[2].text;
      if (lookup_def(id) >= 0) fail(tokens_[2], "event id '" + shown(id) + "' is defined twice");
      const int index = static_cast<int>(defs_.size());
      defs_.push_back(std::move(d));
      std::size_t small = 0;
      if (small_id(id, small)) {
        small_ids_[small] = index;
      } else {
        big_ids_.emplace(std::string(id), index);
      }
      in_def_ = index;
      def_line_ = line_number_;
      return;
    }
    if (first.text == "EndEventDef") {
      if (in_def_ < 0) fail(first, "%EndEventDef without %EventDef");
      if (tokens_.size() > 1) fail(tokens_[1], "unexpected text after %EndEventDef");
      EventDef& d = defs_[static_cast<std::size_t>(in_def_)];
      for (const Field f : required_fields(d.ev)) {
        if (d.pos[f] < 0) {
          fail(first, "event " + d.name + " (defined on line " + std::to_string(def_line_) + ") lacks the field '" +
                          kFieldNames[f] + "'");
        }
      }
      d.complete = true;
      in_def_ = -1;
      return;
    }
    if (in_def_ < 0) fail(first, "expected %EventDef or %EndEventDef, found '%" + shown(first.text) + "'");
    if (tokens_.size() < 2) fail_at(first.column + first.text.size(), "missing field type: expected '% NAME TYPE'");
    if (tokens_.size() > 2) fail(tokens_[2], "unexpected extra text after '% NAME TYPE'");
    const std::string_view type = tokens_[1].text;
    if (type != "date" && type != "int" && type != "double" && type != "hex" && type != "string" && type != "color") {
      fail(tokens_[1], "unknown field type '" + shown(type) + "'" +
                           did_you_mean(type, {"date", "int", "double", "hex", "string", "color"}) +
                           "; valid: date, int, double, hex, string, color");
    }
    EventDef& d = defs_[static_cast<std::size_t>(in_def_)];
    const Field f = field_of(first.text);
    if (f != kFieldCount) {
      if (d.pos[f] >= 0) fail(first, "field '" + shown(first.text) + "' given twice in " + d.name);
      d.pos[f] = static_cast<int>(d.field_count);
    }
    ++d.field_count;
  }

  static bool small_id(std::string_view id, std::size_t& out) {
    const auto r = std::from_chars(id.data(), id.data() + id.size(), out);
    return r.ec == std::errc() && r.ptr == id.data() + id.size() && out < kSmallIds;
  }

  int lookup_def(std::string_view id) const {
    std::size_t small = 0;
    if (small_id(id, small)) return small_ids_[small];
    const auto it = big_ids_.find(id);
    return it == big_ids_.end() ? -1 : it->second;
  }

  // ---- body ----

  const Token& field(const EventDef& d, Field f) const { return tokens_[static_cast<std::size_t>(d.pos[f]) + 1]; }
  bool has(const EventDef& d, Field f) const { return d.pos[f] >= 0; }

  double time_of(const EventDef& d) {
    const Token& t = field(d, fTime);
    double v = 0;
    const auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size() || !std::isfinite(v)) {
      fail(t, "expected a time in seconds, found '" + shown(t.text) + "'");
    }
    if (v < 0) fail(t, "time must be >= 0, found " + shown(t.text));
    if (v < last_time_) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.9g", last_time_);
      fail(t, "time goes backwards: " + shown(t.text) + " after " + buf + " (Pajé events must be sorted by time)");
    }
    // The entity types are chosen when the first state is read or the clock leaves the start
    // time: SimGrid declares the platform (HOST, LINK) at the start, the MPI ranks soon after.
    if (!decided_ && seen_time_ && v > last_time_) decide();
    seen_time_ = true;
    last_time_ = v;
    return v;
  }

  double number(const Token& t, const char* what) const {
    double v = 0;
    const auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size() || !std::isfinite(v)) {
      fail(t, std::string("expected ") + what + ", found '" + shown(t.text) + "'");
    }
    return v;
  }

  int find_type(const Token& t) {
    const auto it = type_index_.find(t.text);
    if (it == type_index_.end()) {
      warn(wUndeclaredType);
      return -1;
    }
    return it->second;
  }
  int find_container(const Token& t) {
    const auto it = container_index_.find(t.text);
    if (it == container_index_.end()) {
      warn(wUndeclaredContainer);
      return -1;
    }
    return it->second;
  }

  void body_line() {
    const Token& id = tokens_[0];
    const int index = lookup_def(id.text);
    if (index < 0 || !defs_[static_cast<std::size_t>(index)].complete) {
      warn(wUnknownEventId);
      return;
    }
    const EventDef& d = defs_[static_cast<std::size_t>(index)];
    const std::size_t have = tokens_.size() - 1;
    if (have < d.field_count) {
      const Token& last = tokens_.back();
      fail_at(last.column + last.text.size(), "missing field: " + d.name + " takes " + std::to_string(d.field_count) +
                                                  " fields, found " + std::to_string(have));
    }
    if (have > d.field_count) {
      fail(tokens_[d.field_count + 1], "unexpected extra field '" + shown(tokens_[d.field_count + 1].text) + "': " +
                                           d.name + " takes " + std::to_string(d.field_count) + " fields");
    }
    switch (d.ev) {
      case Ev::DefContainerType:
      case Ev::DefStateType:
      case Ev::DefEventType:
      case Ev::DefVariableType:
      case Ev::DefLinkType: define_type(d); return;
      case Ev::DefEntityValue: return;
      case Ev::CreateContainer: create_container(d); return;
      case Ev::DestroyContainer: destroy_container(d); return;
      case Ev::Unsupported: warn(wUnsupportedEvent); return;
      default: break;
    }
    const double t = time_of(d);
    if (!decided_ && (d.ev == Ev::SetState || d.ev == Ev::PushState || d.ev == Ev::PopState || d.ev == Ev::ResetState)) {
      decide();
    }
    const int type = find_type(field(d, fType));
    if (type < 0) return;
    const int c = find_container(field(d, fContainer));
    if (c < 0) return;
    switch (d.ev) {
      case Ev::SetState:
      case Ev::PushState: push_state(d, t, c, type); break;
      case Ev::PopState: pop_state(t, c, type); break;
      case Ev::ResetState: reset_state(t, c, type); break;
      case Ev::SetVariable:
      case Ev::AddVariable:
      case Ev::SubVariable: variable(d, t, c, type); break;
      case Ev::StartLink:
      case Ev::EndLink: link(d, t, c); break;
      case Ev::NewEvent: ++point_events_; break;
      default: break;
    }
    drain(watermark());
  }

  void define_type(const EventDef& d) {
    Type ty;
    ty.alias = std::string(field(d, has(d, fAlias) ? fAlias : fName).text);
    ty.name = std::string(field(d, fName).text);
    ty.kind = d.ev == Ev::DefContainerType  ? Kind::Container
              : d.ev == Ev::DefStateType    ? Kind::State
              : d.ev == Ev::DefVariableType ? Kind::Variable
              : d.ev == Ev::DefLinkType     ? Kind::Link
                                            : Kind::Event;
    const int parent = find_type(field(d, fType));
    if (parent < 0) return;
    ty.parent = parent;
    Type& p = types_[static_cast<std::size_t>(parent)];
    if (ty.kind == Kind::Container) p.has_child_container = true;
    if (ty.kind == Kind::State) p.has_state = true;
    if (ty.kind == Kind::Container && !options_.entity_type.empty() &&
        (ty.alias == options_.entity_type || ty.name == options_.entity_type)) {
      ty.chosen = true;
      any_chosen_ = true;
    }
    const int index = static_cast<int>(types_.size());
    type_index_[ty.alias] = index;
    type_index_.emplace(ty.name, index);
    types_.push_back(std::move(ty));
  }

  void create_container(const EventDef& d) {
    time_of(d);
    const int type = find_type(field(d, fType));
    if (type < 0) return;
    const int parent = find_container(field(d, fContainer));
    if (parent < 0) return;
    Container c;
    c.name = std::string(field(d, fName).text);
    c.alias = has(d, fAlias) ? std::string(field(d, fAlias).text) : c.name;
    c.type = type;
    c.parent = parent;
    const int index = static_cast<int>(containers_.size());
    bool dup = false;
    for (const std::string* key : {&c.alias, &c.name}) {
      auto [it, inserted] = container_index_.try_emplace(*key, index);
      if (!inserted && it->second != index) {
        dup = true;
        it->second = index;
      }
    }
    if (dup) warn(wDuplicateContainer);
    containers_.push_back(std::move(c));
    if (decided_) attribute(index);
  }

  void destroy_container(const EventDef& d) {
    const double t = time_of(d);
    if (find_type(field(d, fType)) < 0) return;
    const int c = find_container(field(d, fName));
    if (c < 0) return;
    close_all_states(c, t);
    drain(watermark());
  }

  /// Chooses the entity types by the default rule, then attributes every container so far.
  void decide() {
    decided_ = true;
    if (options_.entity_type.empty()) {
      const auto choose = [&](auto pred) {
        for (std::size_t t = 1; t < types_.size(); ++t) {
          if (types_[t].kind == Kind::Container && pred(types_[t])) {
            types_[t].chosen = true;
            any_chosen_ = true;
          }
        }
      };
      choose([](const Type& t) { return t.name == "MPI" || t.alias == "MPI"; });
      if (!any_chosen_) choose([](const Type& t) { return !t.has_child_container && t.has_state; });
      if (!any_chosen_) choose([](const Type& t) { return t.name == "HOST" || t.alias == "HOST"; });
      if (!any_chosen_) choose([](const Type& t) { return !t.has_child_container; });
    }
    for (std::size_t c = 1; c < containers_.size(); ++c) attribute(static_cast<int>(c));
  }

  void attribute(int index) {
    Container& c = containers_[static_cast<std::size_t>(index)];
    const Container& parent = containers_[static_cast<std::size_t>(c.parent)];
    if (!types_[static_cast<std::size_t>(c.type)].chosen) {
      c.entity = parent.entity;
      return;
    }
    if (entity_count_ >= std::numeric_limits<EntityIndex>::max()) fail_at(1, "too many entities");
    Entity e;
    e.index = static_cast<EntityIndex>(entity_count_++);
    e.id = index;
    e.name = c.name;
    e.rank = static_cast<std::int64_t>(e.index);
    std::int64_t rank = 0;
    if (c.name.rfind("rank-", 0) == 0) {
      const auto r = std::from_chars(c.name.data() + 5, c.name.data() + c.name.size(), rank);
      if (r.ec == std::errc() && r.ptr == c.name.data() + c.name.size() && rank >= 0) e.rank = rank;
    }
    for (int a = c.parent; a > 0; a = containers_[static_cast<std::size_t>(a)].parent) {
      const Type& at = types_[static_cast<std::size_t>(containers_[static_cast<std::size_t>(a)].type)];
      if (at.name == "HOST" || at.alias == "HOST") {
        e.host = containers_[static_cast<std::size_t>(a)].name;
        break;
      }
    }
    c.entity = static_cast<std::int64_t>(e.index);
    c.is_entity = true;
    sink_.on_entity(e);
  }

  // ---- states ----

  static std::uint64_t stack_key(int c, int type) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(c)) << 32U) | static_cast<std::uint32_t>(type);
  }

  std::vector<OpenState>& stack(int c, int type) {
    auto [it, inserted] = stacks_.try_emplace(stack_key(c, type));
    if (inserted) containers_[static_cast<std::size_t>(c)].state_types.push_back(static_cast<std::uint32_t>(type));
    return it->second;
  }

  void close_state(int c, const OpenState& s, double end_s) {
    if (s.blocker != kNone) kill_blocker(s.blocker);
    const Container& con = containers_[static_cast<std::size_t>(c)];
    if (!con.is_entity) return;
    hold(Held{s.begin_s, seq_++, Held::What::State, c, 0, end_s, 0, s.value});
  }

  void push_state(const EventDef& d, double t, int c, int type) {
    ++states_;
    auto& st = stack(c, type);
    if (d.ev == Ev::SetState && !st.empty()) {
      close_state(c, st.back(), t);
      st.pop_back();
    }
    if (st.size() >= kMaxDepth) {
      fail(tokens_[0], "states nested deeper than " + std::to_string(kMaxDepth) + " on one container (pushes without pops?)");
    }
    const bool tracked = containers_[static_cast<std::size_t>(c)].is_entity;
    st.push_back(OpenState{t, std::string(field(d, fValue).text), tracked ? add_blocker(t, false, stack_key(c, type), {}) : kNone});
  }

  void pop_state(double t, int c, int type) {
    const auto it = stacks_.find(stack_key(c, type));
    if (it == stacks_.end() || it->second.empty()) {
      warn(wPopWithoutPush);
      return;
    }
    close_state(c, it->second.back(), t);
    it->second.pop_back();
  }

  void reset_state(double t, int c, int type) {
    const auto it = stacks_.find(stack_key(c, type));
    if (it == stacks_.end()) return;
    while (!it->second.empty()) {
      close_state(c, it->second.back(), t);
      it->second.pop_back();
    }
  }

  void close_all_states(int c, double t) {
    for (const std::uint32_t type : containers_[static_cast<std::size_t>(c)].state_types) {
      reset_state(t, c, static_cast<int>(type));
    }
  }

  // ---- variables ----

  void variable(const EventDef& d, double t, int c, int type) {
    ++variables_;
    const double v = number(field(d, fValue), "a number");
    const Type& ty = types_[static_cast<std::size_t>(type)];
    const Container& con = containers_[static_cast<std::size_t>(c)];
    if (options_.load_variable.empty() || (decided_ && !con.is_entity) ||
        (ty.alias != options_.load_variable && ty.name != options_.load_variable)) {
      return;
    }
    double& value = values_[stack_key(c, type)];
    value = d.ev == Ev::SetVariable ? v : d.ev == Ev::AddVariable ? value + v : value - v;
    // A load's value travels in t2; a negative one (a variable below zero) is no load.
    hold(Held{t, seq_++, Held::What::Load, c, 0, std::max(0.0, value), 0, {}});
  }

  // ---- links ----

  void link(const EventDef& d, double t, int c) {
    const bool is_start = d.ev == Ev::StartLink;
    const int other = find_container(field(d, is_start ? fStartContainer : fEndContainer));
    if (other < 0) return;
    std::uint64_t bytes = 0;
    if (is_start && has(d, fSize)) {
      const double size = number(field(d, fSize), "a size in bytes");
      if (size < 0 || size > 1.8e19) fail(field(d, fSize), "size must be between 0 and 1.8e19 bytes, found " + shown(field(d, fSize).text));
      bytes = static_cast<std::uint64_t>(std::llround(size));
    }
    key_.assign(std::to_string(c));
    key_ += '\x1f';
    key_ += field(d, fValue).text;
    key_ += '\x1f';
    key_ += field(d, fKey).text;
    auto it = pending_.find(key_);
    if (it != pending_.end()) {
      auto& list = it->second;
      const auto match = std::find_if(list.begin(), list.end(), [&](const PendingLink& p) { return p.is_start != is_start; });
      if (match != list.end()) {
        const PendingLink p = *match;
        list.erase(match);
        if (list.empty()) pending_.erase(it);
        if (p.blocker != kNone) kill_blocker(p.blocker);
        ++links_;
        const int src = is_start ? other : p.other;
        const int dst = is_start ? p.other : other;
        // Before the entity types are chosen every message is held; drain() drops the ones
        // that do not join two entities.
        if (!decided_ || (containers_[static_cast<std::size_t>(src)].entity >= 0 &&
                          containers_[static_cast<std::size_t>(dst)].entity >= 0)) {
          const double send = is_start ? t : p.time_s;
          const double recv = is_start ? p.time_s : t;
          hold(Held{send, seq_++, Held::What::Message, src, dst, recv, is_start ? bytes : p.bytes, {}});
        }
        return;
      }
    }
    const bool tracked = is_start && (!decided_ || containers_[static_cast<std::size_t>(other)].entity >= 0);
    pending_[key_].push_back(PendingLink{is_start, t, other, bytes, line_number_,
                                         tracked ? add_blocker(t, true, 0, key_) : kNone});
  }

  // ---- time order ----

  std::uint64_t add_blocker(double t, bool is_link, std::uint64_t skey, const std::string& lkey) {
    blockers_.push_back(Blocker{t, true, is_link, skey, lkey});
    return blocker_base_ + blockers_.size() - 1;
  }
  void kill_blocker(std::uint64_t seq) {
    if (seq >= blocker_base_ && seq - blocker_base_ < blockers_.size()) {
      Blocker& b = blockers_[seq - blocker_base_];
      b.alive = false;
      b.link_key.clear();
      b.link_key.shrink_to_fit();
    }
  }
  double watermark() {
    if (!decided_) return -std::numeric_limits<double>::infinity();
    while (!blockers_.empty() && !blockers_.front().alive) {
      blockers_.pop_front();
      ++blocker_base_;
    }
    return blockers_.empty() ? last_time_ : std::min(blockers_.front().t, last_time_);
  }

  void hold(Held h) { held_.push(std::move(h)); }

  void drain(double until) {
    while (!held_.empty() && held_.top().t <= until) {
      const Held& h = held_.top();
      const Container& a = containers_[static_cast<std::size_t>(h.a)];
      switch (h.what) {
        case Held::What::State: {
          if (!a.is_entity) break;
          StateInterval s;
          s.begin_s = h.t;
          s.end_s = h.t2;
          s.entity = static_cast<EntityIndex>(a.entity);
          s.name = h.name;
          sink_.on_state(s);
          break;
        }
        case Held::What::Message: {
          const Container& b = containers_[static_cast<std::size_t>(h.b)];
          if (a.entity < 0 || b.entity < 0) break;
          Message m;
          m.send_s = h.t;
          m.recv_s = h.t2;
          m.src = static_cast<EntityIndex>(a.entity);
          m.dst = static_cast<EntityIndex>(b.entity);
          m.bytes = h.bytes;
          sink_.on_message(m);
          break;
        }
        case Held::What::Load:
          if (a.is_entity) sink_.on_load(LoadSample{h.t, static_cast<EntityIndex>(a.entity), h.t2});
          break;
      }
      held_.pop();
    }
  }

  /// Too much held back: emit the oldest open state up to now and drop the oldest pending start.
  void relieve() {
    if (!decided_) decide();
    while (held_.size() > options_.max_held / 2 || blockers_.size() > 2 * options_.max_held) {
      watermark();
      // Only a blocker older than now holds events back; states re-opened now come after it.
      if (blockers_.empty() || !(blockers_.front().t < last_time_)) break;
      Blocker b = std::move(blockers_.front());
      blockers_.pop_front();
      ++blocker_base_;
      if (b.is_link) {
        auto it = pending_.find(b.link_key);
        if (it != pending_.end()) {
          auto& list = it->second;
          const auto victim = std::find_if(list.begin(), list.end(), [&](const PendingLink& p) { return p.blocker == blocker_base_ - 1; });
          if (victim != list.end()) {
            warn_at(wStartWithoutEnd, victim->line);
            list.erase(victim);
          }
          if (list.empty()) pending_.erase(it);
        }
      } else {
        const int c = static_cast<int>(b.stack_key >> 32U);
        auto& st = stacks_[b.stack_key];
        for (OpenState& s : st) {
          if (s.blocker != blocker_base_ - 1) continue;
          if (last_time_ > s.begin_s) {
            hold(Held{s.begin_s, seq_++, Held::What::State, c, 0, last_time_, 0, s.value});
          }
          s.begin_s = last_time_;
          s.blocker = add_blocker(last_time_, false, b.stack_key, {});
        }
      }
      drain(watermark());
    }
  }

  std::string name_;
  TraceSink& sink_;
  PajeOptions options_;
  std::int64_t line_number_ = 0;
  std::size_t bom_ = 0;
  std::vector<Token> tokens_;
  std::vector<EventDef> defs_;
  std::vector<int> small_ids_;
  StringMap<int> big_ids_;
  int in_def_ = -1;
  std::int64_t def_line_ = 0;
  std::vector<Type> types_;
  StringMap<int> type_index_;
  std::vector<Container> containers_;
  StringMap<int> container_index_;
  bool decided_ = false;
  bool seen_time_ = false;
  bool any_chosen_ = false;
  std::size_t entity_count_ = 0;
  std::unordered_map<std::uint64_t, std::vector<OpenState>> stacks_;
  std::unordered_map<std::uint64_t, double> values_;
  StringMap<std::vector<PendingLink>> pending_;
  std::string key_;
  std::priority_queue<Held, std::vector<Held>, HeldLater> held_;
  std::deque<Blocker> blockers_;
  std::uint64_t blocker_base_ = 0;
  std::uint64_t seq_ = 0;
  double last_time_ = 0;
  std::uint64_t states_ = 0;
  std::uint64_t links_ = 0;
  std::uint64_t variables_ = 0;
  std::uint64_t point_events_ = 0;
  std::array<std::uint64_t, wCount> warn_count_{};
  std::array<std::int64_t, wCount> warn_line_{};
};

/// Feeds complete lines from successive chunks to the parser, keeping the partial last line.
class LineSplitter {
 public:
  LineSplitter(PajeParser& p, std::string name) : parser_(p), name_(std::move(name)) {}

  void feed(std::string_view chunk) {
    std::size_t pos = 0;
    while (pos < chunk.size()) {
      const char* nl = static_cast<const char*>(std::memchr(chunk.data() + pos, '\n', chunk.size() - pos));
      if (nl == nullptr) {
        carry_.append(chunk.substr(pos));
        if (carry_.size() > kMaxLineBytes) {
          throw InputError(FileLoc{name_, parser_.next_line_number(), 1},
                           "line is longer than 16 MiB: not a Pajé trace (binary file?)");
        }
        return;
      }
      const auto end = static_cast<std::size_t>(nl - chunk.data());
      if (carry_.empty()) {
        parser_.parse_line(chunk.substr(pos, end - pos));
      } else {
        carry_.append(chunk.substr(pos, end - pos));
        parser_.parse_line(carry_);
        carry_.clear();
      }
      pos = end + 1;
    }
  }

  PajeSummary finish() {
    if (!carry_.empty()) parser_.parse_line(carry_);
    carry_.clear();
    return parser_.finish();
  }

 private:
  PajeParser& parser_;
  std::string name_;
  std::string carry_;
};

}  // namespace

std::uint64_t PajeSummary::warning_count() const {
  std::uint64_t n = 0;
  for (const PajeWarning& w : warnings) n += w.count;
  return n;
}

PajeSummary read_paje_trace_text(std::string_view text, const std::string& name, TraceSink& sink,
                                 const PajeOptions& options) {
  PajeParser parser(name, sink, options);
  LineSplitter splitter(parser, name);
  splitter.feed(text);
  return splitter.finish();
}

PajeSummary read_paje_trace(const std::filesystem::path& path, TraceSink& sink, const PajeOptions& options) {
  const std::string name = path.string();
  PajeParser parser(name, sink, options);
  LineSplitter splitter(parser, name);
  for_each_file_chunk(path, [&splitter](std::string_view chunk) { splitter.feed(chunk); });
  return splitter.finish();
}

}  // namespace kanoko::trace
