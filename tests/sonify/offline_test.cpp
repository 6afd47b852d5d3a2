// The offline renderer (loopback device into a WAV) and the live player's clock handling.
#include <gtest/gtest.h>

#include <cmath>

#include "sonify/live.hpp"
#include "sonify/loudness.hpp"
#include "sonify/offline.hpp"
#include "tests/sonify/sonify_fixtures.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::sonify {
namespace KANOKO_UNITY_ID {

// Body 0's load jumps at t = 1.5 s; body 1 never changes. Frames every 0.1 s up to 4 s.
test::RunSpec one_cue_run() {
  test::RunSpec spec;
  spec.bodies = 2;
  spec.load = [](std::size_t b, double t) { return b == 0 && t >= 1.5 - 1e-9 ? 1.0 : 0.0; };
  spec.position = [](std::size_t b, double) { return Eigen::Vector3d(b == 0 ? 3.0 : -3.0, 0, 0); };
  return spec;
}

// Renders `reader` from 0 to 4 s at 10 fps (40 frames), heard from the origin looking along -z.
OfflineResult render_four_seconds(const trajectory::Reader& reader, const mapping::AudioSpec& audio,
                                  const std::filesystem::path& wav) {
  OfflineTiming timing;
  timing.end_s = 4.0;
  timing.fps = 10;
  timing.frames = 40;
  return render_offline_audio(reader, audio, timing, [](std::size_t) { return ListenerState{}; }, wav);
}

std::size_t first_loud_sample(const WavData& wav, float threshold) {
  for (std::size_t i = 0; i < wav.samples.size(); ++i) {
    if (std::abs(wav.samples[i]) > threshold) return i / static_cast<std::size_t>(wav.channels);
  }
  return wav.frames();
}

TEST(OfflineAudio, WavHasTheVideoLengthAndTheCueStartsOnTime) {
  test::TempDir dir;
  test::write_run(dir / "r.kntj", one_cue_run());
  const trajectory::Reader reader(dir / "r.kntj");
  const mapping::Mapping m = test::mapping_with_audio("[[audio.cue]]\nquantity = \"load\"\nrate = [5, inf]\n");
  for (const double speed : {1.0, 0.5}) {
    OfflineTiming timing;
    timing.begin_s = 0.5;
    timing.end_s = 4.0;
    timing.speed = speed;
    timing.fps = 30;
    timing.frames = static_cast<std::size_t>(std::round((timing.end_s - timing.begin_s) / speed * timing.fps));
    const auto listener = [](std::size_t) { return ListenerState{}; };
    const OfflineResult r = render_offline_audio(reader, m.audio, timing, listener, dir / "a.wav");
    const WavData wav = read_wav(dir / "a.wav");
    EXPECT_EQ(wav.sample_rate_hz, 48000);
    EXPECT_EQ(wav.channels, 2);
    // The WAV lasts exactly as long as the video: frames / fps.
    EXPECT_EQ(wav.frames(), static_cast<std::size_t>(std::llround(static_cast<double>(timing.frames) * 48000 / timing.fps)));
    EXPECT_EQ(r.samples, wav.frames());
    EXPECT_EQ(r.cues_played, 1U);
    // The cue's trace time 1.5 s is video time (1.5 − 0.5) / speed; it starts within one frame.
    const double expected_s = (1.5 - 0.5) / speed;
    const double onset_s = static_cast<double>(first_loud_sample(wav, 1e-4F)) / 48000;
    EXPECT_NEAR(onset_s, expected_s, 1.0 / timing.fps) << "speed " << speed;
    EXPECT_NEAR(r.first_cue_s, expected_s, 1.0 / 48000 + 1e-9);
    // Body 0 is on the listener's right.
    double left = 0, right = 0;
    for (std::size_t i = 0; i < wav.samples.size(); i += 2) {
      left += static_cast<double>(std::abs(wav.samples[i]));
      right += static_cast<double>(std::abs(wav.samples[i + 1]));
    }
    EXPECT_GT(right, 1.5 * left);
  }
}

// A body on the listener's left is louder in the left channel in the plain stereo mix and in the
// binaural (HRTF) one, and the two mixes differ.
TEST(OfflineAudio, HrtfAndPlainMixesBothPlaceALeftBodyOnTheLeft) {
  test::TempDir dir;
  test::RunSpec spec = one_cue_run();
  spec.position = [](std::size_t b, double) { return Eigen::Vector3d(b == 0 ? -3.0 : 3.0, 0, 0); };
  test::write_run(dir / "r.kntj", spec);
  const trajectory::Reader reader(dir / "r.kntj");
  mapping::Mapping m = test::mapping_with_audio("[[audio.cue]]\nquantity = \"load\"\nrate = [5, inf]\n");
  std::vector<WavData> mixes;
  for (const auto hrtf : {mapping::HrtfRequest::Off, mapping::HrtfRequest::On}) {
    m.audio.hrtf = hrtf;
    const OfflineResult r = render_four_seconds(reader, m.audio, dir / "a.wav");
    EXPECT_EQ(r.hrtf_enabled, hrtf == mapping::HrtfRequest::On) << r.hrtf_status;
    EXPECT_EQ(r.cues_played, 1U);
    EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
    mixes.push_back(read_wav(dir / "a.wav"));
    const WavData& wav = mixes.back();
    double left = 0, right = 0;
    for (std::size_t i = 0; i < wav.samples.size(); i += 2) {
      const auto l = static_cast<double>(wav.samples[i]);
      const auto r2 = static_cast<double>(wav.samples[i + 1]);
      left += l * l;
      right += r2 * r2;
    }
    EXPECT_GT(left, 2 * right) << r.hrtf_status;
  }
  ASSERT_EQ(mixes[0].samples.size(), mixes[1].samples.size());
  double difference = 0, energy = 0;
  for (std::size_t i = 0; i < mixes[0].samples.size(); ++i) {
    const auto a = static_cast<double>(mixes[0].samples[i]);
    const double d = a - static_cast<double>(mixes[1].samples[i]);
    difference += d * d;
    energy += a * a;
  }
  EXPECT_GT(difference, 0.05 * energy) << "the binaural mix is not the plain one";
}

// The track is normalised to -16 LUFS with its true peak under -1 dBTP (measured again here on the
// written WAV with libebur128), whatever the master volume it was rendered at.
TEST(OfflineAudio, TrackIsNormalisedToTheTargetLoudness) {
  test::TempDir dir;
  test::write_run(dir / "r.kntj", one_cue_run());
  const trajectory::Reader reader(dir / "r.kntj");
  for (const char* volume : {"0.05", "1.0"}) {
    const mapping::Mapping m = test::mapping_with_audio(std::string("[audio]\nmaster_volume = ") + volume +
                                                        "\n[[audio.cue]]\nquantity = \"load\"\nrate = [5, inf]\n");
    const OfflineResult r = render_four_seconds(reader, m.audio, dir / "a.wav");
    const WavData wav = read_wav(dir / "a.wav");
    LoudnessMeter meter(wav.sample_rate_hz);
    meter.add(wav.samples);
    EXPECT_LE(meter.true_peak_dbtp(), kTruePeakCeiling_dbtp + 0.1) << volume;
    if (r.loudness.peak_limited) {
      EXPECT_FALSE(r.warnings.empty());
      EXPECT_NEAR(meter.integrated_lufs(), r.loudness.loudness_lufs, 0.2) << volume;
    } else {
      EXPECT_NEAR(meter.integrated_lufs(), kTargetLoudness_lufs, 0.2) << volume;
    }
    EXPECT_GT(meter.integrated_lufs(), kTargetLoudness_lufs - 1) << volume << ": " << r.loudness_before_lufs;
  }
}

// No cue fires: a warning that names the cue, what it watches and the rates the run has.
TEST(OfflineAudio, NoCueGivesAWarningThatSaysWhy) {
  test::TempDir dir;
  test::write_run(dir / "r.kntj", one_cue_run());
  const trajectory::Reader reader(dir / "r.kntj");
  const mapping::Mapping m = test::mapping_with_audio("[[audio.cue]]\nquantity = \"load\"\nrate = [50, inf]\n");
  const OfflineResult r = render_four_seconds(reader, m.audio, dir / "a.wav");
  EXPECT_EQ(r.cues_played, 0U);
  ASSERT_EQ(r.warnings.size(), 1U);
  // The load jumps by 1 in one 0.1 s frame: rates from 0 to 10 per second, below 50.
  EXPECT_NE(r.warnings[0].find("cue 1 watches the rate of 'load' entering [50, inf]"), std::string::npos)
      << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("stays within [0, 10]"), std::string::npos) << r.warnings[0];
}

TEST(OfflineAudio, FailureLeavesNoFile) {
  test::TempDir dir;
  test::write_run(dir / "r.kntj", one_cue_run());
  const trajectory::Reader reader(dir / "r.kntj");
  const mapping::Mapping m = test::mapping_with_audio("[[audio.cue]]\nquantity = \"bytes\"\n");
  OfflineTiming timing;
  timing.end_s = 4;
  timing.frames = 10;
  EXPECT_THROW((void)render_offline_audio(reader, m.audio, timing, [](std::size_t) { return ListenerState{}; },
                                          dir / "a.wav"),
               InputError);
  EXPECT_FALSE(std::filesystem::exists(dir / "a.wav"));
  EXPECT_EQ(test::list_dir(dir.path()).size(), 1U);  // only the run
}

TEST(WavFile, TruncatedAndMutatedFilesAreRejectedCleanly) {
  test::TempDir dir;
  std::vector<float> x(200);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.1 * static_cast<double>(i)));
  write_wav(dir / "a.wav", x, 8000);
  const WavData back = read_wav(dir / "a.wav");
  ASSERT_EQ(back.samples.size(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(back.samples[i], x[i], 1.0 / 32767 + 1e-6);
  const std::string bytes = test::read_text(dir / "a.wav");
  for (std::size_t n = 0; n < 44; ++n) {
    test::write_text(dir / "t.wav", bytes.substr(0, n));
    EXPECT_THROW((void)read_wav(dir / "t.wav"), InputError) << n;
  }
  for (std::size_t at = 0; at < 44; ++at) {
    std::string m = bytes;
    m[at] = static_cast<char>(m[at] ^ 0xFF);
    test::write_text(dir / "m.wav", m);
    try {
      (void)read_wav(dir / "m.wav");  // some flips (sample rate) still make a valid file
    } catch (const InputError&) {
    }
  }
}

ReplayState at(double t, bool paused = false, bool reversed = false) {
  ReplayState s;
  s.time_s = t;
  s.speed = 1;
  s.paused = paused;
  s.reversed = reversed;
  return s;
}

TEST(LivePlayer, SeekLeavesNoBacklogAndPauseHolds) {
  test::TempDir dir;
  test::RunSpec spec;
  spec.bodies = 3;
  spec.end_s = 6;
  // Every body's load steps up every second: cues at t = 1, 2, ..., 6 for each body.
  spec.load = [](std::size_t, double t) { return std::floor(t + 1e-9); };
  test::write_run(dir / "r.kntj", spec);
  const trajectory::Reader reader(dir / "r.kntj");
  const mapping::Mapping m = test::mapping_with_audio(
      "[audio]\nmax_voices = 32\ncue_length = 0.2\n[[audio.cue]]\nrate = [5, inf]\nrefractory = 0\n");
  EngineOptions options = engine_options(m.audio, reader);
  auto engine = Engine::open_loopback(options, assign_voices(m.audio, reader.meta()));
  LivePlayer player(reader, m.audio, *engine);
  ASSERT_EQ(player.cues().size(), 18U);  // t = 1 .. 6 for 3 bodies
  const ListenerState listener;
  std::vector<float> out(2 * 480);  // 10 ms of sound per 10 ms frame

  double t = 0.5;
  player.update(at(t), 0.0, listener);
  for (int k = 0; k < 60; ++k) {  // play 0.5 .. 1.1 s: the cues at 1 s start
    t += 0.01;
    player.update(at(t), 0.01, listener);
    engine->render(out);
  }
  EXPECT_EQ(player.started(), 3U);
  EXPECT_EQ(engine->playing(), 3U);

  // Seek to 4.5 s: 9 cues lie in between; none may play, and the sounding ones stop.
  player.update(at(4.5), 0.01, listener);
  EXPECT_EQ(player.jumps(), 1U);
  EXPECT_EQ(engine->playing(), 0U);
  EXPECT_EQ(player.started(), 3U);

  // Paused: time stands still, nothing starts.
  for (int k = 0; k < 10; ++k) player.update(at(4.5, true), 0.01, listener);
  EXPECT_EQ(player.started(), 3U);

  // Play on to 5.05 s: the cues at 5 s start.
  t = 4.5;
  for (int k = 0; k < 55; ++k) {
    t += 0.01;
    player.update(at(t), 0.01, listener);
    engine->render(out);
  }
  EXPECT_EQ(player.started(), 6U);
  EXPECT_EQ(player.jumps(), 1U);

  // Reversed, back over 5 s: fires again (heard while scrubbing backwards).
  for (int k = 0; k < 20; ++k) {
    t -= 0.01;
    player.update(at(t, false, true), 0.01, listener);
    engine->render(out);
  }
  EXPECT_EQ(player.started(), 9U);
  EXPECT_EQ(player.jumps(), 1U);
}

TEST(LivePlayer, PitchFollowsSpeedOnlyWhenAsked) {
  test::TempDir dir;
  test::RunSpec spec;  // one body (sine A3, 220 Hz) at the listener; load steps up at t = 1 s
  spec.load = [](std::size_t, double t) { return t >= 1.0 - 1e-9 ? 1.0 : 0.0; };
  test::write_run(dir / "r.kntj", spec);
  const trajectory::Reader reader(dir / "r.kntj");
  for (const bool follow : {false, true}) {
    const mapping::Mapping m = test::mapping_with_audio(
        std::string("[audio]\ncue_length = 0.5\npitch_follows_speed = ") + (follow ? "true" : "false") +
        "\n[[audio.cue]]\nrate = [5, inf]\n");
    auto engine = Engine::open_loopback(engine_options(m.audio, reader), assign_voices(m.audio, reader.meta()));
    LivePlayer player(reader, m.audio, *engine);
    ReplayState s = at(0.95);
    player.update(s, 0, ListenerState{});  // starts at speed 1
    s.speed = 2;                           // twice as fast: crosses the cue at 1 s
    s.time_s = 1.01;
    player.update(s, 0.03, ListenerState{});
    ASSERT_EQ(player.started(), 1U);
    std::vector<float> out(2 * 9600);
    engine->render(out);
    EXPECT_NEAR(test::zero_crossing_hz(out, 48000), follow ? 440.0 : 220.0, 5.0) << follow;
  }
}

TEST(LivePlayer, SilentEngineChangesNothingElse) {
  test::TempDir dir;
  test::write_run(dir / "r.kntj", one_cue_run());
  const trajectory::Reader reader(dir / "r.kntj");
  const mapping::Mapping m = test::mapping_with_audio("[[audio.cue]]\nrate = [5, inf]\n");
  std::string message;
  auto engine = Engine::open_device(engine_options(m.audio, reader), assign_voices(m.audio, reader.meta()),
                                    "kanoko-no-such-device", message);
  ASSERT_TRUE(engine->silent());
  LivePlayer player(reader, m.audio, *engine);
  EXPECT_EQ(player.cues().size(), 1U);
  for (int k = 0; k <= 40; ++k) player.update(at(0.1 * k), 0.1, ListenerState{});
  EXPECT_EQ(player.started(), 0U);
  EXPECT_EQ(player.jumps(), 0U);
}

}  // namespace
}  // namespace kanoko::sonify
