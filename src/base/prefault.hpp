// Fresh memory is paid for at its first touch: the kernel clears each page as it is first
// written, and on a virtual machine each fault may also trap to the hypervisor (a 512 MB buffer
// written page by page took 1–2 s on the 2-core machine the benchmarks run on). A thread that
// fills a big reserved buffer (the timeline's per-bin arrays and pair records) pays that on its
// own time. A Prefaulter has the kernel map such memory a little ahead of the thread that fills
// it, on a thread of lowered priority (the background jobs' nice +10), so that the clearing moves
// to the idle share of the machine. It is a hint: the memory's contents never change
// (MADV_POPULATE_WRITE maps pages as a write would, without writing), a kernel without it (before
// Linux 5.14) or a range it cannot map (gone, or not writable) just ends the work, and the
// filling thread never waits for it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kanoko {

class Prefaulter {
 public:
  /// Memory that a thread fills from its start towards its end.
  struct Range {
    const void* begin = nullptr;
    std::size_t bytes = 0;
  };
  /// How far ahead of the filled part of each range the pages are mapped.
  static constexpr std::size_t kDefaultLead = std::size_t{32} << 20U;

  /// Starts mapping the start of each range (up to `lead` bytes); filled() moves the window on.
  explicit Prefaulter(std::vector<Range> ranges, std::size_t lead = kDefaultLead);
  /// Stops the work (between two slices) and joins the thread.
  ~Prefaulter();
  Prefaulter(const Prefaulter&) = delete;
  Prefaulter& operator=(const Prefaulter&) = delete;

  /// The filling thread has written range `i` up to `bytes` from its start: pages up to `bytes`
  /// + lead may now be mapped. Cheap (an atomic store, and a wake-up when the mapper waits).
  void filled(std::size_t i, std::size_t bytes);

  /// Bytes the mapper has asked the kernel to map so far (for tests and measurements).
  [[nodiscard]] std::size_t mapped_bytes() const { return mapped_.load(std::memory_order_relaxed); }
  /// False once the kernel refused (no MADV_POPULATE_WRITE, or a range not mapped): the work ended.
  [[nodiscard]] bool working() const { return !refused_.load(std::memory_order_relaxed); }

 private:
  void run();

  struct Shared {
    std::vector<Range> ranges;
    std::unique_ptr<std::atomic<std::size_t>[]> filled;
  };
  Shared shared_;
  std::size_t lead_;
  std::atomic<std::size_t> mapped_{0};
  std::atomic<bool> refused_{false};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool waiting_ = false;  ///< the mapper sleeps until filled() moves a window (guarded by mutex_)
  std::thread thread_;
};

}  // namespace kanoko
