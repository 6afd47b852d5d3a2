// Pick and inspect: analytic ray picking, the panel text, and synthetic clicks through the real
// osgViewer event dispatch (embedded window, no display needed).
#include <gtest/gtest.h>

#include <array>
#include <osgViewer/Viewer>
#include <vector>

#include "src/scene/inspect.hpp"
#include "src/scene/playback.hpp"
#include "src/scene/replay_clock.hpp"
#include "src/scene/scene.hpp"
#include "tests/scene/tiny_run.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using test::TempDir;

Eigen::Matrix3Xd three_in_a_row() {
  Eigen::Matrix3Xd p(3, 3);
  p.col(0) << 0, 0, 0;
  p.col(1) << 0, 0, 5;
  p.col(2) << 3, 0, 0;
  return p;
}

TEST(PickBody, NearestSphereAlongTheRayWins) {
  const Eigen::Matrix3Xd p = three_in_a_row();
  const std::vector<double> radii{1.0, 1.0, 0.5};
  // From above looking down -z: body 1 (z = 5) is in front of body 0.
  const Ray down{{0, 0, 10}, {0, 0, -1}};
  const auto hit = pick_body(down, p, radii);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->index, 1U);
  EXPECT_NEAR(hit->distance, 4.0, 1e-12);
  // Looking up from below: body 0 first.
  const auto up = pick_body(Ray{{0, 0, -10}, {0, 0, 2}}, p, radii);
  ASSERT_TRUE(up);
  EXPECT_EQ(up->index, 0U);
  EXPECT_NEAR(up->distance, 4.5, 1e-12);  // 9 units at |direction| = 2
  // Just beside body 2 (radius 0.5), then just inside its outline.
  EXPECT_FALSE(pick_body(Ray{{3.51, 0, 10}, {0, 0, -1}}, p, radii));
  const auto edge = pick_body(Ray{{3.49, 0, 10}, {0, 0, -1}}, p, radii);
  ASSERT_TRUE(edge);
  EXPECT_EQ(edge->index, 2U);
  // Behind the eye does not count.
  EXPECT_FALSE(pick_body(Ray{{3, 0, -10}, {0, 0, -1}}, p, radii));
}

TEST(PickBody, EyeInsideASphereHitsIt) {
  const Eigen::Matrix3Xd p = three_in_a_row();
  const std::vector<double> radii{1.0, 1.0, 0.5};
  const auto hit = pick_body(Ray{{0.2, 0, 0}, {1, 0, 0}}, p, radii);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->index, 0U);
}

TEST(PickSpring, WithinTheToleranceOfTheSegmentOnly) {
  const Eigen::Matrix3Xd p = three_in_a_row();
  const std::vector<std::array<std::uint32_t, 2>> edges{{0U, 2U}, {0U, 1U}};
  // Down through the middle of the 0–2 spring (x = 1.5, on the x axis).
  auto hit = pick_spring(Ray{{1.5, 0.05, 10}, {0, 0, -1}}, p, edges, 0.1);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->kind, Pick::Kind::spring);
  EXPECT_EQ(hit->index, 0U);
  EXPECT_FALSE(pick_spring(Ray{{1.5, 0.2, 10}, {0, 0, -1}}, p, edges, 0.1));
  // Beyond the end of the segment.
  EXPECT_FALSE(pick_spring(Ray{{3.3, 0, 10}, {0, 0, -1}}, p, edges, 0.1));
  // Sideways through the 0–1 spring, which is along z.
  hit = pick_spring(Ray{{-10, 0.05, 2.5}, {1, 0, 0}}, p, edges, 0.1);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->index, 1U);
  EXPECT_NEAR(hit->distance, 10.0, 1e-9);
}

TEST(Pick, BodiesWinOverSprings) {
  const Eigen::Matrix3Xd p = three_in_a_row();
  const std::vector<double> radii{1.0, 1.0, 0.5};
  const std::vector<std::array<std::uint32_t, 2>> edges{{0U, 2U}};
  // From below, through body 0 where the 0-2 spring starts inside it.
  const auto hit = pick(Ray{{0.5, 0, -10}, {0, 0, 1}}, p, radii, edges, 0.2);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->kind, Pick::Kind::body);
  EXPECT_EQ(hit->index, 0U);
  const auto spring = pick(Ray{{2.0, 0, 10}, {0, 0, -1}}, p, radii, edges, 0.2);
  ASSERT_TRUE(spring);
  EXPECT_EQ(spring->kind, Pick::Kind::spring);
}

TEST(Describe, BodyPanelNamesTheBodyItsStatsAndNeighbours) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj", /*growing_blue_mass=*/true);
  const trajectory::Reader reader(dir / "run.kntj");
  const std::string red = describe_body(reader, 0, 3.0);
  EXPECT_NE(red.find("red  (rank 0)"), std::string::npos) << red;
  EXPECT_NE(red.find("node0"), std::string::npos) << red;
  EXPECT_NE(red.find("load (interval)"), std::string::npos) << red;
  EXPECT_NE(red.find("springs to"), std::string::npos) << red;
  EXPECT_NE(red.find("green"), std::string::npos) << red;
  EXPECT_NE(red.find("speed"), std::string::npos) << red;
  EXPECT_NE(red.find(" units/s\n"), std::string::npos) << "the speed has its unit: " << red;
  // The statistics are those at the asked time: blue's mass is 1 before 5 s and 8 after.
  const std::string blue_early = describe_body(reader, 2, 4.0);
  const std::string blue_late = describe_body(reader, 2, 6.0);
  EXPECT_NE(blue_early.find("mass                  1\n"), std::string::npos) << blue_early;
  EXPECT_NE(blue_late.find("mass                  8\n"), std::string::npos) << blue_late;
  EXPECT_NE(blue_late.find("springs to            none"), std::string::npos) << blue_late;
  EXPECT_DOUBLE_EQ(body_speed(reader, 0, 3.3), 0.0);
}

TEST(Describe, SpringPanelNamesThePairAndItsLength) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const trajectory::Reader reader(dir / "run.kntj");
  const std::string text = describe_spring(reader, 0, 2.0);
  EXPECT_NE(text.find("red  (rank 0) -- green  (rank 1)"), std::string::npos) << text;
  EXPECT_NE(text.find("length                4.031 (at start 4.031, +0.0%)"), std::string::npos)
      << text;
}

constexpr int kW = 320;
constexpr int kH = 240;

// Clicks go through osgViewer's dispatch on an embedded window (no GL context) with the camera
// the renderer uses, so a body's projected position is known.
class ClickTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_tiny_run(dir_ / "run.kntj");
    reader_ = std::make_unique<trajectory::Reader>(dir_ / "run.kntj");
    scene_ = std::make_unique<TrajectoryScene>(*reader_, kW, kH);
    clock_ = std::make_unique<ReplayClock>(0.0, test::kTinyRunEnd_s, 1.0);
    window_ = viewer_.setUpViewerAsEmbeddedInWindow(0, 0, kW, kH);
    camera_ = render_camera(*reader_, kW, kH);
    viewer_.getCamera()->setViewMatrix(camera_.view);
    viewer_.getCamera()->setProjectionMatrix(camera_.projection);
    viewer_.setSceneData(scene_->root());
    viewer_.addEventHandler(new PlaybackHandler(*clock_, *scene_, {0.0, 10.0}));
  }
  osg::Vec3d projected(int body) const {
    const Eigen::Matrix3Xd p = test::tiny_run_positions();
    return camera_.to_window(osg::Vec3d(p(0, body), p(1, body), p(2, body)));
  }
  // Press at (x0, y0) and release at (x1, y1), pixels with y up.
  void press_release(double x0, double y0, double x1, double y1) {
    window_->getEventQueue()->mouseButtonPress(static_cast<float>(x0), static_cast<float>(kH - y0),
                                               1);
    window_->getEventQueue()->mouseMotion(static_cast<float>(x1), static_cast<float>(kH - y1));
    window_->getEventQueue()->mouseButtonRelease(static_cast<float>(x1),
                                                 static_cast<float>(kH - y1), 1);
    viewer_.advance();  // events are only taken when older than the frame's reference time
    viewer_.eventTraversal();
  }
  void click(double x, double y) { press_release(x, y, x, y); }

  TempDir dir_;
  std::unique_ptr<trajectory::Reader> reader_;
  std::unique_ptr<TrajectoryScene> scene_;
  std::unique_ptr<ReplayClock> clock_;
  CameraMatrices camera_;
  osgViewer::Viewer viewer_;
  osg::ref_ptr<osgViewer::GraphicsWindowEmbedded> window_;
};

TEST_F(ClickTest, ClickOnEachBodySelectsItWhilePlaying) {
  for (int body = 0; body < 3; ++body) {
    const osg::Vec3d w = projected(body);
    click(w.x(), w.y());
    ASSERT_TRUE(scene_->selection()) << body;
    EXPECT_EQ(scene_->selection()->kind, Pick::Kind::body);
    EXPECT_EQ(scene_->selection()->index, static_cast<std::size_t>(body));
    EXPECT_FALSE(clock_->paused()) << "picking does not need a pause";
  }
  const std::string panel = scene_->inspect_text();
  EXPECT_EQ(panel.rfind("blue", 0), 0U) << panel;
}

TEST_F(ClickTest, ClickOnTheSpringSelectsThePairAndEmptySpaceClears) {
  const osg::Vec3d a = projected(0);
  const osg::Vec3d b = projected(1);
  click(0.5 * (a.x() + b.x()), 0.5 * (a.y() + b.y()));
  ASSERT_TRUE(scene_->selection());
  EXPECT_EQ(scene_->selection()->kind, Pick::Kind::spring);
  EXPECT_EQ(scene_->selection()->index, 0U);
  EXPECT_NE(scene_->inspect_text().find("red  (rank 0) -- green"), std::string::npos);
  click(8.0, 8.0);
  EXPECT_FALSE(scene_->selection());
  EXPECT_TRUE(scene_->inspect_text().empty());
}

TEST_F(ClickTest, DragDoesNotSelect) {
  const osg::Vec3d w = projected(2);
  press_release(w.x(), w.y(), w.x() + 30.0, w.y());
  EXPECT_FALSE(scene_->selection());
}

TEST_F(ClickTest, SelectionFollowsTheBodyAndPanelFollowsTime) {
  const osg::Vec3d w = projected(0);
  click(w.x(), w.y());
  ASSERT_TRUE(scene_->selection());
  scene_->set_time(7.0);
  EXPECT_NE(scene_->inspect_text().find("red"), std::string::npos);
  EXPECT_EQ(scene_->selection()->index, 0U);
}

}  // namespace
}  // namespace kanoko::scene
