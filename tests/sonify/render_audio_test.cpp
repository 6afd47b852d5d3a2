// `kanoko render ... --audio out.wav`: the sound track of a rendered animation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "sonify/voices.hpp"
#if KANOKO_TEST_HAVE_SCENE
#include <osgGA/GUIActionAdapter>
#include <sstream>

#include "src/scene/audio_link.hpp"
#endif
#include "tests/sonify/sonify_fixtures.hpp"
#include "tests/support/test_support.hpp"

#if KANOKO_TEST_HAVE_SCENE
namespace kanoko::sonify {
namespace KANOKO_UNITY_ID {

// Body 0's load jumps at t = 2 s (frames every 0.1 s to 4 s); its [audio] is stored in the run.
void write_cue_run(const std::filesystem::path& path) {
  test::RunSpec spec;
  spec.bodies = 2;
  spec.load = [](std::size_t b, double t) { return b == 0 && t >= 2.0 - 1e-9 ? 1.0 : 0.0; };
  spec.position = [](std::size_t b, double) { return Eigen::Vector3d(b == 0 ? 1.0 : -1.0, 0, 0); };
  spec.mapping_text = "[forces.friction]\nbeta = 1\n[[audio.cue]]\nquantity = \"load\"\nrate = [5, inf]\n";
  test::write_run(path, spec);
}

TEST(RenderAudio, WavMatchesTheFramesAndTheCueTime) {
  test::TempDir dir;
  write_cue_run(dir / "r.kntj");
  // 4 s of trace at 2 trace s per video s, 10 fps: 20 frames, 2 s of video.
  const auto r = test::run_kanoko({"render", (dir / "r.kntj").string(), "-o", (dir / "f%03d.png").string(),
                                   "--size", "48x32", "--fps", "10", "--speed", "2", "--audio",
                                   (dir / "a.wav").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1 cues"), std::string::npos) << r.out;
  const WavData wav = read_wav(dir / "a.wav");
  EXPECT_EQ(wav.frames(), 20U * 48000 / 10);
  std::size_t onset = wav.frames();
  for (std::size_t i = 0; i < wav.samples.size(); ++i) {
    if (std::abs(wav.samples[i]) > 1e-4F) {
      onset = i / 2;
      break;
    }
  }
  // Trace time 2 s is video time 1 s; within one frame (0.1 s).
  EXPECT_NEAR(static_cast<double>(onset) / 48000, 1.0, 0.1);
}

TEST(RenderAudio, VideoCarriesTheSoundTrack) {
  if (test::run_program({"ffprobe", "-version"}).exit_code != 0) GTEST_SKIP() << "no ffprobe";
  test::TempDir dir;
  write_cue_run(dir / "r.kntj");
  const auto r = test::run_kanoko({"render", (dir / "r.kntj").string(), "-o", (dir / "v.mp4").string(),
                                   "--size", "48x32", "--fps", "10", "--audio", (dir / "a.wav").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("with sound"), std::string::npos) << r.out;
  const auto probe = test::run_program({"ffprobe", "-v", "error", "-show_entries", "stream=codec_type",
                                        "-of", "csv=p=0", (dir / "v.mp4").string()});
  EXPECT_NE(probe.out.find("video"), std::string::npos) << probe.out;
  EXPECT_NE(probe.out.find("audio"), std::string::npos) << probe.out;
}

// Integrated loudness of a file's audio as ffmpeg's ebur128 filter measures it ("I:" of its summary).
double ffmpeg_integrated_lufs(const std::filesystem::path& file) {
  const auto r = test::run_program({"ffmpeg", "-hide_banner", "-nostats", "-i", file.string(), "-af", "ebur128",
                                    "-f", "null", "-"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::size_t summary = r.err.find("Integrated loudness:");
  const std::size_t at = r.err.find("I:", summary == std::string::npos ? 0 : summary);
  if (summary == std::string::npos || at == std::string::npos) {
    ADD_FAILURE() << "no loudness summary from ffmpeg: " << r.err.substr(r.err.size() > 600 ? r.err.size() - 600 : 0);
    return 0;
  }
  return std::stod(r.err.substr(at + 2));
}

// Cues played, from the line "wrote A.wav (N cues, ...".
std::size_t cues_reported(const std::string& out) {
  const std::size_t at = out.find(".wav (");
  return at == std::string::npos ? 0 : std::stoul(out.substr(at + 6));
}

// The shipped paper mesh example (mappings/paper-mesh.toml on traces/mesh-skewed-light.kntr) makes
// sound by default, and its track measures -16 +- 1 LUFS with ffmpeg, in the WAV and in the video.
TEST(RenderAudio, PaperMeshMakesSoundAtTheTargetLoudness) {
  if (test::run_program({"ffmpeg", "-version"}).exit_code != 0) GTEST_SKIP() << "no ffmpeg";
  test::TempDir dir;
  const auto sim = test::run_kanoko({"simulate", (test::source_dir() / "traces" / "mesh-skewed-light.kntr").string(),
                                     "--mapping", (test::source_dir() / "mappings" / "paper-mesh.toml").string(),
                                     "-o", (dir / "mesh.kntj").string(), "-q"});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const auto r = test::run_kanoko({"render", (dir / "mesh.kntj").string(), "-o", (dir / "mesh.mp4").string(),
                                   "--size", "64x48", "--fps", "5", "--audio", (dir / "mesh.wav").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(cues_reported(r.out), 10U) << r.out;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("with sound"), std::string::npos) << r.out;
  EXPECT_NEAR(ffmpeg_integrated_lufs(dir / "mesh.wav"), -16.0, 1.0);
  EXPECT_NEAR(ffmpeg_integrated_lufs(dir / "mesh.mp4"), -16.0, 1.0);
}

// A run where no cue fires: a warning that says why, and the video gets no (silent) audio stream
// unless --silent-track asks for it.
TEST(RenderAudio, NoCueWarnsAndMuxesNoSilence) {
  if (test::run_program({"ffprobe", "-version"}).exit_code != 0) GTEST_SKIP() << "no ffprobe";
  test::TempDir dir;
  test::RunSpec spec;
  spec.bodies = 2;
  spec.mapping_text = "[forces.friction]\nbeta = 1\n";  // the default cue: a rising load; the load stays 0
  test::write_run(dir / "r.kntj", spec);
  const auto streams = [&](const std::string& video) {
    return test::run_program({"ffprobe", "-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0",
                              (dir / video).string()})
        .out;
  };
  auto r = test::run_kanoko({"render", (dir / "r.kntj").string(), "-o", (dir / "v.mp4").string(), "--size", "48x32",
                             "--fps", "5", "--audio", (dir / "a.wav").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(0 cues"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("warning: no sound cue fires in this run"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cue 1 watches the rate of 'load' entering [1, inf]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("stays within [0, 0]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not muxed"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "a.wav")) << "the WAV asked for is written";
  EXPECT_EQ(streams("v.mp4").find("audio"), std::string::npos) << streams("v.mp4");
  r = test::run_kanoko({"render", (dir / "r.kntj").string(), "-o", (dir / "w.mp4").string(), "--size", "48x32",
                        "--fps", "5", "--audio", (dir / "a.wav").string(), "--silent-track"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(streams("w.mp4").find("audio"), std::string::npos) << streams("w.mp4");
  // The options of the sound track need one.
  r = test::run_kanoko({"render", (dir / "r.kntj").string(), "-o", (dir / "x.mp4").string(), "--hrtf", "on"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--hrtf applies to the sound track"), std::string::npos) << r.err;
  r = test::run_kanoko({"render", (dir / "r.kntj").string(), "-o", (dir / "x.mp4").string(), "--audio",
                        (dir / "b.wav").string(), "--hrtf", "maybe"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--hrtf is on or off"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "x.mp4"));
  EXPECT_FALSE(std::filesystem::exists(dir / "b.wav"));
}

// --hrtf on through the command line: OpenAL Soft reports the binaural mix.
TEST(RenderAudio, HrtfOnIsReported) {
  test::TempDir dir;
  write_cue_run(dir / "r.kntj");
  const auto r = test::run_kanoko({"render", (dir / "r.kntj").string(), "-o", (dir / "f%03d.png").string(), "--size",
                                   "48x32", "--fps", "5", "--audio", (dir / "a.wav").string(), "--hrtf", "on"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("HRTF on"), std::string::npos) << r.out;
}

TEST(RenderAudio, BadRequestsAreRefused) {
  test::TempDir dir;
  write_cue_run(dir / "r.kntj");
  const auto picture = test::run_kanoko({"render", (dir / "r.kntj").string(), "-o", (dir / "p.png").string(),
                                         "--audio", (dir / "a.wav").string()});
  EXPECT_NE(picture.exit_code, 0);
  EXPECT_NE(picture.err.find("--audio applies to animations"), std::string::npos) << picture.err;
  const auto mp3 = test::run_kanoko({"render", (dir / "r.kntj").string(), "-o", (dir / "f%03d.png").string(),
                                     "--audio", (dir / "a.mp3").string()});
  EXPECT_NE(mp3.exit_code, 0);
  EXPECT_NE(mp3.err.find("name it '.wav'"), std::string::npos) << mp3.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "f000.png"));
  const auto folder = test::run_kanoko({"render", (dir / "r.kntj").string(), "-o", (dir / "f%03d.png").string(),
                                        "--audio", (dir / "missing" / "a.wav").string()});
  EXPECT_NE(folder.exit_code, 0);
  EXPECT_EQ(test::list_dir(dir.path()).size(), 1U) << "nothing but the run";
}

}  // namespace
}  // namespace kanoko::sonify

namespace kanoko::sonify {
namespace KANOKO_UNITY_ID {

// Standard error without LeakSanitizer's "Suppressions used" summary (sanitizer builds).
std::string without_sanitizer_report(const std::string& err) {
  const std::size_t at = err.find("-----------------------------------------------------\nSuppressions used:");
  return at == std::string::npos ? err : err.substr(0, at);
}

// `kanoko view` with no usable sound device: one message, a normal run, a normal screenshot.
TEST(ViewSound, NoDeviceGivesOneMessageAndANormalRun) {
  if (std::getenv("DISPLAY") == nullptr) GTEST_SKIP() << "needs a display (CI runs under xvfb-run)";
  test::TempDir dir;
  write_cue_run(dir / "r.kntj");
  const auto view = [&](const std::string& drivers, const std::string& shot, bool sound) {
    std::vector<std::string> argv{"env", "ALSOFT_DRIVERS=" + drivers, test::kanoko_binary(), "view",
                                  (dir / "r.kntj").string(), "--size", "160x120", "--exit-after", "1",
                                  "--speed", "4", "--screenshot", (dir / shot).string()};
    if (!sound) argv.emplace_back("--no-sound");
    return test::run_program(argv);
  };
  const auto silent = view("kanoko-no-such-driver", "a.png", true);
  ASSERT_EQ(silent.exit_code, 0) << silent.err;
  EXPECT_EQ(without_sanitizer_report(silent.err), "kanoko: no sound device could be opened: playing silently (set ALSOFT_DRIVERS "
                        "or check the sound setup)\n");
  EXPECT_TRUE(std::filesystem::exists(dir / "a.png"));
  const auto null_device = view("null", "b.png", true);
  ASSERT_EQ(null_device.exit_code, 0) << null_device.err;
  EXPECT_EQ(without_sanitizer_report(null_device.err), "");
  const auto off = view("kanoko-no-such-driver", "c.png", false);
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_EQ(without_sanitizer_report(off.err), "");  // --no-sound: the device is never opened
}

struct NoAction : osgGA::GUIActionAdapter {
  void requestRedraw() override {}
  void requestContinuousUpdate(bool) override {}
  void requestWarpPointer(float, float) override {}
};

bool press(scene::AudioLink& link, int key) {
  osg::ref_ptr<osgGA::GUIEventAdapter> ea = new osgGA::GUIEventAdapter;
  ea->setEventType(osgGA::GUIEventAdapter::KEYDOWN);
  ea->setKey(key);
  NoAction aa;
  return link.handle(*ea, aa);
}

TEST(AudioLink, LegendKeysAndListener) {
  test::TempDir dir;
  write_cue_run(dir / "r.kntj");
  const trajectory::Reader reader(dir / "r.kntj");
  const mapping::AudioSpec audio = stored_audio_section(reader, "r.kntj");
  ASSERT_EQ(audio.cues.size(), 1U);
  scene::TrajectoryScene world(reader, 320, 240);

  std::ostringstream messages;
  osg::ref_ptr<scene::AudioLink> silent =
      new scene::AudioLink(reader, audio, world, "kanoko-no-such-device", messages);
  EXPECT_NE(messages.str().find("no sound device"), std::string::npos);
  EXPECT_NE(silent->legend_text().find("b0: sine A3\nb1: triangle A3\nsound: no device"), std::string::npos)
      << silent->legend_text();
  silent = nullptr;

  messages.str("");
  osg::ref_ptr<scene::AudioLink> link = new scene::AudioLink(reader, audio, world, "", messages);
  EXPECT_EQ(messages.str(), "");  // ALSOFT_DRIVERS=null in the suite
  EXPECT_NE(link->legend_text().find("sound: 80 %"), std::string::npos) << link->legend_text();
  EXPECT_TRUE(press(*link, 'm'));
  EXPECT_TRUE(link->engine().muted());
  EXPECT_NE(link->legend_text().find("sound: muted"), std::string::npos);
  EXPECT_TRUE(press(*link, 'm'));
  EXPECT_TRUE(press(*link, ','));
  EXPECT_NEAR(link->engine().master_volume(), 0.7, 1e-9);
  EXPECT_FALSE(press(*link, 'q'));  // not a sound key

  // Playing through the cue at t = 2 s starts it once.
  scene::ReplayClock clock(0, 4, 1);
  const osg::Matrixd view = osg::Matrixd::lookAt(osg::Vec3d(0, 0, 5), osg::Vec3d(0, 0, 0), osg::Vec3d(0, 1, 0));
  link->update(clock, 0, view);
  for (int k = 0; k < 300; ++k) {
    clock.advance(0.01);
    link->update(clock, 0.01, view);
  }
  EXPECT_EQ(link->player().started(), 1U);
  EXPECT_EQ(link->player().jumps(), 0U);

  const ListenerState l = scene::listener_from_view(view);
  EXPECT_TRUE(l.position.isApprox(Eigen::Vector3d(0, 0, 5)));
  EXPECT_TRUE(l.forward.isApprox(Eigen::Vector3d(0, 0, -1)));
  EXPECT_TRUE(l.up.isApprox(Eigen::Vector3d(0, 1, 0)));
}

}  // namespace
}  // namespace kanoko::sonify
#endif  // KANOKO_TEST_HAVE_SCENE
