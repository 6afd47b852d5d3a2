#include "src/base/prefault.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "src/base/background.hpp"

namespace kanoko {

namespace {

/// Slices of at most this size (a huge page, aligned like one), so that the ranges advance
/// together and a stop is seen soon.
constexpr std::uintptr_t kSlice = std::uintptr_t{2} << 20U;

}  // namespace

Prefaulter::Prefaulter(std::vector<Range> ranges, std::size_t lead) : lead_(lead) {
  shared_.ranges = std::move(ranges);
  shared_.filled = std::make_unique<std::atomic<std::size_t>[]>(shared_.ranges.size());
  for (std::size_t i = 0; i < shared_.ranges.size(); ++i) shared_.filled[i].store(0, std::memory_order_relaxed);
  thread_ = std::thread([this] { run(); });
}

Prefaulter::~Prefaulter() {
  {
    const std::lock_guard lock(mutex_);
    stop_.store(true, std::memory_order_relaxed);
  }
  wake_.notify_all();
  thread_.join();
}

void Prefaulter::filled(std::size_t i, std::size_t bytes) {
  if (i >= shared_.ranges.size()) return;
  shared_.filled[i].store(bytes, std::memory_order_relaxed);
  const std::lock_guard lock(mutex_);
  if (waiting_) wake_.notify_one();
}

void Prefaulter::run() {
  // Lowered like the other background work (nice +10, src/base/background.hpp): an idle core
  // runs it at full speed, a busy one gives it about a tenth. Not SCHED_IDLE: a thread that gets
  // almost nothing while both cores are busy would hold up the destructor, which waits for the
  // slice under way.
  (void)lower_thread_priority();
#ifdef MADV_POPULATE_WRITE
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE) > 0 ? ::sysconf(_SC_PAGESIZE) : 4096);
  // Per range: the page-aligned part inside it, and how far it is mapped.
  struct Span {
    std::uintptr_t lo = 0, hi = 0, done = 0;
  };
  std::vector<Span> spans;
  for (const Range& r : shared_.ranges) {
    const auto begin = reinterpret_cast<std::uintptr_t>(r.begin);
    Span s;
    s.lo = (begin + page - 1) / page * page;
    s.hi = std::max(s.lo, (begin + r.bytes) / page * page);
    s.done = s.lo;
    spans.push_back(s);
  }
  while (!stop_.load(std::memory_order_relaxed)) {
    bool advanced = false;
    for (std::size_t i = 0; i < spans.size() && !stop_.load(std::memory_order_relaxed); ++i) {
      Span& s = spans[i];
      const auto begin = reinterpret_cast<std::uintptr_t>(shared_.ranges[i].begin);
      const std::size_t filled = shared_.filled[i].load(std::memory_order_relaxed);
      const std::uintptr_t want = std::min(s.hi, (begin + std::min(filled + lead_, shared_.ranges[i].bytes)) / page * page);
      if (s.done >= want) continue;
      const std::uintptr_t end = std::min(want, (s.done / kSlice + 1) * kSlice);
      // Pages the filler has already written cost the kernel only a look at the page table.
      if (::madvise(reinterpret_cast<void*>(s.done), end - s.done, MADV_POPULATE_WRITE) != 0) {
        refused_.store(true, std::memory_order_relaxed);
        return;
      }
      mapped_.fetch_add(end - s.done, std::memory_order_relaxed);
      s.done = end;
      advanced = true;
    }
    if (advanced) continue;
    if (std::all_of(spans.begin(), spans.end(), [](const Span& s) { return s.done >= s.hi; })) return;  // all mapped
    std::unique_lock lock(mutex_);
    waiting_ = true;
    // Woken by filled() or the destructor; the timeout covers a store that came between the
    // loads above and the flag.
    wake_.wait_for(lock, std::chrono::milliseconds(20));
    waiting_ = false;
  }
#else
  refused_.store(true, std::memory_order_relaxed);
#endif
}

}  // namespace kanoko
