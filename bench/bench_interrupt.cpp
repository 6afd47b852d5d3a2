// How fast `kanoko simulate` stops on SIGINT and SIGTERM (issue 17 point 5: within 0.5 s at any
// model size). For each body count the program writes a native trace of that many nodes (a few
// messages, 1 s long) in a temporary folder, starts the real binary on it with
// mappings/all-to-all-many.toml (Barnes–Hut repulsion, communication, friction), waits until it is
// integrating (its progress report appears after the first step, plus a delay that differs per
// repeat so that the signal lands at different points of a step), sends the signal and measures
// the time until the process has exited. It checks the exit status (128 + signal) and that nothing but the trace is left.
//
//   build/bench/kanoko_bench_interrupt                      # 100k and 1M bodies, 3 repeats
//   build/bench/kanoko_bench_interrupt --bodies 200000 --repeats 5
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

void write_inputs(const fs::path& dir, long bodies) {
  std::ofstream trace(dir / "t.kntr", std::ios::binary);
  trace << "kntr 1\n";
  for (long i = 0; i < bodies; ++i) trace << "node 0 " << i << '\n';
  for (long i = 0; i + 1 < std::min(bodies, 100L); ++i) trace << "msg 0.05 " << i << ' ' << i + 1 << " 100\n";
  trace << "end 1\n";  // 10 intervals: the timeline stays small
  if (!trace) throw std::runtime_error("cannot write the trace in " + dir.string());
}

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

struct Sample {
  double latency_s = 0;
  int exit_code = -1;  ///< -1: did not exit normally
  bool clean = false;  ///< only the inputs left
};

Sample measure(const std::string& kanoko, const fs::path& dir, int sig, double delay_s) {
  const std::string trace = (dir / "t.kntr").string(), mapping = KANOKO_BENCH_MAPPING,
                    out = (dir / "r.kntj").string();
  std::vector<std::string> args{kanoko, "simulate", trace, "-m", mapping, "-o", out};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int err[2];
  if (::pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  pid_t pid = 0;
  const int failed = posix_spawn(&pid, kanoko.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(err[1]);
  if (failed != 0) throw std::runtime_error("cannot run " + kanoko + ": " + std::strerror(failed));
  // The progress bar ("simulate [...") appears after the first step (a step of these models
  // outlasts half a second): from then on the run is in its step loop. Lines before it (the
  // estimate) come before any work.
  std::string line;
  for (char c = 0; line.rfind("simulate [", 0) != 0;) {
    line.clear();
    while (true) {
      if (::read(err[0], &c, 1) != 1) throw std::runtime_error("kanoko simulate ended without a progress report");
      if (c == '\n') break;
      line += c;
    }
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(delay_s));
  const auto sent = Clock::now();
  ::kill(pid, sig);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) std::this_thread::sleep_for(std::chrono::microseconds(500));
  ::close(err[0]);
  Sample s;
  s.latency_s = std::chrono::duration<double>(Clock::now() - sent).count();
  s.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  s.clean = entries(dir) == 1;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> sizes{100'000, 1'000'000};
  int repeats = 3;
  std::string kanoko = KANOKO_BENCH_BINARY;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--bodies") {
      sizes = {std::atol(argv[i + 1])};
    } else if (key == "--repeats") {
      repeats = std::max(1, std::atoi(argv[i + 1]));
    } else if (key == "--kanoko") {
      kanoko = argv[i + 1];
    } else {
      std::fprintf(stderr, "usage: %s [--bodies N] [--repeats R] [--kanoko PATH]\n", argv[0]);
      return 2;
    }
  }
  const fs::path dir = fs::temp_directory_path() / ("kanoko-bench-interrupt-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::printf("%-9s %-7s %-8s %-10s %-10s %s\n", "bodies", "signal", "repeats", "median s", "max s", "exit, clean");
  bool ok = true;
  for (const long n : sizes) {
    write_inputs(dir, n);
    for (const int sig : {SIGINT, SIGTERM}) {
      std::vector<double> latencies;
      std::string endings;
      for (int r = 0; r < repeats; ++r) {
        const Sample s = measure(kanoko, dir, sig, 0.1 + 0.37 * r);
        latencies.push_back(s.latency_s);
        endings += std::to_string(s.exit_code) + (s.clean ? "" : " LEFT FILES") + (r + 1 < repeats ? ", " : "");
        ok = ok && s.exit_code == 128 + sig && s.clean;
      }
      std::sort(latencies.begin(), latencies.end());
      std::printf("%-9ld %-7s %-8d %-10.3f %-10.3f %s\n", n, sig == SIGINT ? "SIGINT" : "SIGTERM", repeats,
                  latencies[latencies.size() / 2], latencies.back(), endings.c_str());
      std::fflush(stdout);
    }
  }
  fs::remove_all(dir);
  return ok ? 0 : 1;
}
