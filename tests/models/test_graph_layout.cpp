// The starting layout from a communication graph: lattices recognised under any numbering, near
// lattices after dropping rare pairs, the stress embedding's quality on several graph families,
// components and isolated bodies, weights, determinism and bad input.
#include "models/graph_layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>

#include "models/topology.hpp"
#include "tests/support/graph_families.hpp"

namespace kanoko::models {
namespace KANOKO_UNITY_ID {

using test::random_geometric_graph;
using test::random_tree;
using Edges = std::vector<WeightedEdge>;
using Pair = std::pair<std::uint32_t, std::uint32_t>;

Edges weighted(const std::vector<Edge>& edges, double weight = 1.0) {
  Edges out;
  for (const auto& e : edges) out.push_back({e[0], e[1], weight});
  return out;
}

std::set<Pair> pair_set(const std::vector<Edge>& edges) {
  std::set<Pair> s;
  for (const auto& e : edges) s.insert({std::min(e[0], e[1]), std::max(e[0], e[1])});
  return s;
}

/// A random numbering of the bodies: body i becomes perm[i]; edges listed in a random order and
/// direction, with weights drawn from [500, 1500) unless `keep_weights`.
Edges relabelled(std::size_t n, const Edges& edges, std::uint64_t seed, bool keep_weights = false) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint32_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0U);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::uniform_real_distribution<double> w(500, 1500);
  Edges out;
  for (const auto& e : edges) {
    const double weight = keep_weights ? e.weight : w(rng);
    if (rng() % 2 == 0) {
      out.push_back({perm[e.a], perm[e.b], weight});
    } else {
      out.push_back({perm[e.b], perm[e.a], weight});
    }
  }
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

/// Checks that `r` maps every graph edge onto an edge of `lattice` and bodies one-to-one onto
/// its slots, and that positions are the lattice's embedding, centred.
void expect_lattice_layout(const GraphLayoutResult& r, std::size_t n, const Edges& edges, const Topology& lattice) {
  ASSERT_EQ(r.order.size(), n);
  std::set<std::uint32_t> slots(r.order.begin(), r.order.end());
  EXPECT_EQ(slots.size(), n);
  EXPECT_LT(*slots.rbegin(), n);
  const auto lattice_pairs = pair_set(lattice.edges);
  for (const auto& e : edges) {
    const std::uint32_t a = r.order[e.a], b = r.order[e.b];
    EXPECT_EQ(lattice_pairs.count({std::min(a, b), std::max(a, b)}), 1U) << "edge " << e.a << "-" << e.b;
  }
  ASSERT_EQ(r.positions.cols(), static_cast<Eigen::Index>(n));
  const Eigen::Vector3d mean = lattice.positions.rowwise().mean();
  for (std::size_t v = 0; v < n; ++v) {
    const Eigen::Vector3d want = lattice.positions.col(r.order[v]) - mean;
    EXPECT_LT((r.positions.col(static_cast<Eigen::Index>(v)) - want).norm(), 1e-9);
  }
  EXPECT_LT(r.positions.rowwise().mean().norm(), 1e-9);
}

struct LatticeCase {
  std::string name;
  Topology topology;
  std::string kind;
  std::vector<int> dims;  // as reported: longest first
};

std::vector<LatticeCase> lattice_cases() {
  return {
      {"ring12", ring_topology(12, 1), "ring", {12}},
      {"ring3", ring_topology(3, 1), "ring", {3}},
      {"path9", grid_topology({9}, false, 1), "path", {9}},
      {"path2", grid_topology({2}, false, 1), "path", {2}},
      {"mesh3x5", grid_topology({3, 5}, false, 1), "mesh", {5, 3}},
      {"mesh2x7", grid_topology({2, 7}, false, 1), "mesh", {7, 2}},
      {"mesh4x3x2", grid_topology({4, 3, 2}, false, 1), "mesh", {4, 3, 2}},
      {"mesh3x3x3", grid_topology({3, 3, 3}, false, 1), "mesh", {3, 3, 3}},
      {"torus4x4", grid_topology({4, 4}, true, 1), "torus", {4, 4}},
      {"torus3x5", grid_topology({3, 5}, true, 1), "torus", {5, 3}},
      {"torus8x6", grid_topology({8, 6}, true, 1), "torus", {8, 6}},
      {"torus3x3x3", grid_topology({3, 3, 3}, true, 1), "torus", {3, 3, 3}},
      {"torus3x4x5", grid_topology({3, 4, 5}, true, 1), "torus", {5, 4, 3}},
      {"torus4x4x4", grid_topology({4, 4, 4}, true, 1), "torus", {4, 4, 4}},
      {"hypercube3", hypercube_topology(3, 1), "hypercube", {2, 2, 2}},
      {"hypercube5", hypercube_topology(5, 1), "hypercube", {2, 2, 2, 2, 2}},
      {"hypercube7", hypercube_topology(7, 1), "hypercube", {2, 2, 2, 2, 2, 2, 2}},
      // C4 × C4 is the 4-cube: reported as the torus it also is.
      {"hypercube4", hypercube_topology(4, 1), "torus", {4, 4}},
  };
}

/// The topology the result claims, in its slot order.
Topology claimed_lattice(const GraphLayoutResult& r) {
  if (r.kind == "ring") return ring_topology(r.order.size(), 1);
  if (r.kind == "hypercube") return hypercube_topology(static_cast<int>(r.dims.size()), 1);
  return grid_topology(r.dims, r.kind == "torus", 1);
}

TEST(GraphLayout, RecognisesLatticesUnderAnyNumbering) {
  for (const auto& c : lattice_cases()) {
    SCOPED_TRACE(c.name);
    const std::size_t n = static_cast<std::size_t>(c.topology.positions.cols());
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const Edges edges = relabelled(n, weighted(c.topology.edges), seed);
      const GraphLayoutResult r = infer_graph_layout(n, edges);
      EXPECT_EQ(r.kind, c.kind) << r.reason;
      EXPECT_EQ(r.dims, c.dims);
      expect_lattice_layout(r, n, edges, claimed_lattice(r));
    }
  }
}

TEST(GraphLayout, LatticeReasonSaysWhatWasSeen) {
  const Topology t = grid_topology({4, 4}, true, 1);
  const GraphLayoutResult r = infer_graph_layout(16, relabelled(16, weighted(t.edges), 7));
  EXPECT_EQ(r.reason, "every body has 4 neighbours forming a 4×4 torus");
  const GraphLayoutResult m = infer_graph_layout(15, relabelled(15, weighted(grid_topology({5, 3}, false, 1).edges), 7));
  EXPECT_EQ(m.reason, "4 corner bodies with 2 neighbours forming a 5×3 mesh");
}

TEST(GraphLayout, MeshNeighboursAreOneApart) {
  const Topology t = grid_topology({6, 5, 4}, false, 1);
  const Edges edges = relabelled(120, weighted(t.edges), 3);
  const GraphLayoutResult r = infer_graph_layout(120, edges);
  ASSERT_EQ(r.kind, "mesh");
  for (const auto& e : edges) EXPECT_NEAR((r.positions.col(e.a) - r.positions.col(e.b)).norm(), 1.0, 1e-12);
}

/// Graphs that look like lattices locally but are not.
TEST(GraphLayout, NearMissesAreNotLattices) {
  // A 5×5 mesh less one inner edge.
  Edges mesh = weighted(grid_topology({5, 5}, false, 1).edges);
  mesh.erase(mesh.begin() + 20);
  // The Wagner graph: 8 bodies with 3 neighbours each, like a cube, but a Möbius ladder.
  Edges wagner;
  for (std::uint32_t i = 0; i < 8; ++i) wagner.push_back({i, (i + 1) % 8, 1});
  for (std::uint32_t i = 0; i < 4; ++i) wagner.push_back({i, i + 4, 1});
  // Circulant C16(1, 2): 4 neighbours each like a 4×4 torus, but with triangles.
  Edges circulant;
  for (std::uint32_t i = 0; i < 16; ++i) {
    circulant.push_back({i, (i + 1) % 16, 1});
    circulant.push_back({i, (i + 2) % 16, 1});
  }
  // A 4×4 torus with one chord.
  Edges chord = weighted(grid_topology({4, 4}, true, 1).edges);
  chord.push_back({0, 10, 1});
  // A ring of 6 and a ring of 5: every body has 2 neighbours, but two cycles.
  Edges rings;
  for (std::uint32_t i = 0; i < 6; ++i) rings.push_back({i, (i + 1) % 6, 1});
  for (std::uint32_t i = 0; i < 5; ++i) rings.push_back({6 + i, 6 + (i + 1) % 5, 1});
  const std::vector<std::pair<std::size_t, Edges>> graphs{{25, mesh}, {8, wagner}, {16, circulant}, {16, chord}, {11, rings}};
  for (const auto& [n, edges] : graphs) {
    const GraphLayoutResult r = infer_graph_layout(n, relabelled(n, edges, 5));
    EXPECT_EQ(r.kind, "embedding") << n << ": " << r.reason;
    EXPECT_TRUE(r.dims.empty());
    EXPECT_TRUE(r.order.empty());
  }
}

/// A lattice of heavy traffic plus a few rare pairs, as a trace of a stencil code with some
/// occasional other messages gives.
Edges near_torus(std::size_t extra, std::uint64_t seed) {
  const Topology t = grid_topology({6, 6}, true, 1);
  Edges edges = weighted(t.edges, 1000);
  auto pairs = pair_set(t.edges);
  std::mt19937_64 rng(seed);
  while (edges.size() < t.edges.size() + extra) {
    const auto a = static_cast<std::uint32_t>(rng() % 36), b = static_cast<std::uint32_t>(rng() % 36);
    if (a == b || !pairs.insert({std::min(a, b), std::max(a, b)}).second) continue;
    edges.push_back({a, b, static_cast<double>(1 + rng() % 20)});
  }
  return edges;
}

TEST(GraphLayout, NearLatticeIsRecognisedAfterDroppingRarePairs) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const Edges graded = relabelled(36, near_torus(5, seed), seed, true);
    const GraphLayoutResult r = infer_graph_layout(36, graded);
    EXPECT_EQ(r.kind, "torus") << r.reason;
    EXPECT_EQ(r.dims, (std::vector<int>{6, 6}));
    EXPECT_NE(r.reason.find("after dropping 5 rare pairs"), std::string::npos) << r.reason;
    Edges heavy;
    for (const auto& e : graded) {
      if (e.weight >= 1000) heavy.push_back(e);
    }
    expect_lattice_layout(r, 36, heavy, claimed_lattice(r));
    // Without the second look, the same graph is only an embedding.
    GraphLayoutOptions no_drop;
    no_drop.rare_fraction = 0;
    EXPECT_EQ(infer_graph_layout(36, graded, no_drop).kind, "embedding");
  }
}

TEST(GraphLayout, DropRareEdgesMergesThenCutsBelowFractionOfMedian) {
  const Edges edges{{0, 1, 40}, {1, 0, 60}, {1, 2, 100}, {2, 3, 90}, {3, 0, 9}, {0, 2, 11}};
  // Merged: (0,1) 100, (1,2) 100, (2,3) 90, (0,3) 9, (0,2) 11; median 90; threshold 9.
  const RareEdgeFilter f = drop_rare_edges(4, edges, 0.1);
  EXPECT_DOUBLE_EQ(f.threshold, 9.0);
  EXPECT_EQ(f.dropped, 0U);
  ASSERT_EQ(f.kept.size(), 5U);
  EXPECT_EQ(f.kept[0].a, 0U);
  EXPECT_EQ(f.kept[0].b, 1U);
  EXPECT_DOUBLE_EQ(f.kept[0].weight, 100.0);
  const RareEdgeFilter g = drop_rare_edges(4, edges, 0.2);
  EXPECT_DOUBLE_EQ(g.threshold, 18.0);
  EXPECT_EQ(g.dropped, 2U);
  EXPECT_EQ(g.kept.size(), 3U);
  EXPECT_THROW(drop_rare_edges(4, edges, -1), std::invalid_argument);
  EXPECT_THROW(drop_rare_edges(4, edges, NAN), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// The embedding.

/// A w × h grid with every edge kept with probability 0.85.
Edges holey_grid(int w, int h, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Edges edges;
  for (const auto& e : grid_topology({w, h}, false, 1).edges) {
    if (rng() % 100 < 85) edges.push_back({e[0], e[1], 1});
  }
  return edges;
}

/// Two dense groups of `size` (pairs joined with probability 1/2), joined by one edge.
Edges two_communities(std::uint32_t size, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Edges edges;
  for (std::uint32_t g = 0; g < 2; ++g) {
    for (std::uint32_t i = 0; i < size; ++i) {
      for (std::uint32_t j = i + 1; j < size; ++j) {
        if (rng() % 2 == 0) edges.push_back({g * size + i, g * size + j, 1});
      }
    }
  }
  edges.push_back({0, size, 1});
  return edges;
}

/// Body count of an edge list (largest index + 1).
std::size_t body_count(const Edges& edges) {
  std::uint32_t m = 0;
  for (const auto& e : edges) m = std::max({m, e.a, e.b});
  return m + 1;
}

Eigen::Matrix3Xd random_positions(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-5, 5);
  Eigen::Matrix3Xd x(3, static_cast<Eigen::Index>(n));
  for (Eigen::Index i = 0; i < x.cols(); ++i) x.col(i) = Eigen::Vector3d(u(rng), u(rng), u(rng));
  return x;
}

TEST(GraphLayout, EmbeddingDistancesFollowGraphDistances) {
  const std::vector<std::pair<std::string, Edges>> families{
      {"random geometric", random_geometric_graph(400, 0.2, 1)},
      {"random tree", random_tree(300, 2)},
      {"holey grid", holey_grid(18, 14, 3)},
      {"communities", two_communities(40, 4)},
  };
  for (const auto& [name, edges] : families) {
    SCOPED_TRACE(name);
    const std::size_t n = body_count(edges);
    const GraphLayoutResult r = infer_graph_layout(n, edges);
    ASSERT_EQ(r.kind, "embedding") << r.reason;
    ASSERT_TRUE(r.positions.allFinite());
    const LayoutQuality q = layout_quality(n, edges, r.positions);
    EXPECT_GE(q.spearman, 0.8) << "stress " << q.stress;
    EXPECT_GT(q.pairs, 1000U);
    // The measure can fail: random positions are far below the bar.
    EXPECT_LT(layout_quality(n, edges, random_positions(n, 9)).spearman, 0.3);
  }
}

TEST(GraphLayout, EmbeddingHasUnitSpacingAndIsCentred) {
  const Edges edges = random_geometric_graph(300, 0.25, 5);
  const GraphLayoutResult r = infer_graph_layout(300, edges);
  std::vector<double> lengths;
  for (const auto& e : edges) lengths.push_back((r.positions.col(e.a) - r.positions.col(e.b)).norm());
  std::nth_element(lengths.begin(), lengths.begin() + static_cast<std::ptrdiff_t>(lengths.size() / 2), lengths.end());
  EXPECT_GT(lengths[lengths.size() / 2], 0.7);
  EXPECT_LT(lengths[lengths.size() / 2], 1.3);
  EXPECT_LT(r.positions.rowwise().mean().norm(), 1e-9);
}

TEST(GraphLayout, CommunitiesEndUpAsTwoSeparatedClusters) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const Edges edges = two_communities(50, seed);
    const GraphLayoutResult r = infer_graph_layout(100, edges);
    const Eigen::Vector3d c0 = r.positions.leftCols(50).rowwise().mean();
    const Eigen::Vector3d c1 = r.positions.rightCols(50).rowwise().mean();
    double radius = 0;
    for (Eigen::Index i = 0; i < 100; ++i) {
      const Eigen::Vector3d own = i < 50 ? c0 : c1, other = i < 50 ? c1 : c0;
      const double d_own = (r.positions.col(i) - own).norm();
      EXPECT_LT(d_own, (r.positions.col(i) - other).norm()) << "body " << i;
      radius = std::max(radius, d_own);
    }
    // Far apart compared with their size: the bodies of each cluster stay within a ball that
    // leaves a gap to the other.
    EXPECT_GT((c0 - c1).norm(), 2 * radius) << "seed " << seed;
  }
}

TEST(GraphLayout, HeavierEdgesAreShorter) {
  // A star: two heavy leaves, four light ones (median weight 1: heavy want 1/2, light 1).
  Edges edges{{0, 1, 1000}, {0, 2, 1000}, {0, 3, 1}, {0, 4, 1}, {0, 5, 1}, {0, 6, 1}};
  const GraphLayoutResult r = infer_graph_layout(7, edges);
  ASSERT_EQ(r.kind, "embedding");
  auto dist = [&](Eigen::Index a, Eigen::Index b) { return (r.positions.col(a) - r.positions.col(b)).norm(); };
  for (Eigen::Index heavy : {1, 2}) {
    for (Eigen::Index light : {3, 4, 5, 6}) EXPECT_LT(dist(0, heavy), 0.8 * dist(0, light));
  }
  // Near their target lengths, though the leaves also keep their distances from each other.
  EXPECT_NEAR(dist(0, 1), 0.5, 0.15);
  EXPECT_NEAR(dist(0, 3), 1.0, 0.25);
}

TEST(GraphLayout, StarLeavesSpreadAroundTheHub) {
  // Every leaf sees the same neighbour and the same pivots: without more terms they would pile up.
  constexpr std::uint32_t kLeaves = 1000;
  Edges edges;
  for (std::uint32_t i = 1; i <= kLeaves; ++i) edges.push_back({0, i, 1});
  const GraphLayoutResult r = infer_graph_layout(kLeaves + 1, edges);
  std::vector<double> nearest(kLeaves + 1, INFINITY);
  for (Eigen::Index i = 1; i <= kLeaves; ++i) {
    EXPECT_NEAR((r.positions.col(i) - r.positions.col(0)).norm(), 1.0, 0.5);
    for (Eigen::Index j = 1; j <= kLeaves; ++j) {
      if (j != i) nearest[static_cast<std::size_t>(i)] = std::min(nearest[static_cast<std::size_t>(i)], (r.positions.col(i) - r.positions.col(j)).norm());
    }
  }
  // 1000 points spread evenly over a unit sphere are about 0.11 apart.
  std::sort(nearest.begin() + 1, nearest.end());
  EXPECT_GT(nearest[kLeaves / 2], 0.05) << "median distance to the nearest other leaf";
}

TEST(GraphLayout, ComponentsSideBySideAndIsolatedBodiesOnARingAround) {
  // Two trees of 30 and 20 and 4 isolated bodies (50, 51, 52, 53), numbered in a mix.
  Edges edges;
  for (const auto& e : random_tree(30, 1)) edges.push_back({e.a * 2, e.b * 2, 1});            // even < 60
  for (const auto& e : random_tree(20, 2)) edges.push_back({e.a * 2 + 1, e.b * 2 + 1, 1});    // odd < 40
  std::vector<std::uint32_t> first, second, isolated;
  for (std::uint32_t v = 0; v < 64; ++v) {
    if (v % 2 == 0 && v < 60) {
      first.push_back(v);
    } else if (v % 2 == 1 && v < 40) {
      second.push_back(v);
    } else {
      isolated.push_back(v);
    }
  }
  const GraphLayoutResult r = infer_graph_layout(64, edges);
  EXPECT_EQ(r.kind, "embedding");
  EXPECT_NE(r.reason.find("2 components side by side, 14 isolated bodies on a ring around them"), std::string::npos)
      << r.reason;
  auto col = [&](std::uint32_t v) { return Eigen::Vector3d(r.positions.col(v)); };
  double closest = INFINITY, reach = 0;
  for (auto a : first) {
    for (auto b : second) closest = std::min(closest, (col(a) - col(b)).norm());
  }
  EXPECT_GT(closest, 1.0);  // the components do not overlap
  // Centre of the components' ring: isolated bodies all at one radius, outside every other body.
  Eigen::Vector3d centre = Eigen::Vector3d::Zero();
  for (auto v : isolated) centre += col(v);
  centre /= static_cast<double>(isolated.size());
  for (auto v : first) reach = std::max(reach, (col(v) - centre).head<2>().norm());
  for (auto v : second) reach = std::max(reach, (col(v) - centre).head<2>().norm());
  const double ring = (col(isolated[0]) - centre).norm();
  for (auto v : isolated) EXPECT_NEAR((col(v) - centre).norm(), ring, 1e-9);
  EXPECT_GT(ring, reach + 1.0);
  EXPECT_LT(ring, reach + 2.0);  // near: not flung far away
  for (std::size_t i = 0; i < isolated.size(); ++i) {
    for (std::size_t j = i + 1; j < isolated.size(); ++j) EXPECT_GT((col(isolated[i]) - col(isolated[j])).norm(), 0.99);
  }
  EXPECT_LT(r.positions.rowwise().mean().norm(), 1e-9);
}

TEST(GraphLayout, NoEdgesAndSingleBody) {
  const GraphLayoutResult r = infer_graph_layout(6, {});
  EXPECT_EQ(r.kind, "isolated");
  for (Eigen::Index i = 0; i < 6; ++i) EXPECT_NEAR((r.positions.col(i) - r.positions.col((i + 1) % 6)).norm(), 1.0, 1e-12);
  const GraphLayoutResult one = infer_graph_layout(1, {});
  EXPECT_EQ(one.kind, "single");
  EXPECT_EQ(one.positions, Eigen::Matrix3Xd::Zero(3, 1));
  const GraphLayoutResult two = infer_graph_layout(2, Edges{{1, 0, 3}});
  EXPECT_EQ(two.kind, "path");
  EXPECT_NEAR((two.positions.col(0) - two.positions.col(1)).norm(), 1.0, 1e-12);
}

TEST(GraphLayout, SameInputSameOutput) {
  const Edges edges = random_geometric_graph(500, 0.18, 11);
  const GraphLayoutResult a = infer_graph_layout(500, edges);
  const GraphLayoutResult b = infer_graph_layout(500, edges);
  EXPECT_EQ(a.kind, "embedding");
  EXPECT_TRUE(a.positions == b.positions);
  EXPECT_EQ(a.reason, b.reason);
}

TEST(GraphLayout, DuplicatePairsAreSummed) {
  // (0, 1) three times in both directions = one pair of weight 8; the rest weight 1 (median 1).
  Edges edges{{0, 1, 2}, {1, 0, 3}, {0, 1, 3}, {0, 2, 1}, {0, 3, 1}, {0, 4, 1}, {4, 5, 1}};
  const GraphLayoutResult r = infer_graph_layout(6, edges);
  ASSERT_EQ(r.kind, "embedding");
  EXPECT_NEAR((r.positions.col(0) - r.positions.col(1)).norm(), 0.5, 0.1);  // (1/8)^(1/3)
}

std::string error_of(std::size_t n, const Edges& edges) {
  try {
    infer_graph_layout(n, edges);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(GraphLayout, BadInputIsNamed) {
  EXPECT_EQ(error_of(0, {}), "graph layout: no bodies (n = 0)");
  EXPECT_EQ(error_of(3, {{0, 1, 1}, {2, 2, 1}}), "graph layout: edge 1 (2, 2): joins body 2 to itself");
  EXPECT_EQ(error_of(3, {{0, 1, 1}, {1, 3, 1}}), "graph layout: edge 1 (1, 3): body 3 does not exist (n = 3)");
  EXPECT_EQ(error_of(3, {{0, 1, NAN}}), "graph layout: edge 0 (0, 1): weight nan is not a finite number > 0");
  EXPECT_EQ(error_of(3, {{0, 1, INFINITY}}), "graph layout: edge 0 (0, 1): weight inf is not a finite number > 0");
  EXPECT_EQ(error_of(3, {{0, 1, 1}, {0, 2, 0}}), "graph layout: edge 1 (0, 2): weight 0 is not a finite number > 0");
  EXPECT_EQ(error_of(3, {{0, 1, -2}}), "graph layout: edge 0 (0, 1): weight -2 is not a finite number > 0");
  EXPECT_EQ(error_of(3, {{0, 1, 1e308}, {1, 0, 1e308}}),
            "graph layout: the weights of pair (0, 1) add up to more than the largest number");
  EXPECT_THROW(layout_quality(3, Edges{{0, 1, 1}}, Eigen::Matrix3Xd::Zero(3, 2)), std::invalid_argument);
}

/// Mutated edge lists, as a fuzzer would make them: either a named error or a finite layout.
TEST(GraphLayout, MutatedEdgeListsNeverCrash) {
  std::mt19937_64 rng(42);
  const double weights[] = {1, 2.5, 1e-300, 1e300, 0, -1, NAN, INFINITY, -INFINITY, 4e-320};
  std::size_t errors = 0, layouts = 0;
  for (int round = 0; round < 300; ++round) {
    const std::size_t n = 1 + rng() % 40;
    Edges edges = relabelled(n, weighted(n >= 3 ? ring_topology(n, 1).edges : std::vector<Edge>{}), rng());
    const std::size_t edits = rng() % 4;
    for (std::size_t k = 0; k < edits; ++k) {
      const auto a = static_cast<std::uint32_t>(rng() % (n + 2)), b = static_cast<std::uint32_t>(rng() % (n + 2));
      switch (rng() % 3) {
        case 0: edges.push_back({a, b, weights[rng() % 10]}); break;
        case 1:
          if (!edges.empty()) edges.erase(edges.begin() + static_cast<std::ptrdiff_t>(rng() % edges.size()));
          break;
        default:
          if (!edges.empty()) edges[rng() % edges.size()].weight = weights[rng() % 10];
          break;
      }
    }
    try {
      const GraphLayoutResult r = infer_graph_layout(n, edges);
      EXPECT_EQ(r.positions.cols(), static_cast<Eigen::Index>(n));
      EXPECT_TRUE(r.positions.allFinite()) << r.reason;
      EXPECT_FALSE(r.reason.empty());
      ++layouts;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("graph layout: ", 0), 0U) << e.what();
      ++errors;
    }
  }
  EXPECT_GT(errors, 20U);
  EXPECT_GT(layouts, 20U);
}

}  // namespace
}  // namespace kanoko::models
