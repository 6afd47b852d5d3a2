#include "models/layout.hpp"

#include <cmath>
#include <numbers>
#include <set>

#include "src/base/error.hpp"

namespace kanoko::models {

using mapping::Placement;
using mapping::SpringTopology;

namespace {
std::size_t product(const std::array<int, 3>& d) {
  return static_cast<std::size_t>(d[0]) * static_cast<std::size_t>(d[1]) * static_cast<std::size_t>(d[2]);
}
std::string dims_text(const std::array<int, 3>& d) {
  return std::to_string(d[0]) + "×" + std::to_string(d[1]) + "×" + std::to_string(d[2]);
}
}  // namespace

Eigen::Matrix3Xd initial_positions(const mapping::Mapping& m, std::size_t count) {
  const auto& b = m.bodies;
  const auto n = static_cast<Eigen::Index>(count);
  Eigen::Matrix3Xd x(3, n);
  switch (b.placement) {
    case Placement::Cube: {
      if (count != 8) {
        throw InputError(m.where("bodies.placement"),
                         "placement \"cube\" puts 8 bodies on the vertices of a cube, but the trace has " +
                             std::to_string(count) + " bodies (use \"lattice\", \"ring\" or \"line\")");
      }
      // Vertex k has coordinates from the bits of k: x = bit 0, y = bit 1, z = bit 2.
      for (Eigen::Index k = 0; k < 8; ++k) {
        x.col(k) = Eigen::Vector3d(static_cast<double>(k & 1), static_cast<double>((k >> 1) & 1),
                                   static_cast<double>((k >> 2) & 1)) * b.size;
      }
      break;
    }
    case Placement::Lattice: {
      if (product(b.lattice) != count) {
        throw InputError(m.where("bodies.lattice"), "lattice " + dims_text(b.lattice) + " has " +
                                                        std::to_string(product(b.lattice)) + " sites but the trace has " +
                                                        std::to_string(count) + " bodies");
      }
      for (Eigen::Index k = 0; k < n; ++k) {
        const auto i = static_cast<int>(k);
        x.col(k) = Eigen::Vector3d(i % b.lattice[0], (i / b.lattice[0]) % b.lattice[1],
                                   i / (b.lattice[0] * b.lattice[1])) * b.size;
      }
      break;
    }
    case Placement::Ring: {
      for (Eigen::Index k = 0; k < n; ++k) {
        const double a = 2 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
        x.col(k) = Eigen::Vector3d(std::cos(a), std::sin(a), 0.0) * b.size;
      }
      break;
    }
    case Placement::Line: {
      for (Eigen::Index k = 0; k < n; ++k) x.col(k) = Eigen::Vector3d(static_cast<double>(k) * b.size, 0, 0);
      break;
    }
    case Placement::Explicit: {
      if (b.positions.size() != count) {
        throw InputError(m.where("bodies.positions"), "'positions' lists " + std::to_string(b.positions.size()) +
                                                          " points but the trace has " + std::to_string(count) +
                                                          " bodies");
      }
      for (Eigen::Index k = 0; k < n; ++k) x.col(k) = b.positions[static_cast<std::size_t>(k)];
      break;
    }
  }
  if (n > 0) x.colwise() -= x.rowwise().mean();
  // Coincident starting points have no defined repulsion direction.
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = i + 1; j < n && n <= 4096; ++j) {
      if ((x.col(i) - x.col(j)).squaredNorm() == 0.0) {
        throw InputError(m.where("bodies.placement"), "bodies " + std::to_string(i) + " and " + std::to_string(j) +
                                                          " start at the same point");
      }
    }
  }
  return x;
}

std::vector<std::array<std::uint32_t, 2>> mesh_edges(const std::array<int, 3>& d) {
  std::vector<std::array<std::uint32_t, 2>> edges;
  auto index = [&](int x, int y, int z) { return static_cast<std::uint32_t>(x + d[0] * (y + d[1] * z)); };
  for (int z = 0; z < d[2]; ++z) {
    for (int y = 0; y < d[1]; ++y) {
      for (int x = 0; x < d[0]; ++x) {
        if (x + 1 < d[0]) edges.push_back({index(x, y, z), index(x + 1, y, z)});
        if (y + 1 < d[1]) edges.push_back({index(x, y, z), index(x, y + 1, z)});
        if (z + 1 < d[2]) edges.push_back({index(x, y, z), index(x, y, z + 1)});
      }
    }
  }
  return edges;
}

std::vector<std::array<std::uint32_t, 2>> spring_edges(const mapping::Mapping& m, std::size_t count) {
  const auto& s = m.springs;
  std::vector<std::array<std::uint32_t, 2>> edges;
  switch (s.topology) {
    case SpringTopology::None: break;
    case SpringTopology::Ring: {
      if (count < 3) throw InputError(m.where("springs.topology"), "a ring needs at least 3 bodies");
      for (std::size_t i = 0; i < count; ++i) {
        edges.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>((i + 1) % count)});
      }
      break;
    }
    case SpringTopology::Mesh: {
      const std::array<int, 3> dims = s.mesh[0] > 0 ? s.mesh : m.bodies.lattice;
      const std::string key = s.mesh[0] > 0 ? "springs.mesh" : "springs.topology";
      if (dims[0] <= 0) {
        throw InputError(m.where(key), "topology \"mesh\" needs 'mesh = [nx, ny, nz]' or a lattice placement");
      }
      if (product(dims) != count) {
        throw InputError(m.where(key), "mesh " + dims_text(dims) + " has " + std::to_string(product(dims)) +
                                           " nodes but the trace has " + std::to_string(count) + " bodies");
      }
      edges = mesh_edges(dims);
      break;
    }
    case SpringTopology::Explicit: {
      std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
      for (const auto& e : s.edges) {
        for (int end : e) {
          if (static_cast<std::size_t>(end) >= count) {
            throw InputError(m.where("springs.edges"), "edge [" + std::to_string(e[0]) + ", " + std::to_string(e[1]) +
                                                           "] names body " + std::to_string(end) + " but there are only " +
                                                           std::to_string(count) + " bodies (0 to " +
                                                           std::to_string(count - 1) + ")");
          }
        }
        auto a = static_cast<std::uint32_t>(e[0]);
        auto b = static_cast<std::uint32_t>(e[1]);
        if (!seen.insert({std::min(a, b), std::max(a, b)}).second) {
          throw InputError(m.where("springs.edges"),
                           "edge [" + std::to_string(a) + ", " + std::to_string(b) + "] is listed twice");
        }
        edges.push_back({a, b});
      }
      break;
    }
  }
  return edges;
}

}  // namespace kanoko::models
