#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <unordered_map>

#include "src/base/json.hpp"
#include "src/cli/options.hpp"
#include "src/ingest/schema.hpp"
#include "src/ingest/survey.hpp"
#include "src/trace/efficiency.hpp"
#include "src/trace/readers.hpp"
#include "src/trajectory/hierarchy.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::cli {
namespace {

/// Counts what a trace holds, keeping traffic per ordered pair (memory grows with active pairs).
class InfoSink final : public trace::TraceSink {
 public:
  struct Pair {
    std::uint64_t bytes = 0;
    std::uint64_t messages = 0;
  };
  std::vector<std::string> names;
  std::uint64_t links = 0, messages = 0, bytes = 0, loads = 0, states = 0, collectives = 0;
  double first_s = std::numeric_limits<double>::infinity();
  double end_s = 0;
  std::unordered_map<std::uint64_t, Pair> pairs;

  void on_entity(const trace::Entity& e) override { names.push_back(e.name); }
  void on_link(const trace::Link&) override { ++links; }
  void on_message(const trace::Message& m) override {
    seen(m.send_s);
    ++messages;
    bytes += m.bytes;
    Pair& p = pairs[(std::uint64_t{m.src} << 32U) | m.dst];
    p.bytes += m.bytes;
    ++p.messages;
  }
  void on_load(const trace::LoadSample& s) override {
    seen(s.time_s);
    ++loads;
  }
  void on_state(const trace::StateInterval& s) override {
    seen(s.begin_s);
    ++states;
  }
  void on_collective(const trace::Collective& c) override {
    seen(c.begin_s);
    ++collectives;
  }
  void on_end(double end) override { end_s = end; }

 private:
  void seen(double t) { first_s = std::min(first_s, t); }
};

std::string number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return {buf, r.ptr};
}

std::string json_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i > 0 ? "," : "") + json_string(items[i]);
  return out + "]";
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "(none)" : out;
}

/// Bins of the efficiency timeline: about 500 over the run, fewer when the entities are many.
constexpr std::size_t kEfficiencyBins = 500;
/// Above this many entities the text table shows the kEfficiencyEnds busiest and idlest only.
constexpr std::size_t kEfficiencyTableMax = 32;
constexpr std::size_t kEfficiencyEnds = 8;

/// The POP metrics and outliers of a trace, from a timeline built with the format's default
/// state classes (a second pass over the trace: the bin width needs the end time of the first).
struct EfficiencyReport {
  ingest::StateDefaults states;
  double interval_s = 0;
  trace::Efficiency efficiency;
};

EfficiencyReport efficiency_report(const std::string& path, const trace::ReadReport& report,
                                   const trace::ReaderOptions& reader_options, std::size_t entities, double end_s) {
  EfficiencyReport out;
  out.states = ingest::default_states(report.format);
  trace::TimelineOptions options;
  options.busy_states = out.states.computing;
  options.communicating_states = out.states.communicating;
  options.idle_states = out.states.idle;
  const std::size_t bins =
      std::clamp<std::size_t>(trace::TimelineBuilder::kMaxCells / std::max<std::size_t>(1, entities), 1, kEfficiencyBins);
  options.interval_s = end_s > 0 ? end_s / static_cast<double>(bins) : 1.0;
  out.interval_s = options.interval_s;
  trace::TimelineBuilder builder(options);
  (void)trace::read_trace(path, builder, report.format, reader_options);
  out.efficiency = trace::timeline_efficiency(builder.take());
  return out;
}

/// A JSON number, or null for infinity and NaN.
std::string json_number(double v) { return std::isfinite(v) ? number(v) : "null"; }

std::string efficiency_json(const EfficiencyReport& r, const std::vector<std::string>& names) {
  const trace::Efficiency& e = r.efficiency;
  const trace::PopMetrics& m = e.metrics;
  std::string j = "{\"from_s\":" + number(e.from_s) + ",\"to_s\":" + number(e.to_s) + ",\"interval_s\":" +
                  number(r.interval_s) + ",\"computing_states\":" + json_list(r.states.computing) +
                  ",\"communicating_states\":" + json_list(r.states.communicating) + ",\"idle_states\":" +
                  json_list(r.states.idle) + ",\"available\":" + (m.available ? "true" : "false");
  if (m.available) {
    j += ",\"load_balance_percent\":" + number(100 * m.load_balance) + ",\"communication_efficiency_percent\":" +
         number(100 * m.communication_efficiency) + ",\"parallel_efficiency_percent\":" +
         number(100 * m.parallel_efficiency) + ",\"runtime_s\":" + number(m.runtime_s) + ",\"mean_useful_s\":" +
         number(m.mean_useful_s) + ",\"max_useful_s\":" + number(m.max_useful_s);
  } else {
    j += ",\"unavailable_reason\":" + json_string(m.unavailable_reason);
  }
  j += ",\"entities\":[";
  for (std::size_t i = 0; i < e.entities.size(); ++i) {
    const trace::EntityActivity& a = e.entities[i];
    j += (i > 0 ? "," : "") + std::string("{\"name\":") + json_string(names.at(i)) + ",\"computing_s\":" +
         number(a.useful_s) + ",\"communicating_s\":" + number(a.communicating_s) + ",\"waiting_s\":" +
         number(a.waiting_s) + ",\"bytes_sent\":" + number(a.bytes_sent) + ",\"messages_sent\":" +
         std::to_string(a.messages_sent) + ",\"bytes_received\":" + number(a.bytes_received) +
         ",\"messages_received\":" + std::to_string(a.messages_received) + "}";
  }
  j += "],\"outliers\":[";
  for (std::size_t i = 0; i < e.outliers.size(); ++i) {
    const trace::Outlier& o = e.outliers[i];
    j += (i > 0 ? "," : "") + std::string("{\"quantity\":") + json_string(trace::quantity_name(o.quantity)) +
         ",\"entity\":" + json_string(names.at(o.entity)) + ",\"value\":" + number(o.value) + ",\"median\":" +
         number(o.median) + ",\"mads\":" + json_number(o.mads) + ",\"largest\":" + (o.largest ? "true" : "false") +
         ",\"text\":" + json_string(trace::describe_outlier(o, names)) + "}";
  }
  j += "],\"outliers_left_out\":{";
  for (std::size_t k = 0; k < trace::kOutlierQuantityCount; ++k) {
    j += (k > 0 ? "," : "") + json_string(trace::quantity_name(static_cast<trace::OutlierQuantity>(k))) + ":" +
         std::to_string(e.outliers_left_out[k]);
  }
  return j + "}}";
}

std::string efficiency_text(const EfficiencyReport& r, const std::vector<std::string>& names) {
  const trace::Efficiency& e = r.efficiency;
  char span[96];
  std::snprintf(span, sizeof span, "%.6g .. %.6g s", e.from_s, e.to_s);
  std::string t = "efficiency:  POP metrics over " + std::string(span) +
                  " (docs/efficiency.md); computing: " + joined(r.states.computing) +
                  "; communicating: " + joined(r.states.communicating) + "; waiting: " + joined(r.states.idle) + "\n";
  for (const std::string& line : trace::metric_lines(e.metrics)) t += "  " + line + "\n";
  // Rows: every entity, or the busiest and the idlest ones of a large run.
  std::vector<std::size_t> order(e.entities.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::size_t skip_at = order.size();
  std::size_t skipped = 0;
  if (order.size() > kEfficiencyTableMax) {
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return e.entities[a].useful_s > e.entities[b].useful_s; });
    skip_at = kEfficiencyEnds;
    skipped = order.size() - 2 * kEfficiencyEnds;
  }
  const auto shown = [&](std::size_t row) { return row < skip_at || row >= skip_at + skipped; };
  std::size_t width = 6;
  for (std::size_t row = 0; row < order.size(); ++row) {
    if (shown(row)) width = std::max(width, names.at(order[row]).size());
  }
  // The name is padded here, not by printf, so that a long name cannot cut the row short.
  const auto padded = [&](const std::string& name) { return "  " + name + std::string(width - name.size(), ' '); };
  char buf[160];
  std::snprintf(buf, sizeof buf, " %12s %16s %12s %14s %10s %14s %10s\n", "computing s", "communicating s", "waiting s",
                "bytes sent", "msgs sent", "bytes recv", "msgs recv");
  t += padded("entity") + buf;
  for (std::size_t row = 0; row < order.size(); ++row) {
    if (row == skip_at && skipped > 0) t += "  ... " + std::to_string(skipped) + " entities between, by computing time ...\n";
    if (!shown(row)) continue;
    const trace::EntityActivity& a = e.entities[order[row]];
    std::snprintf(buf, sizeof buf, " %12.6g %16.6g %12.6g %14.0f %10llu %14.0f %10llu\n", a.useful_s, a.communicating_s,
                  a.waiting_s, a.bytes_sent, static_cast<unsigned long long>(a.messages_sent), a.bytes_received,
                  static_cast<unsigned long long>(a.messages_received));
    t += padded(names.at(order[row])) + buf;
  }
  t += "outliers:";
  if (e.outliers.empty()) t += "    none";
  t += "\n";
  for (const trace::Outlier& o : e.outliers) t += "  " + trace::describe_outlier(o, names) + "\n";
  for (std::size_t k = 0; k < trace::kOutlierQuantityCount; ++k) {
    if (e.outliers_left_out[k] > 0) {
      t += "  (" + std::to_string(e.outliers_left_out[k]) + " more in " +
           trace::quantity_name(static_cast<trace::OutlierQuantity>(k)) + ")\n";
    }
  }
  return t;
}

/// `kanoko info RUN`: what a trajectory file holds (a run, finished or still being written).
int run_info(const std::string& path, bool json) {
  const trajectory::Reader reader(path, trajectory::Open::partial);
  const trajectory::Metadata& meta = reader.meta();
  const trajectory::Hierarchy hierarchy(meta);
  const std::size_t frames = reader.frame_count();
  const double first_s = frames > 0 ? reader.frame_time(0) : 0.0;
  const double last_s = frames > 0 ? reader.frame_time(frames - 1) : 0.0;
  const auto bytes = static_cast<double>(std::filesystem::file_size(path));
  const double per_body_frame = frames > 0 && meta.body_count() > 0
                                    ? bytes / (static_cast<double>(frames) * static_cast<double>(meta.body_count()))
                                    : 0.0;
  const std::string state = reader.complete() ? "complete"
                                              : "unfinished (" + std::to_string(frames) + " of " +
                                                    (meta.planned_frames > 0 ? std::to_string(meta.planned_frames) : "?") +
                                                    " frames so far: still being written, or killed)";
  const auto g6 = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return std::string(buf);
  };
  if (json) {
    std::string j = "{\"run\":" + json_string(path) + ",\"version\":" + std::to_string(reader.version()) +
                    ",\"complete\":" + (reader.complete() ? "true" : "false") + ",\"bodies\":" +
                    std::to_string(meta.body_count()) + ",\"levels\":{";
    for (std::size_t l = 0; l < hierarchy.level_count(); ++l) {
      j += (l > 0 ? "," : "") + json_string(hierarchy.level_name(l)) + ":" + std::to_string(hierarchy.group_count(l));
    }
    j += "},\"springs\":" + std::to_string(meta.edges.size()) + ",\"frames\":" + std::to_string(frames) +
         ",\"planned_frames\":" + std::to_string(meta.planned_frames) + ",\"trace_begin_s\":" +
         number(meta.trace_begin_s) + ",\"trace_end_s\":" + number(meta.trace_end_s) + ",\"first_frame_s\":" +
         number(first_s) + ",\"last_frame_s\":" + number(last_s) + ",\"interval_s\":" + number(meta.interval_s) +
         ",\"dt_s\":" + number(meta.dt_s) + ",\"integrator\":" + json_string(meta.integrator) + ",\"statistics\":[";
    for (std::size_t i = 0; i < meta.stat_names.size(); ++i) j += (i > 0 ? "," : "") + json_string(meta.stat_names[i]);
    j += "],\"source_trace\":" + json_string(meta.source_trace) + ",\"source_mapping\":" +
         json_string(meta.source_mapping) + ",\"bytes\":" + number(bytes) + ",\"bytes_per_body_frame\":" +
         number(per_body_frame) + "}\n";
    std::cout << j;
    return 0;
  }
  std::cout << "run:         " << path << "\nformat:      Kanoko trajectory, version " << reader.version() << ", "
            << state << "\nbodies:      " << meta.body_count();
  std::string levels;
  for (std::size_t l = 0; l < hierarchy.level_count(); ++l) {
    levels += (l > 0 ? ", " : "") + std::to_string(hierarchy.group_count(l)) + " " + hierarchy.level_name(l) +
              (hierarchy.group_count(l) == 1 ? "" : "s");
  }
  std::cout << " (levels: " << levels << "; kanoko export --level)\nsprings:     " << meta.edges.size()
            << "\nframes:      " << frames << ", " << g6(first_s) << " .. " << g6(last_s)
            << " s (the trace: " << g6(meta.trace_begin_s) << " .. " << g6(meta.trace_end_s)
            << (last_s > meta.trace_end_s ? " s, then settling)" : " s)") << "\ninterval:    " << g6(meta.interval_s) << " s\nintegrator:  " << meta.integrator
            << ", dt " << g6(meta.dt_s) << " s, " << meta.steps_per_frame << (meta.steps_per_frame == 1 ? " step" : " steps")
            << " per frame\nstatistics:  ";
  for (std::size_t i = 0; i < meta.stat_names.size(); ++i) std::cout << (i > 0 ? ", " : "") << meta.stat_names[i];
  char size[96];
  std::snprintf(size, sizeof size, "%.4g MB, %.4g bytes per body and frame", bytes / 1e6, per_body_frame);
  std::cout << "\nsource:      " << (meta.source_trace.empty() ? "-" : meta.source_trace) << " with mapping "
            << (meta.source_mapping.empty() ? "(inferred)" : meta.source_mapping) << "\nfile:        " << size
            << '\n';
  return 0;
}

}  // namespace

int cmd_info(const Args& args) {
  const CommandSpec spec{
      "info", "TRACE [--format F] [--entity-type T] [--json] | RUN.kntj [--json]",
      "Given a run (a .kntj trajectory, finished or still being written), says what it holds: its\n"
      "state, bodies and their levels (ranks, hosts), springs, frames and times, the statistics it\n"
      "stores, its sources and its size per body and frame.\n"
      "Given a trace, reads it and summarises it: its format, the entities (bodies) and, for Pajé, the\n"
      "containers by type, the time span, the number of events, states, messages and bytes, and the\n"
      "top five sender -> receiver pairs by bytes, the iteration markers (name, count, mean period;\n"
      "--from iter:K counts them), and the POP efficiency metrics (load balance,\n"
      "communication and parallel efficiency) with the outlier entities, from the format's default\n"
      "state classes (docs/efficiency.md). Recoverable problems (unmatched links, pops without\n"
      "pushes) are listed as warnings with the line of their first occurrence.",
      "  kanoko info traces/mesh-uniform-light.kntr\n"
      "  kanoko info smpi.trace --entity-type MPI --json\n"
      "  kanoko info lulesh.prv --entity-type thread --application 0\n"
      "  kanoko info smpi_replay.txt --flop-rate 2e9 --bandwidth 1.25e9 --latency 1e-6\n"};
  std::string formats;
  for (const std::string& f : trace::reader_names()) formats += (formats.empty() ? "" : ", ") + f;
  po::options_description options("Options");
  std::string path, format = "auto", entity_type;
  options.add_options()("trace", po::value(&path)->required(), "trace file, or a run (.kntj)")(
      "format,f", po::value(&format)->default_value("auto"),
      ("trace format: auto (detected from the content) or one of " + formats).c_str())(
      "entity-type", po::value(&entity_type),
      "Pajé: container type whose containers are the entities; Paraver: task (default) or thread")(
      "application", po::value<std::int64_t>(), "Paraver: application whose tasks are the entities (default 1, 0 = all)")(
      "flop-rate", po::value<double>(), "SimGrid TI replay: flop/s of every rank (default 1e9)")(
      "bandwidth", po::value<double>(), "SimGrid TI replay: bytes/s of a transfer (default 1.25e8)")(
      "latency", po::value<double>(), "SimGrid TI replay: seconds per transfer and collective step (default 5e-5)")(
      "json", "print one JSON object instead of text");
  po::positional_options_description positional;
  positional.add("trace", 1);
  po::variables_map vm;
  if (!parse_command_line(spec, options, positional, args, vm)) return 0;
  if (trajectory::looks_like_trajectory(path)) return run_info(path, vm.count("json") != 0U);

  trace::ReaderOptions reader_options;
  reader_options.paje.entity_type = entity_type;
  if (!entity_type.empty()) reader_options.paraver.entity_level = entity_type;
  if (vm.count("application") != 0U) reader_options.paraver.application = vm["application"].as<std::int64_t>();
  if (vm.count("flop-rate") != 0U) reader_options.simgrid_ti.flop_rate = vm["flop-rate"].as<double>();
  if (vm.count("bandwidth") != 0U) reader_options.simgrid_ti.bandwidth = vm["bandwidth"].as<double>();
  if (vm.count("latency") != 0U) reader_options.simgrid_ti.latency_s = vm["latency"].as<double>();
  InfoSink sink;
  ingest::TraceMarkers markers;
  ingest::MarkerSink marker_sink(markers);
  ingest::TeeSink both(sink, marker_sink);
  const trace::ReadReport report = trace::read_trace(path, both, format, reader_options);
  const ingest::MarkerSeries* detected = markers.detected();
  const double begin = sink.first_s <= sink.end_s ? sink.first_s : 0.0;

  std::vector<std::pair<std::uint64_t, InfoSink::Pair>> top(sink.pairs.begin(), sink.pairs.end());
  const auto by_bytes = [](const auto& a, const auto& b) {
    return a.second.bytes != b.second.bytes ? a.second.bytes > b.second.bytes : a.first < b.first;
  };
  const std::size_t shown = std::min<std::size_t>(5, top.size());
  std::partial_sort(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(shown), top.end(), by_bytes);
  top.resize(shown);
  const auto name_of = [&](std::uint64_t index) { return sink.names.at(static_cast<std::size_t>(index)); };
  const std::uint64_t events = sink.messages + sink.states + sink.loads + sink.collectives;
  const std::vector<std::string> warnings = report.warning_lines();
  const EfficiencyReport efficiency = efficiency_report(path, report, reader_options, sink.names.size(), sink.end_s);

  if (vm.count("json") != 0U) {
    std::string j = "{\"trace\":" + json_string(path) + ",\"format\":" + json_string(report.format) +
                    ",\"entities\":" + std::to_string(sink.names.size());
    if (report.has_paje) {
      j += ",\"entity_type\":" + json_string(report.paje.entity_type) + ",\"containers\":" +
           std::to_string(report.paje.containers) + ",\"containers_by_type\":{";
      for (std::size_t i = 0; i < report.paje.containers_by_type.size(); ++i) {
        const auto& [type, count] = report.paje.containers_by_type[i];
        j += (i > 0 ? "," : "") + json_string(type) + ":" + std::to_string(count);
      }
      j += "},\"paje_states\":" + std::to_string(report.paje.states) + ",\"paje_links\":" +
           std::to_string(report.paje.links) + ",\"paje_variable_events\":" +
           std::to_string(report.paje.variable_events);
    }
    if (!report.details.empty()) {
      j += ",\"details\":{";
      for (std::size_t i = 0; i < report.details.size(); ++i) {
        j += (i > 0 ? "," : "") + json_string(report.details[i].first) + ":" + json_string(report.details[i].second);
      }
      j += "}";
    }
    j += ",\"begin_s\":" + number(begin) + ",\"end_s\":" + number(sink.end_s) + ",\"events\":" +
         std::to_string(events) + ",\"states\":" + std::to_string(sink.states) + ",\"messages\":" +
         std::to_string(sink.messages) + ",\"bytes\":" + std::to_string(sink.bytes) +
         ",\"messages_with_bytes\":" + std::to_string(report.messages_with_bytes) + ",\"loads\":" +
         std::to_string(sink.loads) + ",\"collectives\":" + std::to_string(sink.collectives) + ",\"links\":" +
         std::to_string(sink.links) + ",\"top_talkers\":[";
    for (std::size_t i = 0; i < top.size(); ++i) {
      j += (i > 0 ? "," : "") + std::string("{\"src\":") + json_string(name_of(top[i].first >> 32U)) +
           ",\"dst\":" + json_string(name_of(top[i].first & 0xffffffffU)) + ",\"bytes\":" +
           std::to_string(top[i].second.bytes) + ",\"messages\":" + std::to_string(top[i].second.messages) + "}";
    }
    j += "],\"locations\":" + std::to_string(report.locations) + ",\"states_with_location\":" +
         std::to_string(report.states_with_location) + ",\"messages_with_location\":" +
         std::to_string(report.messages_with_location);
    j += ",\"collectives_from_states\":" + std::to_string(report.collectives_from_states) + ",\"markers\":[";
    for (std::size_t i = 0; i < markers.series.size(); ++i) {
      const ingest::MarkerSeries& m = markers.series[i];
      j += (i > 0 ? "," : "") + std::string("{\"name\":") + json_string(m.name) + ",\"from_states\":" +
           (m.from_states ? "true" : "false") + ",\"count\":" + std::to_string(m.count()) + ",\"entities\":" +
           std::to_string(m.entities()) + ",\"iterations\":" + std::to_string(m.iterations()) +
           ",\"mean_period_s\":" + number(m.mean_period()) + ",\"detected\":" + (&m == detected ? "true" : "false") + "}";
    }
    j += "],\"efficiency\":" + efficiency_json(efficiency, sink.names) + ",\"warnings\":[";
    for (std::size_t i = 0; i < warnings.size(); ++i) j += (i > 0 ? "," : "") + json_string(warnings[i]);
    j += "]}\n";
    std::cout << j;
    return 0;
  }

  std::cout << "trace:       " << path << "\nformat:      " << report.format << "\nentities:    " << sink.names.size();
  if (report.has_paje) {
    std::cout << " (containers of type " << (report.paje.entity_type.empty() ? "none" : report.paje.entity_type)
              << ")\ncontainers:  " << report.paje.containers << " with the root:";
    for (const auto& [type, count] : report.paje.containers_by_type) std::cout << ' ' << type << '=' << count;
  }
  std::cout << "\ntime span:   " << number(begin) << " .. " << number(sink.end_s) << " s\nevents:      " << events
            << " (" << sink.states << " states, " << sink.messages << " messages, " << sink.loads << " load samples, "
            << sink.collectives << " collectives)\nbytes:       " << sink.bytes;
  if (sink.messages > 0) {
    std::cout << " (" << report.messages_with_bytes << " of " << sink.messages << " messages carry a size"
              << (report.messages_with_bytes == 0 ? "; forces pull by message counts" : "") << ")";
  }
  std::cout << '\n';
  if (report.has_paje) {
    std::cout << "pajé:        " << report.paje.states << " states, " << report.paje.links << " links, "
              << report.paje.variable_events << " variable events on all containers\n";
  }
  for (const auto& [label, value] : report.details) std::cout << label << ": " << value << '\n';
  if (report.collectives_from_states > 0) {
    std::cout << "collectives: " << report.collectives_from_states
              << " made from states naming collective MPI calls (docs/trace-formats.md)\n";
  }
  std::cout << "locations:   ";
  if (report.locations == 0) {
    std::cout << "none (`kanoko profile` needs them; docs/profile.md)\n";
  } else {
    std::cout << report.locations << " code locations; " << report.states_with_location << " of " << sink.states
              << " states and " << report.messages_with_location << " of " << sink.messages
              << " messages carry one (kanoko profile)\n";
  }
  std::cout << "markers:     " << (markers.series.empty() ? "none (iter:K windows need them; docs/zero-configuration.md)" : "")
            << '\n';
  for (const ingest::MarkerSeries& m : markers.series) {
    std::cout << "  " << m.name << (m.from_states ? " (state)" : "") << ": " << m.count() << " on " << m.entities()
              << " entities, " << m.iterations() << " iterations, mean period " << number(m.mean_period()) << " s"
              << (&m == detected ? "; iter:K counts these" : "") << '\n';
  }
  if (!top.empty()) {
    std::cout << "top talkers:\n";
    for (const auto& [key, p] : top) {
      std::cout << "  " << name_of(key >> 32U) << " -> " << name_of(key & 0xffffffffU) << ": " << p.bytes
                << " bytes in " << p.messages << " messages\n";
    }
  }
  std::cout << efficiency_text(efficiency, sink.names);
  for (const std::string& w : warnings) std::cerr << w << '\n';
  return 0;
}

}  // namespace kanoko::cli
