// The [visual] section of the run's own mapping in the scene: body colours from the colour formula
// through the colour map, radius scales from the scale formula, the texture image, labels and
// trails, with the command line overriding them; and located errors for what cannot work.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <initializer_list>
#include <osg/NodeVisitor>
#include <osgDB/WriteFile>
#include <osgText/Text>
#include <string>
#include <utility>

#include "src/base/error.hpp"
#include "src/scene/mapping_visual.hpp"
#include "src/scene/render.hpp"
#include "src/scene/scene.hpp"
#include "tests/scene/tiny_render.hpp"
#include "tests/scene/tiny_run.hpp"
#include "tests/support/allocation_counter.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using test::TempDir;

/// A tiny run storing `visual` (the body of a [visual] table) as its mapping m.toml in `dir`.
struct VisualRun {
  TempDir dir;
  std::unique_ptr<trajectory::Reader> reader;
  std::shared_ptr<const mapping::Mapping> mapping;

  explicit VisualRun(const std::string& visual, std::function<double(std::size_t, int)> load = {},
                     bool parse = true) {
    test::TinyRunOptions o;
    o.mapping_text = "[forces.friction]\nbeta = 1\n\n[visual]\n" + visual;
    o.source_mapping = (dir / "m.toml").string();
    o.load = std::move(load);
    test::write_text(dir / "m.toml", o.mapping_text);
    test::write_tiny_run(dir / "run.kntj", o);
    reader = std::make_unique<trajectory::Reader>(dir / "run.kntj");
    if (parse) mapping = stored_mapping(*reader, "run.kntj");
  }
  [[nodiscard]] RenderResult render(double t_s, VisualOptions visual = {}, bool use_mapping = true) const {
    RenderOptions o;
    o.size = {320, 240};
    o.time_s = t_s;
    o.backend = Backend::egl;
    o.visual = visual;
    if (use_mapping) o.mapping = mapping;
    return render_image(*reader, o);
  }
};

/// Mean RGB (0..255) of the 5×5 pixels around where the camera projects `at`.
std::array<double, 3> colour_at_body(const RenderResult& r, const Eigen::Vector3d& at) {
  const osg::Vec3d w = r.camera.to_window(osg::Vec3d(at.x(), at.y(), at.z()));
  std::array<double, 3> sum{0, 0, 0};
  for (int dy = -2; dy <= 2; ++dy) {
    for (int dx = -2; dx <= 2; ++dx) {
      const unsigned char* p = r.image->data(static_cast<unsigned>(w.x() + dx), static_cast<unsigned>(w.y() + dy));
      for (std::size_t c = 0; c < 3; ++c) sum[c] += p[c] / 25.0;
    }
  }
  return sum;
}

std::string rgb(const std::array<double, 3>& c) {
  return std::to_string(c[0]) + ", " + std::to_string(c[1]) + ", " + std::to_string(c[2]);
}

TEST(MappingVisual, AColourFormulaGivesOneBodyItsOwnColourWhereItIsDrawn) {
  // Grey map: the green body (index 1) becomes near-white, the others near-black.
  const VisualRun run("colour_map = \"grey\"\ncolour = \"index == 1 ? 1 : 0\"\ncolour_range = [0, 1]\n");
  const Eigen::Matrix3Xd p = test::tiny_run_positions();
  const RenderResult own = run.render(2.0, {}, false);
  const RenderResult mapped = run.render(2.0);
  const auto before = colour_at_body(own, p.col(1));
  const auto green = colour_at_body(mapped, p.col(1));
  const auto red = colour_at_body(mapped, p.col(0));
  EXPECT_GT(before[1], before[0] + 60) << "without the formula the body keeps its green: " << rgb(before);
  EXPECT_GT(green[0], 120) << rgb(green);
  EXPECT_LT(std::abs(green[0] - green[1]) + std::abs(green[1] - green[2]), 20) << "grey: " << rgb(green);
  EXPECT_LT(red[0], 60) << "the others take the dark end: " << rgb(red);
  EXPECT_LT(std::abs(red[0] - red[1]), 15) << rgb(red);
}

TEST(MappingVisual, ColoursFollowTheStatisticsOfEachFrameOverTheRunsRange) {
  // The red body's load is the frame number (0..10), the others' 5; range auto = [0, 10].
  const VisualRun run("colour_map = \"viridis\"\n",
                      [](std::size_t body, int frame) { return body == 0 ? static_cast<double>(frame) : 5.0; });
  TrajectoryScene scene(*run.reader, 320, 240);
  scene.use_mapping_formulas(*run.mapping, "run.kntj");
  ASSERT_NE(scene.formulas(), nullptr);
  EXPECT_EQ(scene.formulas()->colour_range(), (std::array<double, 2>{0.0, 10.0}));
  const auto expect = [](double t) {
    const auto c = mapping::colour_at(mapping::ColourMap::Viridis, t);
    return osg::Vec3(c[0], c[1], c[2]);
  };
  scene.set_time(1.5);  // frame 1
  EXPECT_EQ(scene.body_colour(0), expect(0.1));
  EXPECT_EQ(scene.body_colour(2), expect(0.5));
  scene.set_time(9.2);  // frame 9
  EXPECT_EQ(scene.body_colour(0), expect(0.9));
  EXPECT_NE(scene.body_colour(0), scene.body_colour(2));
  // Evaluated once per stored frame, not per drawn frame.
  auto* formulas = const_cast<BodyFormulas*>(scene.formulas());  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  EXPECT_FALSE(formulas->update(*run.reader, 9.7));
  EXPECT_TRUE(formulas->update(*run.reader, 3.0));
  // A new frame is evaluated without allocating.
  bool evaluated = false;
  EXPECT_EQ(test::allocations_in([&] { evaluated = formulas->update(*run.reader, 4.5); }), 0U);
  EXPECT_TRUE(evaluated);
}

TEST(MappingVisual, PeakTrafficIsTheLargestPairRecordOfTheRun) {
  // The tiny run's largest record: red -> green 10,000 bytes (interval 9); most messages: red ->
  // blue, 2 a record. The scan over the records is made only for a formula that reads them.
  for (const auto& [formula, expected] : std::initializer_list<std::pair<const char*, double>>{
           {"peak_bytes", 10000.0}, {"peak_msgs", 2.0}, {"peak_bytes + 1000 * peak_msgs", 12000.0}}) {
    const VisualRun run(std::string("colour_map = \"grey\"\ncolour = \"") + formula + "\"\n");
    TrajectoryScene scene(*run.reader, 320, 240);
    scene.use_mapping_formulas(*run.mapping, "run.kntj");
    ASSERT_NE(scene.formulas(), nullptr) << formula;
    EXPECT_EQ(scene.formulas()->colour_range(), (std::array<double, 2>{expected, expected})) << formula;
  }
}

/// Pixels of the picture close to a pure colour (one channel high, the others low).
std::size_t pixels_of(const osg::Image& image, std::size_t channel) {
  std::size_t n = 0;
  for (int y = 0; y < image.t(); ++y) {
    for (int x = 0; x < image.s(); ++x) {
      const unsigned char* p = image.data(static_cast<unsigned>(x), static_cast<unsigned>(y));
      bool match = p[channel] > 60;
      for (std::size_t c = 0; c < 3; ++c) match = match && (c == channel || p[c] < p[channel] / 3);
      n += match ? 1 : 0;
    }
  }
  return n;
}

TEST(MappingVisual, AScaleFormulaMakesOneBodyBigger) {
  const VisualRun run("scale = \"index == 0 ? 2 : 1\"\n");
  const RenderResult own = run.render(2.0, {}, false);
  const RenderResult mapped = run.render(2.0);
  // Red (index 0) against green: about 1:1 without the formula, about 4:1 (twice the radius) with.
  const double before = static_cast<double>(pixels_of(*own.image, 0)) / static_cast<double>(pixels_of(*own.image, 1));
  const double after =
      static_cast<double>(pixels_of(*mapped.image, 0)) / static_cast<double>(pixels_of(*mapped.image, 1));
  EXPECT_GT(after, 2.5 * before) << "red/green pixels " << before << " then " << after;
  TrajectoryScene scene(*run.reader, 320, 240);
  const double radius = scene.drawn_radius(0);
  scene.use_mapping_formulas(*run.mapping, "run.kntj");
  EXPECT_DOUBLE_EQ(scene.drawn_radius(0), 2 * radius);
  EXPECT_DOUBLE_EQ(scene.drawn_radius(1), radius);
}

/// A 64×64 RGB checkerboard of 8-pixel black and white squares, written as PNG.
void write_checks(const std::filesystem::path& path) {
  osg::ref_ptr<osg::Image> image = new osg::Image;
  image->allocateImage(64, 64, 1, GL_RGB, GL_UNSIGNED_BYTE);
  for (unsigned y = 0; y < 64; ++y) {
    for (unsigned x = 0; x < 64; ++x) {
      const unsigned char v = ((x / 8 + y / 8) % 2 == 0) ? 255 : 20;
      unsigned char* p = image->data(x, y);
      p[0] = p[1] = p[2] = v;
    }
  }
  ASSERT_TRUE(osgDB::writeImageFile(*image, path.string()));
}

using test::difference_near;

TEST(MappingVisual, TheMappingsTextureIsDrawnAndTheCommandLineOverridesIt) {
  VisualRun run("texture = \"checks.png\"\n", {}, false);
  write_checks(run.dir / "checks.png");
  run.mapping = stored_mapping(*run.reader, "run.kntj");
  const VisualOptions visual = visual_from_mapping(run.mapping.get(), {}, {});
  ASSERT_TRUE(visual.texture_image.valid());
  EXPECT_EQ(visual.texture_image->s(), 64);
  const RenderResult plain = run.render(2.0);
  const RenderResult textured = run.render(2.0, visual);
  const Eigen::Matrix3Xd p = test::tiny_run_positions();
  for (Eigen::Index i = 0; i < 3; ++i) {
    EXPECT_GT(difference_near(plain, textured, p.col(i), 6), 4.0) << "the checks show on body " << i;
  }
  VisualOverrides none;
  none.textures = BodyTextures::none;
  EXPECT_FALSE(visual_from_mapping(run.mapping.get(), none, {}).texture_image.valid());
}

/// The message of the E that `f` throws ("" and a test failure when it throws none).
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}

/// Every one of `parts` is in `text`.
void expect_mentions(const std::string& text, std::initializer_list<const char*> parts) {
  for (const char* part : parts) EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' in: " << text;
}

TEST(MappingVisual, AMissingOrUnreadableTextureIsAnErrorAtItsKey) {
  // texture is on line 5 of m.toml (after the friction table, a blank line and [visual]).
  const VisualRun run("texture = \"missing.png\"\n", {}, false);
  expect_mentions(message_of<InputError>([&] { (void)stored_mapping(*run.reader, "run.kntj"); }),
                  {"m.toml:5:", "texture", "missing.png"});
  VisualRun garbage("texture = \"notes.png\"\n", {}, false);
  test::write_text(garbage.dir / "notes.png", "this is not a picture\n");
  garbage.mapping = stored_mapping(*garbage.reader, "run.kntj");
  expect_mentions(message_of<InputError>([&] { (void)visual_from_mapping(garbage.mapping.get(), {}, {}); }),
                  {"m.toml:5:", "'texture'", "notes.png"});
  // The command: a clear message, a failure status and no picture.
  const auto out = garbage.dir / "out.png";
  const auto r = test::run_kanoko({"render", (garbage.dir / "run.kntj").string(), "-o", out.string(), "--backend", "egl"});
  EXPECT_NE(r.exit_code, 0);
  expect_mentions(r.err, {"m.toml:5:", "notes.png"});
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(MappingVisual, FormulasTheRunCannotFeedAreLocatedErrors) {
  // The tiny run stores load and mass only: `busy` is not there.
  const VisualRun busy("colour = \"busy\"\n");
  TrajectoryScene scene(*busy.reader, 320, 240);
  expect_mentions(message_of<InputError>([&] { scene.use_mapping_formulas(*busy.mapping, "run.kntj"); }),
                  {"m.toml:5:", "'busy'", "load, mass"});
  // A negative scale somewhere in the run is found when the scene loads, not mid-playback.
  const VisualRun negative("scale = \"load - 3\"\n", [](std::size_t body, int frame) {
    return body == 2 && frame == 7 ? 1.0 : 5.0;
  });
  TrajectoryScene scene2(*negative.reader, 320, 240);
  expect_mentions(message_of<RunError>([&] { scene2.use_mapping_formulas(*negative.mapping, "run.kntj"); }),
                  {"blue", "t = 7", "m.toml:5:"});
}

/// The texts of the scene's body labels.
std::vector<std::string> label_texts(osg::Node* root) {
  struct Finder : osg::NodeVisitor {
    Finder() : osg::NodeVisitor(TRAVERSE_ALL_CHILDREN) {}
    void apply(osg::Geode& g) override {
      if (g.getName() == "labels") {
        for (unsigned i = 0; i < g.getNumDrawables(); ++i) {
          texts.push_back(static_cast<osgText::Text*>(g.getDrawable(i))->getText().createUTF8EncodedString());
        }
      }
      traverse(g);
    }
    std::vector<std::string> texts;
  } finder;
  root->accept(finder);
  return finder.texts;
}

TEST(MappingVisual, LabelsAndTrailsComeFromTheMappingUnlessTheCommandLineSaysOtherwise) {
  const VisualRun run("labels = \"host\"\ntrails = 2.5\n");
  const VisualOptions v = visual_from_mapping(run.mapping.get(), {}, {});
  EXPECT_TRUE(v.labels);
  EXPECT_EQ(v.label_text, mapping::LabelKind::Host);
  EXPECT_DOUBLE_EQ(v.trail_s, 2.5);
  TrajectoryScene scene(*run.reader, 320, 240);
  scene.set_visual(v);
  EXPECT_EQ(label_texts(scene.root()), (std::vector<std::string>{"node0", "node1", "node2"}));
  VisualOptions by_rank = v;
  by_rank.label_text = mapping::LabelKind::Rank;
  scene.set_visual(by_rank);
  EXPECT_EQ(label_texts(scene.root()), (std::vector<std::string>{"0", "1", "2"}));

  VisualOverrides cli;
  cli.labels = mapping::LabelKind::None;
  cli.trail_s = 0;
  const VisualOptions o = visual_from_mapping(run.mapping.get(), cli, {});
  EXPECT_FALSE(o.labels);
  EXPECT_DOUBLE_EQ(o.trail_s, 0.0);
  // Without [visual] keys nothing changes.
  const VisualRun bare("");
  const VisualOptions b = visual_from_mapping(bare.mapping.get(), {}, {});
  EXPECT_FALSE(b.labels);
  EXPECT_DOUBLE_EQ(b.trail_s, 0.0);
  EXPECT_FALSE(b.texture_image.valid());
  TrajectoryScene plain(*bare.reader, 320, 240);
  plain.use_mapping_formulas(*bare.mapping, "run.kntj");
  EXPECT_EQ(plain.formulas(), nullptr) << "no colour keys: the run's own colours stay";
  EXPECT_EQ(plain.body_colour(0), osg::Vec3(1.0F, 0.0F, 0.0F));
  EXPECT_EQ(parse_label_kind("index", "--labels"), mapping::LabelKind::Index);
  EXPECT_THROW((void)parse_label_kind("names", "--labels"), InputError);
}

}  // namespace
}  // namespace kanoko::scene
