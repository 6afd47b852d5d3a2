// Overhead of libkanoko-capture per MPI call, by call-path depth (issue 19, docs/capture.md "Call
// sites"): runs bench_capture_calls (a cheap wrapped call, MPI_Test on a null request, from three
// nested functions) on one rank without the library, then with it at call-path depth 0, 1 and 4,
// in interleaved rounds, and prints the median ns per call and the ratio to depth 0.
//   build/bench/kanoko_bench_capture [--rounds 5] [--calls 200000]
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

/// Runs argv, returns its standard output ("" on failure).
std::string run(const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    const int null = ::open("/dev/null", O_WRONLY);  // the library's end-of-run lines
    if (null >= 0) ::dup2(null, 2);
    ::close(fds[0]);
    ::close(fds[1]);
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    ::execvp(a[0], a.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  std::array<char, 4096> buf{};
  for (ssize_t n = 0; (n = ::read(fds[0], buf.data(), buf.size())) > 0;) out.append(buf.data(), static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? out : std::string();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  std::string calls = "200000";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--calls") == 0) calls = argv[i + 1];
  }
  if (rounds < 1) {
    std::fprintf(stderr, "usage: kanoko_bench_capture [--rounds N>0] [--calls N]\n");
    return 2;
  }
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("kanoko-bench-capture-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string load_before;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    char line[64] = "";
    if (std::fgets(line, sizeof line, f) != nullptr) load_before = std::string(line).substr(0, std::string(line).find(' '));
    std::fclose(f);
  }
  const std::vector<std::string> configs = {"none", "0", "1", "4"};
  std::vector<std::vector<double>> ns(configs.size());
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t c = 0; c < configs.size(); ++c) {
      std::vector<std::string> cmd = {KANOKO_MPIRUN, "--oversubscribe", "--allow-run-as-root", "-np", "1"};
      if (configs[c] != "none") {
        for (const std::string& e : {std::string("LD_PRELOAD=" KANOKO_CAPTURE_LIBRARY_PATH), "KANOKO_CAPTURE_CALL_PATH_DEPTH=" + configs[c],
                                     "KANOKO_CAPTURE_OUTPUT=" + (dir / "bench.kntr").string(),
                                     std::string("KANOKO_CAPTURE_MERGE=0")}) {
          cmd.emplace_back("-x");
          cmd.push_back(e);
        }
      }
      for (const std::string& a : {std::string(KANOKO_BENCH_CALLS), std::string("--calls"), calls}) cmd.push_back(a);
      const std::string out = run(cmd);
      const auto at = out.find("ns_per_call=");
      if (at == std::string::npos) {
        std::fprintf(stderr, "kanoko_bench_capture: %s failed\n", configs[c].c_str());
        std::filesystem::remove_all(dir);
        return 1;
      }
      ns[c].push_back(std::strtod(out.c_str() + at + 12, nullptr));
    }
  }
  std::filesystem::remove_all(dir);
  const double base = median(ns[1]);
  std::string cpu = "unknown CPU";
  if (FILE* f = std::fopen("/proc/cpuinfo", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f) != nullptr) {
      if (std::strncmp(line, "model name", 10) == 0 && std::strchr(line, ':') != nullptr) {
        cpu = std::strchr(line, ':') + 2;
        cpu.erase(cpu.find_last_not_of("\n") + 1);
        break;
      }
    }
    std::fclose(f);
  }
  std::printf("MPI_Test(MPI_REQUEST_NULL) on 1 rank, %s calls, median of %d rounds; %s, load average before: %s\n",
              calls.c_str(), rounds, cpu.c_str(), load_before.c_str());
  std::printf("%-28s %12s %14s\n", "configuration", "ns/call", "ratio to d=0");
  for (std::size_t c = 0; c < configs.size(); ++c) {
    const std::string name = configs[c] == "none" ? "no capture" : "capture, call-path depth " + configs[c];
    std::printf("%-28s %12.1f %14.2f\n", name.c_str(), median(ns[c]), median(ns[c]) / base);
  }
  return 0;
}
