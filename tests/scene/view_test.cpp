// The viewer: playback keys and dial clicks (dispatched without a display through an embedded
// window), `kanoko view` without a display, and a scripted run under Xvfb.
#include <gtest/gtest.h>

#include <osgDB/ReadFile>
#include <osgViewer/Viewer>
#include <string>
#include <vector>

#include "src/scene/navigation.hpp"
#include "src/scene/offscreen.hpp"
#include "src/scene/playback.hpp"
#include "src/scene/replay_clock.hpp"
#include "src/scene/scene.hpp"
#include "src/scene/viewer_ui.hpp"
#include "tests/scene/tiny_run.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using test::TempDir;

constexpr int kW = 320;
constexpr int kH = 240;

// A viewer on an embedded window (no GL context): events go through the real osgViewer
// dispatch to the PlaybackHandler.
class PlaybackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_tiny_run(dir_ / "run.kntj");
    reader_ = std::make_unique<trajectory::Reader>(dir_ / "run.kntj");
    scene_ = std::make_unique<TrajectoryScene>(*reader_, kW, kH);
    clock_ = std::make_unique<ReplayClock>(0.0, test::kTinyRunEnd_s, 1.0);
    std::vector<double> frames;
    for (std::size_t k = 0; k < reader_->frame_count(); ++k)
      frames.push_back(reader_->frame_time(k));
    window_ = viewer_.setUpViewerAsEmbeddedInWindow(0, 0, kW, kH);
    scene_->root()->setUpdateCallback(new ReplayUpdateCallback(*clock_, *scene_));
    viewer_.setSceneData(scene_->root());
    viewer_.addEventHandler(new PlaybackHandler(*clock_, *scene_, frames));
  }

  void dispatch() {
    viewer_.advance();  // events are only taken when older than the frame's reference time
    viewer_.eventTraversal();
  }
  void key(int k) {
    window_->getEventQueue()->keyPress(k);
    window_->getEventQueue()->keyRelease(k);
    dispatch();
  }
  // Click at window pixel (x, y) with y up; the window's queue takes y down, like X11.
  void click(double x, double y) {
    window_->getEventQueue()->mouseButtonPress(static_cast<float>(x), static_cast<float>(kH - y),
                                               1);
    window_->getEventQueue()->mouseButtonRelease(static_cast<float>(x), static_cast<float>(kH - y),
                                                 1);
    dispatch();
  }

  TempDir dir_;
  std::unique_ptr<trajectory::Reader> reader_;
  std::unique_ptr<TrajectoryScene> scene_;
  std::unique_ptr<ReplayClock> clock_;
  osgViewer::Viewer viewer_;
  osg::ref_ptr<osgViewer::GraphicsWindowEmbedded> window_;
};

TEST_F(PlaybackTest, SpaceTogglesPause) {
  key(' ');
  EXPECT_TRUE(clock_->paused());
  key(' ');
  EXPECT_FALSE(clock_->paused());
}

TEST_F(PlaybackTest, PlusAndMinusChangeSpeed) {
  key('+');
  EXPECT_DOUBLE_EQ(clock_->speed(), 2.0);
  key('-');
  key('-');
  EXPECT_DOUBLE_EQ(clock_->speed(), 0.5);
  key(osgGA::GUIEventAdapter::KEY_KP_Add);
  EXPECT_DOUBLE_EQ(clock_->speed(), 1.0);
}

TEST_F(PlaybackTest, ArrowsStepFramesAndHomeRestarts) {
  clock_->seek(3.5);
  key(osgGA::GUIEventAdapter::KEY_Right);
  EXPECT_TRUE(clock_->paused());
  EXPECT_DOUBLE_EQ(clock_->time_s(), 4.0);
  key(osgGA::GUIEventAdapter::KEY_Left);
  key(osgGA::GUIEventAdapter::KEY_Left);
  EXPECT_DOUBLE_EQ(clock_->time_s(), 2.0);
  key('r');
  EXPECT_TRUE(clock_->reversed());
  key(osgGA::GUIEventAdapter::KEY_Home);
  EXPECT_DOUBLE_EQ(clock_->time_s(), 0.0);
  EXPECT_FALSE(clock_->reversed());
  clock_->seek(7.0);
  key('0');
  EXPECT_DOUBLE_EQ(clock_->time_s(), 0.0);
}

TEST_F(PlaybackTest, ClickOnTheDialTogglesPauseElsewhereNot) {
  const DialLayout d = scene_->dial();
  click(d.centre_x_px + 0.3 * d.radius_px, d.centre_y_px - 0.2 * d.radius_px);
  EXPECT_TRUE(clock_->paused());
  click(d.centre_x_px, d.centre_y_px);
  EXPECT_FALSE(clock_->paused());
  click(20.0, 200.0);
  EXPECT_FALSE(clock_->paused());
  click(d.centre_x_px - 1.2 * d.radius_px, d.centre_y_px);  // just outside the disc
  EXPECT_FALSE(clock_->paused());
}

TEST_F(PlaybackTest, UpdateTraversalMovesTheSceneToTheClock) {
  clock_->seek(7.5);
  viewer_.updateTraversal();
  EXPECT_DOUBLE_EQ(scene_->time_s(), 7.5);
}

// Runs kanoko with DISPLAY removed from its environment.
test::CommandResult run_kanoko_without_display(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"env", "-u", "DISPLAY", test::kanoko_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return test::run_program(argv);
}

TEST(ViewCommand, WithoutDisplayFailsAndPointsToRender) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const auto r =
      run_kanoko_without_display({"view", (dir / "run.kntj").string(), "--exit-after", "1"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128) << "crashed: " << r.err;
  EXPECT_NE(r.err.find("display"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kanoko render"), std::string::npos) << r.err;
}

TEST(ViewCommand, ATraceIsSimulatedIntoTheCacheFolderAndShown) {
  if (!display_variable_set()) GTEST_SKIP() << "needs an X display; run under xvfb-run";
  TempDir dir;
  const std::string trace = (test::source_dir() / "traces" / "smpi" / "farm8-fattree.trace").string();
  const auto before = test::list_dir(test::source_dir() / "traces" / "smpi");
  const auto r = test::run_program({"env", "XDG_CACHE_HOME=" + dir.path().string(), test::kanoko_binary(), "view", trace,
                                    "--exit-after", "0.5", "--no-sound", "--screenshot", (dir / "shot.png").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("inferred mapping (purpose balance)"), std::string::npos) << r.err;
  const auto cached = test::list_dir(dir / "kanoko");
  ASSERT_EQ(cached.size(), 1U);
  EXPECT_NE(cached[0].find(".kntj"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir / "shot.png"));
  EXPECT_EQ(test::list_dir(test::source_dir() / "traces" / "smpi"), before) << "nothing is written beside the trace";
  // The second time the cached run is reused.
  const auto again = test::run_program({"env", "XDG_CACHE_HOME=" + dir.path().string(), test::kanoko_binary(), "view",
                                        trace, "--exit-after", "0.2", "--no-sound"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("reusing"), std::string::npos) << again.err;
}

TEST(ViewCommand, ATraceWithoutDisplayIsRefusedBeforeSimulating) {
  TempDir dir;
  const std::string trace = (test::source_dir() / "traces" / "smpi" / "farm8-fattree.trace").string();
  const auto r = test::run_program({"env", "-u", "DISPLAY", "XDG_CACHE_HOME=" + dir.path().string(),
                                    test::kanoko_binary(), "view", trace});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("kanoko render"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("inferred mapping"), std::string::npos) << "nothing simulated: " << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "kanoko")) << "no cache folder made";
}

TEST(ViewCommand, HelpListsThePlaybackKeys) {
  const auto r = test::run_kanoko({"view", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const auto& b : playback_bindings())
    EXPECT_NE(r.out.find(b.key), std::string::npos) << b.key;
  for (const auto& b : navigation_bindings())
    EXPECT_NE(r.out.find(b.key), std::string::npos) << b.key;
  for (const auto& b : interface_bindings())
    EXPECT_NE(r.out.find(b.action), std::string::npos) << b.key;
}

TEST(ViewCommand, ScriptedRunUnderXWritesAScreenshot) {
  if (!display_variable_set()) GTEST_SKIP() << "needs an X display; run under xvfb-run";
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const auto shot = dir / "shot.png";
  const auto layout = dir / "layout.json";
  test::write_text(dir / "script.txt", "frames 5\nlayout " + layout.string() + "\n");
  const auto r = test::run_kanoko({"view", (dir / "run.kntj").string(), "--size", "320x240", "--script",
                                   (dir / "script.txt").string(), "--screenshot", shot.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::exists(shot));
  EXPECT_GT(std::filesystem::file_size(shot), 0U);
  osg::ref_ptr<osg::Image> image = osgDB::readImageFile(shot.string());
  ASSERT_TRUE(image.valid());
  EXPECT_EQ(image->s(), 320);
  EXPECT_EQ(image->t(), 240);
  // The 3-D view is what the menu and the timeline leave; it starts at the same home view as the
  // renderer at that size: the red body is where it projects there.
  const std::string text = test::read_text(layout);
  const auto number_after = [&](const std::string& key, std::size_t from) {
    const std::size_t at = text.find("\"" + key + "\": ", from);
    EXPECT_NE(at, std::string::npos) << key;
    return std::stod(text.substr(at + key.size() + 4));
  };
  const std::size_t vp = text.find("\"viewport\"");
  const double vx = number_after("x", vp);
  const double vy = number_after("y", vp);
  const double vw = number_after("w", vp);
  const double vh = number_after("h", vp);
  const trajectory::Reader reader(dir / "run.kntj");
  const CameraMatrices cam = render_camera(reader, static_cast<int>(vw), static_cast<int>(vh));
  const Eigen::Matrix3Xd p = test::tiny_run_positions();
  const osg::Vec3d red = cam.to_window(osg::Vec3d(p(0, 0), p(1, 0), p(2, 0)));
  // Window pixels with y up: the view's bottom edge is 240 - (vy + vh) above the window's.
  const unsigned char* px = image->data(static_cast<unsigned>(vx + red.x()),
                                        static_cast<unsigned>(240 - (vy + vh) + red.y()));
  EXPECT_GT(px[0], 140);
  EXPECT_LT(px[1], 70);
  EXPECT_LT(px[2], 70);
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"layout.json", "run.kntj", "script.txt", "shot.png"}));
}

}  // namespace
}  // namespace kanoko::scene
