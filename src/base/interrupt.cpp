#include "src/base/interrupt.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>
#include <mutex>

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

extern "C" void on_signal(int sig) {
  int none = 0;
  g_first_signal.compare_exchange_strong(none, sig);
  // Every write to a closed pipe raises SIGPIPE: after the first signal they say nothing new.
  if (sig == SIGPIPE && g_signal_count.load() > 0) return;
  if (g_signal_count.fetch_add(1) >= 1) {
    for (std::size_t i = 0; i < kMaxTemporaries; ++i) {
      if (g_temporary_used[i].load()) ::unlink(g_temporaries[i].data());
    }
    ::_exit(128 + sig);
  }
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (const int sig : kHandled) sigaction(sig, &sa, nullptr);
}

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
