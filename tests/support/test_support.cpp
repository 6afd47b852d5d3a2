#include "tests/support/test_support.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace kanoko::test {

TempDir::TempDir() {
  std::random_device rd;
  const auto base = std::filesystem::temp_directory_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto candidate = base / ("kanoko-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    if (std::filesystem::create_directory(candidate)) {
      path_ = candidate;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary folder");
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}


int start_program(const std::vector<std::string>& argv, const std::filesystem::path& out_path,
                  const std::filesystem::path& err_path) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int in = ::open("/dev/null", O_RDONLY);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::dup2(in, 0);
    std::vector<char*> cargv;
    cargv.reserve(argv.size() + 1);
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    ::execvp(cargv[0], cargv.data());
    ::_exit(127);
  }
  return pid;
}

CommandResult run_program(const std::vector<std::string>& argv) {
  // Output goes to temporary files so that large outputs cannot dead-lock on pipe buffers.
  TempDir dir;
  const auto out_path = dir / "stdout";
  const auto err_path = dir / "stderr";
  const pid_t pid = start_program(argv, out_path, err_path);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_text(out_path);
  r.err = read_text(err_path);
  return r;
}

CommandResult run_kanoko(const std::vector<std::string>& args) {
  std::vector<std::string> argv{kanoko_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv);
}

CommandResult run_kanoko_with_file_limit(int blocks, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"sh", "-c", "ulimit -f " + std::to_string(blocks) + " && exec \"$0\" \"$@\"",
                                kanoko_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv);
}

namespace {
std::string env_or(const char* name, const char* fallback) {
  const char* s = std::getenv(name);
  return s != nullptr ? s : fallback;
}
}  // namespace

std::string kanoko_binary() { return env_or("KANOKO_BINARY", KANOKO_TEST_BINARY); }
std::filesystem::path source_dir() { return env_or("KANOKO_SOURCE_DIR", KANOKO_TEST_SOURCE_DIR); }
std::filesystem::path shared_dir() { return env_or("KANOKO_SHARED_DIR", KANOKO_TEST_SHARED_DIR); }

void write_text(const std::filesystem::path& p, const std::string& content) {
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return std::move(ss).str();
}

long long line_with(const std::filesystem::path& file, const std::string& marker) {
  std::ifstream in(file);
  std::string text;
  for (long long n = 1; std::getline(in, text); ++n) {
    if (text.find(marker) != std::string::npos) return n;
  }
  ADD_FAILURE() << "no " << marker << " in " << file;
  return -1;
}

std::vector<std::string> list_dir(const std::filesystem::path& p) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(p)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace kanoko::test
