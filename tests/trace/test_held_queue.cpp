// The readers' reordering queue (src/trace/held_queue.hpp) against the simplest reference: a
// std::priority_queue popped one event at a time; due() against what a drain takes.
#include <gtest/gtest.h>

#include <cstdint>
#include <queue>
#include <random>
#include <vector>

#include "src/trace/held_queue.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

struct Ev {
  double t;
  std::uint64_t seq;
  int payload;
};
struct RefLater {
  bool operator()(const Ev& x, const Ev& y) const { return x.t != y.t ? x.t > y.t : x.seq > y.seq; }
};

TEST(HeldQueue, TakesEventsInTheOrderOfAPriorityQueue) {
  // Random pushes (times on a coarse grid, so that many are equal and the sequence decides) and
  // drains with bounds below, inside and past the held times, so that both the popping and the
  // sorting drain run, with slots reused in between.
  std::mt19937_64 rng(20261126);
  int sorted_drains = 0;
  for (int round = 0; round < 200; ++round) {
    HeldQueue<Ev> q;
    std::priority_queue<Ev, std::vector<Ev>, RefLater> ref;
    std::vector<int> got, want;
    std::uint64_t seq = 0;
    double now = 0;
    for (int step = 0; step < 400; ++step) {
      const int pushes = static_cast<int>(rng() % 60);
      for (int i = 0; i < pushes; ++i) {
        const Ev e{now - static_cast<double>(rng() % 8) * 0.25, seq++, static_cast<int>(rng() % 1000000)};
        q.push(e);
        ref.push(e);
      }
      now += static_cast<double>(rng() % 3) * 0.25;
      const int kind = static_cast<int>(rng() % 4);
      const double until = kind == 0 ? now + 1 : kind == 1 ? now - 1 : now - static_cast<double>(rng() % 4) * 0.25;
      if (until >= now && q.size() >= HeldQueue<Ev>::kSortAtLeast) ++sorted_drains;
      // due() says whether a drain takes anything (the Pajé reader drains only then).
      const bool due = q.due(until);
      const std::size_t before = got.size();
      q.drain(until, [&](const Ev& e) { got.push_back(e.payload); });
      ASSERT_EQ(due, got.size() > before) << "round " << round << ", step " << step;
      while (!ref.empty() && ref.top().t <= until) {
        want.push_back(ref.top().payload);
        ref.pop();
      }
      ASSERT_EQ(q.size(), ref.size()) << "round " << round << ", step " << step;
    }
    q.drain(1e300, [&](const Ev& e) { got.push_back(e.payload); });
    for (; !ref.empty(); ref.pop()) want.push_back(ref.top().payload);
    ASSERT_EQ(got, want) << "round " << round;
  }
  EXPECT_GT(sorted_drains, 1000);
}

}  // namespace
}  // namespace kanoko::trace
