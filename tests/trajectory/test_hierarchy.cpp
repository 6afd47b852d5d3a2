// Levels of detail over a rank-level run (src/trajectory/hierarchy.hpp): ranks per host, hosts
// per rack, a cut that opens a host into its ranks and closes it again, and the aggregate bodies'
// centroids and statistics.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "src/base/error.hpp"
#include "src/trajectory/hierarchy.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::trajectory {
namespace KANOKO_UNITY_ID {

// 8 ranks: node-0 holds 0, 1, 2; node-1 holds 3, 4, 5; node-2 holds 6, 7. Racks: node-0 and
// node-1 in rack-a, node-2 in rack-b.
Metadata eight_ranks() {
  Metadata m;
  for (int i = 0; i < 8; ++i) {
    BodyInfo b;
    b.name = "rank-" + std::to_string(i);
    b.host = "node-" + std::to_string(i < 3 ? 0 : (i < 6 ? 1 : 2));
    b.rank = i;
    m.bodies.push_back(b);
  }
  m.stat_names = {stat::kBusy, stat::kBytesSent, stat::kMass};
  return m;
}

std::vector<LevelSpec> racks() {
  return {{"rack", [](std::string_view host) { return std::string(host == "node-2" ? "rack-b" : "rack-a"); }}};
}

std::vector<std::uint32_t> to_vector(std::span<const std::uint32_t> s) { return {s.begin(), s.end()}; }

// Every body is drawn by exactly one item, and item_of_body says which.
void expect_tiling(const Cut& cut, std::size_t bodies) {
  std::vector<int> seen(bodies, 0);
  for (std::size_t k = 0; k < cut.items().size(); ++k) {
    for (const std::uint32_t b : cut.bodies(k)) {
      ++seen.at(b);
      EXPECT_EQ(cut.item_of_body(b), k);
    }
  }
  for (std::size_t b = 0; b < bodies; ++b) EXPECT_EQ(seen[b], 1) << "body " << b;
}

/// The error asking `h` for level `name` (at "--level"); "" when there is none.
std::string level_error(const Hierarchy& h, const std::string& name) {
  try {
    (void)h.level_index(name, "--level");
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for level '" << name << "'";
  return {};
}

TEST(Hierarchy, RanksHostsAndRacks) {
  const Metadata m = eight_ranks();
  const Hierarchy h(m, racks());
  ASSERT_EQ(h.level_count(), 3U);
  EXPECT_EQ(h.level_name(0), "rank");
  EXPECT_EQ(h.level_name(1), "host");
  EXPECT_EQ(h.level_name(2), "rack");
  EXPECT_EQ(h.group_count(0), 8U);
  EXPECT_EQ(h.group_count(1), 3U);
  EXPECT_EQ(h.group_count(2), 2U);
  EXPECT_EQ(h.group_name(1, 1), "node-1");
  EXPECT_EQ(to_vector(h.bodies(1, 1)), (std::vector<std::uint32_t>{3, 4, 5}));
  EXPECT_EQ(to_vector(h.bodies(2, 0)), (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(to_vector(h.children(2, 0)), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(to_vector(h.children(1, 2)), (std::vector<std::uint32_t>{6, 7}));
  EXPECT_EQ(h.parent(0, 4), 1U);
  EXPECT_EQ(h.parent(1, 2), 1U);
  EXPECT_EQ(h.group_of(2, 7), 1U);
  EXPECT_EQ(h.level_index("host", "--level"), 1U);
  // The level that fits a budget of drawn bodies.
  EXPECT_EQ(h.level_that_fits(8), 0U);
  EXPECT_EQ(h.level_that_fits(5), 1U);
  EXPECT_EQ(h.level_that_fits(2), 2U);
  EXPECT_EQ(h.level_that_fits(1), 2U);  // none fits: the top
}

TEST(Hierarchy, AMissingLevelIsALocatedError) {
  const Hierarchy h(eight_ranks(), racks());
  const std::string what = level_error(h, "hots");
  EXPECT_NE(what.find("--level"), std::string::npos) << what;
  EXPECT_NE(what.find("no level 'hots'"), std::string::npos) << what;
  EXPECT_NE(what.find("host"), std::string::npos) << what;  // suggested, and listed
  EXPECT_NE(what.find("rank, host, rack"), std::string::npos) << what;
}

// The trace's container tree above the hosts (BodyInfo::above_host), as SimGrid writes nested
// zones: 16 ranks, two per host c?-0 .. c?-1 (numbered names, so the name-pattern fallback would
// make clusters), hosts in zones ca, cb (type L2) inside room-a and cc, cd inside room-b (L1).
Metadata zoned_ranks() {
  Metadata m;
  const char* clusters[] = {"ca", "cb", "cc", "cd"};
  for (int i = 0; i < 16; ++i) {
    BodyInfo b;
    const int c = i / 4;
    b.name = "rank-" + std::to_string(i);
    b.host = std::string(clusters[c]) + "-" + std::to_string((i / 2) % 2);
    b.above_host = {{"L2", clusters[c]}, {"L1", c < 2 ? "room-a" : "room-b"}};
    m.bodies.push_back(b);
  }
  m.stat_names = {stat::kBusy, stat::kMass};
  return m;
}

TEST(Hierarchy, LevelsFromTheTracesContainers) {
  const Hierarchy h(zoned_ranks());
  ASSERT_EQ(h.level_count(), 4U) << "rank, host, then the two zone levels; no name-pattern cluster";
  EXPECT_EQ(h.level_name(1), "host");
  EXPECT_EQ(h.level_name(2), "zone2");  // SimGrid's L2, the deeper
  EXPECT_EQ(h.level_name(3), "zone1");
  EXPECT_EQ(h.group_count(1), 8U);
  EXPECT_EQ(h.group_count(2), 4U);
  EXPECT_EQ(h.group_count(3), 2U);
  EXPECT_EQ(h.group_name(2, 1), "cb");
  EXPECT_EQ(h.group_name(3, 1), "room-b");
  EXPECT_EQ(to_vector(h.bodies(2, 1)), (std::vector<std::uint32_t>{4, 5, 6, 7}));
  EXPECT_EQ(to_vector(h.children(3, 0)), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(h.parent(1, 3), 1U) << "host cb-1 is in zone cb";
  EXPECT_EQ(h.level_index("zone1", "--level"), 3U);
  const std::string what = level_error(h, "cluster");
  EXPECT_NE(what.find("no level 'cluster'"), std::string::npos) << what;
  EXPECT_NE(what.find("its levels are: rank, host, zone2, zone1"), std::string::npos) << what;
  // A cut at the rooms opens into the zones, a zone into its hosts.
  Cut cut(h, 3);
  ASSERT_EQ(cut.items().size(), 2U);
  ASSERT_TRUE(cut.open(0));
  EXPECT_EQ(cut.items().size(), 3U);
  EXPECT_EQ(cut.items()[0], (Cut::Item{2, 0}));
}

TEST(Hierarchy, ContainerLevelsNamedAfterTheirTypesAndUnevenDepths) {
  // Types other than SimGrid's; rank-6 and rank-7 sit on a host in a rack of no room, so their
  // rack stays a group of its own at the room level.
  Metadata m = eight_ranks();
  for (std::size_t i = 0; i < 6; ++i) m.bodies[i].above_host = {{"Rack", "rack-a"}, {"Room", "room-1"}};
  m.bodies[6].above_host = m.bodies[7].above_host = {{"Rack", "rack-b"}};
  const Hierarchy h(m);
  ASSERT_EQ(h.level_count(), 4U);
  EXPECT_EQ(h.level_name(2), "rack");
  EXPECT_EQ(h.level_name(3), "room");
  // Aligned by type, not by depth: rack-b is a rack although it lies as deep as room-1.
  EXPECT_EQ(h.group_count(2), 2U);
  EXPECT_EQ(h.group_name(2, 1), "rack-b");
  EXPECT_EQ(h.parent(1, 2), 1U);
  EXPECT_EQ(h.group_count(3), 2U);
  EXPECT_EQ(h.group_name(3, 1), "rack-b");
  EXPECT_EQ(to_vector(h.bodies(3, 0)), (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5}));
}

TEST(Hierarchy, BodiesWithoutHostsHaveNoHostLevel) {
  Metadata m = eight_ranks();
  for (auto& b : m.bodies) b.host.clear();
  const Hierarchy h(m);
  ASSERT_EQ(h.level_count(), 1U);
  EXPECT_THROW((void)h.level_index("host", "--level"), InputError);
  const Cut cut(h, 0);
  EXPECT_EQ(cut.items().size(), 8U);
}

TEST(Hierarchy, OpenAHostIntoItsRanksAndCloseIt) {
  const Metadata m = eight_ranks();
  const Hierarchy h(m, racks());
  Cut cut(h, 1);
  ASSERT_EQ(cut.items().size(), 3U);
  expect_tiling(cut, 8);
  // Open node-1: its three ranks replace it, in the bodies' order.
  ASSERT_TRUE(cut.open(cut.item_of_body(4)));
  ASSERT_EQ(cut.items().size(), 5U);
  EXPECT_EQ(cut.items()[0], (Cut::Item{1, 0}));
  EXPECT_EQ(cut.items()[1], (Cut::Item{0, 3}));
  EXPECT_EQ(cut.items()[3], (Cut::Item{0, 5}));
  EXPECT_EQ(cut.items()[4], (Cut::Item{1, 2}));
  expect_tiling(cut, 8);
  EXPECT_FALSE(cut.open(cut.item_of_body(4)));  // a rank does not open
  // Close rank-4's host again.
  ASSERT_TRUE(cut.close(cut.item_of_body(4)));
  EXPECT_EQ(cut.items().size(), 3U);
  expect_tiling(cut, 8);
  // Close node-0 into rack-a: node-0 and node-1 become one item, even with node-1 opened.
  ASSERT_TRUE(cut.open(cut.item_of_body(3)));
  ASSERT_TRUE(cut.close(cut.item_of_body(0)));
  ASSERT_EQ(cut.items().size(), 2U);
  EXPECT_EQ(cut.items()[0], (Cut::Item{2, 0}));
  expect_tiling(cut, 8);
  EXPECT_FALSE(cut.close(0));  // nothing above the top
}

TEST(Hierarchy, AggregatesAtTheCentroidWithSummedStatistics) {
  const Metadata m = eight_ranks();
  const Hierarchy h(m, racks());
  Cut cut(h, 1);
  ASSERT_TRUE(cut.open(cut.item_of_body(6)));  // node-2 as ranks 6 and 7
  Eigen::Matrix3Xd pos(3, 8);
  Eigen::MatrixXd stats(3, 8);
  for (int i = 0; i < 8; ++i) {
    pos.col(i) << i, 2.0 * i, -i;
    stats.col(i) << 0.1 * i, 100.0 * i, 1.0 + i;
  }
  Eigen::Matrix3Xd vel(3, 8);
  for (int i = 0; i < 8; ++i) vel.col(i) << 1.0, -2.0 * i, 0.5;
  const FrameView f{1.5, Eigen::Map<const Eigen::Matrix3Xd>(pos.data(), 3, 8),
                    Eigen::Map<const Eigen::Matrix3Xd>(vel.data(), 3, 8),
                    Eigen::Map<const Eigen::MatrixXd>(stats.data(), 3, 8)};
  AggregateFrame out;
  aggregate(cut, m, f, out);
  ASSERT_EQ(out.positions.cols(), 4);
  ASSERT_EQ(out.stats.rows(), 3);
  // node-1 (ranks 3, 4, 5): centroid of 3, 4, 5; busy averaged; bytes and mass summed.
  EXPECT_DOUBLE_EQ(out.positions(0, 1), 4.0);
  EXPECT_DOUBLE_EQ(out.positions(1, 1), 8.0);
  EXPECT_DOUBLE_EQ(out.positions(2, 1), -4.0);
  EXPECT_DOUBLE_EQ(out.velocities(0, 1), 1.0);
  EXPECT_DOUBLE_EQ(out.velocities(1, 1), -8.0);
  EXPECT_NEAR(out.stats(0, 1), 0.4, 1e-12);
  EXPECT_DOUBLE_EQ(out.stats(1, 1), 1200.0);
  EXPECT_DOUBLE_EQ(out.stats(2, 1), 15.0);
  // An opened rank is itself.
  EXPECT_DOUBLE_EQ(out.positions(0, 3), 7.0);
  EXPECT_DOUBLE_EQ(out.stats(1, 3), 700.0);
}

// Random hierarchies (ranks on random hosts, hosts in random racks) and random sequences of
// opening and closing: the items always tile the bodies, and closing everything returns to the
// top level's groups.
TEST(Hierarchy, RandomOpenAndCloseKeepTheTiling) {
  std::mt19937 rng(7);
  for (int round = 0; round < 60; ++round) {
    const int n = 1 + static_cast<int>(rng() % 200);
    const int hosts = 1 + static_cast<int>(rng() % 20);
    const int racks_n = 1 + static_cast<int>(rng() % 4);
    Metadata m;
    for (int i = 0; i < n; ++i) {
      BodyInfo b;
      b.name = "r" + std::to_string(i);
      b.host = "h" + std::to_string(rng() % static_cast<unsigned>(hosts));
      m.bodies.push_back(b);
    }
    const Hierarchy h(m, {{"rack", [racks_n](std::string_view host) {
                             return "k" + std::to_string(std::hash<std::string_view>{}(host) % static_cast<std::size_t>(racks_n));
                           }}});
    const std::size_t top = h.level_count() - 1;
    Cut cut(h, top);
    for (int step = 0; step < 100; ++step) {
      const std::size_t k = rng() % cut.items().size();
      if (rng() % 3 == 0) {
        (void)cut.close(k);
      } else {
        (void)cut.open(k);
      }
      expect_tiling(cut, static_cast<std::size_t>(n));
      if (HasFailure()) return;
    }
    for (int step = 0; step < 1000 && cut.items().size() > h.group_count(top); ++step) {
      std::size_t k = 0;
      while (cut.items()[k].level == top) ++k;
      ASSERT_TRUE(cut.close(k));
    }
    EXPECT_EQ(cut.items().size(), h.group_count(top));
  }
}

// The last resort above the hosts: numbered host names of SimGrid clusters.
TEST(Hierarchy, ClustersFromNumberedHostNames) {
  Metadata m;
  const std::vector<std::string> hosts = {"graphene-1.nancy", "graphene-2.nancy", "griffon-1.nancy",
                                          "griffon-12.nancy", "router"};
  for (std::size_t i = 0; i < 10; ++i) {
    BodyInfo b;
    b.name = "rank-" + std::to_string(i);
    b.host = hosts[i / 2];
    m.bodies.push_back(b);
  }
  const Hierarchy h(m, racks());
  ASSERT_EQ(h.level_count(), 4U);
  EXPECT_EQ(h.level_name(2), "cluster");
  EXPECT_EQ(h.level_name(3), "rack");
  ASSERT_EQ(h.group_count(2), 3U);
  EXPECT_EQ(h.group_name(2, 0), "graphene-*.nancy");
  EXPECT_EQ(h.group_name(2, 1), "griffon-*.nancy");
  EXPECT_EQ(h.group_name(2, 2), "router") << "a host without a number is its own cluster";
  EXPECT_EQ(to_vector(h.bodies(2, 1)), (std::vector<std::uint32_t>{4, 5, 6, 7}));
  EXPECT_EQ(h.level_index("cluster", "--level"), 2U);
  // One cluster only (node-0 .. node-2), or one per host: no such level.
  EXPECT_EQ(Hierarchy(eight_ranks()).level_count(), 2U);
  for (std::size_t i = 0; i < 10; ++i) m.bodies[i].host = "h" + std::to_string(i) + (i % 2 == 0 ? "a" : "b");
  EXPECT_EQ(Hierarchy(m).level_count(), 3U) << "h*a and h*b";
  for (std::size_t i = 0; i < 10; ++i) m.bodies[i].host = std::string(1, static_cast<char>('a' + i));
  EXPECT_EQ(Hierarchy(m).level_count(), 2U) << "no numbers: each host its own, no level";
}

}  // namespace
}  // namespace kanoko::trajectory
