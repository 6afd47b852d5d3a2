// Navigation: manipulator switching, follow mode and bookmarks, driven through osgViewer's event
// dispatch on an embedded window (no display needed).
#include <gtest/gtest.h>

#include <osgGA/DriveManipulator>
#include <osgGA/FlightManipulator>
#include <osgGA/TrackballManipulator>
#include <osgViewer/Viewer>

#include "src/scene/navigation.hpp"
#include "src/scene/playback.hpp"
#include "src/scene/replay_clock.hpp"
#include "src/scene/scene.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using test::TempDir;
using GEA = osgGA::GUIEventAdapter;

constexpr int kW = 320;
constexpr int kH = 240;

// Two bodies; body 0 moves from x = 0 to x = 10 over 10 s at unit speed, body 1 stays at (0, 4, 0).
void write_moving_run(const std::filesystem::path& path) {
  trajectory::Metadata meta;
  for (int i = 0; i < 2; ++i) {
    trajectory::BodyInfo b;
    b.name = "b" + std::to_string(i);
    b.rank = i;
    b.radius = 0.5F;
    meta.bodies.push_back(b);
  }
  meta.stat_names = {trajectory::stat::kLoad, trajectory::stat::kMass};
  meta.dt_s = 0.1;
  meta.interval_s = 1.0;
  meta.trace_end_s = 10.0;
  meta.integrator = "rk4";
  trajectory::Writer writer(path, meta);
  for (int k = 0; k <= 10; ++k) {
    Eigen::Matrix3Xd p(3, 2);
    p.col(0) << k, 0, 0;
    p.col(1) << 0, 4, 0;
    Eigen::Matrix3Xd v = Eigen::Matrix3Xd::Zero(3, 2);
    v(0, 0) = 1.0;
    writer.append_frame(k, p, v, Eigen::MatrixXd::Ones(2, 2));
  }
  writer.commit();
}

class NavigationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    write_moving_run(dir_ / "run.kntj");
    reader_ = std::make_unique<trajectory::Reader>(dir_ / "run.kntj");
    scene_ = std::make_unique<TrajectoryScene>(*reader_, kW, kH);
    clock_ = std::make_unique<ReplayClock>(0.0, 10.0, 1.0);
    clock_->pause();
    window_ = viewer_.setUpViewerAsEmbeddedInWindow(0, 0, kW, kH);
    manipulators_ = make_manipulators(home_view(scene_->bound(), double(kW) / kH));
    navigation_ = new NavigationHandler(*manipulators_, *scene_);
    osg::ref_ptr<ReplayUpdateCallback> replay = new ReplayUpdateCallback(*clock_, *scene_);
    replay->addNestedCallback(new FollowCallback(*navigation_));
    scene_->root()->setUpdateCallback(replay.get());
    viewer_.setSceneData(scene_->root());
    viewer_.setCameraManipulator(manipulators_.get());
    viewer_.addEventHandler(new PlaybackHandler(*clock_, *scene_, {}));
    viewer_.addEventHandler(navigation_.get());
    step();
  }
  void step() {
    viewer_.advance();
    viewer_.eventTraversal();
    viewer_.updateTraversal();
  }
  void key(int k, int modifiers = 0) {
    window_->getEventQueue()->getCurrentEventState()->setModKeyMask(modifiers);
    window_->getEventQueue()->keyPress(k);
    window_->getEventQueue()->keyRelease(k);
    step();
    window_->getEventQueue()->getCurrentEventState()->setModKeyMask(0);
  }
  osg::Vec3d eye() const { return manipulators_->getMatrix().getTrans(); }

  TempDir dir_;
  std::unique_ptr<trajectory::Reader> reader_;
  std::unique_ptr<TrajectoryScene> scene_;
  std::unique_ptr<ReplayClock> clock_;
  osgViewer::Viewer viewer_;
  osg::ref_ptr<osgViewer::GraphicsWindowEmbedded> window_;
  osg::ref_ptr<osgGA::KeySwitchMatrixManipulator> manipulators_;
  osg::ref_ptr<NavigationHandler> navigation_;
};

TEST_F(NavigationTest, NumberKeysSwitchManipulatorsAndSpaceDoesNotMoveTheCamera) {
  EXPECT_NE(dynamic_cast<osgGA::TrackballManipulator*>(
                manipulators_->getCurrentMatrixManipulator()),
            nullptr);
  key('2');
  EXPECT_NE(dynamic_cast<osgGA::FlightManipulator*>(manipulators_->getCurrentMatrixManipulator()),
            nullptr);
  key('3');
  EXPECT_NE(dynamic_cast<osgGA::DriveManipulator*>(manipulators_->getCurrentMatrixManipulator()),
            nullptr);
  key('1');
  ASSERT_NE(dynamic_cast<osgGA::TrackballManipulator*>(
                manipulators_->getCurrentMatrixManipulator()),
            nullptr);
  const osg::Matrixd moved = manipulators_->getMatrix() * osg::Matrixd::translate(1, 2, 3);
  manipulators_->setByMatrix(moved);
  key(' ');
  EXPECT_TRUE(clock_->paused() == false) << "Space resumed playback";
  EXPECT_LT((eye() - moved.getTrans()).length(), 1e-9) << "Space must not send the camera home";
}

TEST_F(NavigationTest, FollowKeepsTheCameraOffsetToTheSelectedBody) {
  scene_->select(Pick{Pick::Kind::body, 0, 0.0});
  key('f');
  ASSERT_TRUE(navigation_->following());
  const osg::Vec3d before = eye();
  clock_->seek(5.0);
  step();
  EXPECT_NEAR(scene_->positions()(0, 0), 5.0, 1e-12);
  const osg::Vec3d moved = eye() - before;
  EXPECT_NEAR(moved.x(), 5.0, 1e-9);
  EXPECT_NEAR(moved.y(), 0.0, 1e-9);
  EXPECT_NEAR(moved.z(), 0.0, 1e-9);
  key('f');
  EXPECT_FALSE(navigation_->following());
  clock_->seek(8.0);
  step();
  EXPECT_LT((eye() - before - osg::Vec3d(5, 0, 0)).length(), 1e-9);
}

TEST_F(NavigationTest, FollowNeedsASelectedBody) {
  key('f');
  EXPECT_FALSE(navigation_->following());
}

TEST_F(NavigationTest, ShiftFunctionKeyStoresABookmarkAndFunctionKeyReturnsToIt) {
  EXPECT_FALSE(navigation_->bookmark(1));
  const osg::Vec3d home_eye = eye();
  key(GEA::KEY_F2, GEA::MODKEY_LEFT_SHIFT);
  ASSERT_TRUE(navigation_->bookmark(1));
  manipulators_->setByMatrix(manipulators_->getMatrix() * osg::Matrixd::translate(3, 0, 0));
  step();
  EXPECT_GT((eye() - home_eye).length(), 1.0);
  key(GEA::KEY_F2);
  EXPECT_LT((eye() - home_eye).length(), 1e-6);
  // An empty slot leaves the camera alone.
  manipulators_->setByMatrix(manipulators_->getMatrix() * osg::Matrixd::translate(3, 0, 0));
  const osg::Vec3d away = eye();
  key(GEA::KEY_F5);
  EXPECT_LT((eye() - away).length(), 1e-9);
}

}  // namespace
}  // namespace kanoko::scene
