// Reserved memory mapped ahead of the thread that fills it (src/base/prefault.hpp).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "src/base/prefault.hpp"

namespace kanoko {
namespace KANOKO_UNITY_ID {

constexpr std::size_t kMiB = std::size_t{1} << 20U;

/// Fresh anonymous memory, unmapped at the end.
struct Region {
  explicit Region(std::size_t n) : bytes(n) {
    void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) base = static_cast<unsigned char*>(p);
  }
  ~Region() {
    if (base != nullptr) ::munmap(base, bytes);
  }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  /// Pages of [from, to) the process has in memory.
  [[nodiscard]] std::size_t resident(std::size_t from, std::size_t to) const {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in((to - from + page - 1) / page);
    if (::mincore(base + from, to - from, in.data()) != 0) return 0;
    std::size_t n = 0;
    for (const unsigned char c : in) n += c & 1U;
    return n;
  }
  unsigned char* base = nullptr;
  std::size_t bytes;
};

/// Waits (up to a minute: the mapper runs at a lowered priority, and the tests may share a busy
/// machine) until `p` has mapped at least `bytes` or stopped working.
void wait_mapped(const Prefaulter& p, std::size_t bytes) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (p.working() && p.mapped_bytes() < bytes && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST(Prefault, MapsAheadOfTheFillingAndNoFurther) {
  Region r(64 * kMiB);
  ASSERT_NE(r.base, nullptr);
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::memset(r.base, 0x5A, page);  // what the filler wrote stays
  {
    Prefaulter p({{r.base, r.bytes}}, 8 * kMiB);
    wait_mapped(p, 8 * kMiB);
    if (!p.working()) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14)";
    // Settled: nothing more comes without filled().
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(p.mapped_bytes(), 8 * kMiB);
    EXPECT_EQ(r.resident(0, 8 * kMiB), 8 * kMiB / page);
    EXPECT_EQ(r.resident(10 * kMiB, 64 * kMiB), 0U) << "mapped past the lead";
    p.filled(0, 40 * kMiB);
    wait_mapped(p, 48 * kMiB);
    EXPECT_EQ(p.mapped_bytes(), 48 * kMiB);
    EXPECT_EQ(r.resident(0, 48 * kMiB), 48 * kMiB / page);
    EXPECT_EQ(r.resident(50 * kMiB, 64 * kMiB), 0U) << "mapped past the lead";
    p.filled(0, r.bytes);
    wait_mapped(p, r.bytes);
    EXPECT_EQ(p.mapped_bytes(), r.bytes) << "never past the range";
  }
  EXPECT_EQ(r.resident(0, r.bytes), r.bytes / page);
  for (std::size_t i = 0; i < page; ++i) ASSERT_EQ(r.base[i], 0x5A) << i;
  for (std::size_t i = page; i < r.bytes; i += 4096) ASSERT_EQ(r.base[i], 0) << i;
}

TEST(Prefault, RangesAdvanceTogether) {
  // Two buffers filled side by side (the timeline's pair records and its per-bin arrays): each is
  // mapped to its own filled part plus the lead.
  Region a(16 * kMiB);
  Region b(16 * kMiB);
  ASSERT_NE(a.base, nullptr);
  ASSERT_NE(b.base, nullptr);
  Prefaulter p({{a.base, a.bytes}, {b.base, b.bytes}}, 4 * kMiB);
  p.filled(1, 8 * kMiB);
  wait_mapped(p, 16 * kMiB);
  if (!p.working()) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14)";
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(p.mapped_bytes(), 16 * kMiB);
  EXPECT_EQ(a.resident(0, a.bytes) * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)), 4 * kMiB);
  EXPECT_EQ(b.resident(0, b.bytes) * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)), 12 * kMiB);
}

TEST(Prefault, MemoryTheKernelWillNotMapEndsTheWork) {
  // A hint only: a range the kernel refuses to map ends the mapper, which is then joined without
  // harm. The range is reserved without access rather than unmapped: an unmapped range is free
  // for the next mapping, and the mapper's own thread stack (8 MiB) took its place now and then,
  // so the kernel mapped it.
  void* p = ::mmap(nullptr, 8 * kMiB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  {
    Prefaulter refused({{p, 8 * kMiB}}, 8 * kMiB);
    wait_mapped(refused, 8 * kMiB);
    EXPECT_FALSE(refused.working());
    EXPECT_EQ(refused.mapped_bytes(), 0U);
  }
  EXPECT_EQ(::munmap(p, 8 * kMiB), 0);
}

TEST(Prefault, StopsWhenDestroyedWhileWaiting) {
  Region r(4 * kMiB);
  ASSERT_NE(r.base, nullptr);
  const auto start = std::chrono::steady_clock::now();
  { Prefaulter p({{r.base, r.bytes}}, kMiB); }  // nothing filled: it waits, and is stopped
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

}  // namespace
}  // namespace kanoko
