// Who talks to whom in the viewer: spring traffic, flashes, top partners and pair traffic from the
// trajectory's traffic section (the tiny run's known traffic), and the flashes on screen.
#include <gtest/gtest.h>

#include <cmath>

#include "src/scene/inspect.hpp"
#include "src/scene/render.hpp"
#include "src/scene/scene.hpp"
#include "src/trajectory/traffic.hpp"
#include "tests/scene/tiny_render.hpp"
#include "tests/scene/tiny_run.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using test::TempDir;

trajectory::Metadata tiny_meta() {
  trajectory::Metadata m;
  m.bodies.resize(3);
  m.edges = {{0U, 1U}};
  m.interval_s = 1.0;
  test::add_tiny_run_traffic(m);
  return m;
}

TEST(IntervalTraffic, SpringBytesAndFlashesOfEachInterval) {
  const trajectory::Metadata m = tiny_meta();
  IntervalTraffic t(m);
  t.set_interval(0);
  ASSERT_EQ(t.spring_bytes().size(), 1U);
  EXPECT_EQ(t.spring_bytes()[0], 1010.0);  // both ways
  EXPECT_EQ(t.max_spring_bytes(), 1010.0);
  ASSERT_EQ(t.flashes().size(), 1U);
  EXPECT_EQ(t.flashes()[0].a, 0U);
  EXPECT_EQ(t.flashes()[0].b, 1U);
  EXPECT_FLOAT_EQ(t.flashes()[0].intensity, 1.0F);
  // Interval 6: red–green 7010 bytes, red–blue 5000 (no spring): largest first, square-root scale.
  t.set_interval(6);
  EXPECT_EQ(t.spring_bytes()[0], 7010.0);
  ASSERT_EQ(t.flashes().size(), 2U);
  EXPECT_EQ(t.flashes()[1].b, 2U);
  EXPECT_EQ(t.flashes()[1].bytes, 5000.0);
  EXPECT_FLOAT_EQ(t.flashes()[1].intensity, static_cast<float>(std::sqrt(5000.0 / 7010.0)));
  // Past the recorded intervals (the settling phase): nothing.
  t.set_interval(10);
  EXPECT_EQ(t.spring_bytes()[0], 0.0);
  EXPECT_TRUE(t.flashes().empty());
}

TEST(IntervalTraffic, KeepsOnlyTheLargestFlashes) {
  trajectory::Metadata m;
  const std::uint32_t n = 100;
  m.bodies.resize(n);
  m.traffic_begin = {0};
  for (std::uint32_t a = 0; a < n; ++a) {
    for (std::uint32_t b = 0; b < n; ++b) m.traffic.push_back({a, b, 1.0 + a * n + b, 1});
  }
  m.traffic_begin.push_back(m.traffic.size());
  IntervalTraffic t(m);
  t.set_interval(0);
  ASSERT_EQ(t.flashes().size(), IntervalTraffic::kMaxFlashes);
  // The pair {98, 99} carries the most: (98·100 + 99 + 1) + (99·100 + 98 + 1).
  EXPECT_EQ(t.flashes()[0].a, 98U);
  EXPECT_EQ(t.flashes()[0].b, 99U);
  for (std::size_t k = 1; k < t.flashes().size(); ++k) {
    ASSERT_GE(t.flashes()[k - 1].bytes, t.flashes()[k].bytes);
    ASSERT_NE(t.flashes()[k].a, t.flashes()[k].b) << "no flash from a body to itself";
  }
}

TEST(PartnerTotals, TopPartnersSoFarAndIncrementalEqualsFresh) {
  const trajectory::Metadata m = tiny_meta();
  PartnerTotals running;
  for (std::size_t bin = 0; bin < 10; ++bin) {
    const auto top = running.top(m, 0, bin, 3);
    PartnerTotals fresh;
    const auto again = fresh.top(m, 0, bin, 3);
    ASSERT_EQ(top.size(), again.size());
    for (std::size_t k = 0; k < top.size(); ++k) {
      EXPECT_EQ(top[k].body, again[k].body);
      EXPECT_EQ(top[k].total_bytes(), again[k].total_bytes());
    }
  }
  // Through interval 9: green 1000 (1 + … + 10) + 10 × 10 = 55 100 bytes, blue 5 × 5000.
  const auto top = running.top(m, 0, 9, 3);
  ASSERT_EQ(top.size(), 2U);
  EXPECT_EQ(top[0].body, 1U);
  EXPECT_EQ(top[0].sent.bytes, 55000.0);
  EXPECT_EQ(top[0].received.bytes, 100.0);
  EXPECT_EQ(top[0].received.messages, 10.0);
  EXPECT_EQ(top[1].body, 2U);
  EXPECT_EQ(top[1].sent.bytes, 25000.0);
  EXPECT_EQ(top[1].sent.messages, 10.0);
  // Going back starts over; the limit holds.
  const auto early = running.top(m, 0, 2, 1);
  ASSERT_EQ(early.size(), 1U);
  EXPECT_EQ(early[0].sent.bytes, 6000.0);
  // Blue only receives, from red.
  const auto blue = running.top(m, 2, 9, 3);
  ASSERT_EQ(blue.size(), 1U);
  EXPECT_EQ(blue[0].received.bytes, 25000.0);
}

TEST(IntervalFlows, EachWayInOneInterval) {
  const trajectory::Metadata m = tiny_meta();
  const auto f = interval_flows(m, 0, 1, 3);
  EXPECT_EQ(f[0].bytes, 4000.0);
  EXPECT_EQ(f[1].bytes, 10.0);
  const auto g = interval_flows(m, 1, 2, 7);
  EXPECT_EQ(g[0].bytes + g[1].bytes, 0.0);
}

TEST(Describe, PanelsShowTopPartnersAndThePairsTraffic) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const trajectory::Reader reader(dir / "run.kntj");
  const std::string red = describe_body(reader, 0, 9.5);
  // Total, then each way (red sends 1000 (k + 1) bytes to green in interval k, green 10 back).
  EXPECT_NE(red.find("top partners          green: 53.81 KiB (sent 53.71 KiB, recv 100 B)"), std::string::npos) << red;
  EXPECT_NE(red.find("blue: 24.41 KiB (sent 24.41 KiB, recv 0 B)"), std::string::npos) << red;
  const std::string spring = describe_spring(reader, 0, 2.5);  // interval 2
  EXPECT_NE(spring.find("pair, this interval"), std::string::npos) << spring;
  EXPECT_NE(spring.find("first -> second     2.93 KiB in 1 msgs"), std::string::npos) << spring;
  EXPECT_NE(spring.find("second -> first     10 B in 1 msgs"), std::string::npos) << spring;
  EXPECT_NE(spring.find("first -> second     5.859 KiB in 3 msgs"), std::string::npos) << spring;
}

TEST(SpringColours, CycleAndTrafficScale) {
  EXPECT_EQ(next_spring_colours(SpringColours::tension), SpringColours::traffic);
  EXPECT_EQ(next_spring_colours(SpringColours::traffic), SpringColours::off);
  EXPECT_EQ(next_spring_colours(SpringColours::off), SpringColours::tension);
  const osg::Vec3 none = traffic_colour(0, 100);
  const osg::Vec3 full = traffic_colour(100, 100);
  const osg::Vec3 quarter = traffic_colour(25, 100);
  EXPECT_EQ(none, traffic_colour(5, 0)) << "no traffic anywhere: neutral";
  EXPECT_GT(full.x(), none.x());
  EXPECT_LT(full.z(), none.z());
  // Square root: a quarter of the traffic goes half way.
  EXPECT_NEAR(quarter.z(), 0.5F * (none.z() + full.z()), 1e-6);
}

TEST(Flashes, DrawnBetweenTheTalkingBodiesOnlyWhenOn) {
  test::TinyRender tiny(6.0);  // red talks to blue (no spring between them)
  const Eigen::Matrix3Xd p = test::tiny_run_positions();
  const Eigen::Vector3d mid = 0.5 * (p.col(0) + p.col(2));
  const auto orange_near = [&](const RenderResult& r) {
    const osg::Vec3d w = r.camera.to_window(osg::Vec3d(mid.x(), mid.y(), mid.z()));
    for (int dy = -2; dy <= 2; ++dy) {
      for (int dx = -2; dx <= 2; ++dx) {
        const unsigned char* q = r.image->data(static_cast<unsigned>(w.x() + dx), static_cast<unsigned>(w.y() + dy));
        if (q[0] > 120 && q[1] > 50 && q[1] < q[0] && q[2] < 0.6 * q[0]) return true;
      }
    }
    return false;
  };
  EXPECT_FALSE(orange_near(tiny.render())) << "flashes are off by default";
  tiny.options.visual.flashes = true;
  EXPECT_TRUE(orange_near(tiny.render()));
}

}  // namespace
}  // namespace kanoko::scene
