#include "src/views/view.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>

#include "src/base/atomic_file.hpp"
#include "src/base/error.hpp"
#include "src/base/suggest.hpp"
#include "src/views/builtin_views.hpp"

namespace kanoko::views {

bool Selection::operator==(const Selection& o) const {
  const bool same_time = (std::isnan(time_s) && std::isnan(o.time_s)) || time_s == o.time_s;
  return entity == o.entity && same_time && pair_src == o.pair_src && pair_dst == o.pair_dst && message == o.message;
}

Selection apply_pick(const Selection& current, const Selection& picked) {
  Selection out = current;
  if (picked.has_entity() || picked.has_pair()) {
    out.entity = picked.entity;
    out.pair_src = picked.pair_src;
    out.pair_dst = picked.pair_dst;
    out.message = picked.message;
  }
  if (picked.has_time()) out.time_s = picked.time_s;
  return out;
}

void SelectionHub::set(const Selection& s) {
  current_ = s;
  // Copy: a listener may subscribe or remove while being told.
  const auto listeners = listeners_;
  for (const auto& [id, l] : listeners) l(current_);
}

int SelectionHub::subscribe(Listener l) {
  listeners_.emplace_back(next_id_, std::move(l));
  return next_id_++;
}

void SelectionHub::remove(int id) {
  std::erase_if(listeners_, [id](const auto& p) { return p.first == id; });
}

ViewState default_view_state(const TraceIndex& index, double run_interval_s, double run_origin_s) {
  ViewState s;
  s.window_t0_s = index.begin_s;
  s.window_t1_s = index.end_s > index.begin_s ? index.end_s : index.begin_s + 1.0;
  s.time_s = index.end_s;
  s.run_intervals = run_interval_s > 0 && std::isfinite(run_interval_s);
  s.interval_origin_s = std::isfinite(run_origin_s) ? run_origin_s : index.begin_s;
  s.interval_s = s.run_intervals ? run_interval_s : std::max(index.span_s() / 20.0, 1e-9);
  s.entity0 = 0;
  s.entity1 = static_cast<double>(index.entity_count());
  return s;
}

void current_interval(const TraceIndex& index, const ViewState& state, double& t0_s, double& t1_s) {
  t1_s = std::clamp(state.time_s, index.begin_s, std::max(index.begin_s, index.end_s));
  if (state.run_intervals && !state.cumulative && state.interval_s > 0) {
    // The run's interval holding the cursor (the last one at the very end), as trace::Timeline::bin_of.
    const double origin = state.interval_origin_s;
    const double last = std::max(0.0, std::ceil((index.end_s - origin) / state.interval_s - 1e-9) - 1);
    const double k = std::clamp(std::floor((t1_s - origin) / state.interval_s + 1e-9), 0.0, last);
    t0_s = std::max(index.begin_s, origin + k * state.interval_s);
    t1_s = std::min(index.end_s, origin + (k + 1) * state.interval_s);
    return;
  }
  t0_s = state.cumulative ? index.begin_s : std::max(index.begin_s, t1_s - state.interval_s);
  // At the very start the interval would be empty: show the first one instead.
  if (!(t1_s > t0_s)) t1_s = std::min(index.end_s, t0_s + (state.cumulative ? index.span_s() : state.interval_s));
}

void visible_entities(const TraceIndex& index, const ViewState& state, double& e0, double& e1) {
  const auto n = static_cast<double>(index.entity_count());
  e0 = state.entity0;
  e1 = state.entity1;
  if (!(e1 > e0) || !std::isfinite(e0) || !std::isfinite(e1)) {
    e0 = 0;
    e1 = n;
    return;
  }
  const double span = std::clamp(e1 - e0, std::min(1.0, n), n);
  e0 = std::clamp(e0, 0.0, n - span);
  e1 = e0 + span;
}

namespace {

// A window [a, b) of a whole [lo, hi) zoomed by `factor` about the fraction `at` (0..1) of it,
// at least `min_span` wide. Returns true when it changed.
bool zoom_range(double& a, double& b, double lo, double hi, double at, double factor, double min_span) {
  const double whole = hi - lo;
  if (!(whole > 0)) return false;
  const double anchor = a + at * (b - a);
  const double span = std::clamp((b - a) / factor, std::min(min_span, whole), whole);
  const double na = std::clamp(anchor - at * span, lo, hi - span);
  const double nb = na + span;
  if (na == a && nb == b) return false;
  a = na;
  b = nb;
  return true;
}

// The window [a, b) of [lo, hi) moved by `delta` (its own units), clamped. True when it moved.
bool shift_range(double& a, double& b, double lo, double hi, double delta) {
  const double span = b - a;
  const double na = std::clamp(a + delta, lo, std::max(lo, hi - span));
  if (na == a || !std::isfinite(na)) return false;
  a = na;
  b = na + span;
  return true;
}

// Where the Kiviat's angle at (x, y) falls in the visible range, 0..1.
double around_fraction(const Rect& plot, double x, double y) {
  double a = std::atan2(x - (plot.x + plot.w / 2), -(y - (plot.y + plot.h / 2))) / (2 * std::numbers::pi);
  if (a < 0) a += 1;
  return a;
}

// Scrolls a table's rows (ZoomAxes::rows_y) drawn in `axes` by `rows`: entity0 is the first row
// shown, entity1 the end, so that zoomed() sees the scroll and reset_zoom() undoes it. The first
// row stops where the last row comes into view (no dead scrolling past the end). True when it
// moved.
bool scroll_rows(ViewState& state, const TraceIndex& index, const ZoomAxes& axes, double rows) {
  const auto n = static_cast<double>(index.entity_count());
  if (!(n > 0) || !std::isfinite(rows) || !(axes.row_height > 0)) return false;
  const double shown = std::max(1.0, std::floor(axes.plot.h / axes.row_height));
  double e0 = 0;
  double e1 = 0;
  visible_entities(index, state, e0, e1);
  const double first = std::clamp(e0 + rows, 0.0, std::max(0.0, n - shown));
  if (first == e0 && e1 == n) return false;
  state.entity0 = first;
  state.entity1 = n;
  return true;
}

}  // namespace

bool zoom_at(ViewState& state, const View& view, const Rect& area, const TraceIndex& index, double x, double y,
             double factor) {
  if (!std::isfinite(factor) || !(factor > 0) || !std::isfinite(x) || !std::isfinite(y)) return false;
  factor = std::clamp(factor, 1.0 / kMaxZoomStep, kMaxZoomStep);
  const ZoomAxes axes = view.zoom_axes(area, index, state);
  if (!axes.any() || !axes.plot.contains(x, y) || !(axes.plot.w > 0) || !(axes.plot.h > 0)) return false;
  if (axes.rows_y) return scroll_rows(state, index, axes, factor > 1 ? -kScrollRows : (factor < 1 ? kScrollRows : 0.0));
  bool changed = false;
  if (axes.time_x) {
    double t0 = 0;
    double t1 = 0;
    visible_window(index, state, t0, t1);
    const double lo = index.begin_s;
    const double hi = index.end_s > index.begin_s ? index.end_s : index.begin_s + 1.0;
    const double min_span = std::max(kMinZoomSeconds, (hi - lo) * kMinZoomFraction);
    if (zoom_range(t0, t1, lo, hi, (x - axes.plot.x) / axes.plot.w, factor, min_span)) {
      state.window_t0_s = t0;
      state.window_t1_s = t1;
      changed = true;
    }
  }
  if ((axes.entities_y || axes.entities_x || axes.entities_around) && index.entity_count() > 0) {
    double e0 = 0;
    double e1 = 0;
    visible_entities(index, state, e0, e1);
    const double at = axes.entities_y ? (y - axes.plot.y) / axes.plot.h
                      : axes.entities_x ? (x - axes.plot.x) / axes.plot.w
                                        : around_fraction(axes.plot, x, y);
    if (zoom_range(e0, e1, 0, static_cast<double>(index.entity_count()), at, factor, 1.0)) {
      state.entity0 = e0;
      state.entity1 = e1;
      changed = true;
    }
  }
  return changed;
}

bool pan(ViewState& state, const View& view, const Rect& area, const TraceIndex& index, double dx, double dy) {
  if (!std::isfinite(dx) || !std::isfinite(dy)) return false;
  const ZoomAxes axes = view.zoom_axes(area, index, state);
  if (!axes.any() || !(axes.plot.w > 0) || !(axes.plot.h > 0)) return false;
  if (axes.rows_y) return axes.row_height > 0 && scroll_rows(state, index, axes, -dy / axes.row_height);
  bool changed = false;
  if (axes.time_x && dx != 0) {
    double t0 = 0;
    double t1 = 0;
    visible_window(index, state, t0, t1);
    const double hi = index.end_s > index.begin_s ? index.end_s : index.begin_s + 1.0;
    if (shift_range(t0, t1, index.begin_s, hi, -dx / axes.plot.w * (t1 - t0))) {
      state.window_t0_s = t0;
      state.window_t1_s = t1;
      changed = true;
    }
  }
  const double along = axes.entities_y || axes.entities_around ? dy : (axes.entities_x ? dx : 0.0);
  const double extent = axes.entities_y || axes.entities_around ? axes.plot.h : axes.plot.w;
  if (along != 0 && index.entity_count() > 0) {
    double e0 = 0;
    double e1 = 0;
    visible_entities(index, state, e0, e1);
    if (shift_range(e0, e1, 0, static_cast<double>(index.entity_count()), -along / extent * (e1 - e0))) {
      state.entity0 = e0;
      state.entity1 = e1;
      changed = true;
    }
  }
  return changed;
}

void reset_zoom(ViewState& state, const TraceIndex& index) {
  const ViewState d = default_view_state(index);
  state.window_t0_s = d.window_t0_s;
  state.window_t1_s = d.window_t1_s;
  state.entity0 = d.entity0;
  state.entity1 = d.entity1;
}

ViewState with_window(const ViewState& shared, const ViewState& panel) {
  ViewState out = shared;
  out.window_t0_s = panel.window_t0_s;
  out.window_t1_s = panel.window_t1_s;
  out.entity0 = panel.entity0;
  out.entity1 = panel.entity1;
  return out;
}

bool zoomed(const ViewState& state, const TraceIndex& index) {
  double t0 = 0;
  double t1 = 0;
  visible_window(index, state, t0, t1);
  double e0 = 0;
  double e1 = 0;
  visible_entities(index, state, e0, e1);
  const double hi = index.end_s > index.begin_s ? index.end_s : index.begin_s + 1.0;
  return t0 > index.begin_s || t1 < hi || e0 > 0 || e1 < static_cast<double>(index.entity_count());
}

std::vector<std::string> view_names() {
  std::vector<std::string> out;
  for (const auto& v : view_registry()) out.push_back(v.name);
  return out;
}

std::unique_ptr<View> make_view(const std::string& name, const std::string& where) {
  for (const auto& v : view_registry()) {
    if (v.name == name) return v.make();
  }
  std::string list;
  for (const auto& n : view_names()) list += (list.empty() ? "" : ", ") + n;
  throw InputError(FileLoc{where}, "unknown view '" + name + "'" + did_you_mean(name, view_names()) +
                                       "; the views are: " + list);
}

std::vector<std::string> parse_view_list(const std::string& list, const std::string& where) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    std::string name = list.substr(start, comma - start);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (name.empty()) throw InputError(FileLoc{where}, "empty view name in '" + list + "'");
    make_view(name, where);  // checks the name
    out.push_back(name);
    start = comma + 1;
  }
  return out;
}

// ---- view group files ------------------------------------------------------------------------
// A strict subset of TOML, read by hand so that no input can upset a general parser:
//   # comment
//   [groups]
//   name = ["view", "view"]   # one line per group
// Names are bare keys ([A-Za-z0-9_-]); strings are "..." without escapes.

namespace {

bool bare_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

class GroupLine {
 public:
  GroupLine(const std::string& line, const std::string& file, std::int64_t line_no)
      : s_(line), file_(file), line_no_(line_no) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw InputError(FileLoc{file_, line_no_, static_cast<std::int64_t>(pos_) + 1}, message);
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  bool at_end_or_comment() {
    skip_space();
    return pos_ >= s_.size() || s_[pos_] == '#';
  }
  void expect(char c, const char* what) {
    skip_space();
    if (pos_ >= s_.size() || s_[pos_] != c) fail(std::string("expected ") + what);
    ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::string key() {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < s_.size() && bare_key_char(s_[pos_])) ++pos_;
    if (pos_ == start) fail("expected a group name (letters, digits, '_' or '-')");
    return s_.substr(start, pos_ - start);
  }
  std::string string_value() {
    expect('"', "a quoted view name");
    const std::size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\\' || static_cast<unsigned char>(s_[pos_]) < 0x20) fail("view names cannot hold escapes or control characters");
      ++pos_;
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    return s_.substr(start, pos_++ - start);
  }
  [[nodiscard]] std::size_t column() const { return pos_ + 1; }

 private:
  const std::string& s_;
  const std::string& file_;
  std::int64_t line_no_;
  std::size_t pos_ = 0;
};

std::string format_groups(const std::vector<std::pair<std::string, std::vector<std::string>>>& groups) {
  std::ostringstream out;
  out << "# Kanoko view groups: kanoko view RUN --view-group NAME --view-groups THIS_FILE\n[groups]\n";
  for (const auto& [name, views] : groups) {
    out << name << " = [";
    for (std::size_t i = 0; i < views.size(); ++i) out << (i ? ", " : "") << '"' << views[i] << '"';
    out << "]\n";
  }
  return out.str();
}

void check_group_name(const std::string& group) {
  if (group.empty() || !std::all_of(group.begin(), group.end(), bare_key_char)) {
    throw InputError(FileLoc{"--view-group"}, "a view group name is letters, digits, '_' or '-', got '" + group + "'");
  }
}

}  // namespace

std::vector<std::pair<std::string, std::vector<std::string>>> parse_view_groups(const std::string& text,
                                                                                 const std::string& name) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  bool in_groups = false;
  std::int64_t line_no = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = std::min(text.find('\n', start), text.size());
    std::string raw = text.substr(start, nl - start);
    start = nl + 1;
    ++line_no;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    if (raw.find('\0') != std::string::npos) throw InputError(FileLoc{name, line_no}, "binary content (a NUL byte)");
    GroupLine line(raw, name, line_no);
    if (line.at_end_or_comment()) continue;
    if (line.accept('[')) {
      const std::string table = line.key();
      line.expect(']', "']'");
      if (!line.at_end_or_comment()) line.fail("unexpected text after the table header");
      if (table != "groups") line.fail("unknown table '" + escaped_excerpt(table) + "'" + did_you_mean(table, {"groups"}) + "; the file has one table, [groups]");
      in_groups = true;
      continue;
    }
    if (!in_groups) line.fail("a group must come after the [groups] header");
    const std::string group = line.key();
    for (const auto& g : groups) {
      if (g.first == group) line.fail("group '" + escaped_excerpt(group) + "' is defined twice");
    }
    line.expect('=', "'=' after the group name");
    line.expect('[', "'[' starting the list of views");
    std::vector<std::string> views;
    if (!line.accept(']')) {
      for (;;) {
        const std::size_t col = line.column();
        const std::string view = line.string_value();
        bool known = false;
        for (const auto& n : view_names()) known = known || n == view;
        if (!known) {
          throw InputError(FileLoc{name, line_no, static_cast<std::int64_t>(col)},
                           "unknown view '" + escaped_excerpt(view) + "'" + did_you_mean(view, view_names()));
        }
        views.push_back(view);
        if (line.accept(']')) break;
        line.expect(',', "',' or ']'");
      }
    }
    if (!line.at_end_or_comment()) line.fail("unexpected text after the list");
    if (views.empty()) line.fail("group '" + escaped_excerpt(group) + "' has no views");
    groups.emplace_back(group, std::move(views));
  }
  return groups;
}

std::vector<std::pair<std::string, std::vector<std::string>>> read_view_groups(const std::filesystem::path& path) {
  return parse_view_groups(read_file(path), path.string());
}

std::vector<std::string> load_view_group(const std::filesystem::path& path, const std::string& group) {
  const auto groups = read_view_groups(path);
  std::vector<std::string> names;
  for (const auto& [name, views] : groups) {
    if (name == group) return views;
    names.push_back(name);
  }
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw InputError(FileLoc{path.string()}, "no view group '" + escaped_excerpt(group) + "'" + did_you_mean(group, names) +
                                               (list.empty() ? "; the file has none" : "; it has: " + list) +
                                               " (expected a line '" + escaped_excerpt(group) + " = [...]' under [groups])");
}

void save_view_group(const std::filesystem::path& path, const std::string& group, const std::vector<std::string>& views) {
  check_group_name(group);
  if (views.empty()) throw InputError(FileLoc{"--view-group"}, "a view group needs at least one view");
  for (const auto& v : views) make_view(v, "--views");
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  if (std::filesystem::exists(path)) groups = read_view_groups(path);
  bool replaced = false;
  for (auto& g : groups) {
    if (g.first == group) {
      g.second = views;
      replaced = true;
    }
  }
  if (!replaced) groups.emplace_back(group, views);
  write_file_atomically(path, format_groups(groups));
}

std::vector<std::string> views_from_options(const std::string& list, const std::string& group,
                                            const std::filesystem::path& groups_file) {
  std::vector<std::string> names;
  if (!list.empty()) names = parse_view_list(list, "--views");
  if (group.empty()) {
    if (!groups_file.empty()) throw InputError(FileLoc{"--view-groups"}, "--view-groups needs --view-group NAME");
    return names;
  }
  if (groups_file.empty()) {
    throw InputError(FileLoc{"--view-group"}, "--view-group needs --view-groups FILE (the file that keeps the groups)");
  }
  if (!names.empty()) {
    save_view_group(groups_file, group, names);
    return names;
  }
  return load_view_group(groups_file, group);
}

}  // namespace kanoko::views
