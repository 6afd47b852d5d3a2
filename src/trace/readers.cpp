#include "src/trace/readers.hpp"

#include <array>
#include <cstdio>
#include <cstring>
#include <functional>

#include "src/base/error.hpp"
#include "src/base/suggest.hpp"
#include "src/trace/decompress.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trace/state_collectives.hpp"

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
  const char* entities_expected;  ///< what declares the entities, for "the trace declares no entity"
  FormatFacts facts;
  bool (*detect)(std::string_view head);
  std::function<void(const std::filesystem::path&, TraceSink&, const ReaderOptions&, ReadReport&)> read;
  /// The files a read opens; nullptr: the trace file alone.
  std::vector<std::filesystem::path> (*files)(const std::filesystem::path&, const ReaderOptions&) = nullptr;
};

const std::vector<Reader>& readers() {
  static const std::vector<Reader> table{{
      {"native", "Kanoko native text trace (.kntr)", "'node' lines after the 'kntr 1' header",
       {{{"compute"}, {"send", "recv"}, {"idle"}}, true, false, false, false, false,
        "`kanoko capture` records them (call sites, on by default: `--call-path-depth`); other native traces declare them with `loc` entries and `loc=` on `state` and `msg` (docs/native-trace-format.md)"}, looks_native,
       [](const std::filesystem::path& p, TraceSink& sink, const ReaderOptions& o, ReadReport& r) {
         r.end_at = read_native_trace(p, sink, TextReadOptions{o.threads});
       }},
      {"paje", "Pajé trace (SimGrid, PajeNG, StarPU)", "PajeCreateContainer events", {{{"computing", "compute"}, {}, {}}, true, true, true, false, true,
        "SimGrid SMPI writes them when the program is built with `smpicc -trace-call-location` and run with "
        "`smpirun --cfg=smpi/trace-call-location:yes --cfg=tracing:yes --cfg=tracing/smpi:yes` "
        "(Fname and Lnumber fields of PajePushState)"}, looks_paje,
       [](const std::filesystem::path& p, TraceSink& sink, const ReaderOptions& o, ReadReport& r) {
         PajeOptions paje = o.paje;
         paje.read.threads = o.threads;
         r.paje = read_paje_trace(p, sink, paje);
         r.has_paje = true;
         r.end_at = r.paje.end_at;
       }},
      {"otf2", "OTF2 archive (Score-P, Scalasca, TAU): the anchor file or its directory",
       "Location definitions in the global definitions",
       {{{"compute"}, {}, {}}, true, false, true, false, true,
        "Score-P gives them to the functions it instruments (compiler instrumentation, `scorep mpicc ...`, "
        "the default), each MPI call then at the function that makes it"}, looks_like_otf2_anchor,
       [](const std::filesystem::path& p, TraceSink& sink, const ReaderOptions& o, ReadReport& r) {
         const Otf2Summary s = read_otf2_trace(p, sink, o.otf2);
         r.warnings.insert(r.warnings.end(), s.warnings.begin(), s.warnings.end());
         r.end_at = s.end_at;
         r.details = {{"otf2", std::to_string(s.location_groups) + " location groups, " + std::to_string(s.locations) +
                                   " threads, " + std::to_string(s.regions) + " regions"},
                      {"otf2 events", std::to_string(s.enters) + " enter, " + std::to_string(s.leaves) + " leave, " +
                                          std::to_string(s.sends) + " send, " + std::to_string(s.receives) +
                                          " receive, " + std::to_string(s.collectives) + " collective, " +
                                          std::to_string(s.metric_events) + " metric"},
                      {"otf2 clock", std::to_string(s.timer_resolution) + " ticks/s"},
                      {"load metric", s.metric.empty() ? std::string("none") : s.metric}};
       },
       [](const std::filesystem::path& p, const ReaderOptions&) { return otf2_trace_files(p); }},
      {"chrome", "Chrome/Perfetto trace-event JSON (array or {\"traceEvents\": ...})", "events with a \"pid\"",
       {{{"compute"}, {}, {}}, false, false, true, true, true,
        "slices carry them as \"sf\" stack frame ids into a top-level \"stackFrames\" object (the inline \"stack\" "
        "lists are not read)"}, looks_like_chrome_json,
       [](const std::filesystem::path& p, TraceSink& sink, const ReaderOptions& o, ReadReport& r) {
         const ChromeSummary s = read_chrome_trace(p, sink, o.chrome);
         r.warnings.insert(r.warnings.end(), s.warnings.begin(), s.warnings.end());
         r.end_at = s.end_at;
         r.details = {{"chrome", std::to_string(s.events) + " events, " + std::to_string(s.processes) + " processes, " +
                                     std::to_string(s.threads) + " threads"},
                      {"chrome events", std::to_string(s.states) + " slices, " + std::to_string(s.flow_messages) +
                                            " flow messages, " + std::to_string(s.counter_samples) + " counter samples, " + std::to_string(s.markers) + " markers, " +
                                            std::to_string(s.metadata) + " metadata, " + std::to_string(s.ignored) +
                                            " not read"},
                      {"load counter", s.counter.empty() ? std::string("none") : s.counter}};
         if (s.truncated_at >= 0) r.details.emplace_back("truncated at byte", std::to_string(s.truncated_at));
       }},
      {"paraver", "Paraver trace (.prv with its .pcf and .row; Extrae, nsys2prv, Dimemas)",
       "tasks in the .prv header's application list",
       {{{"Running"}, {}, {"Idle", "Not created", "Blocked"}}, true, true, true, false, true,
        "Extrae writes them (\"Caller at level N\" events) with `<callers enabled=\"yes\"><mpi enabled=\"yes\">1-3</mpi></callers>` "
        "in its XML configuration, for a program built with -g"}, looks_like_paraver,
       [](const std::filesystem::path& p, TraceSink& sink, const ReaderOptions& o, ReadReport& r) {
         const ParaverSummary s = read_paraver_trace(p, sink, o.paraver);
         r.warnings.insert(r.warnings.end(), s.warnings.begin(), s.warnings.end());
         r.end_at = s.end_at;
         r.details = {{"paraver", std::to_string(s.nodes) + " nodes, " + std::to_string(s.applications) +
                                      " applications, " + std::to_string(s.tasks) + " tasks, " +
                                      std::to_string(s.threads) + " threads, " + std::to_string(s.communicators) +
                                      " communicators; entities: " + o.paraver.entity_level + "s"},
                      {"paraver records", std::to_string(s.state_records) + " state, " +
                                              std::to_string(s.event_records) + " event, " +
                                              std::to_string(s.comm_records) + " communication (" +
                                              std::to_string(s.comm_bytes) + " bytes), " +
                                              std::to_string(s.global_op_records) + " global-op (skipped); " +
                                              std::to_string(s.collectives) + " MPI collective calls, " +
                                              std::to_string(s.markers) + " iteration markers"},
                      {"paraver files", std::string(s.have_pcf ? ".pcf read" : "no .pcf") + ", " +
                                            (s.have_row ? ".row read" : "no .row")}};
       },
       [](const std::filesystem::path& p, const ReaderOptions& o) { return paraver_trace_files(p, o.paraver); }},
      {"simgrid-ti", "SimGrid time-independent trace (actions file or per-rank index), replayed",
       "action lines starting with a rank number",
       {{{"compute"}, {"communication"}, {"sleep"}}, true, false, false, false, false,
        "time-independent traces record no code locations; trace the SMPI run as Pajé with call locations instead "
        "(`smpicc -trace-call-location`, `smpirun --cfg=smpi/trace-call-location:yes`)"}, looks_like_simgrid_ti,
       [](const std::filesystem::path& p, TraceSink& sink, const ReaderOptions& o, ReadReport& r) {
         const SimgridTiSummary s = read_simgrid_ti_trace(p, sink, o.simgrid_ti);
         r.warnings.insert(r.warnings.end(), s.warnings.begin(), s.warnings.end());
         char model[160];
         std::snprintf(model, sizeof model, "%g flop/s, %g bytes/s, %g s latency", o.simgrid_ti.flop_rate,
                       o.simgrid_ti.bandwidth, o.simgrid_ti.latency_s);
         char flops[32];
         std::snprintf(flops, sizeof flops, "%g", s.flops);
         r.details = {{"simgrid-ti", std::string(s.indexed ? "index of per-rank files" : "single action file") + ", " +
                                         std::to_string(s.ranks) + " ranks, " + std::to_string(s.actions) + " actions"},
                      {"ti replay", std::to_string(s.sends) + " sends, " + std::to_string(s.receives) + " receives, " +
                                        std::to_string(s.collectives) + " collectives, " + flops + " flops"},
                      {"ti cost model", model}};
       },
       [](const std::filesystem::path& p, const ReaderOptions&) { return simgrid_ti_files(p); }},
  }};
  return table;
}

/// Counts the messages with and without a size, and the events with a code location, on their
/// way to the sink.
class MessageSizeCounter final : public TraceSink {
 public:
  MessageSizeCounter(TraceSink& down, ReadReport& report) : down_(down), report_(report) {}
  void on_entity(const Entity& e) override { down_.on_entity(e); }
  void on_link(const Link& l) override { down_.on_link(l); }
  void on_message(const Message& m) override {
    ++(m.bytes > 0 ? report_.messages_with_bytes : report_.messages_without_bytes);
    if (m.location != 0) ++report_.messages_with_location;
    down_.on_message(m);
  }
  void on_load(const LoadSample& s) override { down_.on_load(s); }
  void on_state(const StateInterval& s) override {
    if (s.location != 0) ++report_.states_with_location;
    down_.on_state(s);
  }
  void on_location(LocationIndex index, const CodeLocation& l) override {
    ++report_.locations;
    down_.on_location(index, l);
  }
  void on_collective(const Collective& c) override { down_.on_collective(c); }
  void on_collective_records() override { down_.on_collective_records(); }
  void on_marker(const Marker& m) override { down_.on_marker(m); }
  void on_end(double end_s) override { down_.on_end(end_s); }

 private:
  TraceSink& down_;
  ReadReport& report_;
};

std::string valid_list() {
  std::string s;
  for (const Reader& r : readers()) s += (s.empty() ? "" : ", ") + std::string(r.name);
  return s;
}

}  // namespace

std::vector<std::string> ReadReport::warning_lines() const {
  std::vector<std::string> out;
  for (const ReaderWarning& w : warnings) out.push_back(w.str());
  if (!has_paje) return out;
  for (const PajeWarning& w : paje.warnings) {
    out.push_back(w.first.str() + ": warning: " + std::to_string(w.count) + "x " + w.what);
  }
  return out;
}

const FormatFacts& format_facts(std::string_view format) {
  for (const Reader& r : readers()) {
    if (format == r.name) return r.facts;
  }
  return readers().front().facts;
}

std::string no_entities_message(std::string_view format) {
  const char* expected = "entity declarations";
  for (const Reader& r : readers()) {
    if (format == r.name) expected = r.entities_expected;
  }
  return "the trace declares no entity (process, rank or host), so there are no bodies (expected " +
         std::string(expected) + ")";
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

namespace {

/// The first 64 KiB of a file, decompressed.
std::string file_head(const std::filesystem::path& path) {
  DecompressedInput input(path);
  std::string head(64 * 1024, '\0');
  std::size_t have = 0;
  while (have < head.size()) {
    const std::size_t n = input.read(head.data() + have, head.size() - have);
    if (n == 0) break;
    have += n;
  }
  head.resize(have);
  return head;
}

}  // namespace

std::string detect_format(const std::filesystem::path& path) {
  if (is_otf2_directory(path)) return "otf2";
  // A compressed file is judged by its decompressed head.
  return detect_format_text(file_head(path));
}

namespace {

/// The reader named `format`, or the one that recognises the file's content for "auto".
const Reader& reader_for(const std::filesystem::path& path, const std::string& format) {
  std::string chosen = format;
  if (format == "auto") {
    chosen = detect_format(path);
    if (chosen.empty()) {
      const std::string head = file_head(path);
      throw InputError(FileLoc{path.string(), 1, 1},
                       "unknown trace format: " +
                           (head.empty() ? std::string("the file is empty")
                                         : "no reader recognises content starting '" + escaped_excerpt(head, 60) + "'") +
                           " (tried " + valid_list() +
                           "; native traces start with 'kntr 1', Pajé traces with %EventDef lines); name one with --format");
    }
  }
  for (const Reader& r : readers()) {
    if (chosen != r.name) continue;
    if (chosen == "otf2" && file_compression(path) != Compression::none) {
      throw InputError(FileLoc{path.string()}, std::string(compression_name(file_compression(path))) +
                                                   "-compressed OTF2 anchor: libotf2 reads OTF2 archives uncompressed only; "
                                                   "unpack the archive first");
    }
    return r;
  }
  throw InputError(FileLoc{path.string()}, "unknown trace format '" + format + "'" + did_you_mean(format, reader_names()) +
                                               "; valid formats: auto, " + valid_list());
}

}  // namespace

ReadReport read_trace(const std::filesystem::path& path, TraceSink& sink, const std::string& format,
                      const ReaderOptions& options) {
  const CurrentInput reading("reading the trace", path.string());
  const Reader& r = reader_for(path, format);
  ReadReport report;
  report.format = r.name;
  MessageSizeCounter counter(sink, report);
  if (r.facts.collectives_from_states) {
    CollectivesFromStates collectives(counter);
    r.read(path, collectives, options, report);
    report.collectives_from_states = collectives.added();
  } else {
    r.read(path, counter, options, report);
  }
  const Compression c = file_compression(path);
  if (c != Compression::none) report.details.insert(report.details.begin(), {"compression", compression_name(c)});
  return report;
}

std::vector<std::filesystem::path> trace_files(const std::filesystem::path& path, const std::string& format,
                                               const ReaderOptions& options) {
  const Reader& r = reader_for(path, format);
  if (r.files != nullptr) return r.files(path, options);
  return {path};
}

}  // namespace kanoko::trace
