// EBU R128 loudness of a track (sonify/loudness.hpp): the meter on signals of known loudness, and
// the normalising gain with its true-peak ceiling.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "sonify/loudness.hpp"

namespace kanoko::sonify {
namespace KANOKO_UNITY_ID {

// `seconds` of a 997 Hz sine of peak `amplitude` on both channels (left only with `left_only`).
std::vector<float> sine(double amplitude, double seconds, bool left_only = false) {
  const int rate = 48000;
  std::vector<float> x;
  for (int i = 0; i < static_cast<int>(seconds * rate); ++i) {
    const auto v = static_cast<float>(amplitude * std::sin(2 * std::numbers::pi * 997.0 * i / rate));
    x.push_back(v);
    x.push_back(left_only ? 0.0F : v);
  }
  return x;
}

TEST(Loudness, MeterReadsSinesOfKnownLoudness) {
  // BS.1770: a 997 Hz sine of peak 1 on both channels of a stereo signal is 0 LUFS; one channel
  // alone is 3 dB less. Its true peak is its amplitude.
  for (const double db : {-20.0, -6.0}) {
    LoudnessMeter both(48000);
    const std::vector<float> x = sine(std::pow(10.0, db / 20), 5);
    both.add(std::span<const float>(x).subspan(0, 48000));  // fed in blocks
    both.add(std::span<const float>(x).subspan(48000));
    EXPECT_NEAR(both.integrated_lufs(), db, 0.2) << db;
    EXPECT_NEAR(both.true_peak_dbtp(), db, 0.2) << db;
    LoudnessMeter left(48000);
    left.add(sine(std::pow(10.0, db / 20), 5, true));
    EXPECT_NEAR(left.integrated_lufs(), db - 3.01, 0.2) << db;
  }
  LoudnessMeter silence(48000);
  silence.add(std::vector<float>(96000, 0.0F));
  EXPECT_TRUE(std::isinf(silence.integrated_lufs()));
}

TEST(Loudness, GainReachesTheTargetUnderTheCeiling) {
  const LoudnessGain up = loudness_gain(-30, -20);
  EXPECT_DOUBLE_EQ(up.gain_db, 14);
  EXPECT_DOUBLE_EQ(up.loudness_lufs, -16);
  EXPECT_DOUBLE_EQ(up.true_peak_dbtp, -6);
  EXPECT_FALSE(up.peak_limited);
  EXPECT_NEAR(up.linear(), std::pow(10.0, 14.0 / 20), 1e-12);
  const LoudnessGain down = loudness_gain(-8, -0.5);
  EXPECT_DOUBLE_EQ(down.gain_db, -8);
  EXPECT_FALSE(down.peak_limited);
  // A quiet track with one loud click: the ceiling stops the gain short of the target.
  const LoudnessGain limited = loudness_gain(-30, -5);
  EXPECT_TRUE(limited.peak_limited);
  EXPECT_DOUBLE_EQ(limited.gain_db, 4);
  EXPECT_DOUBLE_EQ(limited.true_peak_dbtp, kTruePeakCeiling_dbtp);
  EXPECT_DOUBLE_EQ(limited.loudness_lufs, -26);
  // Silence is left alone.
  const LoudnessGain none = loudness_gain(-HUGE_VAL, -HUGE_VAL);
  EXPECT_DOUBLE_EQ(none.gain_db, 0);
  EXPECT_FALSE(none.peak_limited);
}

}  // namespace
}  // namespace kanoko::sonify
