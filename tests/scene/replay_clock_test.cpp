// The replay clock: pause, speed, direction, seeking and clamping. No display needed.
#include "src/scene/replay_clock.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

TEST(ReplayClock, DefaultSpeedPlaysTheRunInAboutTwentySeconds) {
  EXPECT_DOUBLE_EQ(ReplayClock::default_speed(0.0, 40.0), 2.0);
  EXPECT_DOUBLE_EQ(ReplayClock::default_speed(5.0, 5.5), 0.025);
  EXPECT_DOUBLE_EQ(ReplayClock::default_speed(3.0, 3.0), 1.0);  // empty run: any positive speed
}

TEST(ReplayClock, StartsPlayingForwardAtTheBeginning) {
  const ReplayClock c(2.0, 12.0, 0.5);
  EXPECT_DOUBLE_EQ(c.time_s(), 2.0);
  EXPECT_FALSE(c.paused());
  EXPECT_FALSE(c.reversed());
  EXPECT_DOUBLE_EQ(c.speed(), 0.5);
}

TEST(ReplayClock, AdvancesBySpeedTimesWallTime) {
  ReplayClock c(0.0, 10.0, 0.5);
  c.advance(2.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 1.0);
  c.advance(0.5);
  EXPECT_DOUBLE_EQ(c.time_s(), 1.25);
  c.advance(-1.0);  // a clock that went backwards never moves playback
  EXPECT_DOUBLE_EQ(c.time_s(), 1.25);
}

TEST(ReplayClock, PauseStopsTimeAndPlayResumes) {
  ReplayClock c(0.0, 10.0, 1.0);
  c.advance(1.0);
  c.toggle_pause();
  EXPECT_TRUE(c.paused());
  c.advance(3.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 1.0);
  c.toggle_pause();
  EXPECT_FALSE(c.paused());
  c.advance(3.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 4.0);
  c.pause();
  c.pause();
  EXPECT_TRUE(c.paused());
  c.play();
  EXPECT_FALSE(c.paused());
}

TEST(ReplayClock, SpeedChangesAreClamped) {
  ReplayClock c(0.0, 10.0, 1.0);
  c.faster();
  EXPECT_DOUBLE_EQ(c.speed(), 2.0);
  c.slower();
  c.slower();
  EXPECT_DOUBLE_EQ(c.speed(), 0.5);
  for (int i = 0; i < 100; ++i) c.faster();
  EXPECT_DOUBLE_EQ(c.speed(), c.max_speed());
  EXPECT_DOUBLE_EQ(c.max_speed(), 100.0);  // whole run in 0.1 s of wall time
  for (int i = 0; i < 200; ++i) c.slower();
  EXPECT_DOUBLE_EQ(c.speed(), c.min_speed());
  c.set_speed(1e9);
  EXPECT_DOUBLE_EQ(c.speed(), c.max_speed());
  c.set_speed(3.0);
  EXPECT_DOUBLE_EQ(c.speed(), 3.0);
}

TEST(ReplayClock, ReachingTheEndClampsAndPauses) {
  ReplayClock c(0.0, 10.0, 4.0);
  c.advance(2.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 8.0);
  EXPECT_FALSE(c.paused());
  c.advance(2.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 10.0);
  EXPECT_TRUE(c.paused());
  // Playing again after the end replays from the start.
  c.play();
  EXPECT_DOUBLE_EQ(c.time_s(), 0.0);
  EXPECT_FALSE(c.paused());
}

TEST(ReplayClock, ReverseRunsBackAndStopsAtTheStart) {
  ReplayClock c(0.0, 10.0, 2.0);
  c.seek(5.0);
  c.reverse();
  EXPECT_TRUE(c.reversed());
  c.advance(1.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 3.0);
  c.advance(10.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 0.0);
  EXPECT_TRUE(c.paused());
  c.play();  // reversed at the start: replays backwards from the end
  EXPECT_DOUBLE_EQ(c.time_s(), 10.0);
  c.reverse();
  EXPECT_FALSE(c.reversed());
}

TEST(ReplayClock, SeekClampsToTheRun) {
  ReplayClock c(1.0, 3.0, 1.0);
  c.seek(2.5);
  EXPECT_DOUBLE_EQ(c.time_s(), 2.5);
  c.seek(-7.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 1.0);
  c.seek(99.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 3.0);
}

TEST(ReplayClock, RestartGoesToTheStartPlayingForward) {
  ReplayClock c(0.0, 10.0, 1.0);
  c.seek(6.0);
  c.reverse();
  c.pause();
  c.restart();
  EXPECT_DOUBLE_EQ(c.time_s(), 0.0);
  EXPECT_FALSE(c.reversed());
  EXPECT_TRUE(c.paused());  // restart keeps the pause state
}

TEST(ReplayClock, StepFramesMovesBetweenStoredFramesAndPauses) {
  const std::vector<double> frames{0.0, 1.0, 2.0, 3.0, 4.0};
  ReplayClock c(0.0, 4.0, 1.0);
  c.seek(1.4);
  c.step_frames(+1, frames);
  EXPECT_TRUE(c.paused());
  EXPECT_DOUBLE_EQ(c.time_s(), 2.0);
  c.step_frames(+1, frames);
  EXPECT_DOUBLE_EQ(c.time_s(), 3.0);
  c.step_frames(-1, frames);
  EXPECT_DOUBLE_EQ(c.time_s(), 2.0);
  c.seek(2.6);
  c.step_frames(-1, frames);  // back from between frames lands on the frame before
  EXPECT_DOUBLE_EQ(c.time_s(), 2.0);
  c.step_frames(-2, frames);
  EXPECT_DOUBLE_EQ(c.time_s(), 0.0);
  c.step_frames(-1, frames);  // clamped at the first frame
  EXPECT_DOUBLE_EQ(c.time_s(), 0.0);
  c.step_frames(+10, frames);  // clamped at the last frame
  EXPECT_DOUBLE_EQ(c.time_s(), 4.0);
}

}  // namespace
}  // namespace kanoko::scene

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

// A run still being simulated: frames only up to the frontier.
TEST(ReplayClock, PlayingHoldsAtTheFrontierWithoutPausingAndGoesOnWhenItMoves) {
  ReplayClock c(0.0, 100.0, 10.0);
  c.set_frontier(25.0);
  c.advance(2.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 20.0);
  EXPECT_FALSE(c.waiting());
  c.advance(2.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 25.0);  // held, not past the frames
  EXPECT_FALSE(c.paused());
  EXPECT_TRUE(c.waiting());
  c.set_frontier(40.0);
  c.advance(1.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 35.0);
  c.pause();
  c.advance(1.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 35.0);
  EXPECT_FALSE(c.waiting());  // paused: nothing is waited for
}

TEST(ReplayClock, ASeekPastTheFrontierWaitsThereAndIsDoneWhenTheFramesCome) {
  ReplayClock c(0.0, 100.0, 1.0);
  c.set_frontier(10.0);
  c.pause();
  c.seek(60.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 10.0);
  ASSERT_TRUE(c.pending_seek().has_value());
  EXPECT_DOUBLE_EQ(*c.pending_seek(), 60.0);
  EXPECT_TRUE(c.waiting());
  c.set_frontier(30.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 30.0);  // follows the frontier on the way
  EXPECT_TRUE(c.pending_seek().has_value());
  c.set_frontier(70.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 60.0);
  EXPECT_FALSE(c.pending_seek().has_value());
  EXPECT_FALSE(c.waiting());
  // A seek within the frames cancels a pending one.
  c.set_frontier(70.0);
  c.seek(90.0);
  c.seek(20.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 20.0);
  EXPECT_FALSE(c.pending_seek().has_value());
}

TEST(ReplayClock, TheRealEndReplacesThePlannedOne) {
  ReplayClock c(0.0, 100.0, 1.0);
  c.set_frontier(50.0);
  c.seek(99.0);
  c.set_end(97.5);  // the simulation ended a little before its planned end
  EXPECT_DOUBLE_EQ(c.end_s(), 97.5);
  EXPECT_DOUBLE_EQ(c.frontier_s(), 97.5);
  EXPECT_DOUBLE_EQ(c.time_s(), 97.5);
  EXPECT_FALSE(c.pending_seek().has_value());
  c.seek(95.0);
  c.play();
  c.advance(10.0);
  EXPECT_DOUBLE_EQ(c.time_s(), 97.5);
  EXPECT_TRUE(c.paused());  // a whole run again: the end pauses
}

}  // namespace
}  // namespace kanoko::scene
