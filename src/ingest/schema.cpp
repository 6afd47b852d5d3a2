#include "src/ingest/schema.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "src/base/error.hpp"
#include "src/base/progress.hpp"
#include "src/base/suggest.hpp"
#include "src/ingest/survey.hpp"
#include "src/ingest/window.hpp"
#include "src/mapping/pattern.hpp"
#include "src/profile/located.hpp"

namespace kanoko::ingest {

using namespace mapping;  // NOLINT: the mapping vocabulary (GroupBy, TraceSpec, ...) throughout

BodySelector::BodySelector(const Mapping& m, trace::TraceSink& downstream) : mapping_(m), down_(downstream) {
  // The patterns were checked when the mapping was parsed; a mapping built otherwise gets the
  // same located errors here.
  if (!m.trace.rename[0].empty()) rename_ = mapping_rewrite(m, "trace.rename", m.trace.rename);
  if (!m.trace.host_from_name[0].empty()) host_rule_ = mapping_rewrite(m, "trace.host_from_name", m.trace.host_from_name);
  if (!m.trace.select.empty()) select_ = mapping_pattern(m, "trace.select", m.trace.select);
  if (!m.trace.exclude.empty()) exclude_ = mapping_pattern(m, "trace.exclude", m.trace.exclude);
}

std::string BodySelector::body_key(const trace::Entity& e, std::string& why) const {
  if (select_ && !select_->found_in(e.name)) {
    why = "name does not match [trace] select \"" + mapping_.trace.select + "\"";
    return {};
  }
  if (exclude_ && exclude_->found_in(e.name)) {
    why = "name matches [trace] exclude \"" + mapping_.trace.exclude + "\"";
    return {};
  }
  switch (mapping_.trace.group_by) {
    case GroupBy::Entity: return e.name;
    case GroupBy::Host:
      if (e.host.empty()) why = "the trace gives it no host (group_by = \"host\")";
      return e.host;
    case GroupBy::Table: {
      std::string at = e.name;
      for (int step = 0; step < mapping_.trace.level; ++step) {
        const auto it = mapping_.trace.groups.find(at);
        if (it == mapping_.trace.groups.end()) {
          why = "'" + at + "' has no parent in [trace] groups (level " + std::to_string(step + 1) + " of " +
                std::to_string(mapping_.trace.level) + ")";
          return {};
        }
        at = it->second;
      }
      return at;
    }
  }
  return {};
}

void BodySelector::on_entity(const trace::Entity& given) {
  // [trace] host_from_name and rename rewrite the entity first (both from the trace's name);
  // select, exclude, groups and group_by see the result.
  trace::Entity e = given;
  if (host_rule_) {
    if (auto host = host_rule_->apply(given.name)) e.host = std::move(*host);
  }
  if (rename_) {
    if (auto name = rename_->apply(given.name)) e.name = std::move(*name);
  }
  if (body_of_.size() <= e.index) {
    body_of_.resize(e.index + 1, kNone);
    last_load_.resize(e.index + 1, 0.0);
    has_load_.resize(e.index + 1, false);
  }
  std::string why;
  const std::string key = body_key(e, why);
  if (key.empty()) {
    report_.entities.push_back({given.name, "", why});
    return;
  }
  // One body per entity even when two entities share a name; groups merge by name.
  const auto next = static_cast<std::uint32_t>(members_.size());
  auto [it, added] = body_index_.emplace(key, next);
  if (!added && mapping_.trace.group_by == GroupBy::Entity) {
    it->second = next;
    added = true;
  }
  if (added) {
    members_.emplace_back();
    report_.bodies.push_back(key);
    trace::Entity body;
    body.index = it->second;
    body.id = it->second;
    body.name = key;
    body.host = mapping_.trace.group_by == GroupBy::Host ? key : e.host;
    body.rank = mapping_.trace.group_by == GroupBy::Entity ? e.rank : -1;
    // A body of one entity or of one host keeps the containers above that host; a group of the
    // mapping's table has none of the trace's.
    if (mapping_.trace.group_by != GroupBy::Table) body.above_host = e.above_host;
    down_.on_entity(body);
  }
  members_[it->second].push_back(e.index);
  body_of_[e.index] = it->second;
  report_.entities.push_back({given.name, key, ""});
}

std::uint32_t BodySelector::body(trace::EntityIndex e) const { return e < body_of_.size() ? body_of_[e] : kNone; }

void BodySelector::on_link(const trace::Link& l) {
  trace::Link out = l;
  out.a = body(l.a);
  out.b = body(l.b);
  const bool kept = out.a != kNone && out.b != kNone && out.a != out.b;  // a link within one body is no link
  if (kept) down_.on_link(out);
  report_.dropped_links += kept ? 0U : 1U;
}

void BodySelector::on_message(const trace::Message& msg) {
  trace::Message out = msg;
  out.src = body(msg.src);
  out.dst = body(msg.dst);
  if (out.src == kNone || out.dst == kNone) {
    ++report_.dropped_messages;
  } else {
    report_.internal_messages += out.src == out.dst ? 1U : 0U;  // kept: it is the body's traffic
    down_.on_message(out);
  }
}

void BodySelector::on_load(const trace::LoadSample& s) {
  const std::uint32_t b = body(s.entity);
  if (b == kNone) return;
  last_load_[s.entity] = s.value;
  has_load_[s.entity] = true;
  // A group's load is the mean of its members' latest samples.
  double sum = 0;
  std::size_t n = 0;
  for (std::uint32_t e : members_[b]) {
    if (!has_load_[e]) continue;
    sum += last_load_[e];
    ++n;
  }
  trace::LoadSample out = s;
  out.entity = b;
  out.value = n > 0 ? sum / static_cast<double>(n) : 0.0;
  down_.on_load(out);
}

void BodySelector::on_state(const trace::StateInterval& s) {
  // Names repeat (a rank alternates between a few states): the last one's counter is at hand.
  if (last_state_count_ == nullptr || s.name != last_state_) {
    last_state_count_ = &report_.states[std::string(s.name)];
    last_state_ = s.name;
  }
  ++*last_state_count_;
  const std::uint32_t b = body(s.entity);
  if (b == kNone) return;
  trace::StateInterval out = s;
  out.entity = b;
  down_.on_state(out);
}

void BodySelector::on_collective(const trace::Collective& c) {
  const std::uint32_t b = body(c.entity);
  if (b == kNone) return;
  trace::Collective out = c;
  out.entity = b;
  if (out.root >= 0) {
    const auto r = static_cast<std::size_t>(out.root);
    out.root = r < body_of_.size() && body_of_[r] != kNone ? static_cast<std::int64_t>(body_of_[r]) : -1;
  }
  down_.on_collective(out);
}

void BodySelector::on_end(double end_s) {
  report_.members.clear();
  for (const auto& m : members_) report_.members.push_back(m.size());
  down_.on_end(end_s);
}

StateDefaults default_states(const std::string& format) { return trace::format_facts(format).states; }

const char* category_name(trace::StateCategory c) {
  switch (c) {
    case trace::StateCategory::Computing: return "computing";
    case trace::StateCategory::Communicating: return "communicating";
    case trace::StateCategory::Idle: return "idle";
    case trace::StateCategory::None: break;
  }
  return "not classified";
}

trace::TimelineOptions timeline_options(const Mapping& m, const std::string& format) {
  StateDefaults d = default_states(format);
  trace::TimelineOptions o;
  o.interval_s = m.simulation.interval_s;
  // Time outside any state is computing when no state is (SMPI without tracing/smpi/computing,
  // Score-P with only MPI regions): time outside MPI calls is the program's own work.
  o.gaps = trace::GapPolicy::Auto;
  o.busy_states = m.trace.computing_given ? m.mass.busy_states : std::move(d.computing);
  o.communicating_states = m.trace.communicating_given ? m.trace.communicating : std::move(d.communicating);
  o.idle_states = m.trace.idle_given ? m.trace.idle : std::move(d.idle);
  return o;
}

namespace {

/// Where a format takes its message sizes from, for the error about `message_bytes`.
std::string fixed_bytes(const std::string& format) {
  if (format == "native") return "the bytes of each `msg` entry";
  if (format == "paje") return "the Size field of each link start";
  if (format == "paraver") return "the size field of each communication record";
  if (format == "otf2") return "the message length of each MPI send";
  if (format == "simgrid-ti") return "the size of each send action";
  return "its own fields";
}

}  // namespace

trace::ReaderOptions reader_options(const Mapping& m, const std::string& format, std::vector<Diagnostic>* warnings) {
  const TraceSpec& t = m.trace;
  trace::ReaderOptions o;
  DiagnosticList errors;
  auto not_applicable = [&](const char* key, const std::string& why) {
    if (warnings != nullptr) warnings->push_back({m.where(std::string("trace.") + key), why});
  };
  if (!t.entity_type.empty()) {
    if (format == "paje") {
      o.paje.entity_type = t.entity_type;
    } else if (format == "paraver") {
      if (t.entity_type == "task" || t.entity_type == "thread") {
        o.paraver.entity_level = t.entity_type;
      } else {
        errors.add(m.where("trace.entity_type"), "for a Paraver trace 'entity_type' is \"task\" (MPI ranks) or \"thread\", not '" +
                                                     t.entity_type + "'" + did_you_mean(t.entity_type, {"task", "thread"}));
      }
    } else if (!format.empty()) {
      not_applicable("entity_type", "'entity_type' does not apply to " + format +
                                        " traces (it chooses Pajé container types and Paraver levels); ignored");
    }
  }
  if (!t.load_variable.empty()) {
    if (format == "paje") {
      o.paje.load_variable = t.load_variable;
    } else if (format == "chrome") {
      o.chrome.counter = t.load_variable;
    } else if (format == "otf2") {
      o.otf2.metric = t.load_variable;
    } else if (format == "paraver") {
      const bool digits = t.load_variable.size() <= 18 &&
                          std::all_of(t.load_variable.begin(), t.load_variable.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (digits) {
        o.paraver.load_event_type = std::stoll(t.load_variable);
      } else {
        o.paraver.load_event = t.load_variable;  // a .pcf label, looked up by the reader
      }
    } else if (!format.empty()) {
      not_applicable("load_variable", "'load_variable' does not apply to " + format + " traces (" +
                                          (format == "native" ? std::string("their load comes from `load` entries")
                                                              : std::string("they carry no load samples")) +
                                          "); ignored");
    }
  }
  const std::pair<const char*, const std::optional<double>*> rates[] = {
      {"flop_rate", &t.flop_rate}, {"bandwidth", &t.bandwidth}, {"latency", &t.latency_s}};
  for (const auto& [key, value] : rates) {
    if (!*value) continue;
    if (format == "simgrid-ti") {
      double& target = std::string(key) == "flop_rate"   ? o.simgrid_ti.flop_rate
                       : std::string(key) == "bandwidth" ? o.simgrid_ti.bandwidth
                                                         : o.simgrid_ti.latency_s;
      target = **value;
    } else if (!format.empty()) {
      not_applicable(key, std::string("'") + key + "' sets the SimGrid time-independent replay's rates; a " + format +
                              " trace has its own times; ignored");
    }
  }
  if (!t.message_bytes.empty()) {
    if (format == "chrome") {
      o.chrome.bytes_key = t.message_bytes;
    } else if (!format.empty()) {
      errors.add(m.where("trace.message_bytes"), "'message_bytes' chooses the args key of Chrome JSON flows; a " + format +
                                                     " trace fixes its message sizes (" + fixed_bytes(format) +
                                                     "): remove the key");
    }
  }
  errors.throw_if_any();
  return o;
}

namespace {

/// The format [trace] names, or the detected one for "auto" ("" when nothing recognises it).
std::string trace_format(const std::filesystem::path& path, const Mapping& m) {
  std::string format = m.trace.format;
  if (format == "auto") format = trace::detect_format(path);
  const auto names = trace::reader_names();
  if (!format.empty() && std::find(names.begin(), names.end(), format) == names.end()) {
    throw InputError(m.where("trace.format"), "unknown trace format '" + format + "'" + did_you_mean(format, names));
  }
  return format;
}

}  // namespace

std::vector<std::filesystem::path> body_trace_files(const std::filesystem::path& path, const Mapping& m) {
  const std::string format = trace_format(path, m);
  return trace::trace_files(path, format.empty() ? "auto" : format, reader_options(m, format));
}

TimeWindow trace_window(const Mapping& m) {
  TimeWindow w;
  if (m.trace.from_s) w.from_s = *m.trace.from_s;
  if (m.trace.to_s) w.to_s = *m.trace.to_s;
  return w;
}

namespace {

/// The matchers of the mapping's [locations], in its order: every part given must match.
std::vector<profile::LocationMatcher> location_matchers(const Mapping& m) {
  std::vector<profile::LocationMatcher> out;
  for (const mapping::CodeLocationSpec& spec : m.code_locations) {
    const auto pattern = [&](const std::string& key, const std::string& text) {
      return text.empty() ? std::optional<mapping::Pattern>()
                          : std::optional<mapping::Pattern>(mapping::mapping_pattern(
                                m, "locations." + spec.name + (key.empty() ? "" : "." + key), text));
    };
    const bool site_key = m.locations.count("locations." + spec.name + ".site") != 0U;  // the table form
    out.emplace_back([site = pattern(site_key ? "site" : "", spec.site), file = pattern("file", spec.file), function = pattern("function", spec.function),
                      line = spec.line](const trace::CodeLocation& l, const std::string& label) {
      return (!site || site->found_in(label)) && (!file || file->found_in(l.file)) &&
             (!function || function->found_in(l.function)) && (line == 0 || l.line == line);
    });
  }
  return out;
}

}  // namespace

trace::Timeline read_body_timeline(const std::filesystem::path& path, const Mapping& m, SelectionReport* report) {
  const std::string format = trace_format(path, m);
  trace::TimelineOptions options = timeline_options(m, format);
  std::vector<Diagnostic> option_warnings;
  const trace::ReaderOptions reader = reader_options(m, format, &option_warnings);
  const TimeWindow window = trace_window(m);
  const std::string reader_name = format.empty() ? "auto" : format;
  std::string interval_note;
  if (m.simulation.interval_auto || m.simulation.intervals > 0) {
    // The interval depends on the run's duration (and, for "auto", its event count), which only a
    // first pass over the trace can tell.
    const TraceSurvey pre = survey_trace(path, reader_name, reader, window);
    const double duration = pre.end_s;
    if (!(duration > 0)) {
      throw InputError(m.where(m.simulation.intervals > 0 ? "simulation.intervals" : "simulation.interval"),
                       std::string("the ") + (window.whole() ? "trace" : "window") + " lasts " +
                           (duration == 0 ? std::string("no time") : std::to_string(duration) + " s") +
                           ", so it cannot be divided into intervals" +
                           (window.whole() ? std::string() : std::string(" (check [trace] from and to, or --from/--to)")));
    }
    const std::size_t count = m.simulation.intervals > 0 ? static_cast<std::size_t>(m.simulation.intervals)
                                                         : auto_interval_count(pre.events(), pre.entities.size());
    options.interval_s = duration / static_cast<double>(count);
    options.known_end_s = pre.end_s;
    options.expected_messages = pre.messages;
    interval_note = m.simulation.intervals > 0
                        ? "interval: " + format_seconds(options.interval_s) + " = the " + (window.whole() ? "run's " : "window's ") +
                              format_seconds(duration) + " / " + std::to_string(count) + " intervals ([simulation] intervals)"
                        : "interval: " + format_seconds(options.interval_s) + ", so that the " + format_seconds(duration) + " " +
                              (window.whole() ? "run" : "window") + " makes " + std::to_string(count) + " intervals (" +
                              std::to_string(pre.events()) + " events over " + std::to_string(pre.entities.size()) +
                              " entities; interval = \"auto\")";
  }
  trace::TimelineBuilder builder(options);
  // Zero configuration surveyed the trace to infer this mapping and kept the stream: replayed, it
  // is the read below without the parsing, the selection and the survey on this thread and the
  // timeline on another.
  std::optional<RecordedRead> recorded = take_survey_events(path, reader_name, reader, window);
  std::optional<trace::PipeSink> pipe;
  if (recorded) pipe.emplace(builder);
  TraceSurvey survey;
  SurveySink survey_sink(survey, /*pairs=*/false);  // the timeline has the pairs' traffic
  TeeSink tee(pipe ? pipe->input() : builder, survey_sink);
  // [locations]: the time at named call sites, by the profile's rules, beside the timeline.
  std::optional<profile::LocatedTime> located;
  std::optional<TeeSink> with_located;
  if (!m.code_locations.empty()) {
    profile::LocatedOptions lo;
    lo.interval_s = options.interval_s;
    lo.matchers = location_matchers(m);
    lo.computing = options.busy_states;
    lo.communicating = options.communicating_states;
    lo.idle = options.idle_states;
    lo.mpi_call_table = options.mpi_call_table;
    located.emplace(std::move(lo));
    with_located.emplace(tee, *located);
  }
  BodySelector selector(m, with_located ? static_cast<trace::TraceSink&>(*with_located) : tee);
  trace::ReadReport read;
  WindowSink windowed(window, selector);
  trace::TraceSink& bodies = window.whole() ? static_cast<trace::TraceSink&>(selector) : windowed;
  if (recorded) {
    const CurrentInput reading("reading the trace", path.string());
    recorded->events->replay(bodies);
    pipe->finish();
    read = std::move(recorded->report);
    recorded.reset();  // the copy of the trace is freed before the model is built
  } else {
    read = trace::read_trace(path, bodies, reader_name, reader);
  }
  SelectionReport& r = selector.report();
  r.format = read.format;
  survey.path = path.string();
  survey.read = read;
  r.survey = std::move(survey);
  if (!interval_note.empty()) r.notes.push_back(interval_note);
  r.computing = options.busy_states;
  r.communicating = options.communicating_states;
  r.idle = options.idle_states;
  r.warnings.insert(r.warnings.end(), option_warnings.begin(), option_warnings.end());
  trace::StateClassifier classify(r.computing, r.communicating, r.idle);
  std::vector<std::string> seen;
  for (const auto& [name, count] : r.states) {
    seen.push_back(name);
    r.categories[name] = classify.classify(name);
  }
  // A state the mapping names (not a format default) that never occurs is probably misspelt.
  const std::pair<const char*, const std::vector<std::string>*> given[] = {
      {m.trace.computing_given ? (m.locations.count("trace.computing") != 0 ? "trace.computing" : "mass.busy_states") : nullptr,
       &r.computing},
      {m.trace.communicating_given ? "trace.communicating" : nullptr, &r.communicating},
      {m.trace.idle_given ? "trace.idle" : nullptr, &r.idle}};
  for (const auto& [key, list] : given) {
    if (key == nullptr || r.states.empty()) continue;
    const std::string role = std::string(key).substr(std::string(key).find('.') + 1);
    for (const auto& state : *list) {
      const bool occurs = std::any_of(seen.begin(), seen.end(), [&](const std::string& s) { return trace::glob_match(state, s); });
      if (!occurs) {
        r.warnings.push_back({m.where(key), (role == "busy_states" ? std::string("computing") : role) + " state '" + state +
                                                "' never occurs in the trace" + did_you_mean(state, seen)});
      }
    }
  }
  for (const auto& child_parent : m.trace.groups) {
    const std::string& child = child_parent.first;  // a plain reference: clang 14 cannot capture a binding
    const bool entity = std::any_of(r.entities.begin(), r.entities.end(), [&](const auto& e) { return e.entity == child; });
    const bool group = std::any_of(m.trace.groups.begin(), m.trace.groups.end(), [&](const auto& g) { return g.second == child; });
    if (!entity && !group) {
      r.warnings.push_back({m.where("trace.groups"), "[trace] groups names '" + child +
                                                         "', which is neither an entity of the trace nor a group"});
    }
  }
  if (r.bodies.empty() && !r.entities.empty()) {
    const std::string key = !m.trace.select.empty()  ? "trace.select"
                            : !m.trace.exclude.empty() ? "trace.exclude"
                                                       : "trace.group_by";
    throw InputError(m.where(key), "no entity of the trace's " + std::to_string(r.entities.size()) +
                                       " became a body (first: '" + r.entities.front().entity + "': " +
                                       r.entities.front().reason + ")");
  }
  trace::Timeline tl = builder.take();
  if (located) {
    if (read.locations == 0) {
      throw InputError(m.where("locations"), "[locations] names code locations, but " + path.string() + " (" + read.format +
                                                 ") records none: " +
                                                 std::string(trace::format_facts(read.format).record_locations) +
                                                 " (docs/profile.md)");
    }
    const std::size_t names = m.code_locations.size();
    if (tl.bin_count * tl.entity_count() > profile::LocatedTime::kMaxValues / (names * profile::LocatedSeconds::kClasses)) {
      throw InputError(m.where("locations"), "[locations]: " + std::to_string(names) + " names over " +
                                                 std::to_string(tl.bin_count) + " intervals and " +
                                                 std::to_string(tl.entity_count()) + " bodies need more than " +
                                                 std::to_string(profile::LocatedTime::kMaxValues) +
                                                 " values; name fewer call sites or use a larger interval");
    }
    profile::LocatedSeconds seconds = located->take(tl.bin_count, tl.entity_count());
    std::string matches;
    for (std::size_t k = 0; k < m.code_locations.size(); ++k) {
      const mapping::CodeLocationSpec& spec = m.code_locations[k];
      std::string shown;
      for (const std::string& label : seconds.examples[k]) shown += (shown.empty() ? "" : ", ") + label;
      if (seconds.matched_locations[k] > seconds.examples[k].size()) {
        shown += ", ... (" + std::to_string(seconds.matched_locations[k]) + " locations)";
      }
      if (!shown.empty()) matches += (matches.empty() ? "" : "; ") + spec.name + " = " + shown;
      if (seconds.matched_locations[k] == 0) {
        r.warnings.push_back({spec.where, "[locations] '" + spec.name + "' matches none of the trace's " +
                                              std::to_string(seconds.locations) +
                                              " code locations (`kanoko profile` lists them; a string is searched "
                                              "in \"file:line function\")"});
      }
    }
    if (!matches.empty()) r.notes.push_back("[locations] " + matches);
    tl.located_names = mapping::location_variables(m);
    tl.located_s = std::move(seconds.seconds);
  }
  if (std::any_of(r.members.begin(), r.members.end(), [](std::size_t k) { return k > 1; })) {
    tl.members.assign(r.members.begin(), r.members.end());  // grouped bodies hold their members' time
  }
  if (!window.whole()) {
    // The builder saw the window's times from 0; the run keeps trace time.
    tl.begin_s = window.from_s;
    tl.end_s += window.from_s;
  }
  const bool load_applies = format == "paje" || format == "chrome" || format == "otf2" || format == "paraver";
  if (!m.trace.load_variable.empty() && tl.load_sample_count == 0 && load_applies) {
    r.warnings.push_back({m.where("trace.load_variable"), "load_variable '" + m.trace.load_variable +
                                                              "' gave no load samples for the bodies (check its "
                                                              "name, and that it is set on the entities)"});
  }
  if (report != nullptr) *report = std::move(r);
  return tl;
}

}  // namespace kanoko::ingest
