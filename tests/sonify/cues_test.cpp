// Cue detection from trajectory data, without any audio.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "sonify/cues.hpp"
#include "tests/sonify/sonify_fixtures.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::sonify {
namespace KANOKO_UNITY_ID {

CueRule load_rule(double lo, double hi, double refractory_s,
                  mapping::CueEdge edge = mapping::CueEdge::Enter) {
  CueRule r;
  r.quantity = "load";
  r.stat_row = 0;
  r.rate_min = lo;
  r.rate_max = hi;
  r.refractory_s = refractory_s;
  r.edge = edge;
  return r;
}

// Feeds one body's values at t = 0, 0.1, 0.2, ...
std::vector<Cue> feed_series(const CueRule& rule, const std::vector<double>& values) {
  CueDetector d({rule}, 1);
  std::vector<Cue> out;
  for (std::size_t k = 0; k < values.size(); ++k) {
    Eigen::MatrixXd v(1, 1);
    v(0, 0) = values[k];
    d.feed(0.1 * static_cast<double>(k), v, out);
  }
  return out;
}

TEST(CueDetector, FiresExactlyWhenTheRateEntersTheRange) {
  // Rate 0.5/s until t = 1.0, then 3/s: the rate over [1.0, 1.1] is the first in [1, inf).
  std::vector<double> load;
  for (int k = 0; k <= 30; ++k) {
    const double t = 0.1 * k;
    load.push_back(t <= 1.0 ? 0.5 * t : 0.5 + 3.0 * (t - 1.0));
  }
  const auto cues = feed_series(load_rule(1.0, 1e9, 0.5), load);
  ASSERT_EQ(cues.size(), 1U);  // stays inside: no repeat, not continuous
  EXPECT_DOUBLE_EQ(cues[0].time_s, 0.1 * 11);
  EXPECT_NEAR(cues[0].rate, 3.0, 1e-9);
  // One frame earlier the rate was outside: shifting the ramp by a frame shifts the cue.
  load.insert(load.begin(), 0.0);
  const auto later = feed_series(load_rule(1.0, 1e9, 0.5), load);
  ASSERT_EQ(later.size(), 1U);
  EXPECT_DOUBLE_EQ(later[0].time_s, 0.1 * 12);
}

TEST(CueDetector, RefractoryTimeSuppressesRepeats) {
  // The rate jumps into the range every 0.2 s (up 1, flat, up 1, flat ...).
  std::vector<double> load;
  double x = 0;
  for (int k = 0; k <= 40; ++k) {
    if (k % 2 == 1) x += 1.0;
    load.push_back(x);
  }
  const auto all = feed_series(load_rule(5.0, 1e9, 0.0), load);
  EXPECT_EQ(all.size(), 20U);  // every entry, at t = 0.1, 0.3, ...
  const auto limited = feed_series(load_rule(5.0, 1e9, 0.5), load);
  ASSERT_GE(limited.size(), 2U);
  for (std::size_t i = 1; i < limited.size(); ++i) {
    EXPECT_GE(limited[i].time_s - limited[i - 1].time_s, 0.5 - 1e-9);
    // ... and the next entry after the refractory time does fire (0.6 s apart, not 0.8).
    EXPECT_LT(limited[i].time_s - limited[i - 1].time_s, 0.7);
  }
  EXPECT_DOUBLE_EQ(limited[0].time_s, 0.1);
}

TEST(CueDetector, LeaveFiresWhenTheRateLeavesTheRange) {
  std::vector<double> load{0, 0, 1, 2, 3, 3, 3};  // rate 10/s over [0.1, 0.4], then 0
  const auto enter = feed_series(load_rule(5, 20, 0), load);
  ASSERT_EQ(enter.size(), 1U);
  EXPECT_DOUBLE_EQ(enter[0].time_s, 0.2);
  const auto leave = feed_series(load_rule(5, 20, 0, mapping::CueEdge::Leave), load);
  ASSERT_EQ(leave.size(), 1U);
  EXPECT_DOUBLE_EQ(leave[0].time_s, 0.5);
}

TEST(CueDetector, FallingRatesUseNegativeRanges) {
  std::vector<double> load{5, 5, 4, 3, 3};
  EXPECT_EQ(feed_series(load_rule(-20, -5, 0), load).size(), 1U);
  EXPECT_TRUE(feed_series(load_rule(5, 20, 0), load).empty());
}

TEST(CueDetector, BodiesAreIndependentAndRunsAreRead) {
  test::TempDir dir;
  test::RunSpec spec;
  spec.bodies = 3;
  // Body b's load steps up by 1 at t = 1 + b.
  spec.load = [](std::size_t b, double t) { return t >= 1.0 + static_cast<double>(b) - 1e-9 ? 1.0 : 0.0; };
  test::write_run(dir / "r.kntj", spec);
  const trajectory::Reader reader(dir / "r.kntj");
  const mapping::Mapping m = test::mapping_with_audio("[[audio.cue]]\nquantity = \"load\"\nrate = [5, inf]\n");
  const auto cues = detect_cues(reader, resolve_cue_rules(m.audio, reader.meta()));
  ASSERT_EQ(cues.size(), 3U);
  for (std::uint32_t b = 0; b < 3; ++b) {
    EXPECT_EQ(cues[b].body, b);
    EXPECT_NEAR(cues[b].time_s, 1.0 + b, 1e-9);
  }
}

TEST(CueDetector, SpeedIsWatchable) {
  test::TempDir dir;
  test::RunSpec spec;
  spec.velocity = [](std::size_t, double t) { return Eigen::Vector3d(t >= 2.0 - 1e-9 ? 4.0 : 0.0, 0, 0); };
  test::write_run(dir / "r.kntj", spec);
  const trajectory::Reader reader(dir / "r.kntj");
  const mapping::Mapping m = test::mapping_with_audio("[[audio.cue]]\nquantity = \"speed\"\nrate = [10, inf]\n");
  const auto cues = detect_cues(reader, resolve_cue_rules(m.audio, reader.meta()));
  ASSERT_EQ(cues.size(), 1U);
  EXPECT_NEAR(cues[0].time_s, 2.0, 1e-9);
}

TEST(CueDetector, FormulaBoundsAdaptToEachBody) {
  // Body 0 climbs at 1/s with one jump (rate 10) at t = 2; body 1 climbs at 8/s with a jump (rate
  // 40) at t = 3. A fixed threshold of 5 fires body 1 at its first frame; "half the body's peak
  // rate" is 5 for body 0 and 20 for body 1, so each fires at its own jump only.
  test::TempDir dir;
  test::RunSpec spec;
  spec.bodies = 2;
  spec.load = [](std::size_t b, double t) {
    return b == 0 ? t + (t >= 2.0 - 1e-9 ? 0.9 : 0.0) : 8.0 * t + (t >= 3.0 - 1e-9 ? 3.2 : 0.0);
  };
  test::write_run(dir / "r.kntj", spec);
  const trajectory::Reader reader(dir / "r.kntj");
  const auto cues_for = [&](const std::string& rate) {
    const mapping::Mapping m = test::mapping_with_audio("[[audio.cue]]\nrate = [" + rate + ", inf]\n");
    return detect_cues(reader, resolve_cue_rules(m.audio, reader.meta()));
  };
  const auto fixed = cues_for("5");
  ASSERT_EQ(fixed.size(), 2U);
  EXPECT_EQ(fixed[0].body, 1U);
  EXPECT_NEAR(fixed[0].time_s, 0.1, 1e-9);
  const auto adaptive = cues_for("\"0.5 * peak_rate\"");
  ASSERT_EQ(adaptive.size(), 2U);
  EXPECT_EQ(adaptive[0].body, 0U);
  EXPECT_NEAR(adaptive[0].time_s, 2.0, 1e-9);
  EXPECT_NEAR(adaptive[0].rate, 10.0, 1e-6);
  EXPECT_EQ(adaptive[1].body, 1U);
  EXPECT_NEAR(adaptive[1].time_s, 3.0, 1e-9);
  // The resolved bounds, and the run-wide statistics.
  const mapping::Mapping m = test::mapping_with_audio(
      "[[audio.cue]]\nrate = [\"0.5 * peak_rate\", \"all_peak_rate + count + index\"]\n");
  std::vector<CueRule> rules = resolve_cue_rules(m.audio, reader.meta());
  resolve_cue_thresholds(rules, reader);
  ASSERT_EQ(rules[0].body_min.size(), 2U);
  EXPECT_NEAR(rules[0].body_min[0], 5.0, 1e-6);
  EXPECT_NEAR(rules[0].body_min[1], 20.0, 1e-6);
  EXPECT_NEAR(rules[0].body_max[0], 42.0, 1e-6);
  EXPECT_NEAR(rules[0].body_max[1], 43.0, 1e-6);
}

TEST(CueDetector, FormulaBoundsThatFailForABodyNameIt) {
  test::TempDir dir;
  test::RunSpec spec;
  spec.bodies = 2;
  test::write_run(dir / "r.kntj", spec);
  const trajectory::Reader reader(dir / "r.kntj");
  const auto error_for = [&](const std::string& rate) -> std::string {
    const mapping::Mapping m = test::mapping_with_audio("[[audio.cue]]\nrate = " + rate + "\n");
    try {
      (void)detect_cues(reader, resolve_cue_rules(m.audio, reader.meta()));
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  const std::string nan = error_for("[\"sqrt(index - 1)\", inf]");
  EXPECT_NE(nan.find("m.toml:4:10"), std::string::npos) << nan;
  EXPECT_NE(nan.find("body b0"), std::string::npos) << nan;
  const std::string empty = error_for("[1, \"index + 0.5\"]");
  EXPECT_NE(empty.find("body b0"), std::string::npos) << empty;
  EXPECT_NE(empty.find("the range [1, 0.5] is empty"), std::string::npos) << empty;
}

TEST(CueRules, UnknownQuantityIsAnErrorWithASuggestion) {
  test::TempDir dir;
  test::write_run(dir / "r.kntj", test::RunSpec{});
  const trajectory::Reader reader(dir / "r.kntj");
  const mapping::Mapping m = test::mapping_with_audio("[audio]\n[[audio.cue]]\nquantity = \"lod\"\n");
  try {
    (void)resolve_cue_rules(m.audio, reader.meta());
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("m.toml:4:1"), std::string::npos) << what;
    EXPECT_NE(what.find("did you mean 'load'"), std::string::npos) << what;
    EXPECT_NE(what.find("speed"), std::string::npos) << what;
  }
}

TEST(CueMerging, CuesOfOneBodyInOneFrameBecomeOne) {
  const std::vector<Cue> cues{{1.00, 0, 0, 0.5F, 1}, {1.01, 0, 1, 0.9F, 2}, {1.02, 1, 0, 1.0F, 3},
                              {1.05, 0, 0, 0.2F, 4}};
  const auto merged = merge_cues_per_frame(cues, 0.0, 0.04);  // frames [1.00, 1.04), [1.04, 1.08)
  ASSERT_EQ(merged.size(), 3U);
  EXPECT_DOUBLE_EQ(merged[0].time_s, 1.00);
  EXPECT_FLOAT_EQ(merged[0].gain, 0.9F);  // the loudest of the frame
  EXPECT_EQ(merged[1].body, 1U);
  EXPECT_DOUBLE_EQ(merged[2].time_s, 1.05);
}

TEST(VoiceCap, HoldsWithTenThousandSimultaneousCues) {
  std::vector<Cue> cues;
  for (std::uint32_t b = 0; b < 10000; ++b) cues.push_back(Cue{2.0, b, 0, 0.5F + 0.0001F * static_cast<float>(b % 7), 0});
  const auto kept = cap_voices(cues, 16, 0.25);
  ASSERT_EQ(kept.size(), 16U);
  for (const Cue& c : kept) EXPECT_FLOAT_EQ(c.gain, 0.5F + 0.0006F);  // the loudest were kept
}

TEST(VoiceCap, NeverMoreThanTheCapSoundAtOnce) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> when(0, 10);
  std::vector<Cue> cues;
  for (std::uint32_t i = 0; i < 10000; ++i) cues.push_back(Cue{when(rng), i % 100, 0, 1, 0});
  std::sort(cues.begin(), cues.end(), [](const Cue& a, const Cue& b) { return a.time_s < b.time_s; });
  const double length = 0.3;
  const auto kept = cap_voices(cues, 8, length);
  EXPECT_GT(kept.size(), 200U);  // 10 s / 0.3 s × 8 voices ≈ 260 fit
  for (std::size_t i = 0; i < kept.size(); ++i) {
    std::size_t sounding = 0;
    for (std::size_t j = 0; j <= i; ++j) sounding += kept[j].time_s + length > kept[i].time_s ? 1U : 0U;
    ASSERT_LE(sounding, 8U) << "at t = " << kept[i].time_s;
  }
}

TEST(CuesCrossed, ForwardBackwardAndMergedPerBody) {
  const std::vector<Cue> cues{{1.0, 0, 0, 1, 0}, {2.0, 1, 0, 1, 0}, {2.5, 1, 0, 0.5F, 0}, {3.0, 0, 0, 1, 0}};
  std::vector<Cue> out;
  cues_crossed(cues, 0.5, 1.0, out);  // (0.5, 1.0]
  ASSERT_EQ(out.size(), 1U);
  out.clear();
  cues_crossed(cues, 1.0, 2.0, out);  // 1.0 was handled by the previous step
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].body, 1U);
  out.clear();
  cues_crossed(cues, 1.5, 2.9, out);  // two cues of body 1: merged
  EXPECT_EQ(out.size(), 1U);
  out.clear();
  cues_crossed(cues, 3.5, 2.5, out);  // backwards: [2.5, 3.5)
  ASSERT_EQ(out.size(), 2U);
  out.clear();
  cues_crossed(cues, 2.0, 2.0, out);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace kanoko::sonify
