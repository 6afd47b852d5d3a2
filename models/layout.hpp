// Initial placement of bodies and spring topologies generated from a mapping.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/topology.hpp"
#include "src/mapping/mapping.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::models {

/// Where the bodies start and which springs join them.
struct Layout {
  Eigen::Matrix3Xd positions;             ///< 3×N, centred on the origin, body order
  std::vector<Edge> edges;                ///< springs by body index, each pair once
  std::vector<std::uint32_t> slot_of_body;  ///< topology position of each body (the `order`)
  std::string topology;                   ///< what the springs are ("3-D torus 4×4×4", "none")
  std::string placement;                  ///< how positions were chosen ("topology", "cube", ...)
};

/// Builds the layout of `count` bodies. `timeline` gives the bodies' names and ranks (for
/// `order`), the traffic (topology "trace") and the links (topology "links"); without it those
/// options are errors. Throws InputError pointing into the mapping when the mapping does not
/// fit the trace (size mismatch, unknown names, coincident points, ...).
Layout build_layout(const mapping::Mapping& m, std::size_t count, const trace::Timeline* timeline = nullptr);

/// Positions (3×N) for `count` bodies as the mapping places them, centred on the origin.
/// Throws InputError (pointing into the mapping) when the placement does not fit `count`.
Eigen::Matrix3Xd initial_positions(const mapping::Mapping& m, std::size_t count);

/// Spring edges (body index pairs, each once) as the mapping's topology defines them.
/// Throws InputError when the topology does not fit `count`.
std::vector<std::array<std::uint32_t, 2>> spring_edges(const mapping::Mapping& m, std::size_t count);

/// Edges of an nx×ny×nz mesh (6-neighbour, no wrap), x fastest: index = x + nx (y + ny z).
std::vector<std::array<std::uint32_t, 2>> mesh_edges(const std::array<int, 3>& dims);

}  // namespace kanoko::models
