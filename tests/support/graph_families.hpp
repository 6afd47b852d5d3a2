// Random graph families for the graph-layout tests and bench (models/graph_layout.hpp).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <random>
#include <vector>

#include "models/graph_layout.hpp"

namespace kanoko::test {

/// Random geometric graph: n points uniform in the unit cube, joined (weight 1) when closer than
/// `radius`. O(n²): fine up to some 10k points.
inline std::vector<models::WeightedEdge> random_geometric_graph(std::size_t n, double radius, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<Eigen::Vector3d> p(n);
  for (auto& x : p) x = Eigen::Vector3d(u(rng), u(rng), u(rng));
  std::vector<models::WeightedEdge> edges;
  for (std::uint32_t i = 0; i < n; ++i) {
    for (std::uint32_t j = i + 1; j < n; ++j) {
      if ((p[i] - p[j]).squaredNorm() < radius * radius) edges.push_back({i, j, 1});
    }
  }
  return edges;
}

/// Random recursive tree: body i > 0 joined (weight 1) to a uniformly chosen earlier body.
inline std::vector<models::WeightedEdge> random_tree(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<models::WeightedEdge> edges;
  for (std::uint32_t i = 1; i < n; ++i) edges.push_back({static_cast<std::uint32_t>(rng() % i), i, 1});
  return edges;
}

}  // namespace kanoko::test
