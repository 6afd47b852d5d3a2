// OpenAL Soft playback measured through the loopback device (no sound card): panning, distance,
// Doppler, the voice cap, and the silent engine when no device opens.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "sonify/engine.hpp"
#include "tests/sonify/sonify_fixtures.hpp"

namespace kanoko::sonify {
namespace KANOKO_UNITY_ID {

constexpr int kRate = 48000;

EngineOptions test_options() {
  EngineOptions o;
  o.sample_rate_hz = kRate;
  o.hrtf = mapping::HrtfRequest::Off;
  o.reference_distance = 1.0;
  o.speed_of_sound = 343.3;
  o.max_voices = 8;
  o.master_volume = 1.0;
  o.cue_length_s = 0.5;
  return o;
}

std::vector<Voice> sine_voices(std::size_t n) {
  std::vector<Voice> v(n);
  for (auto& x : v) {
    x.timbre = mapping::Timbre::Sine;
    x.pitch_hz = 440;
  }
  return v;
}

struct Channels {
  std::vector<float> left, right;
  [[nodiscard]] static double rms(const std::vector<float>& x) {
    double s = 0;
    for (float v : x) s += static_cast<double>(v) * static_cast<double>(v);
    return x.empty() ? 0 : std::sqrt(s / static_cast<double>(x.size()));
  }
};

/// Plays one cue of body 0 at `position` with `velocity`, listener at the origin looking down −z,
/// and returns 0.4 s of the two channels.
Channels play_one(const EngineOptions& options, const Eigen::Vector3d& position,
                  const Eigen::Vector3d& velocity = Eigen::Vector3d::Zero()) {
  auto engine = Engine::open_loopback(options, sine_voices(1));
  engine->set_listener(ListenerState{});
  EXPECT_TRUE(engine->start(Cue{0, 0, 0, 1.0F, 0}, position, velocity));
  std::vector<float> out(2 * static_cast<std::size_t>(0.4 * kRate));
  engine->render(out);
  Channels c;
  for (std::size_t i = 0; i < out.size(); i += 2) {
    c.left.push_back(out[i]);
    c.right.push_back(out[i + 1]);
  }
  return c;
}

/// Frequency of the tone played (zero crossings).
double frequency_hz(const Channels& c) {
  std::vector<float> interleaved;
  for (std::size_t i = 0; i < c.left.size(); ++i) {
    interleaved.push_back(c.left[i]);
    interleaved.push_back(c.right[i]);
  }
  return test::zero_crossing_hz(interleaved, kRate);
}

TEST(EngineLoopback, BodyOnTheRightIsLouderOnTheRight) {
  const Channels right = play_one(test_options(), {5, 0, 0});
  EXPECT_GT(Channels::rms(right.right), 0.005);
  EXPECT_GT(Channels::rms(right.right), 1.5 * Channels::rms(right.left));
  const Channels left = play_one(test_options(), {-5, 0, 0});
  EXPECT_GT(Channels::rms(left.left), 1.5 * Channels::rms(left.right));
  const Channels front = play_one(test_options(), {0, 0, -5});
  EXPECT_NEAR(Channels::rms(front.left) / Channels::rms(front.right), 1.0, 0.05);
}

TEST(EngineLoopback, HrtfIsReportedAndStillPans) {
  EngineOptions o = test_options();
  o.hrtf = mapping::HrtfRequest::On;
  auto engine = Engine::open_loopback(o, sine_voices(1));
  // Debian's libopenal-data ships default-48000.mhr, so HRTF can really be on.
  EXPECT_TRUE(engine->hrtf_enabled()) << engine->hrtf_status();
  EXPECT_NE(engine->hrtf_status().find("HRTF on"), std::string::npos) << engine->hrtf_status();
  engine.reset();
  const Channels right = play_one(o, {5, 0, 0});
  EXPECT_GT(Channels::rms(right.right), 1.3 * Channels::rms(right.left));
  const Channels left = play_one(o, {-5, 0, 0});
  EXPECT_GT(Channels::rms(left.left), 1.3 * Channels::rms(left.right));

  auto off = Engine::open_loopback(test_options(), sine_voices(1));
  EXPECT_FALSE(off->hrtf_enabled());
  EXPECT_EQ(off->hrtf_status(), "HRTF off (not requested)");
}

TEST(EngineLoopback, FartherBodyIsQuieter) {
  const double near = Channels::rms(play_one(test_options(), {2, 0, 0}).right);
  const double far = Channels::rms(play_one(test_options(), {20, 0, 0}).right);
  EXPECT_GT(near, 0.005);
  EXPECT_GT(near, 5.0 * far);  // 1/distance: 10x
  EXPECT_GT(far, 0.0);
}

TEST(EngineLoopback, ApproachingBodySoundsHigherThanReceding) {
  const EngineOptions o = test_options();
  // In front, 10 units away, moving at 50 units/s towards (+z) or away from (−z) the listener.
  const double approaching = frequency_hz(play_one(o, {0, 0, -10}, {0, 0, 50}));
  const double receding = frequency_hz(play_one(o, {0, 0, -10}, {0, 0, -50}));
  const double still = frequency_hz(play_one(o, {0, 0, -10}));
  EXPECT_NEAR(still, 440, 440 * 0.01);
  EXPECT_NEAR(approaching, 440 * 343.3 / (343.3 - 50), 440 * 0.03);
  EXPECT_NEAR(receding, 440 * 343.3 / (343.3 + 50), 440 * 0.03);
  EXPECT_GT(approaching, receding * 1.2);

  EngineOptions no_doppler = o;
  no_doppler.doppler = false;
  EXPECT_NEAR(frequency_hz(play_one(no_doppler, {0, 0, -10}, {0, 0, 50})), 440, 440 * 0.01);
}

TEST(EngineLoopback, VoiceCapHoldsWithTenThousandCues) {
  auto engine = Engine::open_loopback(test_options(), sine_voices(10000));
  ASSERT_EQ(engine->voice_slots(), 8U);
  std::size_t started = 0;
  for (std::uint32_t b = 0; b < 10000; ++b) {
    started += engine->start(Cue{0, b, 0, 1.0F, 0}, Eigen::Vector3d(0, 0, -2), Eigen::Vector3d::Zero()) ? 1U : 0U;
  }
  EXPECT_EQ(started, 8U);
  EXPECT_EQ(engine->playing(), 8U);
  std::vector<float> out(2 * 4800);
  engine->render(out);
  EXPECT_LE(engine->playing(), 8U);
  float peak = 0;
  for (float x : out) peak = std::max(peak, std::abs(x));
  EXPECT_GT(peak, 0.0F);
  // When the sounds end the slots are free again.
  std::vector<float> rest(2 * static_cast<std::size_t>(0.6 * kRate));
  engine->render(rest);
  EXPECT_EQ(engine->playing(), 0U);
  EXPECT_TRUE(engine->start(Cue{0, 1, 0, 1.0F, 0}, Eigen::Vector3d(0, 0, -2), Eigen::Vector3d::Zero()));
}

TEST(EngineLoopback, StopAllLeavesNothingSounding) {
  auto engine = Engine::open_loopback(test_options(), sine_voices(3));
  for (std::uint32_t b = 0; b < 3; ++b) engine->start(Cue{0, b, 0, 1.0F, 0}, Eigen::Vector3d(0, 0, -2), Eigen::Vector3d::Zero());
  EXPECT_EQ(engine->playing(), 3U);
  engine->stop_all();
  EXPECT_EQ(engine->playing(), 0U);
  std::vector<float> out(2 * 4800);
  engine->render(out);
  EXPECT_EQ(*std::max_element(out.begin(), out.end()), 0.0F);
}

TEST(EngineLoopback, MuteAndVolumeScaleTheOutput) {
  auto engine = Engine::open_loopback(test_options(), sine_voices(1));
  const auto loudness = [&](double volume, bool muted) {
    engine->stop_all();
    engine->set_master_volume(volume);
    engine->set_muted(muted);
    engine->start(Cue{0, 0, 0, 1.0F, 0}, Eigen::Vector3d(0, 0, -2), Eigen::Vector3d::Zero());
    std::vector<float> out(2 * 9600);
    engine->render(out);
    return std::sqrt(std::inner_product(out.begin(), out.end(), out.begin(), 0.0));
  };
  const double full = loudness(1.0, false);
  const double half = loudness(0.5, false);
  EXPECT_GT(full, 0);
  EXPECT_NEAR(half / full, 0.5, 0.05);
  EXPECT_EQ(loudness(1.0, true), 0.0);
}

TEST(EngineDevice, NoDeviceMeansSilentPlaybackAndOneMessage) {
  std::string message;
  auto engine = Engine::open_device(test_options(), sine_voices(2), "kanoko-no-such-device", message);
  EXPECT_TRUE(engine->silent());
  EXPECT_NE(message.find("no sound device"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);  // one line
  // Everything is a harmless no-op.
  engine->begin_frame();
  engine->set_listener(ListenerState{});
  EXPECT_FALSE(engine->start(Cue{0, 0, 0, 1, 0}, Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero()));
  engine->follow_bodies(Eigen::Matrix3Xd::Zero(3, 2), Eigen::Matrix3Xd::Zero(3, 2));
  engine->set_paused(true);
  engine->set_master_volume(0.3);
  engine->set_muted(true);
  engine->stop_all();
  engine->end_frame();
  EXPECT_EQ(engine->playing(), 0U);
  EXPECT_FALSE(engine->hrtf_enabled());
  EXPECT_EQ(engine->device_name(), "");
}

TEST(EngineDevice, NullDriverOpens) {
  // The suite runs with ALSOFT_DRIVERS=null (tests/CMakeLists.txt): a device that discards sound.
  std::string message;
  auto engine = Engine::open_device(test_options(), sine_voices(1), "", message);
  EXPECT_FALSE(engine->silent()) << message;
  EXPECT_TRUE(message.empty());
  EXPECT_TRUE(engine->start(Cue{0, 0, 0, 1, 0}, Eigen::Vector3d(1, 0, 0), Eigen::Vector3d::Zero()));
}

}  // namespace
}  // namespace kanoko::sonify
