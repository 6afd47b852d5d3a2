// Following a run while it is written (trajectory::Follower): new blocks appear, completion is
// seen, a run that stops growing is said to have stalled (after the time-out, or at once when its
// writer is known gone), and a run killed half-way is incomplete, never corrupt, and never reused.
#include "src/trajectory/follow.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "src/base/error.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::trajectory {
namespace KANOKO_UNITY_ID {

using test::TempDir;
using Clock = Follower::Clock;

/// Two bodies, no statistics: 64 frames per block (the format's largest block), 200 planned.
Metadata two_bodies() {
  Metadata m;
  m.bodies.resize(2);
  m.bodies[0].name = "a";
  m.bodies[1].name = "b";
  m.dt_s = 0.01;
  m.steps_per_frame = 10;
  m.interval_s = 1.0;
  m.trace_begin_s = 0.0;
  m.trace_end_s = 1.5;
  m.planned_frames = 200;
  return m;
}

void append(Writer& w, std::size_t frames) {
  Eigen::Matrix3Xd p = Eigen::Matrix3Xd::Zero(3, 2);
  const Eigen::Matrix3Xd v = Eigen::Matrix3Xd::Zero(3, 2);
  for (std::size_t k = 0; k < frames; ++k) {
    const double t = 0.1 * static_cast<double>(w.frame_count());
    p(0, 1) = 1.0 + t;
    w.append_frame(t, p, v, Eigen::MatrixXd(0, 2));
  }
}

TEST(Follower, SeesBlocksAsTheyAreWrittenAndTheCompletion) {
  TempDir dir;
  Writer w(dir / "run.kntj", two_bodies());
  append(w, 70);  // one whole block of 64 and 6 frames of the next
  Reader r(w.temporary_path(), Open::partial);
  EXPECT_FALSE(r.complete());
  EXPECT_EQ(r.frame_count(), 64U);
  Follower f(r, 10.0);
  const auto t0 = Clock::now();
  EXPECT_EQ(f.state(), Follower::State::growing);
  EXPECT_DOUBLE_EQ(f.frontier_s(), 6.3);
  // The planned end: 199 frames of 10 steps of 0.01 s after the start.
  EXPECT_NEAR(f.planned_end_s(), 19.9, 1e-9);
  EXPECT_NEAR(f.fraction(), 64.0 / 200.0, 1e-12);
  EXPECT_NE(f.status().find("simulating: 32 % (frame 64 of 200"), std::string::npos) << f.status();

  append(w, 100);  // 170 frames: two whole blocks
  EXPECT_TRUE(f.poll(t0 + std::chrono::seconds(1)));
  EXPECT_EQ(r.frame_count(), 128U);
  EXPECT_DOUBLE_EQ(f.frontier_s(), 12.7);
  EXPECT_DOUBLE_EQ(r.frame(100).positions(0, 1), 11.0);
  // Polls closer together than poll_period do not look at the file.
  append(w, 64);
  EXPECT_FALSE(f.poll(t0 + std::chrono::seconds(1) + Follower::poll_period / 2));
  EXPECT_EQ(r.frame_count(), 128U);

  w.commit();
  EXPECT_TRUE(f.poll(t0 + std::chrono::seconds(2)));
  EXPECT_TRUE(f.complete());
  EXPECT_EQ(r.frame_count(), 234U);
  EXPECT_DOUBLE_EQ(f.planned_end_s(), 23.3);  // the real end, once known
  EXPECT_EQ(f.status(), "");
}

TEST(Follower, ARunThatStopsGrowingStallsAfterTheTimeOut) {
  TempDir dir;
  Writer w(dir / "run.kntj", two_bodies());
  append(w, 64);
  Reader r(w.temporary_path(), Open::partial);
  Follower f(r, 5.0);
  const auto t0 = Clock::now();
  EXPECT_FALSE(f.poll(t0 + std::chrono::seconds(2)));
  EXPECT_EQ(f.state(), Follower::State::growing);
  append(w, 64);  // a block more: the time-out starts again
  EXPECT_TRUE(f.poll(t0 + std::chrono::seconds(4)));
  EXPECT_FALSE(f.poll(t0 + std::chrono::milliseconds(8500)));
  EXPECT_EQ(f.state(), Follower::State::growing);
  EXPECT_FALSE(f.poll(t0 + std::chrono::seconds(10)));
  EXPECT_EQ(f.state(), Follower::State::stalled);
  EXPECT_NE(f.status().find("stopped growing at frame 128 of 200, t = 12.7 s: no new frames for 5.0 s"),
            std::string::npos)
      << f.status();
  EXPECT_NE(f.status().find("the frames so far play"), std::string::npos);
  EXPECT_EQ(r.frame_count(), 128U);  // still playable
  // Growing again (a slow writer, not a dead one) takes it back.
  append(w, 64);
  EXPECT_TRUE(f.poll(t0 + std::chrono::seconds(11)));
  EXPECT_EQ(f.state(), Follower::State::growing);
  EXPECT_EQ(r.frame_count(), 192U);
}

TEST(Follower, AWriterKnownGoneStallsAtOnce) {
  TempDir dir;
  Writer w(dir / "run.kntj", two_bodies());
  append(w, 64);
  Reader r(w.temporary_path(), Open::partial);
  std::string gone;
  Follower f(r, 600.0, [&gone] { return gone; });
  const auto t0 = Clock::now();
  EXPECT_FALSE(f.poll(t0 + std::chrono::seconds(1)));
  EXPECT_EQ(f.state(), Follower::State::growing);
  // The writer wrote more, then ended: what it wrote is taken first, then the run stalls.
  append(w, 64);
  gone = "its writer, process 4711, no longer runs";
  EXPECT_TRUE(f.poll(t0 + std::chrono::seconds(2)));
  EXPECT_EQ(f.state(), Follower::State::growing);
  EXPECT_FALSE(f.poll(t0 + std::chrono::seconds(3)));
  EXPECT_EQ(f.state(), Follower::State::stalled);
  EXPECT_NE(f.status().find("at frame 128 of 200, t = 12.7 s: its writer, process 4711, no longer runs"),
            std::string::npos)
      << f.status();
}

// A run killed half-way (here: the temporary file as the killed writer left it) is incomplete,
// with the frame it got to, never "corrupt", and the cache's check refuses to reuse it.
TEST(Follower, AKilledRunIsIncompleteNotCorruptAndNotReusable) {
  TempDir dir;
  const std::filesystem::path killed = dir / "killed.kntj";
  {
    Writer w(dir / "run.kntj", two_bodies());
    append(w, 128);
    std::filesystem::copy_file(w.temporary_path(), killed);
  }  // the writer is destroyed uncommitted: its temporary is removed
  EXPECT_FALSE(std::filesystem::exists(dir / "run.kntj"));
  try {
    const Reader r(killed);
    ADD_FAILURE() << "an incomplete run opened as complete";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("is incomplete (still being written, or killed at frame 128 of 200)"), std::string::npos)
        << what;
    EXPECT_EQ(what.find("corrupt"), std::string::npos) << what;
  }
  EXPECT_NE(reuse_problem(killed).find("is incomplete"), std::string::npos) << reuse_problem(killed);
  const Reader partial(killed, Open::partial);
  EXPECT_EQ(partial.frame_count(), 128U);  // two whole blocks; the frames after them are not checked
  partial.verify_all();
}

}  // namespace
}  // namespace kanoko::trajectory
