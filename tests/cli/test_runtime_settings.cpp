// Settings the runtime reads at a process's start (src/cli/main.cpp, choose_runtime_settings): a
// short OpenMP spin in the commands that evaluate forces, and huge pages for malloc where the
// kernel gives them only on request. The user's own choice wins.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/test_support.hpp"

namespace kanoko {
namespace KANOKO_UNITY_ID {

using test::kanoko_binary;
using test::run_program;

/// What libgomp reports it read at its start (OMP_DISPLAY_ENV prints its settings to stderr).
std::string runtime_settings(const std::string& environment) {
  return run_program({"/usr/bin/env", "OMP_DISPLAY_ENV=verbose", environment, kanoko_binary(), "simulate", "--help"}).err;
}

TEST(OmpWaitPolicy, ThreadsSpinBrieflyThenSleep) {
  const std::string settings = runtime_settings("KANOKO_UNRELATED=1");
  EXPECT_NE(settings.find("GOMP_SPINCOUNT = '10000'"), std::string::npos) << settings;
}

TEST(OmpWaitPolicy, TheUsersChoiceWins) {
  std::string settings = runtime_settings("GOMP_SPINCOUNT=1234");
  EXPECT_NE(settings.find("GOMP_SPINCOUNT = '1234'"), std::string::npos) << settings;
  settings = runtime_settings("OMP_WAIT_POLICY=active");
  EXPECT_NE(settings.find("OMP_WAIT_POLICY = 'ACTIVE'"), std::string::npos) << settings;
  EXPECT_EQ(settings.find("GOMP_SPINCOUNT = '10000'"), std::string::npos) << settings;
}

bool kernel_gives_huge_pages_on_request() {
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  return std::getline(mode, line) && line.find("[madvise]") != std::string::npos;
}

/// The environment `kanoko info` runs its work with, given `environment` (NAME=VALUE) at its
/// start: /proc/PID/environ holds the environment of the process's last start, read while the
/// command waits on a named pipe for its trace, past any start again.
std::string working_environment(const std::string& environment) {
  test::TempDir dir;
  const auto fifo = dir / "trace";
  if (::mkfifo(fifo.c_str(), 0600) != 0) throw std::runtime_error("mkfifo failed");
  const int pid = test::start_program({"/usr/bin/env", environment, kanoko_binary(), "info", fifo.string()},
                                      dir / "out", dir / "err");
  // Open for reading and writing: never blocks, and lets the command's open return.
  const int hold = ::open(fifo.c_str(), O_RDWR);
  std::string found;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && found.empty()) {
    // The command has the pipe open: it is past its start (its last one).
    std::error_code ec;
    for (const auto& fd : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
      std::error_code link_ec;
      if (std::filesystem::read_symlink(fd.path(), link_ec) == fifo) {
        std::string all = test::read_text("/proc/" + std::to_string(pid) + "/environ");
        for (char& c : all) c = c == '\0' ? '\n' : c;
        found = "\n" + all;
        break;
      }
    }
    if (found.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(hold);
  if (found.empty()) ADD_FAILURE() << "kanoko info never opened " << fifo << ": " << test::read_text(dir / "err");
  return found;
}

/// GLIBC_TUNABLES as the process started with it, from working_environment's text. The dynamic
/// loader of Debian 12 (glibc 2.36) ends each tunable's value with a NUL in place as it reads
/// them, so that /proc/PID/environ shows every tunable after the first as an entry of its own:
/// those entries are joined again with ':'. Empty when the variable is not there.
std::string tunables_in(const std::string& env) {
  const std::string key = "\nGLIBC_TUNABLES=";
  std::size_t at = env.find(key);
  if (at == std::string::npos) return {};
  at += key.size();
  std::string out = env.substr(at, env.find('\n', at) - at);
  for (at = env.find('\n', at); at != std::string::npos && env.compare(at + 1, 6, "glibc.") == 0;
       at = env.find('\n', at + 1)) {
    out += ":" + env.substr(at + 1, env.find('\n', at + 1) - at - 1);
  }
  return out;
}

TEST(HugePages, MallocAsksForThemWhereTheKernelWantsToBeAsked) {
  const std::string env = working_environment("KANOKO_UNRELATED=1");
  if (kernel_gives_huge_pages_on_request()) {
    EXPECT_EQ(tunables_in(env), "glibc.malloc.hugetlb=1") << env;
  } else {
    // "always" gives them to every large mapping, "never" to none: nothing to ask.
    EXPECT_EQ(env.find("GLIBC_TUNABLES"), std::string::npos) << env;
  }
}

TEST(HugePages, TheUsersTunablesAreKeptAndTheirChoiceWins) {
  std::string env = working_environment("GLIBC_TUNABLES=glibc.malloc.arena_max=2");
  if (kernel_gives_huge_pages_on_request()) {
    EXPECT_EQ(tunables_in(env), "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1") << env;
  } else {
    EXPECT_EQ(tunables_in(env), "glibc.malloc.arena_max=2") << env;
  }
  env = working_environment("GLIBC_TUNABLES=glibc.malloc.hugetlb=0");
  EXPECT_EQ(tunables_in(env), "glibc.malloc.hugetlb=0") << env;
  EXPECT_EQ(env.find("KANOKO_RUNTIME_CHOSEN"), std::string::npos) << env;  // not started again
}

}  // namespace
}  // namespace kanoko
