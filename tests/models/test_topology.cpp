// Topology generators, their embeddings, the rank-to-position order, and size mismatches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <tuple>
#include <set>

#include "models/layout.hpp"
#include "models/topology.hpp"
#include "src/base/error.hpp"
#include "tests/support/model_fixtures.hpp"

namespace kanoko::models {
namespace KANOKO_UNITY_ID {

using test::node_lines;
using test::timeline_from_text;

mapping::Mapping parse(const std::string& text) { return mapping::parse_mapping_text(text, "t.toml"); }

std::vector<int> degrees(std::size_t n, const std::vector<Edge>& edges) {
  std::vector<int> d(n, 0);
  for (const auto& e : edges) {
    EXPECT_NE(e[0], e[1]);
    EXPECT_LT(e[0], n);
    EXPECT_LT(e[1], n);
    ++d[e[0]];
    ++d[e[1]];
  }
  return d;
}

void expect_unique_edges(const std::vector<Edge>& edges) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
  for (const auto& e : edges) EXPECT_TRUE(seen.insert({std::min(e[0], e[1]), std::max(e[0], e[1])}).second);
}

double edge_length(const Topology& t, const Edge& e) { return (t.positions.col(e[0]) - t.positions.col(e[1])).norm(); }

/// Smallest distance between two nodes that are not joined by a spring.
double closest_non_neighbours(const Topology& t) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> joined;
  for (const auto& e : t.edges) joined.insert({std::min(e[0], e[1]), std::max(e[0], e[1])});
  double best = INFINITY;
  for (Eigen::Index i = 0; i < t.positions.cols(); ++i) {
    for (Eigen::Index j = i + 1; j < t.positions.cols(); ++j) {
      if (joined.count({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j)}) == 0) {
        best = std::min(best, (t.positions.col(i) - t.positions.col(j)).norm());
      }
    }
  }
  return best;
}

TEST(Topology, RingNeighboursAreSpacingApart) {
  const Topology t = ring_topology(12, 2.0);
  EXPECT_EQ(t.edges.size(), 12U);
  for (int d : degrees(12, t.edges)) EXPECT_EQ(d, 2);
  for (const auto& e : t.edges) EXPECT_NEAR(edge_length(t, e), 2.0, 1e-12);
}

TEST(Topology, MeshAndTorusEdgeCounts) {
  EXPECT_EQ(grid_topology({3, 3, 3}, false, 1).edges.size(), 54U);
  EXPECT_EQ(grid_topology({4, 5}, false, 1).edges.size(), 3U * 5U + 4U * 4U);
  const Topology t3 = grid_topology({4, 4, 4}, true, 1);
  EXPECT_EQ(t3.edges.size(), 3U * 64U);
  for (int d : degrees(64, t3.edges)) EXPECT_EQ(d, 6);
  expect_unique_edges(t3.edges);
  // A dimension of 2 has one link per pair, not two.
  const Topology t2 = grid_topology({2, 4}, true, 1);
  expect_unique_edges(t2.edges);
  EXPECT_EQ(t2.edges.size(), 4U + 8U);
  EXPECT_GT(closest_non_neighbours(t3), 0.0);
}

/// Lengths of the x springs (wrap-around included) per (y, z) row of a torus nx × rest.
std::map<std::uint32_t, std::vector<double>> x_spring_lengths(const Topology& t, std::uint32_t nx) {
  std::map<std::uint32_t, std::vector<double>> rows;
  for (const auto& e : t.edges) {
    if (e[0] / nx == e[1] / nx) rows[e[0] / nx].push_back(edge_length(t, e));
  }
  return rows;
}

TEST(Topology, TwoDimensionalTorusIsADoughnutWithShortWrapSprings) {
  const Topology t = grid_topology({8, 6}, true, 1.0);
  EXPECT_EQ(t.edges.size(), 2U * 48U);
  // Rotational symmetry: along each ring the wrap-around spring is exactly as long as the others.
  for (const auto& [row, lengths] : x_spring_lengths(t, 8)) {
    ASSERT_EQ(lengths.size(), 8U);
    const auto [lo, hi] = std::minmax_element(lengths.begin(), lengths.end());
    EXPECT_NEAR(*lo, *hi, 1e-9) << "row " << row;
  }
  for (const auto& e : t.edges) {
    if (e[0] / 8 != e[1] / 8) {
      EXPECT_NEAR(edge_length(t, e), 1.0, 1e-9);  // around the tube
    }
  }
  EXPECT_GT(closest_non_neighbours(t), 0.3);
}

TEST(Topology, ThreeDimensionalTorusWrapsXIntoARing) {
  const Topology t = grid_topology({8, 3, 3}, true, 1.0);
  const auto rows = x_spring_lengths(t, 8);
  EXPECT_EQ(rows.size(), 9U);
  for (const auto& [row, lengths] : rows) {
    ASSERT_EQ(lengths.size(), 8U);
    const auto [lo, hi] = std::minmax_element(lengths.begin(), lengths.end());
    EXPECT_NEAR(*lo, *hi, 1e-9) << "row " << row;
    EXPECT_GT(*lo, 0.5);
    EXPECT_LT(*hi, 4.0);
  }
  EXPECT_GT(closest_non_neighbours(t), 0.3);
}

TEST(Topology, HypercubeOfEveryDimension) {
  for (int d = 1; d <= 9; ++d) {
    const Topology t = hypercube_topology(d, 1.0);
    const std::size_t n = std::size_t{1} << static_cast<unsigned>(d);
    ASSERT_EQ(static_cast<std::size_t>(t.positions.cols()), n);
    EXPECT_EQ(t.edges.size(), n * static_cast<std::size_t>(d) / 2);
    for (int deg : degrees(n, t.edges)) EXPECT_EQ(deg, d);
    for (const auto& e : t.edges) {
      // Neighbours along bit b are spacing × 2.5^(b div 3) apart, along one axis.
      const std::uint32_t diff = e[0] ^ e[1];
      ASSERT_EQ(diff & (diff - 1), 0U);
      const int b = std::countr_zero(diff);
      EXPECT_NEAR(edge_length(t, e), std::pow(2.5, b / 3), 1e-12);
    }
    // Non-neighbours are never closer than the shortest springs.
    if (d > 1) {
      EXPECT_GE(closest_non_neighbours(t), 1.0 - 1e-12) << d;
    }
  }
}

TEST(Topology, FatTreeAndDragonfly) {
  const Topology f = fat_tree_topology({4, 4, 2}, 1.0);
  ASSERT_EQ(f.positions.cols(), 32);
  expect_unique_edges(f.edges);
  // Edge switch: 6 springs per group of 4 (8 groups); level 2: ring of 4 over 8 leaves × 4
  // positions... every leaf has 3 (switch) + 2 (level-2 ring) + 1 (level-3 pair) springs.
  for (int d : degrees(32, f.edges)) EXPECT_EQ(d, 6);
  EXPECT_GT(closest_non_neighbours(f), 0.1);
  const Topology g = dragonfly_topology(5, 4, 2, 1.0);
  ASSERT_EQ(g.positions.cols(), 40);
  expect_unique_edges(g.edges);
  // Within routers: 5·4·1; within groups: 5 groups × 2 bodies × C(4,2); global: C(5,2).
  EXPECT_EQ(g.edges.size(), 20U + 60U + 10U);
  EXPECT_GT(closest_non_neighbours(g), 0.1);
}

TEST(Topology, SphereAndGraphLayoutsHaveNoCoincidentPoints) {
  const Eigen::Matrix3Xd s = sphere_positions(500, 1.0);
  Topology t;
  t.positions = s;
  EXPECT_GT(closest_non_neighbours(t), 0.3);
  const Topology ring = ring_topology(20, 1.0);
  const Eigen::Matrix3Xd g = graph_layout(20, ring.edges, 1.0);
  double mean = 0;
  for (const auto& e : ring.edges) mean += (g.col(e[0]) - g.col(e[1])).norm();
  EXPECT_NEAR(mean / 20, 1.0, 1e-9);
  t.positions = g;
  t.edges = ring.edges;
  EXPECT_GT(closest_non_neighbours(t), 0.2);
}

TEST(Topology, TrafficAndLinkEdgesFromTheTrace) {
  const auto tl = timeline_from_text(node_lines(4) + "link 0 0 0 1\nlink 0 1 1 2\nlink 0 2 2 1\n"
                                     "msg 0.01 0 1 100\nmsg 0.02 1 0 50\nmsg 0.03 2 3 10\nend 0.1\n");
  EXPECT_EQ(traffic_edges(tl, 0), (std::vector<Edge>{{0, 1}, {2, 3}}));
  EXPECT_EQ(traffic_edges(tl, 100), (std::vector<Edge>{{0, 1}}));  // 150 bytes both ways > 100
  EXPECT_EQ(link_edges(tl), (std::vector<Edge>{{0, 1}, {1, 2}}));  // each pair once
}

// ------------------------------------------------------------------------------------------------
// Layout: topology + placement + order
// ------------------------------------------------------------------------------------------------

std::string named_nodes(const std::vector<std::string>& names, bool ranks = false) {
  std::string s = "kntr 1\n";
  for (std::size_t i = 0; i < names.size(); ++i) {
    s += "node 0 " + std::to_string(i) + " name=" + names[i];
    if (ranks) s += " rank=" + std::to_string(names.size() - 1 - i);
    s += "\n";
  }
  return s + "end 0.1\n";
}

TEST(Layout, SizeMismatchNamesTheKeyAndBothSizes) {
  auto message = [](const std::string& mapping, std::size_t n) {
    try {
      build_layout(parse(mapping), n);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("[springs]\ntopology = \"torus\"\ndims = [4, 4, 4]\n", 60).find("t.toml:3:8: error: torus 4×4×4 has 64 nodes but the trace has 60 bodies"),
            std::string::npos);
  EXPECT_NE(message("[springs]\ntopology = \"hypercube\"\n", 12).find("power of two"), std::string::npos);
  EXPECT_NE(message("[springs]\ntopology = \"hypercube\"\ndimension = 3\n", 16).find("t.toml:3:13: error: a hypercube of dimension 3 has 8 nodes but the trace has 16"),
            std::string::npos);
  EXPECT_NE(message("[springs]\ntopology = \"fat-tree\"\nlevels = [4, 4]\n", 15).find("fat tree 4×4 has 16 nodes"),
            std::string::npos);
  EXPECT_NE(message("[springs]\ntopology = \"dragonfly\"\ngroups = 2\nrouters = 2\n", 5).find("has 4 nodes but the trace has 5"),
            std::string::npos);
  EXPECT_NE(message("[springs]\ntopology = \"links\"\n", 5).find("needs a trace"), std::string::npos);
  // Topology and placement problems are reported together.
  const std::string both = message("[bodies]\nplacement = \"lattice\"\nlattice = [2, 2, 2]\n[springs]\ntopology = \"ring\"\n", 2);
  EXPECT_NE(both.find("a ring needs at least 3 bodies"), std::string::npos) << both;
  EXPECT_NE(both.find("lattice 2×2×2 has 8 sites but the trace has 2 bodies"), std::string::npos) << both;
}

TEST(Layout, DefaultPlacementFollowsTheTopology) {
  const Layout ring = build_layout(parse("[springs]\ntopology = \"ring\"\nk = 1\n"), 10);
  EXPECT_EQ(ring.placement, "topology");
  for (const auto& e : ring.edges) EXPECT_NEAR((ring.positions.col(e[0]) - ring.positions.col(e[1])).norm(), 1.0, 1e-12);
  EXPECT_EQ(build_layout(parse("[forces.friction]\nbeta = 1\n"), 8).placement, "cube");
  EXPECT_EQ(build_layout(parse("[forces.friction]\nbeta = 1\n"), 9).placement, "sphere");
  EXPECT_EQ(build_layout(parse("[springs]\ntopology = \"complete\"\n[forces.friction]\nbeta = 1\n"), 100).placement, "sphere");
  EXPECT_THROW(build_layout(parse("[bodies]\nplacement = \"topology\"\n[forces.friction]\nbeta = 1\n"), 5), InputError);
}

TEST(Layout, OrderByRankNamePatternAndTable) {
  const std::vector<std::string> names{"pe10", "pe2", "pe0", "pe1"};
  const auto tl = timeline_from_text(named_nodes(names, true));
  const std::string ring = "[springs]\ntopology = \"ring\"\n";
  auto slots = [&](const std::string& text) { return build_layout(parse(text), 4, &tl).slot_of_body; };
  EXPECT_EQ(slots(ring), (std::vector<std::uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(slots(ring + "[bodies]\norder = \"rank\"\n"), (std::vector<std::uint32_t>{3, 2, 1, 0}));
  EXPECT_EQ(slots(ring + "[bodies]\norder = \"name\"\n"), (std::vector<std::uint32_t>{3, 2, 0, 1}));
  const auto pattern_tl = timeline_from_text(named_nodes({"pe3", "pe2", "pe0", "pe1"}));
  EXPECT_EQ(build_layout(parse(ring + "[bodies]\norder = \"pattern\"\npattern = \"pe(\\\\d+)\"\n"), 4, &pattern_tl).slot_of_body,
            (std::vector<std::uint32_t>{3, 2, 0, 1}));
  EXPECT_EQ(slots(ring + "[bodies]\norder = \"table\"\ntable = { pe10 = 1, pe2 = 0, pe0 = 3, pe1 = 2 }\n"),
            (std::vector<std::uint32_t>{1, 0, 3, 2}));
  // The springs follow the positions: ring positions 0–1 are bodies pe2 (1) and pe10 (0).
  const Layout l = build_layout(parse(ring + "[bodies]\norder = \"table\"\ntable = { pe10 = 1, pe2 = 0, pe0 = 3, pe1 = 2 }\n"), 4, &tl);
  EXPECT_EQ(l.edges.front(), (Edge{1, 0}));
}

TEST(Layout, OrderErrorsAreAllReported) {
  const auto tl = timeline_from_text(named_nodes({"pe0", "pe1", "host", "pe9"}));
  try {
    build_layout(parse("[springs]\ntopology = \"ring\"\n[bodies]\norder = \"pattern\"\npattern = \"pe(\\\\d+)\"\n"), 4, &tl);
    FAIL();
  } catch (const InputError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("t.toml:5:11: error: pattern \"pe(\\d+)\" does not match body 'host'"), std::string::npos) << w;
    EXPECT_NE(w.find("body 'pe9' gets position 9 but there are only 4 positions"), std::string::npos) << w;
  }
  try {
    build_layout(parse("[springs]\ntopology = \"ring\"\n[bodies]\norder = \"table\"\ntable = { pe0 = 0, pe1 = 0, hots = 2, pe9 = 3 }\n"), 4, &tl);
    FAIL();
  } catch (const InputError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("'table' gives no position for body 'host'"), std::string::npos) << w;
    EXPECT_NE(w.find("'table' names 'hots', which is not a body of the trace (did you mean 'host'?)"), std::string::npos) << w;
    EXPECT_NE(w.find("bodies 'pe0' and 'pe1' both get position 0"), std::string::npos) << w;
  }
  const auto no_rank = timeline_from_text("kntr 1\nnode 0 0 rank=0\nnode 0 1 rank=0\nnode 0 2 rank=1\nend 0.1\n");
  EXPECT_NO_THROW(build_layout(parse("[springs]\ntopology = \"ring\"\n[bodies]\norder = \"rank\"\n"), 3, &no_rank));
}

TEST(Topology, PairSumsAddEveryIntervalsPairsInOrderWhateverRepeats) {
  // pair_sums looks a pair up among its source's first partners before its hash indexes; the
  // sums must be those of adding every entry in the timeline's order, bit for bit. Sources with
  // more partners than it keeps; intervals that repeat the last one's pairs, drop some, add some,
  // hold a pair both ways and a pair to itself, and one out of (src, dst) order; amounts that
  // are not whole, so that another order would show.
  std::mt19937_64 rng(11);
  trace::Timeline tl;
  tl.pair_begin = {0};
  std::vector<trace::PairTraffic> last;
  for (std::size_t bin = 0; bin < 60; ++bin) {
    std::vector<trace::PairTraffic> pairs;
    if (bin % 3 != 0 && !last.empty()) {
      for (const auto& p : last) {
        if (rng() % 8 != 0) pairs.push_back(p);  // most of the last interval's pairs
      }
    }
    for (std::size_t k = rng() % 12; k > 0; --k) {
      pairs.push_back({static_cast<trace::EntityIndex>(rng() % 14), static_cast<trace::EntityIndex>(rng() % 14), 0, 0});
    }
    std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return std::tie(a.src, a.dst) < std::tie(b.src, b.dst); });
    pairs.erase(std::unique(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.src == b.src && a.dst == b.dst; }),
                pairs.end());
    if (bin == 40) std::reverse(pairs.begin(), pairs.end());  // out of order: found by the index alone
    last = pairs;
    for (auto& p : pairs) {
      p.bytes = 0.1 * static_cast<double>(rng() % 1000) + 1e-7;
      p.messages = static_cast<std::uint32_t>(1 + rng() % 5);
      tl.pairs.push_back(p);
    }
    tl.pair_begin.push_back(tl.pairs.size());
  }
  tl.bin_count = 60;
  PairSums expected;
  for (const auto& p : tl.pairs) {
    if (p.src == p.dst) continue;
    auto& t = expected[{std::min(p.src, p.dst), std::max(p.src, p.dst)}];
    t.first += p.bytes;
    t.second += static_cast<double>(p.messages);
  }
  const PairSums got = pair_sums(tl);
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& [pair, sums] : expected) {
    ASSERT_EQ(got.count(pair), 1U) << pair.first << "-" << pair.second;
    EXPECT_EQ(got.at(pair).first, sums.first) << pair.first << "-" << pair.second;
    EXPECT_EQ(got.at(pair).second, sums.second) << pair.first << "-" << pair.second;
  }
}

}  // namespace
}  // namespace kanoko::models
