// The viewer on a big run (issue 14, point 6): a 2-D halo exchange of N ranks (default 512) with
// M messages (default about a million) is written as a native trace, simulated with the inferred
// mapping, and opened in `kanoko view` under X (xvfb-run when DISPLAY is unset) twice in the same
// run: without companion views (the baseline) and with every view. Each session plays for a
// fixed wall time and writes --frame-stats; the table gives the time to the first frame, when the
// views were ready, the median and p99 frame time while their index was building and after, and
// the ratios against the baseline. `kanoko plot spacetime` of the same trace is timed too.
//
//   build/bench/kanoko_bench_viewer [--ranks N] [--messages M] [--play SECONDS] [--keep DIR]
//   (--keep DIR keeps the trace and run there, and reuses them on the next call)
//
// Targets (issue 14): first frame <= 2 s and p99 frame time <= 100 ms while the index builds.
//
// With --watch (issue 15, point 1) it measures instead the time to the first frame of
// `kanoko view TRACE` while it simulates: the same halo trace at 10,000 ranks and about 1 GB
// (--ranks, --messages), opened with a fresh cache folder, so that the trace is read, the model
// built and the run simulated while the window plays it. The parts are reported as the viewer
// measures them (--frame-stats): trace read and model built (the simulation starts writing),
// first block of frames on disk, first frame drawn; and, as a baseline from the same run, the
// time `kanoko info` takes to read the same trace. The session is ended with SIGINT once the
// statistics are written (closing the window would let the simulation finish into the cache).
//
//   build/bench/kanoko_bench_viewer --watch [--ranks 10000] [--messages 14000000] [--mapping MAP]
//
// --watch ends with one machine-readable line (scripts/speed-table.py reads it):
// `BENCH bench=viewer case=watch ranks=N mb=.. info_s=.. writing_s=.. first_frames_s=.. first_frame_s=..
// first_frame_cold_s=.. info_cold_s=..`. The session runs twice, Mesa's shader cache first empty (cold: the first
// use on a machine), then as that session left it (warm: every later use), each after its own
// `kanoko info`; the other figures are the warm session's.
//
// With --levels (issue 15, point 4) it measures the levels of detail: a run of 100,000 ranks in
// hosts of 32 (a 3-D lattice of hosts, the ranks around each, a halo of springs, 40 frames of
// slow motion; written by the bench itself, as `kanoko simulate` of 100k bodies would take half
// an hour) is opened in `kanoko view` twice in the same run: with --level rank (every rank: the
// cloud of dots) and with --level host (each host one body at its ranks' centroid, the viewer's
// default at this size). The table gives the median and p99 frame time, the frames per second,
// the CPU time per frame (all threads and the X server: what the frame costs, whatever else the
// machine runs) and the ratios host / rank. Target: >= 30 fps at 1280x720 in software GL (Mesa
// llvmpipe).
//
//   build/bench/kanoko_bench_viewer --levels [--ranks 100000] [--per-host 32] [--play 10]
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "src/trajectory/trajectory.hpp"

namespace {

namespace fs = std::filesystem;

struct Options {
  int ranks = 512;
  long messages = 1'000'000;
  double play_s = 12;
  fs::path keep;
  bool watch = false;
  bool levels = false;
  int per_host = 32;
  fs::path mapping;  ///< --watch: simulate with this mapping instead of the inferred one
};

// A halo exchange on a px × py torus: per iteration every rank computes (imbalanced: a slow
// quarter), then sends to its four neighbours and waits for theirs.
void write_trace(const fs::path& path, int ranks, long messages) {
  int px = static_cast<int>(std::sqrt(static_cast<double>(ranks)));
  while (ranks % px != 0) --px;
  const int py = ranks / px;
  const long iterations = std::max(1L, messages / (4L * ranks));
  std::ofstream out(path);
  out << "kntr 1\n";
  for (int r = 0; r < ranks; ++r) out << "node 0 " << r << " name=rank-" << r << " host=node-" << r / 16 << "\n";
  struct Event {
    double t;
    std::string line;
  };
  std::vector<Event> events;
  char buf[160];
  double t = 0;
  const double base = 1e-3;
  const double latency = 2e-5;
  for (long k = 0; k < iterations; ++k) {
    events.clear();
    double longest = 0;
    for (int r = 0; r < ranks; ++r) {
      const double c = base * (1.0 + 0.5 * ((r % 4) == 0) + 0.1 * std::sin(0.37 * static_cast<double>(r + k)));
      longest = std::max(longest, c);
    }
    const double next = t + longest + 3 * latency;
    for (int r = 0; r < ranks; ++r) {
      const double c = base * (1.0 + 0.5 * ((r % 4) == 0) + 0.1 * std::sin(0.37 * static_cast<double>(r + k)));
      std::snprintf(buf, sizeof buf, "state %.9f %d %.9f compute\n", t, r, c);
      events.push_back({t, buf});
      std::snprintf(buf, sizeof buf, "state %.9f %d %.9f MPI_Waitall\n", t + c, r, next - t - c);
      events.push_back({t + c, buf});
      const int x = r % px;
      const int y = r / px;
      const int nb[4] = {((x + 1) % px) + y * px, ((x + px - 1) % px) + y * px, x + ((y + 1) % py) * px,
                         x + ((y + py - 1) % py) * px};
      for (const int d : nb) {
        std::snprintf(buf, sizeof buf, "msg %.9f %d %d 8192 recv=%.9f\n", t + c, r, d, t + longest + 2 * latency);
        events.push_back({t + c, buf});
      }
    }
    std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.t < b.t; });
    for (const Event& e : events) out << e.line;
    t = next;
  }
  out << "end " << t << "\n";
}

double run(const std::string& command) {
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = std::system(command.c_str());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc != 0) {
    std::fprintf(stderr, "bench_viewer: failed (%d): %s\n", rc, command.c_str());
    std::exit(1);
  }
  return s;
}

std::string sh(const fs::path& p) { return "'" + p.string() + "'"; }

// The numbers of a --frame-stats file, by dotted key ("while_indexing.p99_ms").
std::map<std::string, double> read_stats(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  rapidjson::Document d;
  d.Parse(ss.str().c_str());
  std::map<std::string, double> v;
  if (d.HasParseError() || !d.IsObject()) {
    std::fprintf(stderr, "bench_viewer: %s is not a --frame-stats file\n", path.string().c_str());
    std::exit(1);
  }
  for (const auto& m : d.GetObject()) {
    if (m.value.IsNumber()) v[m.name.GetString()] = m.value.GetDouble();
    if (!m.value.IsObject()) continue;
    for (const auto& k : m.value.GetObject()) {
      if (k.value.IsNumber()) v[std::string(m.name.GetString()) + "." + k.name.GetString()] = k.value.GetDouble();
    }
  }
  return v;
}

/// Makes `path` with `write` unless it exists (--keep reuses it), saying which and its size.
void write_once(const fs::path& path, const std::string& what, const std::function<void()>& write) {
  if (fs::exists(path)) {
    std::printf("reusing %s (%.1f MB)\n", path.string().c_str(), static_cast<double>(fs::file_size(path)) / 1e6);
    return;
  }
  const auto tw = std::chrono::steady_clock::now();
  write();
  std::printf("%s, %.1f MB, written in %.1f s\n", what.c_str(), static_cast<double>(fs::file_size(path)) / 1e6,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - tw).count());
}

/// --levels: a run of `ranks` ranks in hosts of `per_host`, written directly (no simulation).
void write_levels_run(const fs::path& path, int ranks, int per_host) {
  namespace tj = kanoko::trajectory;
  tj::Metadata meta;
  const int hosts = (ranks + per_host - 1) / per_host;
  const int side = static_cast<int>(std::ceil(std::cbrt(static_cast<double>(hosts))));
  Eigen::Matrix3Xd base(3, ranks);
  for (int r = 0; r < ranks; ++r) {
    tj::BodyInfo b;
    b.name = "rank-" + std::to_string(r);
    const int h = r / per_host;
    b.host = "host-" + std::to_string(h);
    b.rank = r;
    const float hue = static_cast<float>(h % 7) / 7.0F;
    b.colour_rgb = {0.3F + 0.7F * hue, 0.9F - 0.6F * hue, 0.5F};
    b.radius = 0.12F;
    meta.bodies.push_back(std::move(b));
    // Hosts on a lattice 4 apart, their ranks on a small sphere around the lattice point.
    const Eigen::Vector3d centre(4.0 * (h % side), 4.0 * ((h / side) % side), 4.0 * (h / (side * side)));
    const double a = 2.399963 * (r % per_host);  // golden angle
    const double z = 1.0 - 2.0 * ((r % per_host) + 0.5) / per_host;
    const double rho = std::sqrt(std::max(0.0, 1.0 - z * z));
    base.col(r) = centre + 1.2 * Eigen::Vector3d(rho * std::cos(a), rho * std::sin(a), z);
    // A halo: the next rank and the rank one host further.
    meta.edges.push_back({static_cast<std::uint32_t>(r), static_cast<std::uint32_t>((r + 1) % ranks)});
    meta.edges.push_back({static_cast<std::uint32_t>(r), static_cast<std::uint32_t>((r + per_host) % ranks)});
  }
  meta.stat_names = {tj::stat::kLoad, tj::stat::kMass, tj::stat::kBytesSent, tj::stat::kBusy};
  const int frames = 40;
  meta.dt_s = 0.01;
  meta.steps_per_frame = 10;
  meta.interval_s = 0.1;
  meta.trace_end_s = 0.1 * (frames - 1);
  meta.integrator = "rk4";
  tj::Writer writer(path, meta);
  Eigen::Matrix3Xd p(3, ranks);
  Eigen::Matrix3Xd v(3, ranks);
  Eigen::MatrixXd stats(4, ranks);
  for (int k = 0; k < frames; ++k) {
    const double t = 0.1 * k;
    for (int r = 0; r < ranks; ++r) {
      const double w = 0.5 + 0.01 * (r % 13);
      p.col(r) = base.col(r) + 0.3 * Eigen::Vector3d(std::sin(w * t + r), std::cos(w * t + r), 0.0);
      v.col(r) = 0.3 * w * Eigen::Vector3d(std::cos(w * t + r), -std::sin(w * t + r), 0.0);
      const double busy = 0.5 + 0.4 * std::sin(0.3 * t + 0.001 * r);
      stats.col(r) << busy, 1.0 + 0.1 * (r % 5), 8192.0 * (1 + r % 4), busy;
    }
    writer.append_frame(t, p, v, stats);
  }
  writer.commit();
}

/// --levels: the viewer's frame rate at rank level and at host level, same run, same window.
int levels(const Options& o, const fs::path& dir, const fs::path& kanoko, const std::string& x) {
  const fs::path runf = dir / ("levels-" + std::to_string(o.ranks) + "-" + std::to_string(o.per_host) + ".kntj");
  write_once(runf, "run: " + std::to_string(o.ranks) + " ranks in hosts of " + std::to_string(o.per_host),
             [&] { write_levels_run(runf, o.ranks, o.per_host); });
  std::ofstream(dir / "play.txt") << "wait " << o.play_s << "\nquit\n";
  std::ofstream(dir / "start.txt") << "frames 3\nquit\n";
  // On a shared machine the wall time per frame says how busy the machine is as much as what a
  // frame costs: the CPU time per frame (the viewer, llvmpipe's threads and the X server, from
  // getrusage of the finished children) is measured too, as the difference between a session
  // that plays and one that stops after 3 frames (so opening the run is not counted).
  const auto children_cpu_s = [] {
    rusage u{};
    getrusage(RUSAGE_CHILDREN, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  };
  std::map<std::string, std::map<std::string, double>> stats;
  std::map<std::string, double> cpu_ms;
  for (const std::string level : {"rank", "host"}) {
    double cpu[2] = {0, 0};
    double frames[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      const fs::path file = dir / ("stats-" + level + (k == 0 ? "-start" : "") + ".json");
      const double before = children_cpu_s();
      run(x + sh(kanoko) + " view " + sh(runf) + " --no-sound --size 1280x720 --level " + level + " --script " +
          sh(dir / (k == 0 ? "start.txt" : "play.txt")) + " --frame-stats " + sh(file) + " > " + sh(dir / "view.log") +
          " 2>&1");
      cpu[k] = children_cpu_s() - before;
      const auto v = read_stats(file);
      frames[k] = v.at("all.frames");
      if (k == 1) stats[level] = v;
    }
    cpu_ms[level] = frames[1] > frames[0] ? 1000.0 * (cpu[1] - cpu[0]) / (frames[1] - frames[0]) : 0.0;
  }
  const auto& r = stats["rank"];
  const auto& h = stats["host"];
  const auto fps = [](double ms) { return ms > 0 ? 1000.0 / ms : 0.0; };
  std::printf("\nkanoko view, %d ranks in %d hosts, 1280x720, %.0f s each:\n", o.ranks,
              (o.ranks + o.per_host - 1) / o.per_host, o.play_s);
  std::printf("%-30s %12s %12s %8s\n", "", "rank level", "host level", "ratio");
  std::printf("%-30s %12.2f %12.2f %8.2f\n", "first frame (s)", r.at("first_frame_s"), h.at("first_frame_s"),
              h.at("first_frame_s") / r.at("first_frame_s"));
  std::printf("%-30s %12.1f %12.1f %8.2f\n", "median frame (ms)", r.at("all.median_ms"), h.at("all.median_ms"),
              h.at("all.median_ms") / r.at("all.median_ms"));
  std::printf("%-30s %12.1f %12.1f %8.2f\n", "p99 frame (ms)", r.at("all.p99_ms"), h.at("all.p99_ms"),
              h.at("all.p99_ms") / r.at("all.p99_ms"));
  std::printf("%-30s %12.1f %12.1f %8.2f\n", "frames per second (median)", fps(r.at("all.median_ms")),
              fps(h.at("all.median_ms")), fps(h.at("all.median_ms")) / fps(r.at("all.median_ms")));
  std::printf("%-30s %12.1f %12.1f %8.2f\n", "CPU per frame (ms)", cpu_ms["rank"], cpu_ms["host"],
              cpu_ms["host"] / cpu_ms["rank"]);
  std::printf("%-30s %12.1f %12.1f %8.2f\n", "fps if the CPU were free", fps(cpu_ms["rank"]), fps(cpu_ms["host"]),
              fps(cpu_ms["host"]) / fps(cpu_ms["rank"]));
  std::printf("\ntarget: >= 30 fps at host level: %s (measured), %s (CPU time per frame)\n",
              fps(h.at("all.median_ms")) >= 30 ? "met" : "NOT met", fps(cpu_ms["host"]) >= 30 ? "met" : "NOT met");
  return 0;
}

/// --watch: time to the first frame of `kanoko view TRACE` while it simulates.
int watch(const Options& o, const fs::path& dir, const fs::path& kanoko, const std::string& x) {
  const fs::path trace = dir / ("halo-" + std::to_string(o.ranks) + "-" + std::to_string(o.messages) + ".kntr");
  write_once(trace, "trace: " + std::to_string(o.ranks) + " ranks, ~" + std::to_string(o.messages) + " messages",
             [&] { write_trace(trace, o.ranks, o.messages); });
  // Baseline from the same run: reading the trace alone (the reader and the summary, no model),
  // timed just before each session (on a shared machine the speed changes within minutes).
  const auto info = [&] {
    const double s = run(sh(kanoko) + " info " + sh(trace) + " > /dev/null 2>&1");
    std::printf("kanoko info (read the trace): %.2f s, %.0f MB/s\n", s, static_cast<double>(fs::file_size(trace)) / 1e6 / s);
    return s;
  };
  if (!x.empty()) {
    std::fprintf(stderr, "bench_viewer: --watch needs a display (run it under xvfb-run -a -s '-screen 0 1280x720x24')\n");
    return 2;
  }
  std::ofstream(dir / "watch.txt") << "wait-run 0\nwait " << o.play_s << "\nquit\n";
  // Mesa keeps the shaders llvmpipe compiles in a cache of its own (~/.cache/mesa_shader_cache),
  // so a user who has opened Kanoko before does not wait for LLVM to compile them again. The
  // session runs twice: first with that cache empty (the first use on a machine), then with it as
  // the first session left it (every later one). Kanoko's own cache is emptied before each, so
  // the trace is read, the model built and the run simulated both times.
  const fs::path shaders = dir / "mesa-shader-cache";
  fs::remove_all(shaders);
  const auto session = [&](const std::string& name) -> std::optional<std::map<std::string, double>> {
    const fs::path cache = dir / "cache";
    fs::remove_all(cache);  // nothing reused: read, build, simulate
    const fs::path stats = dir / ("stats-" + name + ".json");
    fs::remove(stats);
    const fs::path log = dir / (name + ".log");
    const std::string view = "XDG_CACHE_HOME=" + sh(cache) + " MESA_SHADER_CACHE_DIR=" + sh(shaders) + " " +
                             sh(kanoko) + " view " + sh(trace) +
                             (o.mapping.empty() ? std::string() : " --mapping " + sh(o.mapping)) +
                             " --no-sound --size 1280x720 --script " + sh(dir / "watch.txt") + " --frame-stats " +
                             sh(stats) + " > " + sh(log) + " 2>&1";
    // The statistics are written when the window closes; then the simulation would go on.
    run(view + " & pid=$!; while kill -0 $pid 2>/dev/null && [ ! -f " + sh(stats) +
        " ]; do sleep 0.2; done; kill -INT $pid 2>/dev/null; wait $pid; true");
    if (!fs::exists(stats)) {
      std::fprintf(stderr, "bench_viewer: the viewer wrote no statistics; see %s\n", log.string().c_str());
      return std::nullopt;
    }
    return read_stats(stats);
  };
  const double info_cold_s = info();
  const auto cold = session("watch-cold");
  if (!cold) return 1;
  const double info_s = info();
  const auto warm = session("watch");
  if (!warm) return 1;
  const auto& v = *warm;
  std::printf("\nkanoko view TRACE (%s mapping), seconds from the command's start:\n",
              o.mapping.empty() ? "inferred" : "given");
  std::printf("  %-52s %8s %8s\n", "", "cold", "warm");
  const auto both = [&](const char* label, const std::string& key) {
    std::printf("  %-52s %8.2f %8.2f\n", label, cold->at(key), v.at(key));
  };
  both("trace read, model built (simulation starts writing)", "simulation.writing_s");
  both("first block of frames integrated and on disk", "simulation.first_frames_s");
  both("first frame drawn", "first_frame_s");
  std::printf("  %-52s %8.2f %8.2f\n", "  of which after the first frames were there",
              cold->at("first_frame_s") - cold->at("simulation.first_frames_s"),
              v.at("first_frame_s") - v.at("simulation.first_frames_s"));
  std::printf("  %-52s %8.2f %8.2f\n", "kanoko info, just before the session", info_cold_s, info_s);
  std::printf("  %-52s %8.2f %8.2f\n", "ratio: first frame drawn / kanoko info", cold->at("first_frame_s") / info_cold_s,
              v.at("first_frame_s") / info_s);
  both("median frame while simulating (ms)", "all.median_ms");
  both("p99 frame while simulating (ms)", "all.p99_ms");
  std::printf("  (cold: Mesa's shader cache empty, the first use on a machine; warm: as the first session left it)\n");
  std::printf("BENCH bench=viewer case=watch ranks=%d mb=%.6g info_s=%.6g writing_s=%.6g first_frames_s=%.6g "
              "first_frame_s=%.6g first_frame_cold_s=%.6g info_cold_s=%.6g\n",
              o.ranks, static_cast<double>(fs::file_size(trace)) / 1e6, info_s, v.at("simulation.writing_s"),
              v.at("simulation.first_frames_s"), v.at("first_frame_s"), cold->at("first_frame_s"), info_cold_s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::vector<std::string> given;  // --ranks, --messages, --play: else --watch has its own defaults
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_viewer: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--ranks") {
      given.push_back(a);
      o.ranks = std::max(4, std::atoi(next().c_str()));
    } else if (a == "--messages") {
      given.push_back(a);
      o.messages = std::max(1000L, std::atol(next().c_str()));
    } else if (a == "--play") {
      given.push_back(a);
      o.play_s = std::max(2.0, std::atof(next().c_str()));
    } else if (a == "--keep") {
      o.keep = next();
    } else if (a == "--watch") {
      o.watch = true;
    } else if (a == "--levels") {
      o.levels = true;
    } else if (a == "--per-host") {
      o.per_host = std::max(1, std::atoi(next().c_str()));
    } else if (a == "--mapping") {
      o.mapping = fs::absolute(next());
    } else {
      std::printf("usage: kanoko_bench_viewer [--ranks N] [--messages M] [--play SECONDS] [--keep DIR]\n"
                  "       kanoko_bench_viewer --watch [--ranks N] [--messages M] [--mapping MAP] [--keep DIR]\n"
                  "       kanoko_bench_viewer --levels [--ranks N] [--per-host K] [--play SECONDS] [--keep DIR]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  const auto was_given = [&given](const char* option) { return std::find(given.begin(), given.end(), option) != given.end(); };
  if (o.watch) {
    if (!was_given("--ranks")) o.ranks = 10000;
    if (!was_given("--messages")) o.messages = 14'000'000;
    if (!was_given("--play")) o.play_s = 3;
  }
  if (o.levels) {
    if (!was_given("--ranks")) o.ranks = 100000;
    if (!was_given("--play")) o.play_s = 10;
  }
  const fs::path dir = o.keep.empty() ? fs::temp_directory_path() / ("kanoko-bench-viewer-" + std::to_string(::getpid())) : o.keep;
  fs::create_directories(dir);
  const fs::path kanoko = KANOKO_BENCH_BINARY;
  const std::string x = std::getenv("DISPLAY") != nullptr ? "" : "xvfb-run -a -s '-screen 0 1280x720x24 -noreset' ";
  std::ifstream cpu("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpu, line) && line.rfind("model name", 0) != 0) {
  }
  std::printf("CPU: %s (%u threads)\n", line.substr(line.find(':') + 2).c_str(), std::max(1U, static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN))));

  if (o.levels) {
    const int rc = levels(o, dir, kanoko, x);
    if (o.keep.empty()) fs::remove_all(dir);
    return rc;
  }
  if (o.watch) {
    const int rc = watch(o, dir, kanoko, x);
    if (o.keep.empty()) fs::remove_all(dir);
    return rc;
  }
  // With --keep, a run made earlier with the same sizes is reused.
  const std::string stem = "halo-" + std::to_string(o.ranks) + "-" + std::to_string(o.messages);
  const fs::path trace = dir / (stem + ".kntr");
  const fs::path runf = dir / (stem + ".kntj");
  if (!o.keep.empty() && fs::exists(trace) && fs::exists(runf)) {
    std::printf("reusing %s and %s\n", trace.string().c_str(), runf.string().c_str());
  } else {
    const auto tw = std::chrono::steady_clock::now();
    write_trace(trace, o.ranks, o.messages);
    std::printf("trace: %d ranks, ~%ld messages, %.1f MB, written in %.1f s\n", o.ranks, o.messages,
                static_cast<double>(fs::file_size(trace)) / 1e6,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - tw).count());
    const double sim_s = run(sh(kanoko) + " simulate " + sh(trace) + " -o " + sh(runf) + " > " +
                             sh(dir / "simulate.log") + " 2>&1");
    std::printf("simulate: %.1f s\n", sim_s);
  }
  const double plot_s = run(sh(kanoko) + " plot spacetime " + sh(runf) + " --size 1280x360 -o " +
                            sh(dir / "spacetime.png") + " > /dev/null 2>&1");
  std::printf("plot spacetime 1280x360 (index + draw, one process): %.2f s\n", plot_s);

  std::ofstream(dir / "play.txt") << "wait " << o.play_s << "\nquit\n";
  std::map<std::string, std::map<std::string, double>> stats;
  for (const std::string views : {"", "spacetime,matrix,kiviat,utilisation,summary"}) {
    const std::string name = views.empty() ? "no views" : "every view";
    const fs::path file = dir / (views.empty() ? "stats-none.json" : "stats-all.json");
    run(x + sh(kanoko) + " view " + sh(runf) + " --no-sound --size 1280x720 --script " +
        sh(dir / "play.txt") + " --frame-stats " + sh(file) + (views.empty() ? "" : " --views " + views) +
        " > " + sh(dir / "view.log") + " 2>&1");
    stats[name] = read_stats(file);
  }
  const auto& b = stats["no views"];
  const auto& v = stats["every view"];
  const auto ratio = [](double a, double base) { return base > 0 ? a / base : 0.0; };
  std::printf("\n%-34s %12s %12s %8s\n", "", "no views", "every view", "ratio");
  std::printf("%-34s %12.2f %12.2f %8.2f\n", "first frame (s)", b.at("first_frame_s"), v.at("first_frame_s"),
              ratio(v.at("first_frame_s"), b.at("first_frame_s")));
  std::printf("%-34s %12s %12.2f\n", "views ready (s)", "-", v.at("views_ready_s"));
  std::printf("%-34s %12s %12.0f\n", "frames while indexing", "-", v.at("while_indexing.frames"));
  std::printf("%-34s %12.1f %12.1f %8.2f\n", "median frame (ms), whole session", b.at("all.median_ms"),
              v.at("all.median_ms"), ratio(v.at("all.median_ms"), b.at("all.median_ms")));
  std::printf("%-34s %12s %12.1f %8.2f\n", "p99 frame (ms) while indexing", "-", v.at("while_indexing.p99_ms"),
              ratio(v.at("while_indexing.p99_ms"), b.at("all.p99_ms")));
  std::printf("%-34s %12.1f %12.1f %8.2f\n", "p99 frame (ms), whole session", b.at("all.p99_ms"), v.at("all.p99_ms"),
              ratio(v.at("all.p99_ms"), b.at("all.p99_ms")));
  std::printf("%-34s %12.1f %12.1f\n", "max frame (ms)", b.at("all.max_ms"), v.at("all.max_ms"));
  std::printf("%-34s %12.0f %12.0f\n", "frames over 100 ms (clock capped)", b.at("capped_frames"), v.at("capped_frames"));
  std::printf("\ntargets: first frame <= 2 s: %s; p99 while indexing <= 100 ms: %s\n",
              v.at("first_frame_s") <= 2.0 ? "met" : "NOT met",
              v.at("while_indexing.p99_ms") <= 100.0 ? "met" : "NOT met");
  if (o.keep.empty()) fs::remove_all(dir);
  return 0;
}
