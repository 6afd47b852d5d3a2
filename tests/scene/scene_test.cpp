// The scene graph and camera of a run, checked on the CPU (no GL context, no display).
#include "src/scene/scene.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <osg/Viewport>
#include <osgUtil/IntersectionVisitor>
#include <osgUtil/LineSegmentIntersector>

#include "tests/scene/tiny_run.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using test::TempDir;

// Picks the body under a window pixel with the same matrices the renderer uses.
int pick(const CameraMatrices& cam, osg::Node* world, double x, double y) {
  osg::ref_ptr<osg::Camera> camera = new osg::Camera;
  camera->setViewMatrix(cam.view);
  camera->setProjectionMatrix(cam.projection);
  camera->setViewport(new osg::Viewport(0, 0, cam.width_px, cam.height_px));
  camera->addChild(world);
  osg::ref_ptr<osgUtil::LineSegmentIntersector> hits =
      new osgUtil::LineSegmentIntersector(osgUtil::Intersector::WINDOW, x, y);
  osgUtil::IntersectionVisitor visitor(hits.get());
  camera->accept(visitor);
  if (!hits->containsIntersections()) return -1;
  const auto& path = hits->getFirstIntersection().nodePath;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    unsigned int id = 0;
    if ((*it)->getUserValue("body_id", id)) return static_cast<int>(id);
  }
  return -2;
}

TEST(Scene, BuildsOneTaggedTransformPerBodyAndPicksThem) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const trajectory::Reader reader(dir / "run.kntj");
  TrajectoryScene scene(reader, 320, 240);
  scene.set_time(5.0);
  const CameraMatrices cam = render_camera(reader, 320, 240);
  const Eigen::Matrix3Xd p = test::tiny_run_positions();
  for (int i = 0; i < 3; ++i) {
    const osg::Vec3d w = cam.to_window(osg::Vec3d(p(0, i), p(1, i), p(2, i)));
    EXPECT_EQ(pick(cam, scene.world(), w.x(), w.y()), i) << "body " << i;
  }
  EXPECT_EQ(pick(cam, scene.world(), 2.0, 238.0), -1);  // top-left corner: nothing there
}

TEST(Scene, HomeViewFramesEveryBodyInsideTheImage) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const trajectory::Reader reader(dir / "run.kntj");
  for (const auto& [w, h] : {std::pair{320, 240}, std::pair{240, 320}, std::pair{1000, 200}}) {
    const CameraMatrices cam = render_camera(reader, w, h);
    const Eigen::Matrix3Xd p = test::tiny_run_positions();
    for (int i = 0; i < 3; ++i) {
      const osg::Vec3d c(p(0, i), p(1, i), p(2, i));
      // Points on the sphere's surface along the screen axes stay inside the image too.
      for (const osg::Vec3d& d :
           {osg::Vec3d(1, 0, 0), osg::Vec3d(-1, 0, 0), osg::Vec3d(0, 1, 0), osg::Vec3d(0, -1, 0),
            osg::Vec3d(0, 0, 1), osg::Vec3d(0, 0, -1)}) {
        const osg::Vec3d win = cam.to_window(c + d * test::kTinyRunRadius);
        EXPECT_GT(win.x(), 0.0);
        EXPECT_LT(win.x(), w);
        EXPECT_GT(win.y(), 0.0);
        EXPECT_LT(win.y(), h);
        EXPECT_GT(win.z(), 0.0);  // between the clip planes
        EXPECT_LT(win.z(), 1.0);
      }
    }
  }
}

TEST(Scene, HomeViewLooksDownObliquely) {
  const HomeView h = home_view(osg::BoundingSphered(osg::Vec3d(1, 2, 3), 5.0), 4.0 / 3.0);
  osg::Vec3d look = h.centre - h.eye;
  look.normalize();
  EXPECT_LT(look.z(), -0.2);           // from above
  EXPECT_GT(look.z(), -0.7);           // but not from straight above
  EXPECT_GT(std::abs(look.x()), 0.2);  // and not along an axis
  EXPECT_GT(std::abs(look.y()), 0.2);
  EXPECT_LT(h.near_m, (h.centre - h.eye).length() - 5.0);
  EXPECT_GT(h.far_m, (h.centre - h.eye).length() + 5.0);
}

TEST(Scene, SphereVolumeFollowsMassRelativeToFrameZero) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj", /*growing_blue_mass=*/true);
  const trajectory::Reader reader(dir / "run.kntj");
  TrajectoryScene scene(reader, 320, 240);
  const double r = test::kTinyRunRadius;
  scene.set_time(1.0);
  EXPECT_NEAR(scene.drawn_radius(2), r, 1e-6);
  scene.set_time(6.0);  // mass 8× → radius 2×
  EXPECT_NEAR(scene.drawn_radius(2), 2.0 * r, 1e-6);
  EXPECT_NEAR(scene.drawn_radius(0), r, 1e-6);
  // The bound for the home view includes the grown sphere.
  const osg::Vec3d blue(0.0, 1.5, 1.5);
  EXPECT_GE(scene.bound().radius(), (blue - scene.bound().center()).length() + 2.0 * r - 1e-6);
}

TEST(Scene, SetTimeMovesToInterpolatedPositions) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const trajectory::Reader reader(dir / "run.kntj");
  TrajectoryScene scene(reader, 320, 240);
  scene.set_time(3.3);
  EXPECT_DOUBLE_EQ(scene.time_s(), 3.3);
  EXPECT_TRUE(scene.positions().isApprox(test::tiny_run_positions()));
  scene.set_time(50.0);  // clamped to the last frame
  EXPECT_DOUBLE_EQ(scene.time_s(), test::kTinyRunEnd_s);
}

TEST(SceneMeshes, SphereIsLowPolyRoundAndWoundOutwards) {
  const osg::ref_ptr<osg::Geometry> sphere = unit_sphere_geometry();
  const auto* v = dynamic_cast<const osg::Vec3Array*>(sphere->getVertexArray());
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(sphere->getNumPrimitiveSets(), 1U);
  const auto* tris = dynamic_cast<const osg::DrawElementsUShort*>(sphere->getPrimitiveSet(0));
  ASSERT_NE(tris, nullptr);
  EXPECT_EQ(tris->getMode(), static_cast<GLenum>(GL_TRIANGLES));
  ASSERT_EQ(tris->size() % 3, 0U);
  const std::size_t triangles = tris->size() / 3;
  EXPECT_GE(triangles, 64U);
  EXPECT_LE(triangles, 128U);
  for (const osg::Vec3& p : *v) EXPECT_NEAR(p.length(), 1.0F, 1e-6F);
  double area = 0;
  for (std::size_t t = 0; t < triangles; ++t) {
    const osg::Vec3 a = (*v)[(*tris)[3 * t]];
    const osg::Vec3 b = (*v)[(*tris)[3 * t + 1]];
    const osg::Vec3 c = (*v)[(*tris)[3 * t + 2]];
    const osg::Vec3 n = (b - a) ^ (c - a);
    EXPECT_GT(n * (a + b + c), 0.0F) << "triangle " << t << " faces inwards or is degenerate";
    area += 0.5 * static_cast<double>(n.length());
  }
  // The surface is closed and close to the sphere's 4π (a polyhedron inside it has less).
  EXPECT_GT(area, 0.9 * 4.0 * 3.141592653589793);
  EXPECT_LT(area, 4.0 * 3.141592653589793);
}

}  // namespace
}  // namespace kanoko::scene
