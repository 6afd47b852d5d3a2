// Initial placement of bodies and spring topologies generated from a mapping.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <vector>

#include "src/mapping/mapping.hpp"

namespace kanoko::models {

/// Positions (3×N) for `count` bodies as the mapping places them, centred on the origin.
/// Throws InputError (pointing into the mapping) when the placement does not fit `count`.
Eigen::Matrix3Xd initial_positions(const mapping::Mapping& m, std::size_t count);

/// Spring edges (body index pairs, each once) as the mapping's topology defines them.
/// Throws InputError when the topology does not fit `count`.
std::vector<std::array<std::uint32_t, 2>> spring_edges(const mapping::Mapping& m, std::size_t count);

/// Edges of an nx×ny×nz mesh (6-neighbour, no wrap), x fastest: index = x + nx (y + ny z).
std::vector<std::array<std::uint32_t, 2>> mesh_edges(const std::array<int, 3>& dims);

}  // namespace kanoko::models
