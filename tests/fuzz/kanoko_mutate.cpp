// kanoko_mutate: the whole-program mutation harness. Mutants of every seed input (every trace
// format, mappings, trajectories) go through the real kanoko binary with each relevant subcommand
// under a time, memory and output bound; every run is classified (tests/fuzz/README.md), counts
// are printed per format x subcommand, and every finding worse than a located error is kept in the
// artifacts folder (mutant, command line, stderr). Exits 1 on a crash, hang, runaway or leftover
// (and on an unlocated error with --strict), 2 on a usage error.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "src/base/hash.hpp"
#include "tests/fuzz/mutate.hpp"
#include "tests/trajectory/reseal.hpp"

namespace fs = std::filesystem;
using kanoko::fuzz::Outcome;

namespace {

/// What a seed is for kanoko: a trace, a mapping or a trajectory.
enum class Kind { trace, mapping, trajectory };

/// One seed input.
struct Seed {
  std::string format;  ///< native, paje, chrome, paraver, simgrid_ti, otf2, mapping, trajectory
  fs::path path;       ///< a file, or an OTF2 archive folder
  Kind kind = Kind::trace;
};

/// One subcommand, with the arguments it gets for an input.
struct Command {
  std::string name;
  Kind kind;
  /// The arguments after the binary; `in` the mutant, `out` the output folder, `trace` a small
  /// trace (for mappings).
  std::vector<std::string> (*args)(const std::string& in, const fs::path& out, const std::string& trace);
  std::vector<std::string> outputs;  ///< the files a successful run writes into `out`
};

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"info", Kind::trace, [](const std::string& in, const fs::path&, const std::string&) {
         return std::vector<std::string>{"info", in};
       }, {}},
      {"simulate", Kind::trace, [](const std::string& in, const fs::path& out, const std::string&) {
         return std::vector<std::string>{"simulate", in, "-o", (out / "run.kntj").string(), "-q", "-j", "1"};
       }, {"run.kntj"}},
      {"plot", Kind::trace, [](const std::string& in, const fs::path& out, const std::string&) {
         return std::vector<std::string>{"plot", "spacetime", in, "-o", (out / "view.png").string(), "--size", "160x100"};
       }, {"view.png"}},
      {"suggest", Kind::trace, [](const std::string& in, const fs::path&, const std::string&) {
         return std::vector<std::string>{"suggest", in};
       }, {}},
      {"profile", Kind::trace, [](const std::string& in, const fs::path&, const std::string&) {
         return std::vector<std::string>{"profile", in, "--by", "path", "--top", "0"};
       }, {}},
      {"check", Kind::mapping, [](const std::string& in, const fs::path&, const std::string& trace) {
         return std::vector<std::string>{"check", in, "--trace", trace};
       }, {}},
      {"simulate", Kind::mapping, [](const std::string& in, const fs::path& out, const std::string& trace) {
         return std::vector<std::string>{"simulate", trace, "--mapping", in, "-o", (out / "run.kntj").string(), "-q", "-j", "1"};
       }, {"run.kntj"}},
      {"export", Kind::trajectory, [](const std::string& in, const fs::path& out, const std::string&) {
         return std::vector<std::string>{"export", in, "-o", (out / "run.csv").string()};
       }, {"run.csv"}},
  };
  return table;
}

/// The harness's settings (command-line options).
struct Options {
  fs::path kanoko, source, shared, work, artifacts;
  double time_s = 60;
  std::size_t rounds = 0;  // 0: until the time is up
  std::uint64_t seed = 1;
  std::size_t jobs = 2;
  bool strict = false;
  bool no_address_limit = false;  // bound resident memory only, never RLIMIT_AS
  std::set<std::string> formats, command_names;
  kanoko::fuzz::Limits limits;
};

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "kanoko_mutate: " << problem << "\n"
            << "usage: kanoko_mutate --kanoko PATH [--source DIR] [--shared DIR] [--work DIR] [--artifacts DIR]\n"
               "         [--time S] [--rounds N] [--timeout S] [--memory-mb N] [--output-mb N] [--jobs 1|2]\n"
               "         [--seed N] [--formats a,b] [--commands a,b] [--no-address-limit] [--strict]\n";
  std::exit(2);
}

std::set<std::string> split(const std::string& s) {
  std::set<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.insert(item);
  }
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  o.source = fs::current_path();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--strict" || a == "--no-address-limit") {
      (a == "--strict" ? o.strict : o.no_address_limit) = true;
      continue;
    }
    if (i + 1 >= argc) usage("missing value after " + a);
    const std::string v = argv[++i];
    try {
      if (a == "--kanoko") o.kanoko = v;
      else if (a == "--source") o.source = v;
      else if (a == "--shared") o.shared = v;
      else if (a == "--work") o.work = v;
      else if (a == "--artifacts") o.artifacts = v;
      else if (a == "--time") o.time_s = std::stod(v);
      else if (a == "--rounds") o.rounds = std::stoul(v);
      else if (a == "--timeout") o.limits.timeout_s = std::stod(v);
      else if (a == "--memory-mb") o.limits.memory_mb = std::stoull(v);
      else if (a == "--output-mb") o.limits.output_mb = std::stoull(v);
      else if (a == "--jobs") o.jobs = std::stoul(v);
      else if (a == "--seed") o.seed = std::stoull(v);
      else if (a == "--formats") o.formats = split(v);
      else if (a == "--commands") o.command_names = split(v);
      else usage("unknown option " + a);
    } catch (const std::logic_error&) {
      usage("bad value '" + v + "' for " + a);
    }
  }
  if (o.kanoko.empty()) usage("--kanoko is required");
  if (o.jobs < 1 || o.jobs > 2) usage("--jobs must be 1 or 2 (the machine is shared)");
  if (!(o.time_s > 0) || !(o.limits.timeout_s > 0)) usage("--time and --timeout must be positive");
  o.kanoko = fs::absolute(o.kanoko);
  o.source = fs::weakly_canonical(fs::absolute(o.source));
  if (o.shared.empty()) o.shared = o.source.parent_path() / "shared";
  if (o.artifacts.empty()) o.artifacts = "mutate-artifacts";
  o.artifacts = fs::absolute(o.artifacts);
  if (!o.work.empty()) o.work = fs::absolute(o.work);
  return o;
}

/// Every regular file of `dir` (sorted), none when it does not exist.
std::vector<fs::path> files_in(const fs::path& dir, const std::string& extension = "") {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && (extension.empty() || e.path().extension() == extension)) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The seeds: tests/fuzz/seeds, the shipped traces and mappings, and the OTF2 archives of
/// ../shared/traces/otf2 when present.
std::vector<Seed> find_seeds(const Options& o) {
  std::vector<Seed> seeds;
  const fs::path fuzz = o.source / "tests" / "fuzz" / "seeds";
  const auto add = [&](const std::string& format, Kind kind, const std::vector<fs::path>& paths) {
    for (const auto& p : paths) seeds.push_back({format, p, kind});
  };
  for (const char* f : {"native_trace", "paje", "chrome", "paraver", "simgrid_ti"}) {
    add(f == std::string("native_trace") ? "native" : f, Kind::trace, files_in(fuzz / f));
  }
  add("native", Kind::trace, files_in(o.source / "traces", ".kntr"));
  add("paje", Kind::trace, files_in(o.source / "traces" / "simgrid", ".trace"));
  add("mapping", Kind::mapping, files_in(fuzz / "mapping"));
  add("mapping", Kind::mapping, files_in(o.source / "mappings", ".toml"));
  add("trajectory", Kind::trajectory, files_in(fuzz / "trajectory"));
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(o.shared / "traces" / "otf2", ec)) {
    if (fs::exists(e.path() / "traces.otf2")) seeds.push_back({"otf2", e.path(), Kind::trace});
  }
  std::sort(seeds.begin(), seeds.end(), [](const Seed& a, const Seed& b) { return a.path < b.path; });
  std::erase_if(seeds, [&](const Seed& s) { return !o.formats.empty() && o.formats.count(s.format) == 0; });
  return seeds;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

/// Writes the mutant of `seed` into `in_dir`; returns the path kanoko gets.
fs::path write_mutant(const Seed& seed, std::mt19937_64& rng, const fs::path& in_dir) {
  if (seed.format == "otf2") {  // a copy of the archive with one file mutated (not the anchor)
    const fs::path copy = in_dir / seed.path.filename();
    fs::copy(seed.path, copy, fs::copy_options::recursive);
    std::vector<fs::path> members;
    for (const auto& e : fs::recursive_directory_iterator(copy)) {
      fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
      const auto ext = e.path().extension();
      if (e.is_regular_file() && (ext == ".def" || ext == ".evt")) members.push_back(e.path());
    }
    std::sort(members.begin(), members.end());
    if (!members.empty()) {
      const fs::path& victim = members[rng() % members.size()];
      write_file(victim, kanoko::fuzz::mutate(read_file(victim), rng));
    }
    return copy / "traces.otf2";
  }
  std::string bytes = read_file(seed.path);
  fs::path name = seed.path.filename();
  if (seed.kind == Kind::trajectory) {
    // The fuzz seeds start with fuzz_trajectory's control byte; bit 0: reseal after mutating, so
    // that the mutant gets past the checksums.
    const bool reseal = !bytes.empty() && (bytes[0] & 1) != 0;
    if (!bytes.empty()) bytes.erase(0, 1);
    bytes = kanoko::fuzz::mutate(bytes, rng);
    if (reseal) kanoko::trajectory::testing::reseal(bytes);
    name = seed.path.stem().string() + ".kntj";
  } else {
    bytes = kanoko::fuzz::mutate(bytes, rng);
  }
  write_file(in_dir / name, bytes);
  return in_dir / name;
}

/// Shell-quotes one argument.
std::string quoted(const std::string& a) {
  if (a.find_first_of(" '\"\\$`*?;&|<>()") == std::string::npos && !a.empty()) return a;
  std::string q = "'";
  for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// Replaces every `from` in `s` by `to`.
std::string replaced(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

/// Counts per outcome of one format x subcommand.
using Counts = std::array<std::size_t, kanoko::fuzz::kOutcomeCount>;

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (!fs::exists(o.kanoko)) usage("no program " + o.kanoko.string());
  const std::vector<Seed> seeds = find_seeds(o);
  if (seeds.empty()) usage("no seed inputs under " + o.source.string() + " (--source is the repository)");
  const std::string small_trace = (o.source / "tests" / "fuzz" / "seeds" / "native_trace" / "small.kntr").string();

  // The format x subcommand pairs, each with its seeds.
  struct Pair {
    std::string format;
    const Command* command;
    std::vector<const Seed*> seeds;
  };
  std::vector<Pair> pairs;
  std::map<std::string, std::vector<const Seed*>> by_format;
  for (const auto& s : seeds) by_format[s.format].push_back(&s);
  for (const auto& [format, list] : by_format) {
    for (const auto& c : commands()) {
      if (c.kind != list.front()->kind) continue;
      if (!o.command_names.empty() && o.command_names.count(c.name) == 0) continue;
      pairs.push_back({format, &c, list});
    }
  }
  if (pairs.empty()) usage("no format x subcommand pair left by --formats and --commands");

  kanoko::fuzz::Limits limits = o.limits;
  // AddressSanitizer reserves terabytes of address space: bound its resident memory only.
  limits.address_space = !o.no_address_limit && !kanoko::fuzz::uses_asan(o.kanoko);
  const bool own_work = o.work.empty();
  const fs::path work = own_work ? fs::temp_directory_path() / ("kanoko-mutate-" + std::to_string(::getpid())) : o.work;
  fs::create_directories(work);
  fs::create_directories(o.artifacts);

  std::mutex mu;
  std::map<std::pair<std::string, std::string>, Counts> counts;
  std::map<std::string, std::size_t> kept;  // artifacts per outcome/format/command
  std::vector<std::string> examples;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> broken{false};
  const auto start = std::chrono::steady_clock::now();
  const auto time_left = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < o.time_s;
  };

  const auto worker = [&](std::size_t slot_index) {
    const fs::path slot = work / ("slot-" + std::to_string(slot_index));
    for (;;) {
      const std::size_t i = next++;
      const std::size_t round = i / pairs.size();
      if ((o.rounds != 0 && round >= o.rounds) || !time_left() || broken) return;
      const Pair& pair = pairs[i % pairs.size()];
      const Seed& seed = *pair.seeds[round % pair.seeds.size()];
      kanoko::Fnv1a64 h;
      h.update(&o.seed, sizeof o.seed);
      h.update(&round, sizeof round);
      const std::string key = pair.format + "/" + pair.command->name + "/" + seed.path.filename().string();
      h.update(key.data(), key.size());
      std::mt19937_64 rng(h.digest());
      try {
        fs::remove_all(slot);
        for (const char* d : {"in", "out", "tmp", "log"}) fs::create_directories(slot / d);
        const fs::path input = write_mutant(seed, rng, slot / "in");
        std::vector<std::string> args{o.kanoko.string()};
        for (auto& a : pair.command->args(input.string(), slot / "out", small_trace)) args.push_back(std::move(a));
        const auto r = kanoko::fuzz::run_bounded(args, slot / "out", slot / "tmp", slot / "log", pair.command->outputs, limits);
        // For an archive, any of its files is the input.
        const std::string named = seed.format == "otf2" ? input.parent_path().string() : input.string();
        const Outcome outcome = kanoko::fuzz::classify(r, named);
        const std::lock_guard lock(mu);
        ++counts[{pair.format, pair.command->name}][static_cast<std::size_t>(outcome)];
        if (outcome < Outcome::unlocated) continue;
        const std::string name = std::string(kanoko::fuzz::outcome_name(outcome)) + "/" + pair.format + "." + pair.command->name;
        if (kept[name]++ >= 5) continue;  // enough examples of one kind
        const fs::path dir = o.artifacts / (name + ".r" + std::to_string(round) + "." + seed.path.filename().string());
        fs::remove_all(dir);
        fs::create_directories(dir);
        fs::copy(slot / "in", dir, fs::copy_options::recursive);
        std::string line;
        for (const auto& a : args) line += (line.empty() ? "" : " ") + quoted(a);
        line = replaced(replaced(line, (slot / "in").string(), dir.string()), (slot / "out").string(), "out");
        write_file(dir / "command.txt", "# seed " + seed.path.string() + ", round " + std::to_string(round) +
                                            "; run in an empty folder with a subfolder out/\n" + line + "\n");
        write_file(dir / "stderr.txt", r.err);
        std::string left;
        for (const auto& f : r.leftovers) left += f + "\n";
        if (!left.empty()) write_file(dir / "leftovers.txt", left);
        std::string first = r.err.substr(0, r.err.find('\n'));
        if (r.timed_out) first = "killed after " + std::to_string(o.limits.timeout_s) + " s";
        if (r.signal != 0) first = "signal " + std::to_string(r.signal) + "; " + first;
        if (!r.leftovers.empty() && outcome == Outcome::leftover) first = "left " + r.leftovers.front() + "; " + first;
        examples.push_back(std::string(kanoko::fuzz::outcome_name(outcome)) + " " + pair.format + "." +
                           pair.command->name + ": " + first.substr(0, 160) + "  [" + dir.string() + "]");
      } catch (const std::exception& e) {
        const std::lock_guard lock(mu);
        std::cerr << "kanoko_mutate: " << e.what() << '\n';
        broken = true;
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < o.jobs; ++w) threads.emplace_back(worker, w);
  for (auto& t : threads) t.join();
  if (own_work) fs::remove_all(work);
  else for (std::size_t w = 0; w < o.jobs; ++w) fs::remove_all(work / ("slot-" + std::to_string(w)));
  if (broken) return 2;

  // The report.
  Counts total{};
  std::printf("%-12s %-9s %6s", "format", "command", "runs");
  for (std::size_t k = 0; k < kanoko::fuzz::kOutcomeCount; ++k) {
    std::printf(" %10s", std::string(kanoko::fuzz::outcome_name(static_cast<Outcome>(k))).c_str());
  }
  std::printf("\n");
  const auto row = [](const std::string& format, const std::string& command, const Counts& c) {
    std::size_t runs = 0;
    for (const auto n : c) runs += n;
    std::printf("%-12s %-9s %6zu", format.c_str(), command.c_str(), runs);
    for (const auto n : c) std::printf(" %10zu", n);
    std::printf("\n");
  };
  for (const auto& [pair, c] : counts) {
    row(pair.first, pair.second, c);
    for (std::size_t k = 0; k < c.size(); ++k) total[k] += c[k];
  }
  row("total", "", total);
  bool failed = false;
  for (std::size_t k = 0; k < total.size(); ++k) {
    failed = failed || (total[k] > 0 && kanoko::fuzz::is_failure(static_cast<Outcome>(k), o.strict));
  }
  std::sort(examples.begin(), examples.end());
  for (const auto& e : examples) std::printf("%s\n", e.c_str());
  std::printf("kanoko_mutate: %s (seed %llu, %.0f s); findings in %s\n", failed ? "FAILED" : "passed",
              static_cast<unsigned long long>(o.seed),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), o.artifacts.string().c_str());
  return failed ? 1 : 0;
}
