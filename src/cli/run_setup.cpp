#include "src/cli/run_setup.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "src/base/error.hpp"
#include "src/base/hash.hpp"

namespace kanoko::cli {

void add_mapping_options(po::options_description& options, bool calibrate_like) {
  options.add_options()("mapping,m", po::value<std::string>(),
                        "mapping file (.toml); without it a mapping is inferred from the trace (kanoko init shows it)")(
      "purpose", po::value<std::string>(),
      "with no --mapping: what the inferred mapping shows: balance (default), communication, waiting, placement")(
      "from", po::value<double>(), "start of the time window (trace seconds); calibration follows the window")(
      "to", po::value<double>(), "end of the time window (trace seconds)");
  if (calibrate_like) {
    options.add_options()("calibrate-like", po::value<std::string>(),
                          "take the interval, step and force constants of this earlier run (for a fair before/after "
                          "comparison; the run must have been calibrated, calibrate = \"auto\")");
  }
}

ingest::TimeWindow window_from(const po::variables_map& vm) {
  ingest::TimeWindow w;
  if (vm.count("from") != 0U) w.from_s = vm["from"].as<double>();
  if (vm.count("to") != 0U) w.to_s = vm["to"].as<double>();
  if (!std::isfinite(w.from_s)) throw InputError(FileLoc{"--from"}, "expected a finite time in trace seconds");
  if (vm.count("to") != 0U && !std::isfinite(w.to_s)) throw InputError(FileLoc{"--to"}, "expected a finite time in trace seconds");
  if (!(w.to_s > w.from_s)) throw InputError(FileLoc{"--to"}, "the window is empty: --to must be later than --from");
  return w;
}

void choose_mapping(const po::variables_map& vm, const std::string& trace, const std::string& command, bool quiet,
                    sim::SimulateOptions& so) {
  const ingest::TimeWindow window = window_from(vm);
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
  for (const char* key : {"mapping", "purpose", "format", "calibrate-like"}) {
    h.update(key);
    h.update(vm.count(key) != 0U ? vm[key].as<std::string>() : std::string("\x01"));
  }
  for (const char* key : {"from", "to"}) {
    h.update(key);
    h.update_value(vm.count(key) != 0U ? vm[key].as<double>() : -1e300);
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

}  // namespace kanoko::cli
