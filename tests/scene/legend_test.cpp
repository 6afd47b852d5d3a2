// The colour key: the legend model (entries, labels, ranges, truncation), its layout in the corner
// of a picture, and the key's pixels in `kanoko render` pictures and video frames (gradient ends in
// the colour map's end colours, swatches in the bodies' colours), gone with --no-legend.
#include "src/scene/legend.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <osgDB/ReadFile>
#include <string>
#include <vector>

#include "src/scene/mapping_visual.hpp"
#include "src/scene/render.hpp"
#include "src/scene/scene.hpp"
#include "src/trajectory/spring_colour.hpp"
#include "tests/scene/tiny_run.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using test::TempDir;

trajectory::BodyInfo body(std::string name, std::string host, LegendRgb rgb) {
  trajectory::BodyInfo b;
  b.name = std::move(name);
  b.host = std::move(host);
  b.colour_rgb = rgb;
  return b;
}

// A fixed-width measure: 0.6 of the text height per byte.
double fixed_width(const std::string& s, double size) { return 0.6 * size * static_cast<double>(s.size()); }

TEST(LegendModel, AColourFormulaIsAGradientThroughItsMapWithItsRangeInItsUnit) {
  LegendInputs in;
  in.body_scale = BodyColourScale{mapping::ColourMap::Viridis, {0.0, 1.0}, "busy"};
  in.springs = 4;
  const Legend legend = make_legend(in);
  ASSERT_EQ(legend.entries.size(), 2U);
  const LegendEntry& bodies = legend.entries[0];
  EXPECT_EQ(bodies.kind, LegendEntry::Kind::gradient);
  EXPECT_EQ(bodies.title, "Bodies: busy");
  ASSERT_EQ(bodies.samples.size(), kGradientSamples);
  EXPECT_EQ(bodies.samples.front(), mapping::colour_at(mapping::ColourMap::Viridis, 0.0));
  EXPECT_EQ(bodies.samples.back(), mapping::colour_at(mapping::ColourMap::Viridis, 1.0));
  EXPECT_EQ(bodies.samples[kGradientSamples / 2], mapping::colour_at(mapping::ColourMap::Viridis, 0.5));
  EXPECT_EQ(bodies.low, "0.0 %");  // busy is a fraction of the interval
  EXPECT_EQ(bodies.high, "100.0 %");
  const LegendEntry& springs = legend.entries[1];
  EXPECT_EQ(springs.kind, LegendEntry::Kind::gradient);
  EXPECT_EQ(springs.low, "-25 % shorter");
  EXPECT_EQ(springs.high, "+25 % longer");
  EXPECT_EQ(springs.samples.front(), trajectory::tension_colour(0.75, 1.0));
  EXPECT_EQ(springs.samples.back(), trajectory::tension_colour(1.25, 1.0));

  // Bytes in their unit; a formula that is not one statistic as plain numbers.
  in.body_scale = BodyColourScale{mapping::ColourMap::Grey, {0.0, 3.0 * 1024 * 1024}, "bytes_sent"};
  EXPECT_EQ(make_legend(in).entries[0].high, "3 MiB");
  in.body_scale = BodyColourScale{mapping::ColourMap::Grey, {0.125, 12345.678}, " load / 2 "};
  const Legend plain = make_legend(in);
  EXPECT_EQ(plain.entries[0].title, "Bodies: load / 2");
  EXPECT_EQ(plain.entries[0].low, "0.125");
  EXPECT_EQ(plain.entries[0].high, "1.235e+04");
}

TEST(LegendModel, OwnColoursAreSwatchesNamedByHostOrBodyThenCounted) {
  std::vector<trajectory::BodyInfo> bodies{
      body("r0", "nodeA", {1, 0, 0}), body("r1", "nodeA", {1, 0, 0}), body("r2", "nodeA", {1, 0, 0}),
      body("r3", "nodeB", {0, 1, 0}),                                   // alone: its name and host
      body("r4", "nodeC", {0, 0, 1}), body("r5", "nodeD", {0, 0, 1}),  // two hosts: named
      body("r6", "", {1, 1, 0}), body("r7", "", {1, 1, 0}), body("r8", "", {1, 1, 0}), body("r9", "", {1, 1, 0}),
  };
  for (int k = 0; k < 11; ++k) bodies.push_back(body("x" + std::to_string(k), "", {0.5F, 0.01F * static_cast<float>(k), 0}));
  LegendInputs in;
  in.bodies = &bodies;
  in.springs = 0;  // no springs: no spring entry
  const Legend legend = make_legend(in);
  ASSERT_EQ(legend.entries.size(), 1U);
  const LegendEntry& e = legend.entries[0];
  EXPECT_EQ(e.kind, LegendEntry::Kind::swatches);
  ASSERT_EQ(e.swatches.size(), kLegendSwatches);
  EXPECT_EQ(e.more, 15U - kLegendSwatches) << "15 distinct colours";
  EXPECT_EQ(e.swatches[0].label, "nodeA (3 bodies)");
  EXPECT_EQ(e.swatches[0].rgb, (LegendRgb{1, 0, 0}));
  EXPECT_EQ(e.swatches[1].label, "r3 (nodeB)");
  EXPECT_EQ(e.swatches[2].label, "r4, r5");
  EXPECT_EQ(e.swatches[3].label, "r6, r7, r8, … (4 bodies)");
  EXPECT_EQ(e.swatches[4].label, "x0");

  in.max_swatches = 3;
  EXPECT_EQ(make_legend(in).entries[0].more, 12U);
}

TEST(LegendModel, SpringEntriesFollowTheColouringAndFlashesAddANote) {
  LegendInputs in;
  in.springs = 1;
  in.spring_colours = SpringColours::traffic;
  in.flashes = true;
  const Legend legend = make_legend(in);
  ASSERT_EQ(legend.entries.size(), 2U);
  EXPECT_EQ(legend.entries[0].low, "none");
  EXPECT_EQ(legend.entries[0].high, "busiest pair");
  EXPECT_EQ(legend.entries[0].samples.front(), trajectory::traffic_colour(0.0, 1.0));
  EXPECT_EQ(legend.entries[0].samples.back(), trajectory::traffic_colour(1.0, 1.0));
  EXPECT_EQ(legend.entries[1].kind, LegendEntry::Kind::note);
  in.spring_colours = SpringColours::off;
  in.flashes = false;
  EXPECT_EQ(make_legend(in).entries.at(0).kind, LegendEntry::Kind::note);
}

// Every text's baseline is inside the box, and texts on one row do not run into each other.
void expect_texts_apart(const LegendLayout& l, const TextWidth& width) {
  const auto extent = [&](const LegendLayout::Text& t) {
    const double w = width(t.text, l.text_px);
    return t.right_aligned ? std::make_pair(t.x - w, t.x) : std::make_pair(t.x, t.x + w);
  };
  for (std::size_t i = 0; i < l.texts.size(); ++i) {
    const auto& a = l.texts[i];
    EXPECT_TRUE(a.baseline > l.box.y && a.baseline < l.box.top()) << a.text;
    EXPECT_TRUE(extent(a).first >= l.box.x && extent(a).second <= l.box.right()) << a.text;
    for (std::size_t j = i + 1; j < l.texts.size(); ++j) {
      const auto& b = l.texts[j];
      if (std::abs(a.baseline - b.baseline) >= l.text_px) continue;
      EXPECT_TRUE(extent(a).second <= extent(b).first || extent(b).second <= extent(a).first)
          << "'" << a.text << "' runs into '" << b.text << "'";
    }
  }
}

TEST(LegendLayout, SitsInTheTopRightCornerAboveTheFloorAndDropsSwatchesThatDoNotFit) {
  std::vector<trajectory::BodyInfo> bodies;
  for (int k = 0; k < 8; ++k) bodies.push_back(body("rank " + std::to_string(k), "", {0.1F * static_cast<float>(k), 0, 0}));
  LegendInputs in;
  in.bodies = &bodies;
  in.springs = 3;
  const Legend legend = make_legend(in);
  const double s = 14;
  const LegendLayout all = layout_legend(legend, 1280, 720, s, 200, fixed_width);
  EXPECT_DOUBLE_EQ(all.box.right(), 1280 - s);
  EXPECT_DOUBLE_EQ(all.box.top(), 720 - s);
  EXPECT_GE(all.box.y, 200);
  ASSERT_EQ(all.swatches.size(), 8U);
  ASSERT_EQ(all.bars.size(), 1U);
  EXPECT_GE(all.bars[0].rect.w, 10 * s);
  std::vector<LegendRect> parts;
  for (const auto& b : all.bars) parts.push_back(b.rect);
  for (const auto& w : all.swatches) parts.push_back(w.rect);
  for (const LegendRect& r : parts) {
    EXPECT_TRUE(r.x >= all.box.x && r.right() <= all.box.right() && r.y >= all.box.y && r.top() <= all.box.top());
  }
  for (std::size_t i = 0; i < parts.size(); ++i) {
    for (std::size_t j = i + 1; j < parts.size(); ++j) EXPECT_FALSE(parts[i].overlaps(parts[j])) << i << " " << j;
  }
  expect_texts_apart(all, fixed_width);

  // A floor higher up: swatches make way, counted in the last line.
  const LegendLayout cut = layout_legend(legend, 1280, 720, s, 520, fixed_width);
  EXPECT_GE(cut.box.y, 520);
  EXPECT_LT(cut.swatches.size(), 8U);
  EXPECT_EQ(cut.bars.size(), 1U);
  const std::string more = "… and " + std::to_string(8 - cut.swatches.size()) + " more";
  EXPECT_TRUE(std::any_of(cut.texts.begin(), cut.texts.end(), [&](const auto& t) { return t.text == more; }))
      << "expected '" << more << "'";

  // A long title is cut with an ellipsis to fit 45 % of the width.
  LegendInputs formula;
  formula.body_scale = BodyColourScale{mapping::ColourMap::Grey, {0, 1}, std::string(200, 'x')};
  const LegendLayout narrow = layout_legend(make_legend(formula), 640, 480, s, 100, fixed_width);
  EXPECT_LE(narrow.box.w, 0.45 * 640 + 1e-9);
  EXPECT_EQ(narrow.texts.at(0).text.substr(narrow.texts[0].text.size() - 3), "…");

  EXPECT_EQ(layout_legend(Legend{}, 640, 480, s, 100, fixed_width).box.w, 0.0) << "nothing to draw";
  EXPECT_EQ(layout_legend(legend, 639, 480, s, 100, fixed_width).box.w, 0.0) << "no room beside the run";
  EXPECT_EQ(layout_legend(legend, 640, 479, s, 100, fixed_width).box.w, 0.0) << "no room beside the run";
}

TEST(LegendLayout, AGradientsEndLabelsShareARowWhenTheyFitElseTheHighOneGoesBelow) {
  LegendInputs in;
  in.springs = 1;
  const Legend legend = make_legend(in);
  const auto ends = [](const LegendLayout& l) {
    const auto low = std::find_if(l.texts.begin(), l.texts.end(), [](const auto& t) { return t.text == "-25 % shorter"; });
    const auto high = std::find_if(l.texts.begin(), l.texts.end(), [](const auto& t) { return t.text == "+25 % longer"; });
    EXPECT_TRUE(low != l.texts.end() && high != l.texts.end());
    return std::make_pair(low->baseline, high->baseline);
  };
  const LegendLayout wide = layout_legend(legend, 1280, 720, 14, 100, fixed_width);
  EXPECT_EQ(ends(wide).first, ends(wide).second);
  expect_texts_apart(wide, fixed_width);
  // Wide letters: the two labels no longer fit beside each other in 45 % of 640 px.
  const TextWidth wide_letters = [](const std::string& t, double size) { return size * static_cast<double>(t.size()); };
  const LegendLayout narrow = layout_legend(legend, 640, 480, 14, 100, wide_letters);
  EXPECT_LT(ends(narrow).second, ends(narrow).first) << "high below low";
  expect_texts_apart(narrow, wide_letters);
}

// --- pixels -------------------------------------------------------------------------------------

struct Pixel {
  int r = 0;
  int g = 0;
  int b = 0;
};
std::ostream& operator<<(std::ostream& out, const Pixel& p) { return out << '(' << p.r << ", " << p.g << ", " << p.b << ')'; }

Pixel pixel_at(const osg::Image& image, double x, double y) {
  const unsigned char* p = image.data(static_cast<unsigned>(x), static_cast<unsigned>(y));
  return {p[0], p[1], p[2]};
}

bool close_to(const Pixel& p, const LegendRgb& c, int tolerance) {
  return std::abs(p.r - static_cast<int>(std::lround(255 * c[0]))) <= tolerance &&
         std::abs(p.g - static_cast<int>(std::lround(255 * c[1]))) <= tolerance &&
         std::abs(p.b - static_cast<int>(std::lround(255 * c[2]))) <= tolerance;
}

constexpr int kW = 640;
constexpr int kH = 480;

// The tiny run, its bodies coloured by `load` through viridis when `formula` (load 0 .. 1).
void write_run(const std::filesystem::path& dir, bool formula) {
  test::TinyRunOptions o;
  if (formula) {
    o.mapping_text = "[forces.friction]\nbeta = 1\n\n[visual]\ncolour_map = \"viridis\"\ncolour = \"load\"\ncolour_range = [0, 1]\n";
    o.source_mapping = (dir / "m.toml").string();
    test::write_text(dir / "m.toml", o.mapping_text);
    o.load = [](std::size_t i, int) { return 0.5 * static_cast<double>(i); };
  }
  test::write_tiny_run(dir / "run.kntj", o);
}

// Where a kW × kH picture of the run drawn as `kanoko render` draws it puts the key.
LegendLayout expected_layout(const std::filesystem::path& run) {
  const DrawnRun opened = open_drawn_run(run.string(), {}, VisualOptions{});
  TrajectoryScene scene(*opened.reader, kW, kH);
  if (opened.mapping) scene.use_mapping_formulas(*opened.mapping, run.string());
  VisualOptions v = opened.visual;
  v.legend = true;
  scene.set_visual(v);
  return scene.legend_layout();
}

osg::ref_ptr<osg::Image> render_png(const std::filesystem::path& run, const std::filesystem::path& png,
                                    std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"render", run.string(), "-o", png.string(), "--size",
                                std::to_string(kW) + "x" + std::to_string(kH)};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = test::run_kanoko(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  osg::ref_ptr<osg::Image> image = osgDB::readImageFile(png.string());
  EXPECT_TRUE(image.valid()) << png;
  return image;
}

// The ends of bar `bar` (3 px in, half-way up) have the gradient's end colours.
void expect_gradient_ends(const osg::Image& image, const LegendLayout::Bar& bar, bool present) {
  const double y = bar.rect.y + 0.5 * bar.rect.h;
  const Pixel left = pixel_at(image, bar.rect.x + 3, y);
  const Pixel right = pixel_at(image, bar.rect.right() - 3, y);
  // 3 px of a bar about 170 px wide move the colour by under 2 % of the map.
  EXPECT_EQ(close_to(left, bar.samples.front(), 14), present) << left;
  EXPECT_EQ(close_to(right, bar.samples.back(), 14), present) << right;
}

TEST(LegendPicture, AFormulaColouredRunShowsTheMapsEndsWhereTheLayoutSaysAndNotWithNoLegend) {
  TempDir dir;
  write_run(dir.path(), true);
  const LegendLayout layout = expected_layout(dir / "run.kntj");
  ASSERT_EQ(layout.bars.size(), 2U) << "the colour map, the spring tension";
  EXPECT_EQ(layout.bars[0].samples.front(), mapping::colour_at(mapping::ColourMap::Viridis, 0.0));
  EXPECT_EQ(layout.bars[0].samples.back(), mapping::colour_at(mapping::ColourMap::Viridis, 1.0));
  const auto dial = dial_layout(kW, kH);
  EXPECT_GT(layout.box.y, dial.centre_y_px + dial.radius_px) << "above the dial";
  EXPECT_GT(layout.box.x, 0.5 * kW) << "in the right half";

  const osg::ref_ptr<osg::Image> with = render_png(dir / "run.kntj", dir / "with.png");
  ASSERT_TRUE(with.valid());
  for (const auto& bar : layout.bars) expect_gradient_ends(*with, bar, true);
  const osg::ref_ptr<osg::Image> without = render_png(dir / "run.kntj", dir / "without.png", {"--no-legend"});
  ASSERT_TRUE(without.valid());
  for (const auto& bar : layout.bars) expect_gradient_ends(*without, bar, false);
}

TEST(LegendPicture, ARunInItsOwnColoursShowsASwatchPerBody) {
  TempDir dir;
  write_run(dir.path(), false);
  const LegendLayout layout = expected_layout(dir / "run.kntj");
  ASSERT_EQ(layout.swatches.size(), 3U);
  ASSERT_EQ(layout.bars.size(), 1U) << "the spring tension";
  const osg::ref_ptr<osg::Image> with = render_png(dir / "run.kntj", dir / "with.png");
  const osg::ref_ptr<osg::Image> without = render_png(dir / "run.kntj", dir / "without.png", {"--no-legend"});
  ASSERT_TRUE(with.valid() && without.valid());
  const std::vector<LegendRgb> colours{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};  // red, green, blue
  for (std::size_t k = 0; k < 3; ++k) {
    const LegendRect& r = layout.swatches[k].rect;
    EXPECT_EQ(layout.swatches[k].rgb, colours[k]);
    EXPECT_TRUE(close_to(pixel_at(*with, r.x + 0.5 * r.w, r.y + 0.5 * r.h), colours[k], 8))
        << k << " " << pixel_at(*with, r.x + 0.5 * r.w, r.y + 0.5 * r.h);
    EXPECT_FALSE(close_to(pixel_at(*without, r.x + 0.5 * r.w, r.y + 0.5 * r.h), colours[k], 8)) << k;
  }
  expect_gradient_ends(*with, layout.bars[0], true);
  expect_gradient_ends(*without, layout.bars[0], false);
}

TEST(LegendPicture, AVideoFrameHasTheKeyToo) {
  TempDir dir;
  write_run(dir.path(), true);
  const LegendLayout layout = expected_layout(dir / "run.kntj");
  ASSERT_EQ(layout.bars.size(), 2U);
  std::filesystem::create_directory(dir / "frames");
  const auto r = test::run_kanoko({"render", (dir / "run.kntj").string(), "-o", (dir / "frames" / "f%03d.png").string(),
                                   "--size", std::to_string(kW) + "x" + std::to_string(kH), "--fps", "2", "--from",
                                   "4", "--to", "5", "--speed", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  osg::ref_ptr<osg::Image> frame = osgDB::readImageFile((dir / "frames" / "f001.png").string());
  ASSERT_TRUE(frame.valid());
  for (const auto& bar : layout.bars) expect_gradient_ends(*frame, bar, true);
}

}  // namespace
}  // namespace kanoko::scene
