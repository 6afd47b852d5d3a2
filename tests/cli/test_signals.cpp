// Signals to a running `kanoko simulate` on a large model (issue 17 point 5): each handled signal
// stops the run within 2 s, mid-step, with exit 128 + its number and nothing left in the output
// folder; temporaries of dead processes are removed by the next run, those of live ones kept.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/support/test_support.hpp"

namespace kanoko::test {
namespace KANOKO_UNITY_ID {

using Clock = std::chrono::steady_clock;

/// 200k bodies under Barnes–Hut repulsion (the example mapping for many processes): one RK4 step
/// takes over a second on the 2 shared cores, so a check every step or every 256 steps would leave
/// the signal waiting.
constexpr int kBigBodies = 200'000;

/// A native trace of `nodes` nodes, a few messages, lasting 1 s (100 steps, 10 intervals: the timeline stays small).
std::string big_trace(int nodes) {
  std::string t = "kntr 1\n";
  t.reserve(static_cast<std::size_t>(nodes) * 16);
  for (int i = 0; i < nodes; ++i) t += "node 0 " + std::to_string(i) + "\n";
  for (int i = 0; i < 100; ++i) t += "msg 0.05 " + std::to_string(i) + " " + std::to_string(i + 1) + " 100\n";
  t += "end 1\n";
  return t;
}

/// The example mapping for many processes (Barnes–Hut above 2048 bodies).
std::string big_mapping() { return (source_dir() / "mappings" / "all-to-all-many.toml").string(); }

/// A `kanoko simulate` of the big model writing into `dir`, stdout and stderr to `err_fd`.
pid_t start_simulate(const TempDir& dir, int err_fd) {
  write_text(dir / "t.kntr", big_trace(kBigBodies));
  const std::string binary = kanoko_binary();
  const std::string trace = (dir / "t.kntr").string(), mapping = big_mapping(), out = (dir / "r.kntj").string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(err_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    ::execl(binary.c_str(), binary.c_str(), "simulate", trace.c_str(), "-m", mapping.c_str(), "-o", out.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

/// Reads one line of `fd` (without its newline); false at the end or after a minute's silence.
bool read_line(int fd, std::string& line) {
  line.clear();
  for (char c = 0;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 60'000) != 1 || ::read(fd, &c, 1) != 1) return false;
    if (c == '\n') return true;
    line += c;
  }
}

/// Waits until the run has finished its first step: the progress bar ("simulate [", stderr, read
/// from `err_fd`) appears after it, the model being big enough for a step to outlast half a
/// second; the estimate line before it comes before any work. The next check of the old loop was
/// 255 steps later.
void wait_until_integrating(int err_fd) {
  std::string line;
  do {
    ASSERT_TRUE(read_line(err_fd, line)) << "the simulation ended without a progress bar (last line: " << line << ")";
  } while (line.rfind("simulate [", 0) != 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
}

/// How a process ended and how long after `since` (it is killed after `limit`).
struct Ending {
  int status = 0;
  double seconds = 0;
};

Ending wait_for_exit(pid_t pid, Clock::time_point since, std::chrono::seconds limit = std::chrono::seconds(10)) {
  Ending e;
  while (::waitpid(pid, &e.status, WNOHANG) == 0) {
    if (Clock::now() - since > limit) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &e.status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  e.seconds = std::chrono::duration<double>(Clock::now() - since).count();
  return e;
}

/// Sends `sig` to a running simulation of the big model and checks the ending.
void expect_signal_stops_run(int sig) {
  TempDir dir;
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  const pid_t pid = start_simulate(dir, fds[1]);
  ::close(fds[1]);
  wait_until_integrating(fds[0]);
  const auto sent = Clock::now();
  ::kill(pid, sig);
  const Ending e = wait_for_exit(pid, sent);
  ::close(fds[0]);
  ASSERT_TRUE(WIFEXITED(e.status)) << "killed by signal " << (WIFSIGNALED(e.status) ? WTERMSIG(e.status) : 0)
                                   << (WCOREDUMP(e.status) ? " (core dumped)" : "");
  EXPECT_EQ(WEXITSTATUS(e.status), 128 + sig);
  EXPECT_LT(e.seconds, 2.0) << "the run took this long to stop";
  EXPECT_EQ(list_dir(dir.path()), (std::vector<std::string>{"t.kntr"}));
}

TEST(Signals, InterruptExits130) { expect_signal_stops_run(SIGINT); }
TEST(Signals, TerminateExits143) { expect_signal_stops_run(SIGTERM); }
TEST(Signals, HangupExits129) { expect_signal_stops_run(SIGHUP); }
TEST(Signals, QuitExits131WithoutCore) { expect_signal_stops_run(SIGQUIT); }
TEST(Signals, BrokenPipeSignalExits141) { expect_signal_stops_run(SIGPIPE); }

TEST(Signals, ClosedPipeOnStderrStopsTheRun) {
  // `kanoko simulate … 2>&1 | head -c1`: the reader goes away after the first byte of the progress
  // report; the next report raises SIGPIPE and fails with EPIPE; the run stops without looping on
  // the failing writes. Three bodies and 3 million steps (dt = 10 µs over 30 s) so that the
  // progress lines (one per tenth of the run) come every fraction of a second.
  TempDir dir;
  std::string mapping = read_text(big_mapping());
  mapping.replace(mapping.find("dt = 0.01"), 9, "dt = 1e-5");
  mapping.replace(mapping.find("frame_every = 4"), 15, "frame_every = 1000");
  write_text(dir / "m.toml", mapping);
  write_text(dir / "t.kntr", "kntr 1\nnode 0 0\nnode 0 1\nnode 0 2\nmsg 0.05 0 1 100\nend 30\n");
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  const std::string binary = kanoko_binary();
  const std::string trace = (dir / "t.kntr").string(), map = (dir / "m.toml").string(), out = (dir / "r.kntj").string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::execl(binary.c_str(), binary.c_str(), "simulate", trace.c_str(), "-m", map.c_str(), "-o", out.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  char first = 0;
  ASSERT_EQ(::read(fds[0], &first, 1), 1) << "the simulation printed nothing";
  ::close(fds[0]);  // head -c1 exits
  // The next progress line comes a tenth of the run later (a few seconds in a release build) or
  // 30 s after the first (under AddressSanitizer on a loaded machine a tenth of this run is half
  // an hour). What is checked is that the run ends by SIGPIPE and leaves nothing, not how fast (the
  // tests above time that).
  const Ending e = wait_for_exit(pid, Clock::now(), std::chrono::seconds(300));
  ASSERT_TRUE(WIFEXITED(e.status)) << "killed by signal " << (WIFSIGNALED(e.status) ? WTERMSIG(e.status) : 0);
  EXPECT_EQ(WEXITSTATUS(e.status), 128 + SIGPIPE) << "after " << e.seconds << " s";
  EXPECT_EQ(list_dir(dir.path()), (std::vector<std::string>{"m.toml", "t.kntr"}));
}

const char* kSmallTrace = R"(kntr 1
node 0 0
node 0 1
msg 0.05 0 1 100
end 0.3
)";

/// The pid of a process that has ended (and been reaped).
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

TEST(Signals, StaleTemporaryOfADeadRunIsRemoved) {
  TempDir dir;
  write_text(dir / "t.kntr", kSmallTrace);
  const std::string dead = std::to_string(dead_pid());
  const std::string live = std::to_string(::getpid());  // this test is alive
  for (const std::string& name : {"r.kntj.tmp-" + dead, "r.kntj.tmp-" + dead + "-2", "r.kntj.tmp-" + live,
                                  "other.kntj.tmp-" + dead, "r.kntj.tmp-x" + dead}) {
    write_text(dir / name, "partial");
  }
  const auto r = run_kanoko({"simulate", (dir / "t.kntr").string(), "-m", big_mapping(), "-o", (dir / "r.kntj").string(),
                             "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("removed " + (dir / ("r.kntj.tmp-" + dead)).string() + ", left by process " + dead),
            std::string::npos)
      << r.err;
  EXPECT_EQ(list_dir(dir.path()), (std::vector<std::string>{"other.kntj.tmp-" + dead, "r.kntj",
                                                            "r.kntj.tmp-" + live, "r.kntj.tmp-x" + dead, "t.kntr"}));
}

}  // namespace
}  // namespace kanoko::test
