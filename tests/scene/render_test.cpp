// Rendering a tiny run offscreen, with the library and with `kanoko render`, and reading the
// pixels back. Runs with DISPLAY unset (EGL) and under xvfb-run (GLX pbuffer and EGL).
#include "src/scene/render.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <osgDB/ReadFile>
#include <string>

#include "src/base/error.hpp"
#include "tests/scene/tiny_run.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using test::TempDir;

struct Rgb {
  int r = 0;
  int g = 0;
  int b = 0;
};

std::ostream& operator<<(std::ostream& out, const Rgb& c) {
  return out << '(' << c.r << ", " << c.g << ", " << c.b << ')';
}

// Pixel at window coordinates (origin bottom-left, like OpenGL and osg::Image).
Rgb pixel(const osg::Image& image, double x, double y) {
  const auto components = osg::Image::computeNumComponents(image.getPixelFormat());
  EXPECT_GE(components, 3U);
  EXPECT_EQ(image.getDataType(), static_cast<GLenum>(GL_UNSIGNED_BYTE));
  const auto ix = static_cast<unsigned>(std::lround(x - 0.5));
  const auto iy = static_cast<unsigned>(std::lround(y - 0.5));
  const unsigned char* p = image.data(ix, iy);
  return {p[0], p[1], p[2]};
}

bool reddish(const Rgb& c) { return c.r > 140 && c.g < 70 && c.b < 70; }
bool greenish(const Rgb& c) { return c.g > 140 && c.r < 70 && c.b < 70; }
bool bluish(const Rgb& c) { return c.b > 140 && c.r < 70 && c.g < 70; }
// The dial hand is orange; face, elapsed sector, ticks and background are not.
bool hand_coloured(const Rgb& c) { return c.r > 170 && c.r - c.b > 110 && c.g > 60 && c.g < 215; }

// True if some pixel within `spread` pixels across the line at `fraction_of_radius` along the
// direction (dx, dy) from the dial centre has the hand's colour.
bool hand_along(const osg::Image& image, const DialLayout& d, double dx, double dy,
                double fraction_of_radius) {
  const double cx = d.centre_x_px + dx * fraction_of_radius * d.radius_px;
  const double cy = d.centre_y_px + dy * fraction_of_radius * d.radius_px;
  for (int k = -2; k <= 2; ++k) {
    if (hand_coloured(pixel(image, cx - dy * k, cy + dx * k))) return true;
  }
  return false;
}

Rgb background_rgb() {
  const osg::Vec4 bg = background_colour();
  return {static_cast<int>(std::lround(bg.r() * 255.0F)),
          static_cast<int>(std::lround(bg.g() * 255.0F)),
          static_cast<int>(std::lround(bg.b() * 255.0F))};
}

bool near(const Rgb& a, const Rgb& b, int tol) {
  return std::abs(a.r - b.r) <= tol && std::abs(a.g - b.g) <= tol && std::abs(a.b - b.b) <= tol;
}

// Checks everything a picture of the tiny run at `time_s` must show; `cam` is the camera that
// drew it (at the image's size).
void expect_tiny_run_picture(const osg::Image& image, const CameraMatrices& cam, double time_s) {
  ASSERT_EQ(image.s(), cam.width_px);
  ASSERT_EQ(image.t(), cam.height_px);
  const Eigen::Matrix3Xd p = test::tiny_run_positions();
  const DialLayout dial = dial_layout(cam.width_px, cam.height_px);
  const auto at_body = [&](int i) {
    const osg::Vec3d w = cam.to_window(osg::Vec3d(p(0, i), p(1, i), p(2, i)));
    EXPECT_FALSE(dial_contains(dial, w.x(), w.y()))
        << "test layout: body " << i << " under the dial";
    return pixel(image, w.x(), w.y());
  };
  EXPECT_PRED1(reddish, at_body(0));
  EXPECT_PRED1(greenish, at_body(1));
  EXPECT_PRED1(bluish, at_body(2));

  // The spring between red and green: its middle is neither background nor a body colour.
  const osg::Vec3d mid = cam.to_window(
      osg::Vec3d(0.5 * (p(0, 0) + p(0, 1)), 0.5 * (p(1, 0) + p(1, 1)), 0.5 * (p(2, 0) + p(2, 1))));
  const Rgb spring = pixel(image, mid.x(), mid.y());
  EXPECT_GT(spring.r + spring.g + spring.b, 150) << spring;
  EXPECT_LT(std::abs(spring.r - spring.b), 80) << spring;  // greyish

  // Far from every body: the background colour.
  EXPECT_PRED3(near, pixel(image, 2.5, cam.height_px - 2.5), background_rgb(), 3);

  // The dial hand: 12 o'clock at the start, clockwise, 6 o'clock at half-way.
  const Direction2 hand = dial_hand_direction(dial_fraction(time_s, 0.0, test::kTinyRunEnd_s));
  for (const double along : {0.3, 0.45, 0.6}) {
    EXPECT_TRUE(hand_along(image, dial, hand.x, hand.y, along))
        << "hand missing at " << along << " R";
    // Opposite the hand (beyond its short tail) there is no hand.
    EXPECT_FALSE(hand_along(image, dial, -hand.x, -hand.y, along + 0.1))
        << "hand opposite at " << along;
    // A quarter turn away, neither.
    EXPECT_FALSE(hand_along(image, dial, hand.y, -hand.x, along)) << "hand at +90° at " << along;
  }
}

}  // namespace

// Readable parameter values in test output ("egl" rather than a byte dump).
void PrintTo(Backend b, std::ostream* out) { *out << backend_name(b); }

namespace KANOKO_UNITY_ID {

class RenderTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::glx && !display_variable_set()) {
      GTEST_SKIP() << "GLX needs an X display; run under xvfb-run";
    }
    test::write_tiny_run(dir_ / "run.kntj");
  }
  TempDir dir_;
};

TEST_P(RenderTest, HalfTimeShowsBodiesSpringBackgroundAndHandAtSixOClock) {
  const trajectory::Reader reader(dir_ / "run.kntj");
  RenderOptions options;
  options.size = {400, 300};
  options.time_s = 5.0;
  options.backend = GetParam();
  const RenderResult result = render_image(reader, options);
  ASSERT_TRUE(result.image.valid());
  if (GetParam() != Backend::automatic) {
    EXPECT_EQ(result.backend_used, GetParam());
  }
  // The matrices returned are the ones render_camera() gives: tests can project on their own.
  const CameraMatrices cam = render_camera(reader, 400, 300);
  EXPECT_EQ(result.camera.view, cam.view);
  EXPECT_EQ(result.camera.projection, cam.projection);
  expect_tiny_run_picture(*result.image, cam, 5.0);
  // The hand really points down: its pixels are below the dial centre.
  const DialLayout dial = dial_layout(400, 300);
  EXPECT_TRUE(hand_coloured(
      pixel(*result.image, dial.centre_x_px, dial.centre_y_px - 0.45 * dial.radius_px)));
  EXPECT_FALSE(hand_coloured(
      pixel(*result.image, dial.centre_x_px, dial.centre_y_px + 0.45 * dial.radius_px)));
}

TEST_P(RenderTest, QuarterTimePutsTheHandAtThreeOClock) {
  const trajectory::Reader reader(dir_ / "run.kntj");
  RenderOptions options;
  options.size = {320, 240};
  options.time_s = 2.5;
  options.backend = GetParam();
  const RenderResult result = render_image(reader, options);
  expect_tiny_run_picture(*result.image, render_camera(reader, 320, 240), 2.5);
}

TEST_P(RenderTest, FileOnDiskHoldsTheSamePixelsTheRightWayUp) {
  const trajectory::Reader reader(dir_ / "run.kntj");
  RenderOptions options;
  options.size = {320, 240};
  options.time_s = 0.0;
  options.backend = GetParam();
  const RenderResult result = render_to_file(reader, options, dir_ / "t0.png");
  osg::ref_ptr<osg::Image> read = osgDB::readImageFile((dir_ / "t0.png").string());
  ASSERT_TRUE(read.valid());
  ASSERT_EQ(read->s(), 320);
  ASSERT_EQ(read->t(), 240);
  expect_tiny_run_picture(*read, render_camera(reader, 320, 240), 0.0);
  for (const auto& [x, y] :
       {std::pair{10.0, 10.0}, std::pair{160.0, 120.0}, std::pair{300.0, 40.0}}) {
    const Rgb a = pixel(*read, x, y);
    const Rgb b = pixel(*result.image, x, y);
    EXPECT_TRUE(near(a, b, 0)) << x << ',' << y << ": " << a << " vs " << b;
  }
  EXPECT_EQ(test::list_dir(dir_.path()), (std::vector<std::string>{"run.kntj", "t0.png"}));
}

INSTANTIATE_TEST_SUITE_P(Backends, RenderTest,
                         ::testing::Values(Backend::automatic, Backend::egl, Backend::glx),
                         [](const ::testing::TestParamInfo<Backend>& backend) {
                           return std::string(backend_name(backend.param));
                         });

TEST(RenderCommand, WritesThePictureWithFrameOrTime) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const trajectory::Reader reader(dir / "run.kntj");
  for (const char* option : {"--frame", "--time"}) {
    const auto out = dir / (std::string(option + 2) + ".png");
    const auto r = test::run_kanoko({"render", (dir / "run.kntj").string(), option, "5", "-o",
                                     out.string(), "--size", "400x300"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("wrote"), std::string::npos) << r.out;
    osg::ref_ptr<osg::Image> image = osgDB::readImageFile(out.string());
    ASSERT_TRUE(image.valid()) << out;
    expect_tiny_run_picture(*image, render_camera(reader, 400, 300), 5.0);
  }
}

TEST(RenderCommand, DefaultsToTheEndOfTheRun) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const auto r = test::run_kanoko({"render", (dir / "run.kntj").string(), "-o",
                                   (dir / "end.png").string(), "--size", "320x240"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  osg::ref_ptr<osg::Image> image = osgDB::readImageFile((dir / "end.png").string());
  ASSERT_TRUE(image.valid());
  const trajectory::Reader reader(dir / "run.kntj");
  expect_tiny_run_picture(*image, render_camera(reader, 320, 240), test::kTinyRunEnd_s);
}

TEST(RenderCommand, TruncatedTrajectoryFailsNamingTheFileAndLeavesNoImage) {
  TempDir dir;
  test::write_tiny_run(dir / "whole.kntj");
  const std::string bytes = test::read_text(dir / "whole.kntj");
  test::write_text(dir / "cut.kntj", bytes.substr(0, bytes.size() / 2));
  const auto r =
      test::run_kanoko({"render", (dir / "cut.kntj").string(), "-o", (dir / "out.png").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cut.kntj"), std::string::npos) << r.err;
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"cut.kntj", "whole.kntj"}));
}

TEST(RenderCommand, MissingTrajectoryFailsNamingTheFile) {
  TempDir dir;
  const auto r =
      test::run_kanoko({"render", (dir / "nope.kntj").string(), "-o", (dir / "out.png").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("nope.kntj"), std::string::npos) << r.err;
  EXPECT_TRUE(test::list_dir(dir.path()).empty());
}

TEST(RenderCommand, UnwritableOutputFailsBeforeDrawing) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const auto out = dir / "no-such-folder" / "out.png";
  const auto r = test::run_kanoko({"render", (dir / "run.kntj").string(), "-o", out.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no-such-folder"), std::string::npos) << r.err;
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"run.kntj"}));
}

TEST(RenderCommand, VisualOptionsChangeThePicture) {
  // At t = 6 s red talks to blue: flashes and traffic colours change pixels of the same run.
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const std::string run = (dir / "run.kntj").string();
  const auto plain = test::run_kanoko({"render", run, "-o", (dir / "a.png").string(), "--time", "6", "--size", "160x120"});
  const auto styled = test::run_kanoko({"render", run, "-o", (dir / "b.png").string(), "--time", "6", "--size",
                                        "160x120", "--flashes", "--springs", "traffic", "--textures", "body"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(styled.exit_code, 0) << styled.err;
  EXPECT_NE(test::read_text(dir / "a.png"), test::read_text(dir / "b.png"));
}

TEST(RenderCommand, RejectsBadOptionsWithTheirNames) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const std::string run = (dir / "run.kntj").string();
  const std::string out = (dir / "out.png").string();
  const struct {
    std::vector<std::string> args;
    const char* expected;
  } cases[] = {
      {{"render", run, "-o", out, "--frame", "11"}, "--frame"},
      {{"render", run, "-o", out, "--time", "-1"}, "--time"},
      {{"render", run, "-o", out, "--frame", "1", "--time", "2"}, "not both"},
      {{"render", run, "-o", out, "--size", "800by600"}, "--size"},
      {{"render", run, "-o", out, "--size", "4x4"}, "--size"},
      {{"render", run, "-o", out, "--backend", "vulkan"}, "--backend"},
      {{"render", run, "-o", out, "--springs", "rainbow"}, "--springs"},
      {{"render", run, "-o", out, "--textures", "stripes"}, "--textures"},
      {{"render", run, "-o", (dir / "out.xyz-unknown").string()}, "out.xyz-unknown"},
      {{"render", run}, "output"},
  };
  for (const auto& c : cases) {
    const auto r = test::run_kanoko(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.expected;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
  }
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"run.kntj"}));
}

TEST(ImageSize, ParsesWidthByHeight) {
  const ImageSize s = parse_image_size("800x600", "--size");
  EXPECT_EQ(s.width_px, 800);
  EXPECT_EQ(s.height_px, 600);
  EXPECT_EQ(parse_image_size("64X48", "--size").height_px, 48);
  EXPECT_THROW((void)parse_image_size("800", "--size"), InputError);
  EXPECT_THROW((void)parse_image_size("800x", "--size"), InputError);
  EXPECT_THROW((void)parse_image_size("x600", "--size"), InputError);
  EXPECT_THROW((void)parse_image_size("800x600x2", "--size"), InputError);
  EXPECT_THROW((void)parse_image_size("-800x600", "--size"), InputError);
  EXPECT_THROW((void)parse_image_size("9000x600", "--size"), InputError);
}

}  // namespace
}  // namespace kanoko::scene
