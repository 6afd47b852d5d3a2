// The paused panel and the visual-parameter keys, through osgViewer's event dispatch on an
// embedded window (no display needed).
#include <gtest/gtest.h>

#include <osgViewer/Viewer>

#include "src/scene/control_panel.hpp"
#include "src/scene/playback.hpp"
#include "src/scene/replay_clock.hpp"
#include "src/scene/scene.hpp"
#include "tests/scene/tiny_run.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using test::TempDir;

constexpr int kW = 400;
constexpr int kH = 300;

class ControlPanelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_tiny_run(dir_ / "run.kntj");
    reader_ = std::make_unique<trajectory::Reader>(dir_ / "run.kntj");
    scene_ = std::make_unique<TrajectoryScene>(*reader_, kW, kH);
    clock_ = std::make_unique<ReplayClock>(0.0, test::kTinyRunEnd_s, 1.0);
    panel_ = std::make_unique<ControlPanel>(*clock_, *scene_);
    window_ = viewer_.setUpViewerAsEmbeddedInWindow(0, 0, kW, kH);
    osg::ref_ptr<ReplayUpdateCallback> replay = new ReplayUpdateCallback(*clock_, *scene_);
    replay->set_control_panel(panel_.get());
    scene_->root()->setUpdateCallback(replay.get());
    viewer_.setSceneData(scene_->root());
    osg::ref_ptr<PlaybackHandler> handler = new PlaybackHandler(*clock_, *scene_, {});
    handler->set_control_panel(panel_.get());
    viewer_.addEventHandler(handler.get());
    step();
  }
  void step() {
    viewer_.advance();
    viewer_.eventTraversal();
    viewer_.updateTraversal();
  }
  void click(const osg::Vec2d& at) {
    const auto x = static_cast<float>(at.x());
    const auto y = static_cast<float>(kH - at.y());
    window_->getEventQueue()->mouseButtonPress(x, y, 1);
    window_->getEventQueue()->mouseButtonRelease(x, y, 1);
    step();
  }
  void key(int k) {
    window_->getEventQueue()->keyPress(k);
    window_->getEventQueue()->keyRelease(k);
    step();
  }

  TempDir dir_;
  std::unique_ptr<trajectory::Reader> reader_;
  std::unique_ptr<TrajectoryScene> scene_;
  std::unique_ptr<ReplayClock> clock_;
  std::unique_ptr<ControlPanel> panel_;
  osgViewer::Viewer viewer_;
  osg::ref_ptr<osgViewer::GraphicsWindowEmbedded> window_;
};

TEST_F(ControlPanelTest, ShownOnlyWhilePaused) {
  EXPECT_FALSE(panel_->visible());
  const DialLayout d = scene_->dial();
  click({d.centre_x_px, d.centre_y_px});
  ASSERT_TRUE(clock_->paused());
  EXPECT_TRUE(panel_->visible());
  // The dial still resumes while the panel is up.
  click({d.centre_x_px, d.centre_y_px});
  EXPECT_FALSE(clock_->paused());
  EXPECT_FALSE(panel_->visible());
}

TEST_F(ControlPanelTest, ButtonsChangeSpeedAndVisualParameters) {
  clock_->pause();
  step();
  ASSERT_TRUE(panel_->visible());
  click(panel_->button_centre(PanelButton::faster));
  EXPECT_DOUBLE_EQ(clock_->speed(), 2.0);
  click(panel_->button_centre(PanelButton::slower));
  click(panel_->button_centre(PanelButton::slower));
  EXPECT_DOUBLE_EQ(clock_->speed(), 0.5);
  EXPECT_NE(panel_->text().find("speed    0.5 s/s"), std::string::npos) << panel_->text();

  const double r0 = scene_->drawn_radius(0);
  click(panel_->button_centre(PanelButton::larger_bodies));
  EXPECT_NEAR(scene_->drawn_radius(0), 1.25 * r0, 1e-12);
  click(panel_->button_centre(PanelButton::smaller_bodies));
  click(panel_->button_centre(PanelButton::smaller_bodies));
  EXPECT_NEAR(scene_->drawn_radius(0), r0 / 1.25, 1e-12);

  click(panel_->button_centre(PanelButton::labels));
  EXPECT_TRUE(scene_->visual().labels);
  click(panel_->button_centre(PanelButton::grid));
  EXPECT_TRUE(scene_->visual().grid);
  EXPECT_EQ(scene_->visual().spring_colours, SpringColours::tension);
  click(panel_->button_centre(PanelButton::spring_colours));
  EXPECT_EQ(scene_->visual().spring_colours, SpringColours::traffic);
  click(panel_->button_centre(PanelButton::spring_colours));
  EXPECT_EQ(scene_->visual().spring_colours, SpringColours::off);
  click(panel_->button_centre(PanelButton::spring_colours));
  EXPECT_EQ(scene_->visual().spring_colours, SpringColours::tension);
  click(panel_->button_centre(PanelButton::flashes));
  EXPECT_TRUE(scene_->visual().flashes);
  click(panel_->button_centre(PanelButton::longer_trails));
  EXPECT_DOUBLE_EQ(scene_->visual().trail_s, 0.25);
  click(panel_->button_centre(PanelButton::longer_trails));
  EXPECT_DOUBLE_EQ(scene_->visual().trail_s, 0.5);
  click(panel_->button_centre(PanelButton::shorter_trails));
  click(panel_->button_centre(PanelButton::shorter_trails));
  EXPECT_DOUBLE_EQ(scene_->visual().trail_s, 0.0);
  EXPECT_TRUE(clock_->paused()) << "panel clicks leave the pause alone";
  EXPECT_FALSE(scene_->selection()) << "panel clicks do not pick";
}

TEST_F(ControlPanelTest, ClicksWhilePlayingGoToTheSceneNotThePanel) {
  const osg::Vec2d faster = [&] {
    clock_->pause();
    step();
    const osg::Vec2d at = panel_->button_centre(PanelButton::faster);
    clock_->play();
    step();
    return at;
  }();
  click(faster);
  EXPECT_DOUBLE_EQ(clock_->speed(), 1.0);
}

TEST_F(ControlPanelTest, KeysToggleVisualParameters) {
  key('l');
  EXPECT_TRUE(scene_->visual().labels);
  key('g');
  EXPECT_TRUE(scene_->visual().grid);
  key('k');
  EXPECT_EQ(scene_->visual().spring_colours, SpringColours::traffic);
  key('x');
  EXPECT_TRUE(scene_->visual().flashes);
  key('t');
  EXPECT_DOUBLE_EQ(scene_->visual().trail_s, 0.25);
  key('T');
  EXPECT_DOUBLE_EQ(scene_->visual().trail_s, 0.0);
  key(']');
  EXPECT_DOUBLE_EQ(scene_->visual().body_scale, 1.25);
  key('[');
  key('[');
  EXPECT_DOUBLE_EQ(scene_->visual().body_scale, 0.8);
}

TEST(Trails, LongerDoublesFromAFortiethShorterHalvesToNone) {
  EXPECT_DOUBLE_EQ(longer_trail(0.0, 40.0), 1.0);
  EXPECT_DOUBLE_EQ(longer_trail(1.0, 40.0), 2.0);
  EXPECT_DOUBLE_EQ(longer_trail(32.0, 40.0), 40.0);
  EXPECT_DOUBLE_EQ(shorter_trail(4.0, 40.0), 2.0);
  EXPECT_DOUBLE_EQ(shorter_trail(1.0, 40.0), 0.0);
  EXPECT_DOUBLE_EQ(longer_trail(0.0, 0.0), 0.0);
}

TEST(TensionColour, GreyWhenUnchangedBlueCompressedRedStretched) {
  const osg::Vec3 same = tension_colour(2.0, 2.0);
  const osg::Vec3 stretched = tension_colour(2.5, 2.0);
  const osg::Vec3 compressed = tension_colour(1.5, 2.0);
  EXPECT_NEAR(same.x(), same.z(), 0.15F);
  EXPECT_GT(stretched.x(), 0.9F);
  EXPECT_LT(stretched.z(), 0.3F);
  EXPECT_GT(compressed.z(), 0.9F);
  EXPECT_LT(compressed.x(), 0.3F);
  // Half-way to saturation is between grey and red.
  const osg::Vec3 half = tension_colour(2.25, 2.0);
  EXPECT_GT(half.x(), same.x());
  EXPECT_LT(half.x(), stretched.x());
}

TEST(SpringColour, NeutralHighlightedWhenSelected) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const trajectory::Reader reader(dir / "run.kntj");
  TrajectoryScene scene(reader, 200, 150);
  const osg::Vec3 neutral = tension_colour(1.0, 1.0);
  EXPECT_EQ(scene.spring_colour(0), neutral);
  scene.select(Pick{Pick::Kind::spring, 0, 0.0});
  EXPECT_NE(scene.spring_colour(0), neutral);
  scene.select(std::nullopt);
  EXPECT_EQ(scene.spring_colour(0), neutral);
}

}  // namespace
}  // namespace kanoko::scene
