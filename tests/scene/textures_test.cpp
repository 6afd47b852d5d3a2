// Body textures from assets/textures: the shipped set is there and distinguishable, and a
// textured body shows its pattern where an untextured one is plain.
#include <gtest/gtest.h>

#include <cstdlib>
#include <osgDB/ReadFile>
#include <set>
#include <string>

#include "src/base/error.hpp"
#include "src/scene/render.hpp"
#include "src/scene/scene.hpp"
#include "tests/scene/tiny_render.hpp"
#include "tests/scene/tiny_run.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using test::TempDir;

TEST(BodyTextures, AtLeastEightDistinctPatternsShip) {
  const auto files = body_texture_files();
  ASSERT_GE(files.size(), 8U) << body_texture_folder();
  std::set<std::string> contents;
  for (const auto& f : files) {
    osg::ref_ptr<osg::Image> image = osgDB::readRefImageFile(f.string());
    ASSERT_TRUE(image.valid()) << f;
    EXPECT_EQ(image->s(), 128);
    EXPECT_EQ(image->t(), 128);
    contents.insert(std::string(reinterpret_cast<const char*>(image->data()), image->getTotalSizeInBytes()));
  }
  EXPECT_EQ(contents.size(), files.size()) << "every pattern differs from the others";
}

TEST(BodyTextures, NamesRoundTrip) {
  for (const BodyTextures t : {BodyTextures::none, BodyTextures::host, BodyTextures::body}) {
    EXPECT_EQ(parse_body_textures(to_string(t), "--textures"), t);
  }
  EXPECT_THROW((void)parse_body_textures("stripes", "--textures"), InputError);
}

using test::difference_near;

TEST(BodyTextures, PatternsShowOnTexturedBodies) {
  test::TinyRender tiny(2.0);
  const RenderResult plain = tiny.render();
  tiny.options.visual.textures = BodyTextures::body;  // red: 00-plain, green: 01-stripes, blue: 02-bands
  const RenderResult textured = tiny.render();
  const Eigen::Matrix3Xd p = test::tiny_run_positions();
  EXPECT_LT(difference_near(plain, textured, p.col(0), 6), 1.0) << "the plain pattern changes nothing";
  EXPECT_GT(difference_near(plain, textured, p.col(1), 6), 4.0) << "stripes darken part of the body";
  EXPECT_GT(difference_near(plain, textured, p.col(2), 6), 4.0) << "bands darken part of the body";
}

}  // namespace
}  // namespace kanoko::scene
