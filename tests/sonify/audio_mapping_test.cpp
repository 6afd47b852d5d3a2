// The mapping's [audio] section: values, defaults, and errors with file:line:column.
#include <gtest/gtest.h>

#include <random>

#include "sonify/voices.hpp"
#include "tests/sonify/sonify_fixtures.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::mapping {
namespace KANOKO_UNITY_ID {

std::string error_of(const std::string& audio) {
  try {
    (void)test::mapping_with_audio(audio);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(AudioMapping, DefaultsWithoutASection) {
  const Mapping m = test::mapping_with_audio("");
  EXPECT_FALSE(m.audio.present);
  ASSERT_EQ(m.audio.effective_cues().size(), 1U);
  EXPECT_EQ(m.audio.effective_cues()[0].quantity, "load");
  EXPECT_EQ(m.audio.max_voices, 16U);
  EXPECT_TRUE(m.audio.doppler);
  EXPECT_EQ(m.audio.hrtf, HrtfRequest::Auto);
}

TEST(AudioMapping, ReadsEveryKey) {
  const Mapping m = test::mapping_with_audio(R"(
[audio]
max_voices = 4
master_volume = 0.5
cue_length = 0.4
doppler = false
hrtf = "on"
pitch_follows_speed = true

[[audio.cue]]
quantity = "bytes_sent"
rate = [-inf, -100]
on = "leave"
refractory = 2
gain = 0.3

[[audio.cue]]
quantity = "speed"
rate = [1, 2.5]

[[audio.voice]]
body = "b1"
timbre = "bell"
pitch = 523.25

[[audio.voice]]
body = 0
timbre = "pluck"
)");
  const AudioSpec& a = m.audio;
  EXPECT_TRUE(a.present);
  EXPECT_EQ(a.max_voices, 4U);
  EXPECT_DOUBLE_EQ(a.master_volume, 0.5);
  EXPECT_DOUBLE_EQ(a.cue_length_s, 0.4);
  EXPECT_FALSE(a.doppler);
  EXPECT_EQ(a.hrtf, HrtfRequest::On);
  EXPECT_TRUE(a.pitch_follows_speed);
  ASSERT_EQ(a.cues.size(), 2U);
  EXPECT_EQ(a.cues[0].quantity, "bytes_sent");
  EXPECT_TRUE(std::isinf(a.cues[0].rate_min) && a.cues[0].rate_min < 0);
  EXPECT_DOUBLE_EQ(a.cues[0].rate_max, -100);
  EXPECT_EQ(a.cues[0].edge, CueEdge::Leave);
  EXPECT_DOUBLE_EQ(a.cues[0].refractory_s, 2);
  EXPECT_DOUBLE_EQ(a.cues[0].gain, 0.3);
  EXPECT_EQ(a.cues[0].where.line, 12);  // its [[audio.cue]] header
  EXPECT_DOUBLE_EQ(a.cues[1].rate_max, 2.5);
  ASSERT_EQ(a.voices.size(), 2U);
  EXPECT_EQ(a.voices[1].body, "0");

  // Voices against a run of three bodies b0, b1, b2.
  test::TempDir dir;
  test::RunSpec spec;
  spec.bodies = 3;
  test::write_run(dir / "r.kntj", spec);
  const trajectory::Reader reader(dir / "r.kntj");
  const auto voices = sonify::assign_voices(a, reader.meta());
  EXPECT_EQ(voices[1].timbre, Timbre::Bell);
  EXPECT_DOUBLE_EQ(voices[1].pitch_hz, 523.25);
  EXPECT_EQ(voices[1].label, "bell 523 Hz");
  EXPECT_EQ(voices[0].timbre, Timbre::Pluck);
  EXPECT_EQ(voices[0].label, "pluck A3");
  EXPECT_EQ(voices[2].label, sonify::automatic_voice(2).label);
}

TEST(AudioMapping, UnknownKeysAreReportedWithSuggestions) {
  const std::string e = error_of("[audio]\nmax_voice = 3\n[[audio.cue]]\nquantiy = \"load\"\n");
  EXPECT_NE(e.find("m.toml:4:13: error: unknown key 'max_voice' in [audio] (did you mean 'max_voices'?)"),
            std::string::npos) << e;
  EXPECT_NE(e.find("m.toml:6:11: error: unknown key 'quantiy' in [audio.cue] (did you mean 'quantity'?)"),
            std::string::npos) << e;
}

TEST(AudioMapping, BadRangesAreReported) {
  EXPECT_NE(error_of("[[audio.cue]]\nrate = [2, 1]\n").find("m.toml:4:8: error: 'rate' = [2, 1] is an empty range"),
            std::string::npos) << error_of("[[audio.cue]]\nrate = [2, 1]\n");
  EXPECT_NE(error_of("[[audio.cue]]\nrate = 3\n").find("'rate' must be [low, high]"), std::string::npos);
  EXPECT_NE(error_of("[[audio.cue]]\nrate = [1, true]\n").find("'rate' must be [low, high]"), std::string::npos);
  EXPECT_NE(error_of("[[audio.cue]]\nrate = [1, 2, 3]\n").find("'rate' must be [low, high]"), std::string::npos);
  EXPECT_NE(error_of("[[audio.cue]]\nrate = [-inf, inf]\n").find("holds every rate"), std::string::npos);
  EXPECT_NE(error_of("[[audio.cue]]\nrate = [nan, 1]\n").find("'rate' must be [low, high]"), std::string::npos);
}

TEST(AudioMapping, RateBoundsMayBeFormulasOverTheRunsRates) {
  const Mapping m = test::mapping_with_audio("[[audio.cue]]\nrate = [\"mean_rate + 3 * sd_rate\", inf]\n");
  ASSERT_EQ(m.audio.cues.size(), 1U);
  ASSERT_TRUE(m.audio.cues[0].rate_min_formula);
  EXPECT_EQ(m.audio.cues[0].rate_min_formula->text, "mean_rate + 3 * sd_rate");
  EXPECT_EQ(m.audio.cues[0].rate_min_formula->scope, Scope::Cue);
  EXPECT_FALSE(m.audio.cues[0].rate_max_formula);
  EXPECT_TRUE(std::isinf(m.audio.cues[0].rate_max));
  // Unknown names are located at their column, with a suggestion and the cue's variables.
  const std::string e = error_of("[[audio.cue]]\nrate = [\"2 * peak_rat\", inf]\n");
  EXPECT_NE(e.find("m.toml:4:14: error: 'rate': unknown name 'peak_rat'"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'peak_rate'"), std::string::npos) << e;
  EXPECT_NE(e.find("all_sd_rate"), std::string::npos) << e;
  // A body formula's variables are not a cue's.
  EXPECT_NE(error_of("[[audio.cue]]\nrate = [\"load\", inf]\n").find("unknown name 'load'"), std::string::npos);
}

TEST(AudioMapping, BadValuesAreReported) {
  EXPECT_NE(error_of("[audio]\nmax_voices = 0\n").find("'max_voices' = 0 is out of range"), std::string::npos);
  EXPECT_NE(error_of("[audio]\nmaster_volume = 2\n").find("'master_volume' = 2 is out of range"), std::string::npos);
  EXPECT_NE(error_of("[audio]\ndoppler = \"yes\"\n").find("'doppler' must be true or false"), std::string::npos);
  EXPECT_NE(error_of("[audio]\nhrtf = \"offf\"\n").find("did you mean 'off'"), std::string::npos);
  EXPECT_NE(error_of("[audio]\ncue = 3\n").find("write [[audio.cue]]"), std::string::npos);
  EXPECT_NE(error_of("[[audio.cue]]\non = \"entre\"\n").find("did you mean 'enter'"), std::string::npos);
  EXPECT_NE(error_of("[[audio.voice]]\ntimbre = \"bel\"\n").find("did you mean 'bell'"), std::string::npos);
  EXPECT_NE(error_of("[[audio.voice]]\nbody = -1\n").find("'body' must be a body name or a body index"),
            std::string::npos);
  // Several problems come out together.
  const std::string both = error_of("[audio]\nmax_voices = 0\nmaster_volume = -1\n");
  EXPECT_NE(both.find("max_voices"), std::string::npos);
  EXPECT_NE(both.find("master_volume"), std::string::npos);
}

TEST(AudioMapping, VoicesForMissingBodiesAreReported) {
  test::TempDir dir;
  test::write_run(dir / "r.kntj", test::RunSpec{});
  const trajectory::Reader reader(dir / "r.kntj");
  const Mapping m = test::mapping_with_audio("[[audio.voice]]\nbody = \"nobody\"\n[[audio.voice]]\nbody = 7\n");
  try {
    (void)sonify::assign_voices(m.audio, reader.meta());
    FAIL();
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("m.toml:3:1: error: the run has no body 'nobody'"), std::string::npos) << what;
    EXPECT_NE(what.find("the run has no body '7'"), std::string::npos) << what;
  }
}

TEST(AudioMapping, MutatedSectionsNeverCrash) {
  const std::string base =
      "[forces.friction]\nbeta = 1\n[audio]\nmax_voices = 4\nhrtf = \"off\"\n[[audio.cue]]\n"
      "quantity = \"load\"\nrate = [1, inf]\non = \"enter\"\n[[audio.voice]]\nbody = 0\ntimbre = \"bell\"\n";
  std::mt19937 rng(3);
  const std::string alphabet = "[]=\"., \n0123456789-infaudiocue";
  for (int i = 0; i < 400; ++i) {
    std::string text = base;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0: text.erase(at, 1); break;
        case 1: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        default: text[at] = alphabet[rng() % alphabet.size()]; break;
      }
    }
    if (i % 5 == 0) text.resize(rng() % text.size());
    try {
      (void)parse_mapping_text(text, "fuzz.toml");
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("fuzz.toml"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace kanoko::mapping
