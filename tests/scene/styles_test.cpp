// Body styles for large runs (impostors, host-aggregated cloud): the same picture where it
// matters (each body's colour where the camera projects it), and picking independent of style.
#include <gtest/gtest.h>

#include "src/scene/offscreen.hpp"
#include "src/scene/render.hpp"
#include "src/scene/scene.hpp"
#include "tests/scene/tiny_render.hpp"
#include "tests/scene/tiny_run.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using test::TempDir;

TEST(BodyStyle, ChosenByBodyCount) {
  EXPECT_EQ(body_style_for(3), BodyStyle::meshes);
  EXPECT_EQ(body_style_for(kImpostorThreshold), BodyStyle::meshes);
  EXPECT_EQ(body_style_for(kImpostorThreshold + 1), BodyStyle::impostors);
  EXPECT_EQ(body_style_for(kCloudThreshold), BodyStyle::impostors);
  EXPECT_EQ(body_style_for(kCloudThreshold + 1), BodyStyle::cloud);
}

class StyleTest : public ::testing::TestWithParam<BodyStyle> {};

TEST_P(StyleTest, EachBodyShowsItsColourWhereItProjects) {
  test::TinyRender tiny(5.0);
  tiny.options.style = GetParam();
  const RenderResult r = tiny.render();
  const Eigen::Matrix3Xd p = test::tiny_run_positions();
  for (int body = 0; body < 3; ++body) {
    const osg::Vec3d w = r.camera.to_window(osg::Vec3d(p(0, body), p(1, body), p(2, body)));
    if (GetParam() == BodyStyle::cloud) {
      // Cloud bodies are dots of a pixel or two, under their host's wire sphere: look for the
      // body's colour within two pixels of where it projects.
      bool found = false;
      for (int dy = -2; dy <= 2 && !found; ++dy) {
        for (int dx = -2; dx <= 2 && !found; ++dx) {
          const unsigned char* q = r.image->data(static_cast<unsigned>(w.x() + dx),
                                                 static_cast<unsigned>(w.y() + dy));
          found = q[body] > 100 && q[(body + 1) % 3] < 90 && q[(body + 2) % 3] < 90;
        }
      }
      EXPECT_TRUE(found) << "body " << body;
      continue;
    }
    const unsigned char* px =
        r.image->data(static_cast<unsigned>(w.x()), static_cast<unsigned>(w.y()));
    for (int c = 0; c < 3; ++c) {
      if (c == body) {
        EXPECT_GT(px[c], 100) << "body " << body;
      } else {
        EXPECT_LT(px[c], 90) << "body " << body << " channel " << c;
      }
    }
  }
  if (GetParam() == BodyStyle::impostors) {
    // An impostor covers the sphere's projected disc: a point 0.8 radii from the centre
    // (perpendicular to the view direction) is still the body's colour.
    const osg::Vec3d centre = r.camera.to_window(osg::Vec3d(p(0, 2), p(1, 2), p(2, 2)));
    osg::Vec3d eye, look, up;
    osg::Matrixd(r.camera.view).getLookAt(eye, look, up);
    osg::Vec3d side = (look - eye) ^ up;
    side.normalize();
    const osg::Vec3d edge = r.camera.to_window(osg::Vec3d(p(0, 2), p(1, 2), p(2, 2)) +
                                               side * (0.8 * static_cast<double>(test::kTinyRunRadius)));
    ASSERT_GT(std::abs(edge.x() - centre.x()), 3.0);
    const unsigned char* px =
        r.image->data(static_cast<unsigned>(edge.x()), static_cast<unsigned>(edge.y()));
    EXPECT_GT(px[2], 60);
    EXPECT_LT(px[0], 60);
  }
}

TEST_P(StyleTest, PickingDoesNotDependOnTheStyle) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const trajectory::Reader reader(dir / "run.kntj");
  TrajectoryScene scene(reader, 320, 240, GetParam());
  EXPECT_EQ(scene.body_style(), GetParam());
  const CameraMatrices cam = render_camera(reader, 320, 240);
  const Eigen::Matrix3Xd p = test::tiny_run_positions();
  for (int body = 0; body < 3; ++body) {
    const osg::Vec3d w = cam.to_window(osg::Vec3d(p(0, body), p(1, body), p(2, body)));
    const auto hit = scene.pick_at(cam.view, cam.projection, 2.0 * w.x() / 320 - 1.0,
                                   2.0 * w.y() / 240 - 1.0);
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->kind, Pick::Kind::body);
    EXPECT_EQ(hit->index, static_cast<std::size_t>(body));
  }
  scene.select(Pick{Pick::Kind::spring, 0, 0.0});
  EXPECT_NE(scene.spring_colour(0), tension_colour(1.0, 1.0));
}

INSTANTIATE_TEST_SUITE_P(Styles, StyleTest,
                         ::testing::Values(BodyStyle::meshes, BodyStyle::impostors,
                                           BodyStyle::cloud),
                         [](const ::testing::TestParamInfo<BodyStyle>& p) {
                           switch (p.param) {
                             case BodyStyle::meshes:
                               return std::string("meshes");
                             case BodyStyle::impostors:
                               return std::string("impostors");
                             case BodyStyle::cloud:
                               return std::string("cloud");
                           }
                           return std::string("unknown");
                         });

}  // namespace
}  // namespace kanoko::scene
