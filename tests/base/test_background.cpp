// Background work beside the viewer's frame loop runs at a lower priority (src/base/background.hpp).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <thread>

#include "src/base/background.hpp"

namespace kanoko {
namespace KANOKO_UNITY_ID {

int own_nice() { return ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid())); }

int expected_after(int before) { return before + kBackgroundNice > 19 ? 19 : before + kBackgroundNice; }

TEST(Background, LowersOnlyTheCallingThread) {
  const int main_before = own_nice();
  int worker_before = 0;
  int worker_after = 0;
  int returned = 0;
  int grandchild = 0;
  std::thread([&] {
    worker_before = own_nice();
    returned = lower_thread_priority();
    worker_after = own_nice();
    // A thread the lowered one starts inherits its priority (the index's reading threads).
    std::thread([&] { grandchild = own_nice(); }).join();
  }).join();
  EXPECT_EQ(worker_before, main_before);
  EXPECT_EQ(worker_after, expected_after(worker_before));
  EXPECT_EQ(returned, worker_after);
  EXPECT_EQ(grandchild, worker_after);
  EXPECT_EQ(own_nice(), main_before) << "the calling thread's priority only, not the process's";
}

TEST(Background, AsyncJobsRunLowered) {
  const int main_before = own_nice();
  auto job = background_async([] { return own_nice(); });
  EXPECT_EQ(job.get(), expected_after(main_before));
  EXPECT_EQ(own_nice(), main_before);
  // Move-only results and captures pass through.
  auto moved = background_async([p = std::make_unique<int>(7)] { return std::make_unique<int>(*p + 1); });
  EXPECT_EQ(*moved.get(), 8);
}

}  // namespace
}  // namespace kanoko
