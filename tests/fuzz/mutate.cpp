// The mutation harness's pieces: mutators, the bounded run of one command, the classification.
#include "tests/fuzz/mutate.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

#include "tests/trace/mutation.hpp"

namespace fs = std::filesystem;

namespace kanoko::fuzz {

std::string_view outcome_name(Outcome o) {
  static constexpr std::array<std::string_view, kOutcomeCount> kNames = {
      "ok", "located", "whole-file", "unlocated", "crash", "hang", "runaway", "leftover"};
  return kNames[static_cast<std::size_t>(o)];
}

bool is_failure(Outcome o, bool strict) { return o >= Outcome::crash || (strict && o == Outcome::unlocated); }

namespace {

/// [begin, end) of every line of `s` (the newline included).
std::vector<std::pair<std::size_t, std::size_t>> lines_of(const std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t b = 0;
  while (b < s.size()) {
    const std::size_t nl = s.find('\n', b);
    const std::size_t e = nl == std::string::npos ? s.size() : nl + 1;
    out.emplace_back(b, e);
    b = e;
  }
  return out;
}

/// [begin, end) of every number (a digit run with its dots) of `s`.
std::vector<std::pair<std::size_t, std::size_t>> numbers_of(const std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t i = 0; i < s.size();) {
    if (std::isdigit(static_cast<unsigned char>(s[i])) == 0) {
      ++i;
      continue;
    }
    std::size_t e = i;
    while (e < s.size() && (std::isdigit(static_cast<unsigned char>(s[e])) != 0 || s[e] == '.')) ++e;
    out.emplace_back(i, e);
    i = e;
  }
  return out;
}

template <class T>
const T& pick(const std::vector<T>& v, std::mt19937_64& rng) {
  return v[rng() % v.size()];
}

}  // namespace

std::string mutate(std::string s, std::mt19937_64& rng) {
  static const std::vector<std::string> kTokens = {"0", "-1", "1e308", "nan", "inf", "\n", " ", "\"", "[", "]", "{", "}",
                                                   ",", ":", "=", "#", "%", "\t", "\\", "18446744073709551616", "\xff"};
  static const std::vector<std::string> kNumbers = {"1e308", "-1e308", "99999999999999999999999", "-1", "nan", "inf",
                                                    "0", "4294967296", "-9223372036854775809", "1e-320", "-0"};
  const std::uint64_t edits = 1 + rng() % 3;
  for (std::uint64_t k = 0; k < edits; ++k) {
    const auto lines = lines_of(s);
    switch (rng() % 8) {
      case 0:
      case 1: trace::testing::mutate_once(s, rng, kTokens); break;
      case 2:  // truncation
        if (!s.empty()) s.resize(rng() % s.size());
        break;
      case 3:  // a duplicated line
        if (!lines.empty()) {
          const auto [b, e] = pick(lines, rng);
          s.insert(e, s.substr(b, e - b));
        }
        break;
      case 4:  // a deleted line
        if (!lines.empty()) {
          const auto [b, e] = pick(lines, rng);
          s.erase(b, e - b);
        }
        break;
      case 5: {  // a huge, negative or non-finite number
        const auto numbers = numbers_of(s);
        if (!numbers.empty()) {
          const auto [b, e] = pick(numbers, rng);
          s.replace(b, e - b, pick(kNumbers, rng));
        }
        break;
      }
      case 6:  // a long token
        s.insert(rng() % (s.size() + 1), std::string(std::size_t{4096} << (rng() % 7), (rng() % 2) != 0 ? 'A' : '9'));
        break;
      default: {  // two numbers (timestamps) swapped between lines
        const auto numbers = numbers_of(s);
        if (numbers.size() < 2) break;
        auto a = pick(numbers, rng);
        auto b = pick(numbers, rng);
        if (a.first > b.first) std::swap(a, b);
        if (a.second > b.first) break;
        const std::string ta = s.substr(a.first, a.second - a.first);
        const std::string tb = s.substr(b.first, b.second - b.first);
        s.replace(b.first, tb.size(), ta);
        s.replace(a.first, ta.size(), tb);
        break;
      }
    }
  }
  return s;
}

namespace {

/// Every regular file under `dir`, relative to it, with the total size.
std::vector<std::string> files_under(const fs::path& dir, std::uintmax_t& bytes) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec)) continue;
    out.push_back(fs::relative(it->path(), dir, ec).string());
    const std::uintmax_t size = it->is_regular_file(ec) ? it->file_size(ec) : 0;
    if (!ec) bytes += size;
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Resident memory of process `pid` in MiB (0 when it cannot be read).
std::uint64_t resident_mb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/statm");
  std::uint64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / (1024 * 1024);
}

/// Opens `p` for writing (truncating); throws on failure.
int open_log(const fs::path& p) {
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + p.string());
  return fd;
}

std::string read_head(const fs::path& p, std::size_t max) {
  std::ifstream in(p, std::ios::binary);
  std::string s(max, '\0');
  in.read(s.data(), static_cast<std::streamsize>(max));
  s.resize(static_cast<std::size_t>(in.gcount()));
  return s;
}

}  // namespace

RunResult run_bounded(const std::vector<std::string>& argv, const fs::path& out_dir, const fs::path& tmp_dir,
                      const fs::path& log_dir, const std::vector<std::string>& expected, const Limits& limits) {
  // Everything the child needs is prepared here: between fork and exec only async-signal-safe
  // calls are allowed (the harness runs several workers in threads).
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).starts_with("TMPDIR=")) continue;
    env_strings.emplace_back(*e);
  }
  env_strings.push_back("TMPDIR=" + tmp_dir.string());
  std::vector<char*> env;
  for (auto& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);
  const int out_fd = open_log(log_dir / "stdout");
  const int err_fd = open_log(log_dir / "stderr");
  const std::string cwd = out_dir.string();
  const rlim_t output_bytes = static_cast<rlim_t>(limits.output_mb) * 1024 * 1024;
  const rlim_t memory_bytes = static_cast<rlim_t>(limits.memory_mb) * 1024 * 1024;

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::setpgid(0, 0);
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    const rlimit fsize{output_bytes, output_bytes};
    ::setrlimit(RLIMIT_FSIZE, &fsize);
    const rlimit core{0, 0};
    ::setrlimit(RLIMIT_CORE, &core);
    if (limits.address_space && limits.memory_mb > 0) {
      const rlimit as{memory_bytes, memory_bytes};
      ::setrlimit(RLIMIT_AS, &as);
    }
    ::execve(args[0], args.data(), env.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(out_fd);
  ::close(err_fd);

  RunResult r;
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool too_long = elapsed > limits.timeout_s;
    const bool too_big = limits.memory_mb > 0 && resident_mb(pid) > limits.memory_mb;
    if (too_long || too_big) {
      r.timed_out = too_long;
      r.memory_exceeded = !too_long;
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(-pid, SIGKILL);  // anything the run started and left behind
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.err = read_head(log_dir / "stderr", 64 * 1024);

  std::error_code ec;
  r.output_bytes = fs::file_size(log_dir / "stdout", ec) + fs::file_size(log_dir / "stderr", ec);
  const bool success = r.exit_code == 0;
  for (const auto& f : files_under(out_dir, r.output_bytes)) {
    if (!success || std::find(expected.begin(), expected.end(), f) == expected.end()) r.leftovers.push_back("out/" + f);
  }
  std::uintmax_t ignored = 0;
  for (const auto& f : files_under(tmp_dir, ignored)) r.leftovers.push_back("tmp/" + f);
  if (r.output_bytes >= output_bytes) r.output_exceeded = true;  // reaching the bound means cut short
  return r;
}

bool names_position(std::string_view line, std::string_view input) {
  static constexpr std::array<std::string_view, 12> kUnits = {"record", "byte",  "offset", "line",   "event", "frame",
                                                              "block",  "section", "action", "entry", "column", "char"};
  for (std::size_t at = line.find(input); at != std::string_view::npos; at = line.find(input, at + 1)) {
    std::size_t i = at + input.size();
    // An archive folder's member file (an OTF2 archive's traces/0.evt) belongs to it.
    while (i < line.size() && line[i] != ':' && line[i] != ' ' && line[i] != ',' && line[i] != '\'') ++i;
    std::string_view rest = line.substr(i);
    if (rest.size() >= 2 && rest[0] == ':' && std::isdigit(static_cast<unsigned char>(rest[1])) != 0) return true;
    if (rest.starts_with(": ") || rest.starts_with(", ") || rest.starts_with(" ")) {
      rest.remove_prefix(rest[0] == ' ' ? 1 : 2);
      for (const auto unit : kUnits) {
        if (!rest.starts_with(unit)) continue;
        std::string_view n = rest.substr(unit.size());
        if (n.starts_with(" ")) n.remove_prefix(1);
        if (!n.empty() && std::isdigit(static_cast<unsigned char>(n[0])) != 0) return true;
      }
    }
  }
  return false;
}

Outcome classify(const RunResult& r, const std::string& input) {
  if (r.timed_out) return Outcome::hang;
  const auto said = [&](std::string_view what) { return r.err.find(what) != std::string::npos; };
  if (r.memory_exceeded || r.output_exceeded || r.signal == SIGXFSZ || said("std::bad_alloc") ||
      said("Cannot allocate memory") || said("out of memory") || said("allocation-size-too-big") ||
      said("requested allocation size")) {
    return Outcome::runaway;
  }
  if (r.signal != 0 || r.exit_code >= 128 || said("AddressSanitizer") || said("LeakSanitizer") ||
      said("UndefinedBehaviorSanitizer") || said("runtime error: ") || said("terminate called")) {
    return Outcome::crash;
  }
  if (!r.leftovers.empty()) return Outcome::leftover;
  if (r.exit_code == 0) return Outcome::ok;
  // The error lines (`...: error: ...`; else the last line: warnings and notes come first, a
  // count of problems may follow). Located when one of them gives a position in the input.
  std::vector<std::string_view> lines, errors;
  for (std::size_t b = 0; b < r.err.size();) {
    const std::size_t e = std::min(r.err.find('\n', b), r.err.size());
    const std::string_view line = std::string_view(r.err).substr(b, e - b);
    if (!line.empty()) lines.push_back(line);
    if (line.find("error") != std::string_view::npos) errors.push_back(line);
    b = e + 1;
  }
  if (errors.empty() && !lines.empty()) errors.push_back(lines.back());
  const auto any = [&](auto&& test) { return std::any_of(errors.begin(), errors.end(), test); };
  if (any([&](std::string_view l) { return names_position(l, input); })) return Outcome::located;
  if (any([&](std::string_view l) { return l.find(input) != std::string_view::npos; })) return Outcome::whole_file;
  return Outcome::unlocated;
}

bool uses_asan(const fs::path& program) {
  std::ifstream in(program, std::ios::binary);
  constexpr std::string_view kMark = "__asan_init";
  std::string carry, chunk(1 << 20, '\0');
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    const std::string window = carry + chunk.substr(0, static_cast<std::size_t>(in.gcount()));
    if (window.find(kMark) != std::string::npos) return true;
    carry = window.substr(window.size() - std::min(window.size(), kMark.size()));
  }
  return false;
}

}  // namespace kanoko::fuzz
