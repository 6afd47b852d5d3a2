#include "src/base/interrupt.hpp"

#include <semaphore.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <mutex>
#include <thread>

namespace kanoko {
namespace {

/// How many signals arrived (repeated SIGPIPEs count once), and the first one's number.
std::atomic<int> g_signal_count{0};
std::atomic<int> g_first_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

/// The signals that stop the work.
constexpr std::array<int, 5> kHandled = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};

// A fixed table of C strings so that the signal handler can unlink without allocating.
constexpr std::size_t kMaxTemporaries = 16;
constexpr std::size_t kMaxPath = 4096;
std::array<std::array<char, kMaxPath>, kMaxTemporaries> g_temporaries{};
std::array<std::atomic<bool>, kMaxTemporaries> g_temporary_used{};
std::mutex g_register_mutex;

// The watchdog: the handler posts the semaphore (async-signal-safe) at the first signal.
sem_t g_wakeup;
std::atomic<bool> g_watchdog_on{false};
std::atomic<bool> g_reported{false};
std::array<char, 64> g_command{};

void remove_temporaries() noexcept {
  for (std::size_t i = 0; i < kMaxTemporaries; ++i) {
    if (g_temporary_used[i].load()) ::unlink(g_temporaries[i].data());
  }
}

extern "C" void on_signal(int sig) {
  int none = 0;
  g_first_signal.compare_exchange_strong(none, sig);
  // Every write to a closed pipe raises SIGPIPE: after the first signal they say nothing new.
  if (sig == SIGPIPE && g_signal_count.load() > 0) return;
  if (g_signal_count.fetch_add(1) >= 1) {
    remove_temporaries();
    ::_exit(128 + sig);
  }
  if (g_watchdog_on.load()) ::sem_post(&g_wakeup);
}

/// Appends `text` to `out` at `used`, within `out`'s size; no allocation.
template <std::size_t N>
void append(std::array<char, N>& out, std::size_t& used, const char* text) {
  for (; *text != '\0' && used + 1 < N; ++text) out[used++] = *text;
}

[[noreturn]] void watchdog_main() {
  while (::sem_wait(&g_wakeup) != 0 && errno == EINTR) {
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(kInterruptGraceMs));
  const int sig = g_first_signal.load() != 0 ? g_first_signal.load() : SIGINT;
  if (g_reported.load()) {
    // The command has unwound and is reporting: let it exit as usual. This thread waits for that.
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  remove_temporaries();
  std::array<char, 160> line{};
  std::size_t used = 0;
  append(line, used, "kanoko");
  if (g_command[0] != '\0') {
    append(line, used, " ");
    append(line, used, g_command.data());
  }
  append(line, used, ": interrupted (SIG");
  const char* abbrev = ::sigabbrev_np(sig);
  append(line, used, abbrev != nullptr ? abbrev : "?");
  append(line, used, "); no output was written\n");
  [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, line.data(), used);
  ::_exit(128 + sig);
}

}  // namespace

void install_interrupt_handlers(const char* command, bool watchdog) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::size_t used = 0;
    append(g_command, used, command != nullptr ? command : "");
    if (watchdog && ::sem_init(&g_wakeup, 0, 0) == 0) {
      std::thread(watchdog_main).detach();
      g_watchdog_on.store(true);
    }
  });
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (const int sig : kHandled) sigaction(sig, &sa, nullptr);
}

void interrupt_reported() noexcept { g_reported.store(true); }

bool interrupt_requested() noexcept { return g_signal_count.load(std::memory_order_relaxed) > 0; }

int interrupt_signal() noexcept { return g_first_signal.load(); }

void check_interrupt() {
  if (!interrupt_requested()) return;
  const int sig = interrupt_signal();
  throw Interrupted(sig != 0 ? sig : SIGINT);
}

void register_temporary_file(const std::filesystem::path& p) {
  const std::string s = p.string();
  if (s.size() + 1 > kMaxPath) return;
  std::lock_guard lock(g_register_mutex);
  for (std::size_t i = 0; i < kMaxTemporaries; ++i) {
    if (!g_temporary_used[i].load()) {
      std::memcpy(g_temporaries[i].data(), s.c_str(), s.size() + 1);
      g_temporary_used[i].store(true);
      return;
    }
  }
}

void unregister_temporary_file(const std::filesystem::path& p) noexcept {
  const std::string s = p.string();
  std::lock_guard lock(g_register_mutex);
  for (std::size_t i = 0; i < kMaxTemporaries; ++i) {
    if (g_temporary_used[i].load() && s == g_temporaries[i].data()) {
      g_temporary_used[i].store(false);
      return;
    }
  }
}

}  // namespace kanoko
