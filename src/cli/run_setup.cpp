#include "src/cli/run_setup.hpp"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "src/base/error.hpp"
#include "src/base/hash.hpp"
#include "src/base/output_target.hpp"
#include "src/ingest/schema.hpp"
#include "src/ingest/survey.hpp"
#include "src/mapping/mapping.hpp"
#include "src/sim/mpi_run.hpp"
#include "src/sim/trace_hash.hpp"
#include "src/trace/event_log.hpp"
#include "src/trace/readers.hpp"
#include "src/trajectory/trajectory.hpp"
#include "src/views/run_source.hpp"

namespace kanoko::cli {

void add_mapping_options(po::options_description& options, bool calibrate_like) {
  options.add_options()("mapping,m", po::value<std::string>(),
                        "mapping file (.toml); without it a mapping is inferred from the trace (kanoko init shows it)")(
      "purpose", po::value<std::string>(),
      "with no --mapping: what the inferred mapping shows: balance (default), communication, waiting, placement")(
      "from", po::value<std::string>(),
      "start of the time window: trace seconds, or iter:K (the start of iteration K by the trace's markers); "
      "calibration follows the window")(
      "to", po::value<std::string>(), "end of the time window: trace seconds, or iter:K (the end of iteration K)")(
      "marker", po::value<std::string>(), "the marker or state name whose occurrences iter:K counts (default: detected)");
  if (calibrate_like) {
    options.add_options()("calibrate-like", po::value<std::string>(),
                          "take the interval, step and force constants of this earlier run (for a fair before/after "
                          "comparison; the run must have been calibrated, calibrate = \"auto\")");
  }
}

ingest::TimeWindow window_from(const po::variables_map& vm, const std::string& trace) {
  std::optional<ingest::WindowBound> from, to;
  if (vm.count("from") != 0U) from = ingest::parse_window_bound(vm["from"].as<std::string>(), FileLoc{"--from"});
  if (vm.count("to") != 0U) to = ingest::parse_window_bound(vm["to"].as<std::string>(), FileLoc{"--to"});
  const bool iterations = (from && from->is_iteration()) || (to && to->is_iteration());
  const std::string marker = vm.count("marker") != 0U ? vm["marker"].as<std::string>() : std::string();
  if (!iterations) {
    if (!marker.empty()) throw InputError(FileLoc{"--marker"}, "names the markers of iter:K bounds; give --from or --to iter:K");
    ingest::TimeWindow w;
    if (from) w.from_s = from->seconds;
    if (to) w.to_s = to->seconds;
    if (!(w.to_s > w.from_s)) throw InputError(FileLoc{"--to"}, "the window is empty: --to must be later than --from");
    return w;
  }
  const std::string format = vm.count("format") != 0U ? vm["format"].as<std::string>() : std::string("auto");
  return ingest::resolve_window(from, to, trace, format, {}, marker);
}

void choose_mapping(const po::variables_map& vm, const std::string& trace, const std::string& command, bool quiet,
                    sim::SimulateOptions& so) {
  note_command_input(trace);
  for (const char* input : {"mapping", "calibrate-like"}) {
    if (vm.count(input) != 0U) note_command_input(vm[input].as<std::string>());
  }
  const ingest::TimeWindow window = window_from(vm, trace);
  if (vm.count("from") != 0U) so.from_s = window.from_s;
  if (vm.count("to") != 0U) so.to_s = window.to_s;
  if (vm.count("calibrate-like") != 0U) so.calibrate_like = vm["calibrate-like"].as<std::string>();
  if (vm.count("mapping") != 0U) {
    if (vm.count("purpose") != 0U) {
      throw InputError(FileLoc{"--purpose"}, "--purpose chooses the inferred mapping; with --mapping it does nothing "
                                             "(drop one of them)");
    }
    so.mapping = vm["mapping"].as<std::string>();
    return;
  }
  ingest::InferOptions io;
  if (vm.count("purpose") != 0U) io.purpose = ingest::find_purpose(vm["purpose"].as<std::string>(), FileLoc{"--purpose"}).purpose;
  if (vm.count("format") != 0U) io.format = vm["format"].as<std::string>();
  io.window = window;
  io.write_window = false;  // the simulation writes --from / --to into the text itself
  // The timeline read replays the survey's stream (unless the run is cached); the processes of
  // an MPI run on one machine share the copy's budget.
  io.keep_events_bytes = trace::EventLog::default_budget() / static_cast<std::size_t>(sim::mpi_local_processes());
  // The simulation's input hash reads every byte of the trace again: done meanwhile, on what the
  // survey leaves of the cores.
  sim::prefetch_trace_files_hash(trace);
  const ingest::InferredMapping inferred = ingest::infer_mapping(trace, io);
  if (!quiet) {
    std::cerr << "kanoko " << command << ": " << inferred.summary << " (kanoko init writes it)\n";
    for (const auto& w : inferred.warnings) std::cerr << "kanoko " << command << ": warning: " << w << '\n';
  }
  so.mapping_text = inferred.text;
  so.mapping_label = trace + " (inferred mapping, purpose " + ingest::purposes()[static_cast<std::size_t>(io.purpose)].name + ")";
}

std::filesystem::path cache_folder() {
  std::filesystem::path dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    dir = std::filesystem::path(xdg) / "kanoko";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    dir = std::filesystem::path(home) / ".cache" / "kanoko";
  } else {
    dir = std::filesystem::temp_directory_path() / "kanoko-cache";
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(FileLoc{dir.string()}, "cannot create the cache folder: " + ec.message());
  return dir;
}

std::filesystem::path cached_run(const std::string& trace, const po::variables_map& vm) {
  Fnv1a64 h;
  h.update(std::filesystem::absolute(trace).lexically_normal().string());
  for (const char* key : {"mapping", "purpose", "format", "calibrate-like", "from", "to", "marker"}) {
    h.update(key);
    h.update(vm.count(key) != 0U ? vm[key].as<std::string>() : std::string("\x01"));
  }
  char name[32];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(h.digest()));
  return cache_folder() / (std::filesystem::path(trace).stem().string() + "-" + name + ".kntj");
}

void add_budget_options(po::options_description& options) {
  options.add_options()("max-output", po::value<std::string>(),
                        "largest trajectory to write, e.g. 20G or 512M (default: min(free space - 1 GiB, 16 GiB))")(
      "max-memory", po::value<std::string>(), "largest memory the run may take, e.g. 8G (default: half the RAM)")(
      "max-steps", po::value<std::string>(), "most integration steps the run may take (default: 2e9)");
}

sim::Budget budget_from(const po::variables_map& vm, const std::filesystem::path& output) {
  sim::Budget b = sim::default_budget(output);
  if (vm.count("max-output") != 0U) {
    b.max_output_bytes = sim::parse_size(vm["max-output"].as<std::string>(), "--max-output");
    b.output_reason = "--max-output";
  }
  if (vm.count("max-memory") != 0U) {
    b.max_memory_bytes = sim::parse_size(vm["max-memory"].as<std::string>(), "--max-memory");
    b.memory_reason = "--max-memory";
  }
  if (vm.count("max-steps") != 0U) {
    const std::string text = vm["max-steps"].as<std::string>();
    char* end = nullptr;
    const double steps = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(steps >= 1 && steps < 1.8e19) || steps != std::floor(steps)) {
      throw InputError(FileLoc{"--max-steps"}, "'" + text + "' is not a number of steps (a whole number ≥ 1, e.g. 5e9)");
    }
    b.max_steps = static_cast<std::uint64_t>(steps);
  }
  return b;
}

void print_notes(const std::string& command, const sim::SimulateSummary& s) {
  for (const auto& n : s.notes) std::cerr << "kanoko " << command << ": " << n << '\n';
  for (const auto& w : s.warnings) std::cerr << "kanoko " << command << ": warning: " << w << '\n';
}

views::IndexOptions view_index_options(const std::string& input, const std::filesystem::path& trace,
                                       const std::string& format) {
  views::IndexOptions options;
  options.rules.format = format == "auto" ? trace::detect_format(trace) : format;
  if (!views::is_run_file(input)) return options;
  const trajectory::Reader reader(input, trajectory::Open::partial);  // only the metadata: a run being written too
  const trajectory::Metadata& meta = reader.meta();
  if (meta.mapping_text.empty()) return options;
  const std::string name = meta.source_mapping.empty() ? input + " (its mapping)" : meta.source_mapping;
  const trace::TimelineOptions t =
      ingest::timeline_options(mapping::parse_mapping_text(meta.mapping_text, name), options.rules.format);
  options.rules.busy = t.busy_states;
  options.rules.overhead = t.communicating_states;
  options.rules.idle = t.idle_states;
  options.rules.gaps = t.gaps;
  return options;
}

}  // namespace kanoko::cli
