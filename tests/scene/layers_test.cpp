// The scene's layers (src/scene/layers), each built on its own and updated from a hand-made
// frame state: what a layer draws follows the frame state it is given, and nothing else. Checked
// on the scene graph (no GL context, no display).
#include <gtest/gtest.h>

#include <cmath>
#include <osg/Group>

#include "src/scene/dial.hpp"
#include "src/scene/layers/bodies_layer.hpp"
#include "src/scene/layers/decorations_layer.hpp"
#include "src/scene/layers/dial_layer.hpp"
#include "src/scene/layers/frame_state.hpp"
#include "src/scene/layers/hud_layer.hpp"
#include "src/scene/layers/labels_layer.hpp"
#include "src/scene/layers/springs_layer.hpp"
#include "src/scene/layers/trails_layer.hpp"
#include "src/scene/scene.hpp"
#include "tests/scene/tiny_run.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene::layers {
namespace KANOKO_UNITY_ID {

// Three bodies (red, green, blue) with a spring red–green and one green–blue.
trajectory::Metadata three_bodies() {
  trajectory::Metadata meta;
  const std::array<const char*, 3> names{"red", "green", "blue"};
  for (std::size_t i = 0; i < 3; ++i) {
    trajectory::BodyInfo b;
    b.name = names[i];
    b.host = i < 2 ? "nodeA" : "nodeB";
    b.rank = static_cast<std::int64_t>(i);
    b.colour_rgb = {i == 0 ? 1.0F : 0.0F, i == 1 ? 1.0F : 0.0F, i == 2 ? 1.0F : 0.0F};
    b.radius = 0.5F;
    meta.bodies.push_back(b);
  }
  meta.edges = {{0U, 1U}, {1U, 2U}};
  return meta;
}

// The bodies' initial positions (frame 0): the tiny run's.
Eigen::Matrix3Xd initial_positions() { return test::tiny_run_positions(); }

// A frame state made by hand: the bodies moved away from their initial places, radii 0.3, 0.4,
// 0.5, everything shown, no selection.
FrameState hand_made_frame() {
  FrameState f;
  f.time_s = 2.5;
  f.span_begin_s = 0.0;
  f.span_end_s = 10.0;
  f.positions.resize(3, 3);
  f.positions.col(0) << 1.0, -1.0, 0.5;
  f.positions.col(1) << 4.0, 1.0, -0.5;
  f.positions.col(2) << -2.0, 3.0, 1.5;
  f.radii = {0.3, 0.4, 0.5};
  f.shown = {true, true, true};
  f.colours = {osg::Vec3(0.9F, 0.1F, 0.1F), osg::Vec3(0.1F, 0.9F, 0.1F), osg::Vec3(0.1F, 0.1F, 0.9F)};
  f.colours_version = 1;
  return f;
}

void expect_near(const osg::Vec3d& a, const Eigen::Vector3d& b, const char* what) {
  EXPECT_NEAR(a.x(), b.x(), 1e-6) << what;
  EXPECT_NEAR(a.y(), b.y(), 1e-6) << what;
  EXPECT_NEAR(a.z(), b.z(), 1e-6) << what;
}

TEST(SceneLayers, MeshBodiesSitAtTheFramesPositionsWithItsRadiiAndColours) {
  const auto meta = three_bodies();
  osg::ref_ptr<osg::Group> world = new osg::Group;
  BodiesLayer bodies(meta, BodyStyle::meshes, *world, 240);
  FrameState f = hand_made_frame();
  bodies.update(f);
  for (std::size_t i = 0; i < 3; ++i) {
    expect_near(bodies.mesh(i)->getPosition(), f.positions.col(static_cast<Eigen::Index>(i)), "position");
    EXPECT_NEAR(bodies.mesh(i)->getScale().x(), f.radii[i], 1e-12);
    EXPECT_EQ(bodies.drawn_colour(i), f.colours[i]);
  }
  EXPECT_EQ(bodies.cage(), nullptr);  // nothing selected
  // The next frame moves them; a selected body gets the cage around it, 1.3 × its radius.
  f.positions.col(1) << 7.0, 8.0, 9.0;
  f.selection = Pick{Pick::Kind::body, 1, 0.0};
  bodies.update(f);
  expect_near(bodies.mesh(1)->getPosition(), Eigen::Vector3d(7.0, 8.0, 9.0), "moved body");
  ASSERT_NE(bodies.cage(), nullptr);
  expect_near(bodies.cage()->getPosition(), Eigen::Vector3d(7.0, 8.0, 9.0), "cage");
  EXPECT_NEAR(bodies.cage()->getScale().x(), 1.3 * 0.4, 1e-12);
  // Colours are re-applied only with a new colours version.
  f.colours[0] = osg::Vec3(0.5F, 0.5F, 0.5F);
  bodies.update(f);
  EXPECT_EQ(bodies.drawn_colour(0), osg::Vec3(0.9F, 0.1F, 0.1F));
  ++f.colours_version;
  bodies.update(f);
  EXPECT_EQ(bodies.drawn_colour(0), osg::Vec3(0.5F, 0.5F, 0.5F));
}

TEST(SceneLayers, PointBodiesFollowTheFrameAndHiddenOnesTakeTheBackground) {
  const auto meta = three_bodies();
  for (const BodyStyle style : {BodyStyle::impostors, BodyStyle::cloud}) {
    osg::ref_ptr<osg::Group> world = new osg::Group;
    BodiesLayer bodies(meta, style, *world, 240);
    FrameState f = hand_made_frame();
    f.shown[2] = false;
    bodies.update(f);
    for (std::size_t i = 0; i < 3; ++i) {
      expect_near(osg::Vec3d(bodies.point(i)), f.positions.col(static_cast<Eigen::Index>(i)), "point");
    }
    EXPECT_EQ(bodies.drawn_colour(0), f.colours[0]);
    const osg::Vec4 bg = background_colour();
    EXPECT_EQ(bodies.drawn_colour(2), osg::Vec3(bg.r(), bg.g(), bg.b()));
  }
}

// Where a spring cylinder's unit ends (z = 0 and z = 1) land.
std::pair<osg::Vec3d, osg::Vec3d> cylinder_ends(const osg::MatrixTransform& xf) {
  return {osg::Vec3d(0, 0, 0) * xf.getMatrix(), osg::Vec3d(0, 0, 1) * xf.getMatrix()};
}

TEST(SceneLayers, SpringEndsFollowTheFramesBodiesAndTheirColoursItsLengthsAndTraffic) {
  const auto meta = three_bodies();
  osg::ref_ptr<osg::Group> world = new osg::Group;
  SpringsLayer springs(meta, initial_positions(), BodyStyle::meshes, *world);
  FrameState f = hand_made_frame();
  springs.update(f);
  for (std::size_t e = 0; e < 2; ++e) {
    ASSERT_NE(springs.cylinder(e), nullptr);
    EXPECT_NE(springs.cylinder(e)->getNodeMask(), 0U);
    const auto [from, to] = cylinder_ends(*springs.cylinder(e));
    expect_near(from, f.positions.col(meta.edges[e][0]), "spring start");
    expect_near(to, f.positions.col(meta.edges[e][1]), "spring end");
  }
  // Tension: spring 0 is shorter than in the initial positions, so bluer; spring 1 longer, so redder.
  const auto length = [](const Eigen::Matrix3Xd& p, std::size_t a, std::size_t b) {
    return (p.col(static_cast<Eigen::Index>(a)) - p.col(static_cast<Eigen::Index>(b))).norm();
  };
  const osg::Vec3 compressed = springs.colour(0);
  EXPECT_EQ(compressed, tension_colour(length(f.positions, 0, 1), length(initial_positions(), 0, 1)));
  EXPECT_GT(compressed.z(), compressed.x());
  const osg::Vec3 stretched = springs.colour(1);
  EXPECT_EQ(stretched, tension_colour(length(f.positions, 1, 2), length(initial_positions(), 1, 2)));
  EXPECT_GT(stretched.x(), stretched.z());
  // Traffic: the frame's bytes decide.
  springs.set_colouring(SpringColours::traffic);
  const std::vector<double> bytes{0.0, 500.0};
  f.spring_bytes = bytes;
  f.max_spring_bytes = 500.0;
  springs.update(f);
  EXPECT_EQ(springs.colour(0), traffic_colour(0.0, 500.0));
  EXPECT_EQ(springs.colour(1), traffic_colour(500.0, 500.0));
  // A selected spring is highlighted; a spring to a hidden body is not drawn.
  f.selection = Pick{Pick::Kind::spring, 1, 0.0};
  f.shown[0] = false;
  springs.update(f);
  EXPECT_EQ(springs.colour(1), kHighlight);
  EXPECT_EQ(springs.cylinder(0)->getNodeMask(), 0U);

  // Drawn as lines (point bodies), the line ends are the bodies' positions.
  osg::ref_ptr<osg::Group> world2 = new osg::Group;
  SpringsLayer lines(meta, initial_positions(), BodyStyle::impostors, *world2);
  FrameState g = hand_made_frame();
  lines.update(g);
  EXPECT_EQ(lines.cylinder(0), nullptr);
  for (std::size_t e = 0; e < 2; ++e) {
    const osg::Vec3* ends = lines.line_ends(e);
    ASSERT_NE(ends, nullptr);
    expect_near(osg::Vec3d(ends[0]), g.positions.col(meta.edges[e][0]), "line start");
    expect_near(osg::Vec3d(ends[1]), g.positions.col(meta.edges[e][1]), "line end");
  }
}

TEST(SceneLayers, DialHandAndLabelFollowTheFramesTime) {
  DialLayer dial;
  dial.layout(dial_layout(640, 480));
  FrameState f = hand_made_frame();
  for (const double t : {0.0, 2.5, 5.0, 7.5}) {
    f.time_s = t;
    dial.update(f);
    // The hand points where the dial's geometry says for the frame's fraction of its span (12
    // o'clock at the start, clockwise).
    const Direction2 expected = dial_hand_direction(dial_fraction(t, 0.0, 10.0));
    EXPECT_NEAR(dial.hand_direction().x, expected.x, 1e-9) << "t = " << t;
    EXPECT_NEAR(dial.hand_direction().y, expected.y, 1e-9) << "t = " << t;
    EXPECT_EQ(dial.time_label().getText().createUTF8EncodedString(), format_dial_time(t, 0.0, 10.0));
    EXPECT_EQ(dial.elapsed_vertices() == 0, t == 0.0) << "the elapsed sector is empty only at the start";
  }
}

TEST(SceneLayers, TrailsDrawTheFramesSamplesInTheBodiesColours) {
  TrailsLayer trails(3);
  FrameState f = hand_made_frame();
  trails.update(f);
  EXPECT_FALSE(trails.drawn());  // no length set
  trails.set_length(1.0);
  ASSERT_TRUE(trails.wanted());
  EXPECT_DOUBLE_EQ(trails.sample_time(TrailsLayer::kSamples - 1, 2.5, 0.0), 2.5);  // the last is now
  EXPECT_DOUBLE_EQ(trails.sample_time(0, 2.5, 0.0), 1.5);                          // the first a second ago
  EXPECT_DOUBLE_EQ(trails.sample_time(0, 0.5, 0.0), 0.0);                          // never before the run
  trails.update(f);
  EXPECT_FALSE(trails.drawn());  // the frame carries no samples
  for (int k = 0; k < TrailsLayer::kSamples; ++k) {
    f.trail.push_back(f.positions + Eigen::Matrix3Xd::Constant(3, 3, 0.1 * k));
  }
  trails.update(f);
  ASSERT_TRUE(trails.drawn());
  const auto& v = *static_cast<const osg::Vec3Array*>(trails.lines().getVertexArray());
  const auto& c = *static_cast<const osg::Vec4Array*>(trails.lines().getColorArray());
  ASSERT_EQ(v.size(), 3U * TrailsLayer::kSamples);
  for (std::size_t i = 0; i < 3; ++i) {
    for (int k = 0; k < TrailsLayer::kSamples; ++k) {
      const std::size_t at = i * TrailsLayer::kSamples + static_cast<std::size_t>(k);
      expect_near(osg::Vec3d(v[at]), f.trail[static_cast<std::size_t>(k)].col(static_cast<Eigen::Index>(i)), "trail");
      EXPECT_EQ(osg::Vec3(c[at].r(), c[at].g(), c[at].b()), f.colours[i]);
    }
  }
}

TEST(SceneLayers, LabelsSitBesideTheFramesBodies) {
  const auto meta = three_bodies();
  LabelsLayer labels;
  FrameState f = hand_made_frame();
  labels.update(f);
  EXPECT_EQ(labels.label(0), nullptr);  // built on first use
  labels.set_labels(true, mapping::LabelKind::Host, meta);
  labels.update(f);
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_NE(labels.label(i), nullptr);
    const auto p = f.positions.col(static_cast<Eigen::Index>(i));
    const double r = f.radii[i];
    expect_near(osg::Vec3d(labels.label(i)->getPosition()), Eigen::Vector3d(p.x() + 0.8 * r, p.y(), p.z() + 0.8 * r),
                "label");
    EXPECT_EQ(labels.label(i)->getText().createUTF8EncodedString(), meta.bodies[i].host);
  }
}

TEST(SceneLayers, FlashesJoinTheFramesCommunicatingPairs) {
  DecorationsLayer decorations(osg::BoundingSphered(osg::Vec3d(0, 0, 0), 5.0));
  FrameState f = hand_made_frame();
  const std::vector<Flash> flashes{{0, 2, 100.0, 1.0F}};
  f.flashes = flashes;
  decorations.update(f);
  EXPECT_FALSE(decorations.flashes_drawn());  // off
  decorations.set_flashes(true);
  decorations.update(f);
  ASSERT_TRUE(decorations.flashes_drawn());
  const auto& v = *static_cast<const osg::Vec3Array*>(decorations.flash_lines().getVertexArray());
  ASSERT_EQ(v.size(), 2U);
  expect_near(osg::Vec3d(v[0]), f.positions.col(0), "flash start");
  expect_near(osg::Vec3d(v[1]), f.positions.col(2), "flash end");
  f.flashes = {};
  decorations.update(f);
  EXPECT_FALSE(decorations.flashes_drawn());  // an interval without traffic
}

TEST(SceneLayers, HudShowsTheFramesInspectText) {
  HudLayer hud;
  hud.layout(640, 480, dial_layout(640, 480));
  FrameState f = hand_made_frame();
  hud.update(f);
  EXPECT_EQ(hud.inspect_panel().getNodeMask(), 0U);  // nothing selected
  f.inspect_text = "body red\nload 1";
  hud.update(f);
  EXPECT_NE(hud.inspect_panel().getNodeMask(), 0U);
  EXPECT_EQ(hud.inspect_panel().getText().createUTF8EncodedString(), f.inspect_text);
  hud.set_inspect_visible(false);
  hud.update(f);
  EXPECT_EQ(hud.inspect_panel().getNodeMask(), 0U);
  // Text is UTF-8 (a render's caption "trace a  ·  mapping b", times in µs): each character once,
  // not its bytes read as Latin-1 ("Â·").
  const std::string caption = "trace a.kntr  \u00b7  mapping r\u00e9seau.toml, 3 \u00b5s";
  hud.set_status(caption);
  EXPECT_EQ(hud.status().getText().createUTF8EncodedString(), caption);
  EXPECT_EQ(hud.status().getText().size(), 42U) << "characters, not bytes";
}

// The composition: set_time() reads the run once into the frame state the layers share.
TEST(SceneLayers, SceneComputesOneFrameStateFromTheRun) {
  test::TempDir dir;
  test::write_tiny_run(dir / "run.kntj", /*growing_blue_mass=*/true);
  const trajectory::Reader reader(dir / "run.kntj");
  TrajectoryScene scene(reader, 320, 240);
  VisualOptions v = scene.visual();
  v.trail_s = 2.0;
  scene.set_visual(v);
  scene.set_time(6.5);
  const FrameState& f = scene.frame();
  EXPECT_DOUBLE_EQ(f.time_s, 6.5);
  EXPECT_EQ(f.interval, 6U);
  EXPECT_NEAR(f.into_interval, 0.5, 1e-12);
  EXPECT_TRUE(f.positions.isApprox(test::tiny_run_positions()));
  EXPECT_NEAR(f.radii[2], 2.0 * static_cast<double>(test::kTinyRunRadius), 1e-6);  // mass 8×
  EXPECT_EQ(f.trail.size(), static_cast<std::size_t>(TrailsLayer::kSamples));
  EXPECT_FALSE(f.spring_bytes.empty());
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(f.colours[i], scene.body_colour(i));
  scene.select(Pick{Pick::Kind::body, 0, 0.0});
  EXPECT_TRUE(scene.frame().selection.has_value());
  EXPECT_NE(scene.frame().inspect_text.find("red"), std::string::npos);
}

}  // namespace
}  // namespace kanoko::scene::layers
