// Animations: frame timing, image-sequence names, and `kanoko render` writing a video (read back
// with ffprobe) or numbered PNGs, without any X server (EGL).
#include <gtest/gtest.h>

#include <osgDB/ReadFile>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/scene/scene.hpp"
#include "src/scene/video.hpp"
#include "tests/scene/tiny_run.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using test::TempDir;

TEST(VideoFrames, CountFollowsRangeSpeedAndFps) {
  VideoOptions o;
  o.begin_s = 2.0;
  o.end_s = 10.0;
  o.speed = 4.0;  // 8 trace seconds in 2 video seconds
  o.fps = 12.5;
  EXPECT_EQ(video_frame_count(o), 25U);
  EXPECT_DOUBLE_EQ(video_frame_time(o, 0), 2.0);
  EXPECT_DOUBLE_EQ(video_frame_time(o, 5), 2.0 + 5 * 4.0 / 12.5);
  EXPECT_DOUBLE_EQ(video_frame_time(o, 1000), 10.0);
  o.end_s = o.begin_s;  // a single instant is one frame
  EXPECT_EQ(video_frame_count(o), 1U);
}

TEST(ImageSequence, PatternsAndFrameNames) {
  EXPECT_TRUE(is_image_sequence("frames/%05d.png"));
  EXPECT_FALSE(is_image_sequence("out.mp4"));
  EXPECT_EQ(sequence_frame_path("frames/%05d.png", 7), std::filesystem::path("frames/00007.png"));
  EXPECT_EQ(sequence_frame_path("f%d.png", 123), std::filesystem::path("f123.png"));
  EXPECT_EQ(sequence_frame_path("100%%-%3d.png", 4), std::filesystem::path("100%-004.png"));
  EXPECT_THROW(static_cast<void>(sequence_frame_path("f%s.png", 1)), InputError);
  EXPECT_THROW(static_cast<void>(sequence_frame_path("f%d-%d.png", 1)), InputError);
  EXPECT_THROW(static_cast<void>(sequence_frame_path("f%.png", 1)), InputError);
}

TEST(CameraPathNames, ParseAndReject) {
  EXPECT_EQ(parse_camera_path("orbit", "--camera"), CameraPath::orbit);
  EXPECT_EQ(parse_camera_path("follow", "--camera"), CameraPath::follow);
  EXPECT_EQ(parse_camera_path("fixed", "--camera"), CameraPath::fixed);
  EXPECT_THROW(static_cast<void>(parse_camera_path("spin", "--camera")), InputError);
}

test::CommandResult run_without_display(const std::vector<std::string>& args,
                                        const std::string& path_override = "") {
  std::vector<std::string> argv{"env", "-u", "DISPLAY"};
  if (!path_override.empty()) argv.push_back("PATH=" + path_override);
  argv.push_back(test::kanoko_binary());
  argv.insert(argv.end(), args.begin(), args.end());
  return test::run_program(argv);
}

TEST(RenderVideo, Mp4HasTheExpectedFrameCountAndDuration) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const auto video = dir / "run.mp4";
  // 10 trace seconds at 5 s per video second: 2 s, 20 frames at 10 fps.
  const auto r = run_without_display({"render", (dir / "run.kntj").string(), "-o", video.string(),
                                      "--size", "96x72", "--fps", "10", "--speed", "5",
                                      "--camera", "orbit"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("20 frames"), std::string::npos) << r.out;
  const auto probe = test::run_program(
      {"ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
       "stream=nb_read_frames,duration,width,height", "-of", "default=nw=1", video.string()});
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  EXPECT_NE(probe.out.find("nb_read_frames=20\n"), std::string::npos) << probe.out;
  EXPECT_NE(probe.out.find("duration=2.000000\n"), std::string::npos) << probe.out;
  EXPECT_NE(probe.out.find("width=96\n"), std::string::npos) << probe.out;
  EXPECT_NE(probe.out.find("height=72\n"), std::string::npos) << probe.out;
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"run.kntj", "run.mp4"}));
}

TEST(RenderVideo, ImageSequenceFramesShowTheBodiesWhereTheCameraProjectsThem) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  std::filesystem::create_directory(dir / "frames");
  const auto r = run_without_display({"render", (dir / "run.kntj").string(), "-o",
                                      (dir / "frames" / "f%03d.png").string(), "--size", "320x240",
                                      "--fps", "2", "--from", "4", "--to", "6", "--speed", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::list_dir(dir / "frames"),
            (std::vector<std::string>{"f000.png", "f001.png", "f002.png", "f003.png"}));
  // The fixed camera is the still renderer's home view.
  const trajectory::Reader reader(dir / "run.kntj");
  const CameraMatrices cam = render_camera(reader, 320, 240);
  const Eigen::Matrix3Xd p = test::tiny_run_positions();
  osg::ref_ptr<osg::Image> image = osgDB::readImageFile((dir / "frames" / "f002.png").string());
  ASSERT_TRUE(image.valid());
  ASSERT_EQ(image->s(), 320);
  for (int body = 0; body < 3; ++body) {
    const osg::Vec3d w = cam.to_window(osg::Vec3d(p(0, body), p(1, body), p(2, body)));
    const unsigned char* px =
        image->data(static_cast<unsigned>(w.x()), static_cast<unsigned>(w.y()));
    for (int c = 0; c < 3; ++c) {
      if (c == body) {
        EXPECT_GT(px[c], 120) << "body " << body;
      } else {
        EXPECT_LT(px[c], 80) << "body " << body << " channel " << c;
      }
    }
  }
}

TEST(RenderVideo, BadOptionsAreClearErrorsAndLeaveNothing) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const std::string run = (dir / "run.kntj").string();
  const std::string out = (dir / "out.mp4").string();
  struct Case {
    std::vector<std::string> extra;
    const char* message;
  };
  const std::vector<Case> cases = {
      {{"--fps", "0"}, "--fps"},
      {{"--frame", "3"}, "--frame"},
      {{"--camera", "spin"}, "unknown camera"},
      {{"--follow", "green"}, "--camera follow"},
      {{"--camera", "follow", "--follow", "purple"}, "no body named 'purple'"},
      {{"--from", "6", "--to", "4"}, "--to must not be before --from"},
      {{"--to", "11"}, "outside the run"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"render", run, "-o", out};
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    const auto r = run_without_display(args);
    EXPECT_EQ(r.exit_code, 1) << c.message << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
  const auto still = run_without_display({"render", run, "-o", (dir / "a.png").string(), "--fps", "3"});
  EXPECT_NE(still.exit_code, 0);
  EXPECT_NE(still.err.find("applies to animations"), std::string::npos) << still.err;
  const auto pattern = run_without_display({"render", run, "-o", (dir / "f%d-%d.png").string()});
  EXPECT_NE(pattern.exit_code, 0);
  EXPECT_NE(pattern.err.find("exactly one %d"), std::string::npos) << pattern.err;
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"run.kntj"}));
}

TEST(RenderVideo, MissingFfmpegSaysHowToGetItAndLeavesNothing) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const auto r = run_without_display(
      {"render", (dir / "run.kntj").string(), "-o", (dir / "out.mp4").string(), "--size", "64x48"},
      "/nonexistent");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128) << "crashed: " << r.err;
  EXPECT_NE(r.err.find("cannot run ffmpeg"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("%05d.png"), std::string::npos) << r.err;
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"run.kntj"}));
}

// The programs a command starts see the user's environment, not the settings the command started
// itself again with (src/cli/main.cpp, choose_runtime_settings).
TEST(RenderVideo, FfmpegGetsTheUsersEnvironment) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  std::filesystem::create_directory(dir / "bin");
  test::write_text(dir / "bin" / "ffmpeg", "#!/bin/sh\nenv > \"" + (dir / "env.txt").string() + "\"\nexit 1\n");
  std::filesystem::permissions(dir / "bin" / "ffmpeg", std::filesystem::perms::owner_all);
  const auto r = test::run_program({"env", "-u", "DISPLAY", "-u", "GOMP_SPINCOUNT", "-u", "OMP_WAIT_POLICY",
                                    "PATH=" + (dir / "bin").string() + ":/usr/bin:/bin",
                                    "GLIBC_TUNABLES=glibc.malloc.arena_max=2", test::kanoko_binary(), "render",
                                    (dir / "run.kntj").string(), "-o", (dir / "out.mp4").string(), "--size", "64x48"});
  EXPECT_NE(r.exit_code, 0);  // this ffmpeg fails
  EXPECT_LT(r.exit_code, 128) << "crashed: " << r.err;
  const std::string env = "\n" + test::read_text(dir / "env.txt");
  EXPECT_NE(env.find("\nGLIBC_TUNABLES=glibc.malloc.arena_max=2\n"), std::string::npos) << env;
  EXPECT_EQ(env.find("GOMP_SPINCOUNT"), std::string::npos) << env;
  EXPECT_EQ(env.find("KANOKO_RUNTIME_CHOSEN"), std::string::npos) << env;
  EXPECT_EQ(env.find("KANOKO_USER_GLIBC_TUNABLES"), std::string::npos) << env;
}

}  // namespace
}  // namespace kanoko::scene
