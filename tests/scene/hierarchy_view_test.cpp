// Levels of detail in the scene and the viewer (issue 15, point 4): closed groups of the run's
// hierarchy drawn as one body at their members' centroid with summed sizes, springs and
// statistics; opened into their ranks and closed again without re-simulating; under Xvfb, the
// same through the real window (clicks, the side panel's button, key e, layout, inspect and
// screenshots).
#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <osg/Image>
#include <osgDB/ReadFile>
#include <string>
#include <tuple>
#include <vector>

#include "src/scene/layers/bodies_layer.hpp"
#include "src/scene/layers/groups_layer.hpp"
#include "src/scene/layers/trails_layer.hpp"
#include "src/scene/legend.hpp"
#include "src/scene/mapping_visual.hpp"
#include "src/scene/offscreen.hpp"
#include "src/scene/scene.hpp"
#include "src/mapping/mapping.hpp"
#include "src/trajectory/palette.hpp"
#include "src/trajectory/trajectory.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using test::TempDir;

constexpr int kHosts = 4;
constexpr int kRanksPerHost = 4;
constexpr float kRadius = 0.5F;
const std::array<std::array<float, 3>, kHosts> kHostColours{
    {{1.0F, 0.0F, 0.0F}, {0.0F, 1.0F, 0.0F}, {0.0F, 0.0F, 1.0F}, {1.0F, 1.0F, 0.0F}}};

/// Centre of host h: the hosts in a row along x, 6 apart.
Eigen::Vector3d host_centre(int h) { return {6.0 * h - 9.0, 0.0, 0.0}; }

/// Rank j of a host sits 1.5 from its centre (+x, -x, +y, -y): the four never overlap.
Eigen::Vector3d rank_offset(int j) {
  const std::array<Eigen::Vector3d, 4> o{Eigen::Vector3d(1.5, 0, 0), Eigen::Vector3d(-1.5, 0, 0),
                                         Eigen::Vector3d(0, 1.5, 0), Eigen::Vector3d(0, -1.5, 0)};
  return o[static_cast<std::size_t>(j)];
}

/// 4 hosts of 4 ranks (rank-0 .. rank-15, host-0 .. host-3, each host in one pure colour), a
/// spring ring over the ranks (so 4 springs cross between hosts), fixed places, three frames.
/// Statistics: mass = 1 + rank, bytes_sent = 100 (rank + 1), busy = 0.25 × (rank mod 4).
void write_hosts_run(const std::filesystem::path& path,
                     const std::function<std::string(int)>& host_name = [](int h) { return "host-" + std::to_string(h); }) {
  trajectory::Metadata meta;
  const int n = kHosts * kRanksPerHost;
  Eigen::Matrix3Xd positions(3, n);
  for (int r = 0; r < n; ++r) {
    trajectory::BodyInfo b;
    b.name = "rank-" + std::to_string(r);
    b.host = host_name(r / kRanksPerHost);
    b.rank = r;
    b.colour_rgb = kHostColours[static_cast<std::size_t>(r / kRanksPerHost)];
    b.radius = kRadius;
    meta.bodies.push_back(b);
    positions.col(r) = host_centre(r / kRanksPerHost) + rank_offset(r % kRanksPerHost);
    meta.edges.push_back({static_cast<std::uint32_t>(r), static_cast<std::uint32_t>((r + 1) % n)});
  }
  meta.stat_names = {trajectory::stat::kMass, trajectory::stat::kBytesSent, trajectory::stat::kBusy};
  meta.dt_s = 0.1;
  meta.steps_per_frame = 10;
  meta.interval_s = 1.0;
  meta.trace_end_s = 2.0;
  meta.integrator = "rk4";
  // Traffic in each of the 2 intervals: rank-0 -> rank-5 1000 B, rank-1 -> rank-6 2000 B (host-0
  // to host-1), rank-4 -> rank-5 500 B (inside host-1).
  meta.traffic_begin = {0};
  for (int k = 0; k < 2; ++k) {
    meta.traffic.push_back({0, 5, 1000.0, 1});
    meta.traffic.push_back({1, 6, 2000.0, 1});
    meta.traffic.push_back({4, 5, 500.0, 1});
    meta.traffic_begin.push_back(meta.traffic.size());
  }
  trajectory::Writer writer(path, meta);
  Eigen::MatrixXd stats(3, n);
  for (int r = 0; r < n; ++r) stats.col(r) << 1.0 + r, 100.0 * (r + 1), 0.25 * (r % kRanksPerHost);
  for (int k = 0; k < 3; ++k) writer.append_frame(k, positions, Eigen::Matrix3Xd::Zero(3, n), stats);
  writer.commit();
}

std::size_t drawn_bodies(const TrajectoryScene& s) {
  std::size_t shown = 0;
  for (const bool b : s.frame().shown) shown += b ? 1U : 0U;
  return shown;
}

TEST(HierarchyScene, HostsDrawAsOneBodyAtTheCentroidWithSummedSizeSpringsAndStatistics) {
  TempDir dir;
  write_hosts_run(dir / "run.kntj");
  const trajectory::Reader reader(dir / "run.kntj");
  TrajectoryScene scene(reader, 640, 480);
  // 16 ranks fit: every rank on its own, nothing grouped.
  EXPECT_EQ(scene.cut().items().size(), 16U);
  EXPECT_EQ(scene.groups().count(), 0U);
  EXPECT_EQ(drawn_bodies(scene), 16U);

  scene.set_level(scene.hierarchy().level_index("host", "test"));
  ASSERT_EQ(scene.groups().count(), 4U);
  EXPECT_EQ(drawn_bodies(scene), 0U) << "the ranks of a closed host are drawn by the host";
  const layers::FrameState& g = scene.groups().frame();
  for (int h = 0; h < kHosts; ++h) {
    EXPECT_TRUE(g.positions.col(h).isApprox(host_centre(h), 1e-12)) << h;
    // The volume of its four ranks: r cbrt(4).
    EXPECT_NEAR(g.radii[static_cast<std::size_t>(h)], static_cast<double>(kRadius) * std::cbrt(4.0), 1e-6) << h;
    // A palette colour of its own at the host level, not its members' (here pure) colours.
    const osg::Vec3 c = g.colours[static_cast<std::size_t>(h)];
    const auto want = trajectory::palette_colour(static_cast<std::size_t>(h));
    EXPECT_NEAR(c.x(), want[0], 1e-6) << h;
    EXPECT_NEAR(c.y(), want[1], 1e-6) << h;
    EXPECT_NEAR(c.z(), want[2], 1e-6) << h;
    for (int o = 0; o < h; ++o) EXPECT_NE(c, g.colours[static_cast<std::size_t>(o)]) << h << " and " << o;
  }
  // The key says so: a swatch per group.
  const auto groups_entry = std::find_if(scene.legend().entries.begin(), scene.legend().entries.end(),
                                         [](const LegendEntry& e) { return e.title == "Groups: a colour each"; });
  ASSERT_NE(groups_entry, scene.legend().entries.end());
  EXPECT_EQ(groups_entry->swatches.size(), 4U);
  // The ring crosses between neighbouring hosts 4 times: 4 summed springs.
  EXPECT_EQ(scene.groups().spring_count(), 4U);
  // The interval's messages: one flash host-0 -- host-1 of 3000 B; inside host-1 none.
  scene.set_time(0.5);
  ASSERT_EQ(scene.frame().flashes.size(), 3U);
  ASSERT_EQ(scene.groups().flashes().size(), 1U);
  const Flash& fl = scene.groups().flashes()[0];
  EXPECT_EQ(std::minmax(fl.a, fl.b), std::minmax(std::uint32_t{0}, std::uint32_t{1}));
  EXPECT_DOUBLE_EQ(fl.bytes, 3000.0);

  // Inspect: the group's name, level and member count, summed mass and bytes, mean busy.
  scene.select(Pick{Pick::Kind::group, 1, 0.0});
  const std::string text = scene.inspect_text();
  EXPECT_NE(text.find("host-1  (host of 4 bodies)"), std::string::npos) << text;
  EXPECT_NE(text.find("rank-4, rank-5, rank-6, rank-7"), std::string::npos) << text;
  const auto line_of = [&](const std::string& label) {
    const auto at = text.find(label);
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
  };
  EXPECT_NE(line_of("mass (sum)").find("26"), std::string::npos) << text;              // 5 + 6 + 7 + 8
  EXPECT_NE(line_of("bytes sent (interval) (sum)").find("2.539 KiB"), std::string::npos) << text;  // 500 + ... + 800
  EXPECT_NE(line_of("busy (interval) (mean)").find("37.5"), std::string::npos) << text;          // (0 + .25 + .5 + .75) / 4
}

TEST(HierarchyScene, TrailsForWhatIsDrawnGroupsThroughTheirCentroids) {
  TempDir dir;
  write_hosts_run(dir / "run.kntj");
  const trajectory::Reader reader(dir / "run.kntj");
  TrajectoryScene scene(reader, 640, 480);
  scene.set_level(1);
  ASSERT_TRUE(scene.open_group(1));  // host-1 drawn as its ranks 4..7, the other hosts closed
  VisualOptions with_trails = scene.visual();
  with_trails.trail_s = 1.0;
  scene.set_visual(with_trails);
  scene.set_time(1.5);
  // The ranks' trails: only the four drawn ranks have a strip.
  const osg::Geometry& lines = scene.trails().lines();
  ASSERT_TRUE(scene.trails().drawn());
  ASSERT_EQ(lines.getNumPrimitiveSets(), 16U);
  for (unsigned r = 0; r < 16; ++r) {
    const auto* strip = static_cast<const osg::DrawArrays*>(lines.getPrimitiveSet(r));
    EXPECT_EQ(strip->getCount(), r >= 4 && r < 8 ? layers::TrailsLayer::kSamples : 0) << "rank " << r;
  }
  // The three closed hosts' trails, through their centroids (the ranks do not move here).
  const layers::TrailsLayer* groups = scene.groups().trails();
  ASSERT_NE(groups, nullptr);
  ASSERT_TRUE(groups->drawn());
  ASSERT_EQ(groups->lines().getNumPrimitiveSets(), 3U);
  const auto& vertices = *static_cast<const osg::Vec3Array*>(groups->lines().getVertexArray());
  ASSERT_EQ(vertices.size(), 3U * layers::TrailsLayer::kSamples);
  const int hosts[] = {0, 2, 3};
  for (std::size_t j = 0; j < 3; ++j) {
    for (int k = 0; k < layers::TrailsLayer::kSamples; ++k) {
      const osg::Vec3& p = vertices[j * layers::TrailsLayer::kSamples + static_cast<std::size_t>(k)];
      const Eigen::Vector3d want = host_centre(hosts[j]);
      EXPECT_NEAR(p.x(), want.x(), 1e-5) << j << " " << k;
      EXPECT_NEAR(p.y(), want.y(), 1e-5) << j << " " << k;
    }
  }
}

TEST(HierarchyScene, AColourFormulaColoursAGroupByItsSummedStatistics) {
  TempDir dir;
  write_hosts_run(dir / "run.kntj");
  const trajectory::Reader reader(dir / "run.kntj");
  TrajectoryScene scene(reader, 640, 480);
  // bytes_sent runs 100 .. 1600 over the ranks; a host's is the sum of its four: 1000, 2600, ...
  const auto m = mapping::parse_mapping_text("[forces.friction]\nbeta = 1\n[visual]\ncolour = \"bytes_sent\"\ncolour_range = [0, 6000]\n", "hosts.toml");
  scene.use_mapping_formulas(m, "run.kntj");
  scene.set_level(1);
  const layers::FrameState& g = scene.groups().frame();
  const double sums[] = {1000, 2600, 4200, 5800};
  for (std::size_t h = 0; h < 4; ++h) {
    const auto want = mapping::colour_at(mapping::ColourMap::Cividis, sums[h] / 6000.0);
    EXPECT_NEAR(g.colours[h].x(), want[0], 1e-6) << h;
    EXPECT_NEAR(g.colours[h].y(), want[1], 1e-6) << h;
    EXPECT_NEAR(g.colours[h].z(), want[2], 1e-6) << h;
  }
  const auto note = std::find_if(scene.legend().entries.begin(), scene.legend().entries.end(),
                                 [](const LegendEntry& e) { return e.title == "Groups: bytes_sent of their summed statistics"; });
  EXPECT_NE(note, scene.legend().entries.end());
}

TEST(HierarchyScene, AGroupOpensIntoItsRanksAndClosesAgainWithTheSameRun) {
  TempDir dir;
  write_hosts_run(dir / "run.kntj");
  const trajectory::Reader reader(dir / "run.kntj");
  TrajectoryScene scene(reader, 640, 480);
  scene.set_level(1);
  const Eigen::Matrix3Xd before = scene.positions();
  ASSERT_TRUE(scene.open_group(1));
  EXPECT_EQ(scene.cut().items().size(), 7U);  // host-0, rank-4 .. rank-7, host-2, host-3
  EXPECT_EQ(scene.groups().count(), 3U);
  EXPECT_EQ(drawn_bodies(scene), 4U);
  for (std::size_t r = 4; r < 8; ++r) EXPECT_TRUE(scene.frame().shown[r]) << r;
  EXPECT_TRUE(scene.positions().isApprox(before)) << "the ranks are where the run has them";
  // Springs from the opened ranks to their neighbours' hosts, and host-2 to host-3, host-3 to host-0.
  EXPECT_EQ(scene.groups().spring_count(), 4U);
  EXPECT_FALSE(scene.open_group(2)) << "a rank does not open";

  // Closing from one of its ranks (selected): one body again, the group selected.
  scene.select(Pick{Pick::Kind::body, 5, 0.0});
  ASSERT_TRUE(scene.close_group(scene.cut().item_of_body(5)));
  EXPECT_EQ(scene.groups().count(), 4U);
  EXPECT_EQ(drawn_bodies(scene), 0U);
  ASSERT_TRUE(scene.selection().has_value());
  EXPECT_EQ(scene.selection()->kind, Pick::Kind::group);
  EXPECT_EQ(scene.inspect_text().rfind("host-1", 0), 0U) << scene.inspect_text();
  EXPECT_FALSE(scene.close_group(0)) << "hosts are the top level";

  // Selecting a rank inside a closed host (e.g. --select) opens its host.
  scene.select(Pick{Pick::Kind::body, 9, 0.0});
  EXPECT_EQ(scene.groups().count(), 3U);
  EXPECT_TRUE(scene.frame().shown[9]);
  EXPECT_FALSE(scene.item_named("host-2").has_value());
  EXPECT_EQ(scene.item_named("host-3"), std::optional<std::size_t>(scene.cut().items().size() - 1));
}

TEST(HierarchyScene, ClustersOpenIntoHostsAndHostsIntoRanks) {
  TempDir dir;
  // Hosts a-0, a-1, b-0, b-1: clusters a-* and b-* from their names.
  write_hosts_run(dir / "run.kntj", [](int h) { return std::string(h < 2 ? "a-" : "b-") + std::to_string(h % 2); });
  const trajectory::Reader reader(dir / "run.kntj");
  TrajectoryScene scene(reader, 640, 480);
  scene.set_level(scene.hierarchy().level_index("cluster", "test"));
  ASSERT_EQ(scene.groups().count(), 2U);
  // The cluster a-* at the centroid of its 8 ranks, with their volume.
  EXPECT_TRUE(scene.groups().frame().positions.col(0).isApprox(0.5 * (host_centre(0) + host_centre(1)), 1e-12));
  EXPECT_NEAR(scene.groups().frame().radii[0], static_cast<double>(kRadius) * 2.0, 1e-6);
  scene.select(Pick{Pick::Kind::group, 0, 0.0});
  EXPECT_NE(scene.inspect_text().find("a-*  (cluster of 8 bodies)"), std::string::npos) << scene.inspect_text();
  EXPECT_NE(scene.inspect_text().find("hosts"), std::string::npos) << scene.inspect_text();
  ASSERT_TRUE(scene.open_group(0));  // a-* into a-0, a-1
  EXPECT_EQ(scene.groups().count(), 3U);
  ASSERT_TRUE(scene.open_group(*scene.item_named("a-1")));  // into rank-4 .. rank-7
  EXPECT_EQ(scene.cut().items().size(), 6U);
  // Closing from a rank gives its host back; closing the host gives the cluster back.
  ASSERT_TRUE(scene.close_group(scene.cut().item_of_body(6)));
  EXPECT_EQ(scene.cut().items().size(), 3U);
  ASSERT_TRUE(scene.close_group(*scene.item_named("a-1")));
  EXPECT_EQ(scene.cut().items().size(), 2U);
  EXPECT_FALSE(scene.close_group(0)) << "clusters are the top level";
}

TEST(HierarchyScene, AClickOnAHostPicksTheGroup) {
  TempDir dir;
  write_hosts_run(dir / "run.kntj");
  const trajectory::Reader reader(dir / "run.kntj");
  TrajectoryScene scene(reader, 640, 480);
  const CameraMatrices cam = render_camera(scene.bound(), 640, 480);
  const auto normalised = [&](const Eigen::Vector3d& p) {
    const osg::Vec3d w = cam.to_window(osg::Vec3d(p.x(), p.y(), p.z()));
    return std::pair{2.0 * w.x() / 640 - 1.0, 2.0 * w.y() / 480 - 1.0};
  };
  // At rank level the centre of host-3 is between its ranks (on the spring rank-12 -- rank-13).
  auto [x, y] = normalised(host_centre(3));
  const auto ranks = scene.pick_at(cam.view, cam.projection, x, y);
  EXPECT_TRUE(!ranks || ranks->kind == Pick::Kind::spring);
  scene.set_level(1);
  const auto hit = scene.pick_at(cam.view, cam.projection, x, y);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->kind, Pick::Kind::group);
  EXPECT_EQ(hit->index, *scene.item_named("host-3"));
  // A rank inside a closed host is not drawn, so not picked.
  std::tie(x, y) = normalised(host_centre(0) + rank_offset(0) * 1.2);
  EXPECT_FALSE(scene.pick_at(cam.view, cam.projection, x, y).has_value());
}

TEST(HierarchyScene, HiddenBodiesAreNotDrawnInAnyStyle) {
  trajectory::Metadata meta;
  meta.bodies.resize(3);
  for (const BodyStyle style : {BodyStyle::meshes, BodyStyle::impostors, BodyStyle::cloud}) {
    osg::ref_ptr<osg::Group> world = new osg::Group;
    layers::BodiesLayer bodies(meta, style, *world, 240);
    layers::FrameState f;
    f.positions = Eigen::Matrix3Xd::Zero(3, 3);
    f.radii = {0.1, 0.0, 0.1};
    f.shown = {true, false, true};
    f.colours.assign(3, osg::Vec3(1, 1, 1));
    bodies.update(f);
    EXPECT_EQ(bodies.drawn_count(), 2U) << static_cast<int>(style);
    f.shown = {true, true, true};
    bodies.update(f);
    EXPECT_EQ(bodies.drawn_count(), 3U) << static_cast<int>(style);
  }
}

TEST(HierarchyScene, TheDefaultLevelIsTheOneThatFits) {
  trajectory::Metadata meta;
  const std::size_t n = kCloudThreshold + 1000;
  meta.bodies.resize(n);
  for (std::size_t i = 0; i < n; ++i) meta.bodies[i].name = "rank-" + std::to_string(i);
  // No hosts: the cloud of ranks is the last resort.
  EXPECT_EQ(default_level(trajectory::Hierarchy(meta)), 0U);
  for (std::size_t i = 0; i < n; ++i) meta.bodies[i].host = "host-" + std::to_string(i / 32);
  EXPECT_EQ(default_level(trajectory::Hierarchy(meta)), 1U) << "too many ranks: hosts";
  // As many hosts as ranks: nothing fits, ranks again.
  for (std::size_t i = 0; i < n; ++i) meta.bodies[i].host = "host-" + std::to_string(i);
  EXPECT_EQ(default_level(trajectory::Hierarchy(meta)), 0U);
  meta.bodies.resize(kCloudThreshold);
  for (auto& b : meta.bodies) b.host = "one";
  EXPECT_EQ(default_level(trajectory::Hierarchy(meta)), 0U) << "ranks that fit stay ranks";
}

// --- Under X: the real window ------------------------------------------------------------------

rapidjson::Document read_json(const std::filesystem::path& p) {
  rapidjson::Document d;
  d.Parse(test::read_text(p).c_str());
  EXPECT_FALSE(d.HasParseError()) << p;
  return d;
}

std::vector<std::string> groups_of(const rapidjson::Document& d) {
  std::vector<std::string> out;
  for (const auto& g : d["hierarchy"]["groups"].GetArray()) out.emplace_back(g.GetString());
  return out;
}

/// Hue in degrees of an RGB colour (0..1 or 0..255 alike).
double hue_of(double r, double g, double b) {
  const double hi = std::max({r, g, b});
  const double lo = std::min({r, g, b});
  if (hi <= lo) return -1;
  double h = hi == r ? (g - b) / (hi - lo) : hi == g ? 2.0 + (b - r) / (hi - lo) : 4.0 + (r - g) / (hi - lo);
  h *= 60.0;
  return h < 0 ? h + 360.0 : h;
}

/// Pixels of a saturated, lit colour of the hue of `rgb` (within 10 degrees): the bodies of that
/// colour whatever their shading.
int pixels_of_hue(const std::filesystem::path& png, const std::array<float, 3>& rgb) {
  osg::ref_ptr<osg::Image> image = osgDB::readImageFile(png.string());
  if (!image.valid()) return -1;
  const double want = hue_of(rgb[0], rgb[1], rgb[2]);
  int n = 0;
  for (int y = 0; y < image->t(); ++y) {
    for (int x = 0; x < image->s(); ++x) {
      const unsigned char* p = image->data(static_cast<unsigned>(x), static_cast<unsigned>(y));
      const int hi = std::max({p[0], p[1], p[2]});
      const int lo = std::min({p[0], p[1], p[2]});
      if (hi < 60 || hi - lo < 0.4 * hi) continue;  // dark or grey: background, text, lines
      const double d = std::abs(hue_of(p[0], p[1], p[2]) - want);
      if (std::min(d, 360.0 - d) < 10.0) ++n;
    }
  }
  return n;
}

TEST(HierarchyViewer, AClickOpensAHostTheSidePanelClosesItAndInspectShowsTheSums) {
  if (!display_variable_set()) GTEST_SKIP() << "needs an X display; run under xvfb-run";
  TempDir dir;
  write_hosts_run(dir / "run.kntj");
  const std::string L = (dir / "l").string();
  test::write_text(dir / "script.txt", "frames 3\nlayout " + L + "1.json\nscreenshot " + L + "1.png\n"
                                       "click group host-1\nframes 3\nlayout " + L + "2.json\nscreenshot " + L + "2.png\n"
                                       "click body rank-5\nframes 3\nclick button.close-group\nframes 3\nlayout " + L + "3.json\n"
                                       "click group host-2 shift\nframes 3\ninspect " + L + "4.txt\n"
                                       "key e\nframes 3\nlayout " + L + "5.json\n");
  const auto r = test::run_kanoko({"view", (dir / "run.kntj").string(), "--no-sound", "--paused", "--springs", "off",
                                   "--level", "host", "--script", (dir / "script.txt").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> all = {"host-0", "host-1", "host-2", "host-3"};
  const auto d1 = read_json(L + "1.json");
  EXPECT_EQ(groups_of(d1), all);
  EXPECT_EQ(d1["hierarchy"]["items"].GetInt(), 4);
  EXPECT_EQ(d1["hierarchy"]["levels"][1]["name"].GetString(), std::string("host"));
  // The click opened host-1 into its 4 ranks.
  const auto d2 = read_json(L + "2.json");
  EXPECT_EQ(groups_of(d2), (std::vector<std::string>{"host-0", "host-2", "host-3"}));
  EXPECT_EQ(d2["hierarchy"]["items"].GetInt(), 7);
  // Four spheres of radius r instead of one of r cbrt(4): 4 / 4^(2/3) = 1.59 times the area.
  // Closed, host-1 has palette colour 1 (sky blue); open, its ranks their own (pure green).
  const int g1 = pixels_of_hue(L + "1.png", trajectory::palette_colour(1));
  const int g2 = pixels_of_hue(L + "2.png", kHostColours[1]);
  EXPECT_LT(pixels_of_hue(L + "2.png", trajectory::palette_colour(1)), g1 / 10) << "host-1 no longer drawn whole";
  ASSERT_GT(g1, 100);
  EXPECT_GT(g2, 1.3 * g1) << g1 << " " << g2;
  EXPECT_LT(g2, 2.0 * g1) << g1 << " " << g2;
  // The side panel's button closed it again; the host stays selected.
  const auto d3 = read_json(L + "3.json");
  EXPECT_EQ(groups_of(d3), all);
  EXPECT_EQ(d3["hierarchy"]["selected_group"].GetString(), std::string("host-1"));
  // Shift+click selected host-2 without opening it: its summed statistics.
  const std::string text = test::read_text(L + "4.txt");
  EXPECT_NE(text.find("host-2  (host of 4 bodies)"), std::string::npos) << text;
  EXPECT_NE(text.find("42"), std::string::npos) << "mass 9 + 10 + 11 + 12\n" << text;
  // Key e opened the selected host.
  const auto d5 = read_json(L + "5.json");
  EXPECT_EQ(groups_of(d5), (std::vector<std::string>{"host-0", "host-1", "host-3"}));
}

TEST(HierarchyViewer, ALevelTheRunDoesNotHaveIsAnError) {
  if (!display_variable_set()) GTEST_SKIP() << "needs an X display; run under xvfb-run";
  TempDir dir;
  write_hosts_run(dir / "run.kntj");
  const auto r = test::run_kanoko({"view", (dir / "run.kntj").string(), "--no-sound", "--exit-after", "5", "--level", "rack"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--level: error: no level 'rack' in this run"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("its levels are: rank, host"), std::string::npos) << r.err;
}

TEST(HierarchyViewer, Grid5000ZonesFromARealSimGridTraceEndToEnd) {
  // pajeng's g5k.trace: a real SimGrid trace of the Grid'5000 platform, 1528 hosts in clusters
  // (zones of type L2), some clusters split into sub-clusters (L3), inside sites (L1). Simulated
  // with no mapping; the levels come from the trace's zones, and a zone opens into the next ones.
  if (!display_variable_set()) GTEST_SKIP() << "needs an X display; run under xvfb-run";
  const auto g5k = test::shared_dir() / "traces" / "paje" / "g5k.trace";
  if (!std::filesystem::exists(g5k)) GTEST_SKIP() << "shared trace missing: " << g5k;
  TempDir dir;
  const std::string run = (dir / "g5k.kntj").string();
  // Velocity Verlet: one force evaluation per step instead of RK4's four (1528 bodies with direct
  // repulsion took 9 minutes under AddressSanitizer with RK4); the levels do not depend on it.
  auto r = test::run_kanoko({"simulate", g5k.string(), "-o", run, "-q", "--integrator", "verlet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = test::run_kanoko({"info", run});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("levels: 1528 ranks, 1000 zone3s, 25 zone2s, 9 zone1s"), std::string::npos) << r.out;

  const std::string L = (dir / "z").string();
  test::write_text(dir / "script.txt", "frames 3\nlayout " + L + "1.json\nclick group AS_graphene\nframes 3\nlayout " + L +
                                           "2.json\nscreenshot " + L + "2.png\n");
  r = test::run_kanoko({"view", run, "--no-sound", "--paused", "--level", "zone2", "--script", (dir / "script.txt").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto d1 = read_json(L + "1.json");
  const auto& levels = d1["hierarchy"]["levels"];
  ASSERT_EQ(levels.Size(), 4U);
  EXPECT_EQ(levels[2]["name"].GetString(), std::string("zone2"));
  EXPECT_EQ(d1["hierarchy"]["items"].GetInt(), 25);
  const auto g1 = groups_of(d1);
  EXPECT_NE(std::find(g1.begin(), g1.end(), "AS_graphene"), g1.end());
  // The click opened the cluster graphene into its four sub-clusters (zone3), not into hosts.
  const auto d2 = read_json(L + "2.json");
  EXPECT_EQ(d2["hierarchy"]["items"].GetInt(), 28);
  const auto g2 = groups_of(d2);
  EXPECT_EQ(std::find(g2.begin(), g2.end(), "AS_graphene"), g2.end());
  for (const char* sub : {"AS_sgraphene1", "AS_sgraphene2", "AS_sgraphene3", "AS_sgraphene4"}) {
    EXPECT_NE(std::find(g2.begin(), g2.end(), sub), g2.end()) << sub;
  }

  // A picture of the sites, and a level the run does not have.
  r = test::run_kanoko({"render", run, "--level", "zone1", "-o", (dir / "sites.png").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "sites.png"));
  for (const char* command : {"render", "view"}) {
    if (std::string(command) == "view") {
      r = test::run_kanoko({command, run, "--no-sound", "--exit-after", "5", "--level", "zone"});
    } else {
      r = test::run_kanoko({command, run, "--level", "zone", "-o", (dir / "bad.png").string()});
    }
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_NE(r.err.find("--level: error: no level 'zone' in this run (did you mean 'zone3'?); its levels are: rank, zone3, "
                         "zone2, zone1"),
              std::string::npos)
        << command << ": " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.png"));
}

}  // namespace
}  // namespace kanoko::scene
