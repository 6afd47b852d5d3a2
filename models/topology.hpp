// Topology generators: the spring edges of an interconnect and its natural 3-D embedding
// (docs/mapping-language.md, "Topologies"). Positions and edges are in "slot" order; the layout
// (models/layout.hpp) maps bodies to slots by the mapping's `order`.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "src/trace/timeline.hpp"

namespace kanoko::models {

using Edge = std::array<std::uint32_t, 2>;

/// A generated topology: springs and, when the topology has one, a natural embedding.
struct Topology {
  std::vector<Edge> edges;      ///< each unordered pair once
  Eigen::Matrix3Xd positions;   ///< 3×N natural embedding, or 0 columns when there is none
  std::string description;      ///< "3-D torus 4×4×4"
};

/// Ring of n ≥ 3 on a circle whose neighbours are `spacing` apart.
Topology ring_topology(std::size_t n, double spacing);
/// Mesh (wrap = false) or torus (wrap = true) of 1 to 3 dimensions, x fastest:
/// slot = x + nx (y + ny z). Mesh and 3-D torus: a lattice of `spacing`. 2-D torus: a ring torus
/// (doughnut) so that wrap-around springs are as short as the others. 3-D torus: x is wrapped
/// into a ring around the z axis (short x wrap-around springs), y and z form a lattice cross
/// section whose wrap-around springs span it.
Topology grid_topology(const std::vector<int>& dims, bool wrap, double spacing);
/// "4×4×2": a lattice's or a tree's dimensions as messages print them.
std::string dims_text(const std::vector<int>& dims);
/// Hypercube of dimension d (2^d nodes). Bit b of the slot moves the node along axis b mod 3 by
/// spacing × 2.5^(b div 3): dimensions 0–2 form a unit cube, 3–5 a cube of such cubes 2.5 times
/// larger, and so on. Every spring is axis-parallel, lower dimensions are shorter, and no two
/// nodes that are not neighbours are closer than the shortest springs.
Topology hypercube_topology(int d, double spacing);
/// Fat tree: levels[0] leaves per edge switch, levels[1] edge switches per next switch, ...
/// Leaves of one edge switch are fully joined; at each higher level, corresponding leaves of
/// sibling subtrees form a ring (more springs per leaf as the tree gets fatter towards the root).
/// Embedding: an edge switch's leaves on a small circle, its siblings around a larger circle
/// (even levels) or stacked along z (odd levels above the first).
Topology fat_tree_topology(const std::vector<int>& levels, double spacing);
/// Dragonfly: `groups` groups of `routers` routers with `per_router` bodies each;
/// slot = p + per_router (r + routers g). Bodies of a router are fully joined; corresponding
/// bodies of the routers of a group are fully joined (all-to-all routers); one global spring
/// joins every pair of groups (group g router h mod A ↔ group h router g mod A, first body).
/// Embedding: groups around a large circle, routers on a small circle, a router's bodies along z.
Topology dragonfly_topology(int groups, int routers, int per_router, double spacing);
/// n points spread evenly over a sphere (golden-angle spiral), nearest neighbours about `spacing`
/// apart.
Eigen::Matrix3Xd sphere_positions(std::size_t n, double spacing);
/// A deterministic force-directed layout of a graph (springs along edges, repulsion between all
/// nodes, from the sphere), scaled so that the mean edge length is `spacing`. O(n²) per
/// iteration: above 2000 nodes the sphere is returned.
Eigen::Matrix3Xd graph_layout(std::size_t n, const std::vector<Edge>& edges, double spacing);
/// Whole-run (bytes, messages) per unordered pair (smaller index first), both directions. One
/// pass over every interval's pairs (millions in a big run): compute it once and give it to the
/// functions below when several need it.
using PairSums = std::map<std::pair<std::uint32_t, std::uint32_t>, std::pair<double, double>>;
PairSums pair_sums(const trace::Timeline& tl);
/// Pairs whose total traffic over the whole trace (both directions) exceeds min_bytes
/// (0: every pair that exchanged a message) and whose message count is at least min_messages.
std::vector<Edge> traffic_edges(const PairSums& sums, double min_bytes, double min_messages = 0);
std::vector<Edge> traffic_edges(const trace::Timeline& tl, double min_bytes, double min_messages = 0);
/// Whole-run traffic per unordered pair (smaller index first): bytes when any message has a size,
/// else message counts.
std::map<std::pair<std::uint32_t, std::uint32_t>, double> pair_totals(const PairSums& sums);
std::map<std::pair<std::uint32_t, std::uint32_t>, double> pair_totals(const trace::Timeline& tl);
/// The trace's declared links between distinct entities, each pair once.
std::vector<Edge> link_edges(const trace::Timeline& tl);

}  // namespace kanoko::models
