// A starting layout that reflects a weighted communication graph (docs/layout.md): lattices
// (ring, path, mesh, torus, hypercube) are recognised exactly from the graph's structure and laid
// out on their regular embedding (models/topology.hpp); any other graph gets a 3-D embedding by
// sparse stress majorisation from a pivot-MDS start, in O(k (n + m) log n) time and O(k n) memory
// for k pivots. Pure: no trace or mapping types.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace kanoko::models {

/// An undirected edge of a communication graph. weight > 0 (bytes or messages); duplicates of a
/// pair, in either direction, are summed.
struct WeightedEdge {
  std::uint32_t a = 0, b = 0;  ///< the two bodies: a ≠ b, both < n
  double weight = 1.0;         ///< finite and > 0
};

/// Tuning of infer_graph_layout. The defaults suit 1 to 100 000 bodies.
struct GraphLayoutOptions {
  /// When the graph as given is not a lattice, edges lighter than rare_fraction × the median
  /// weight are dropped (drop_rare_edges) and recognition is tried again; 0 disables the retry.
  double rare_fraction = 0.1;
  /// Try to recognise lattices at all (false: always the embedding).
  bool recognise_lattices = true;
  /// Pivots of the pivot-MDS start and of the sparse stress model, per connected component (≥ 3).
  std::size_t pivots = 200;
  /// Sweeps of stress majorisation after the pivot-MDS start (0: the pivot-MDS layout alone).
  int stress_iterations = 60;
};

/// Where the bodies start, and why.
struct GraphLayoutResult {
  Eigen::Matrix3Xd positions;        ///< 3×n, body order; nearest neighbours about 1 apart, centred on 0
  std::string kind;                  ///< "ring", "path", "mesh", "torus", "hypercube", "embedding", "isolated", "single"
  std::vector<int> dims;             ///< lattice dimensions, longest first, when a lattice was recognised
  std::vector<std::uint32_t> order;  ///< body → lattice slot (models/topology.hpp's slot order), when recognised
  std::string reason;                ///< one line: why this layout
};

/// Lays out n bodies joined by `edges`. A lattice is recognised whatever the body numbering; else
/// the stress embedding, where an edge of weight w wants length clamp((median / w)^(1/3), 1/2, 2)
/// (heavier = shorter) and other pairs their shortest-path distance over those lengths.
/// Components are placed side by side, isolated bodies on a ring around them. Deterministic.
/// Throws std::invalid_argument for n = 0, n ≥ 2^32, an index ≥ n, a self loop, or a weight that
/// is not finite and > 0, naming the edge by its position in `edges`.
GraphLayoutResult infer_graph_layout(std::size_t n, std::span<const WeightedEdge> edges,
                                     const GraphLayoutOptions& options = {});

/// Edges that survive drop_rare_edges, and what was dropped.
struct RareEdgeFilter {
  std::vector<WeightedEdge> kept;  ///< merged pairs (a < b, sorted) with weight ≥ threshold
  std::size_t dropped = 0;         ///< merged pairs below the threshold
  double threshold = 0;            ///< fraction × median of the merged weights
};

/// Merges duplicate pairs (summing weights) and keeps those whose weight ≥ fraction × the median
/// merged weight. A rule on the median, not the mean, so that a few heavy pairs cannot drop the
/// regular traffic. Validates like infer_graph_layout; fraction must be finite and ≥ 0.
RareEdgeFilter drop_rare_edges(std::size_t n, std::span<const WeightedEdge> edges, double fraction);

/// How well positions reflect graph distances, over the pairs (s, t) for `sources` bodies s spread
/// evenly over the body indices and every t ≠ s in the same component. Distances follow the edge
/// lengths of infer_graph_layout.
struct LayoutQuality {
  double spearman = 0;     ///< rank correlation of layout distance and graph distance
  double stress = 0;       ///< mean of ((s·|xᵢ − xⱼ| − dᵢⱼ) / dᵢⱼ)² at the best scale s
  std::size_t pairs = 0;   ///< pairs compared
};

/// Measures a layout against the graph (validates like infer_graph_layout; positions must be 3×n).
LayoutQuality layout_quality(std::size_t n, std::span<const WeightedEdge> edges, const Eigen::Matrix3Xd& positions,
                             std::size_t sources = 64);

}  // namespace kanoko::models
