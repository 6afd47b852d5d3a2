#include "models/layout.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <set>

#include "models/graph_layout.hpp"
#include "models/topology.hpp"
#include "src/base/error.hpp"
#include "src/base/suggest.hpp"
#include "src/mapping/pattern.hpp"

namespace kanoko::models {

using mapping::BodyOrder;
using mapping::Placement;
using mapping::SpringTopology;

namespace {

/// Product of the dimensions, saturating at SIZE_MAX (8 levels of 65536 would wrap around).
std::size_t product(const std::vector<int>& d) {
  std::size_t p = 1;
  for (int x : d) {
    const auto f = static_cast<std::size_t>(std::max(x, 0));
    if (f != 0 && p > std::numeric_limits<std::size_t>::max() / f) return std::numeric_limits<std::size_t>::max();
    p *= f;
  }
  return p;
}

/// "topology \"X\" has N nodes but the trace has M bodies", at `key`.
[[noreturn]] void size_mismatch(const mapping::Mapping& m, const std::string& key, const std::string& what,
                                std::size_t nodes, std::size_t count) {
  throw InputError(m.where(key), what + " has " + std::to_string(nodes) + " nodes but the trace has " +
                                     std::to_string(count) + " bodies");
}

/// The topology's springs (and embedding) in slot order.
Topology make_topology(const mapping::Mapping& m, std::size_t count, const trace::Timeline* tl) {
  const auto& s = m.springs;
  const double spacing = m.bodies.size;
  const std::string topo_key = "springs.topology";
  switch (s.topology) {
    case SpringTopology::None:
    case SpringTopology::Complete: {
      Topology t;
      t.description = s.topology == SpringTopology::None ? "none" : "complete graph (no springs)";
      return t;
    }
    case SpringTopology::Ring: {
      if (count < 3) throw InputError(m.where(topo_key), "a ring needs at least 3 bodies");
      return ring_topology(count, spacing);
    }
    case SpringTopology::Mesh:
    case SpringTopology::Torus: {
      const bool torus = s.topology == SpringTopology::Torus;
      std::vector<int> dims = s.dims;
      std::string key = "springs.dims";
      if (dims.empty() && s.mesh[0] > 0) {
        dims.assign(s.mesh.begin(), s.mesh.end());
        key = "springs.mesh";
      }
      if (dims.empty() && m.bodies.lattice[0] > 0) {
        dims.assign(m.bodies.lattice.begin(), m.bodies.lattice.end());
        key = topo_key;
      }
      if (dims.empty()) {
        throw InputError(m.where(topo_key), std::string("topology \"") + to_string(s.topology) +
                                                "\" needs 'dims = [nx, ny, nz]' (or 'mesh', or a lattice placement)");
      }
      if (product(dims) != count) {
        size_mismatch(m, key, std::string(torus ? "torus " : "mesh ") + dims_text(dims), product(dims), count);
      }
      return grid_topology(dims, torus, spacing);
    }
    case SpringTopology::Hypercube: {
      int d = s.dimension;
      if (d == 0) {
        while (d < 30 && (std::size_t{1} << static_cast<unsigned>(d)) < count) ++d;
        if ((std::size_t{1} << static_cast<unsigned>(d)) != count || count < 2) {
          throw InputError(m.where(topo_key), "a hypercube has a power of two of nodes, but the trace has " +
                                                  std::to_string(count) + " bodies");
        }
      } else if ((std::size_t{1} << static_cast<unsigned>(d)) != count) {
        size_mismatch(m, "springs.dimension", "a hypercube of dimension " + std::to_string(d),
                      std::size_t{1} << static_cast<unsigned>(d), count);
      }
      return hypercube_topology(d, spacing);
    }
    case SpringTopology::FatTree: {
      if (product(s.levels) != count) size_mismatch(m, "springs.levels", "fat tree " + dims_text(s.levels), product(s.levels), count);
      return fat_tree_topology(s.levels, spacing);
    }
    case SpringTopology::Dragonfly: {
      const std::size_t n = static_cast<std::size_t>(s.groups) * static_cast<std::size_t>(s.routers) *
                            static_cast<std::size_t>(s.nodes_per_router);
      if (n != count) {
        size_mismatch(m, "springs.groups",
                      "a dragonfly of " + std::to_string(s.groups) + " groups × " + std::to_string(s.routers) +
                          " routers × " + std::to_string(s.nodes_per_router) + " per router",
                      n, count);
      }
      return dragonfly_topology(s.groups, s.routers, s.nodes_per_router, spacing);
    }
    case SpringTopology::Trace:
    case SpringTopology::Links: {
      const bool links = s.topology == SpringTopology::Links;
      if (tl == nullptr) {
        throw InputError(m.where(topo_key), std::string("topology \"") + to_string(s.topology) + "\" needs a trace");
      }
      Topology t;
      t.edges = links ? link_edges(*tl) : std::vector<Edge>();
      // A trace without a platform graph joining the bodies (an MPI-only SimGrid trace): the
      // observed communication graph stands in, and ingest::input_warnings says so.
      const bool fallback = links && t.edges.empty();
      const PairSums sums = links ? PairSums() : pair_sums(*tl);
      if (!links) t.edges = traffic_edges(sums, s.min_bytes, s.min_messages);
      if (fallback) t.edges = traffic_edges(*tl, s.min_bytes, s.min_messages);
      // Laid out as the graph is: a regular lattice when it is one, else a stress embedding in
      // which pairs that exchanged more start closer (models/graph_layout.hpp).
      std::vector<WeightedEdge> weighted;
      weighted.reserve(t.edges.size());
      if (links) {
        for (const auto& e : t.edges) weighted.push_back({e[0], e[1], 1.0});
      } else {
        const std::map<std::pair<std::uint32_t, std::uint32_t>, double> amount = pair_totals(sums);
        for (const auto& e : t.edges) {
          const auto it = amount.find({e[0], e[1]});
          weighted.push_back({e[0], e[1], it != amount.end() && it->second > 0 ? it->second : 1.0});
        }
      }
      GraphLayoutResult g = infer_graph_layout(count, weighted);
      t.positions = std::move(g.positions) * spacing;
      t.description = std::string(links && !fallback ? "the trace's links"
                                  : fallback          ? "no platform links between the bodies; the observed communication graph"
                                                      : "the observed communication graph") + " (" +
                      std::to_string(t.edges.size()) + " edges, laid out as " +
                      (g.kind == "embedding" ? std::string("a graph embedding") : g.kind) + ")";
      return t;
    }
    case SpringTopology::Explicit: {
      Topology t;
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
        t.edges.push_back({a, b});
      }
      t.description = "explicit (" + std::to_string(t.edges.size()) + " edges)";
      return t;
    }
  }
  return {};
}

/// Compares names with runs of digits as numbers: "pe2" < "pe10".
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie])) != 0) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je])) != 0) ++je;
      const std::string na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      const auto ta = na.find_first_not_of('0'), tb = nb.find_first_not_of('0');
      const std::string sa = ta == std::string::npos ? "" : na.substr(ta);
      const std::string sb = tb == std::string::npos ? "" : nb.substr(tb);
      if (sa.size() != sb.size()) return sa.size() < sb.size();
      if (sa != sb) return sa < sb;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

/// Position slot of every body under the mapping's `order`. Collects every problem.
std::vector<std::uint32_t> body_slots(const mapping::Mapping& m, std::size_t count, const trace::Timeline* tl) {
  std::vector<std::uint32_t> slot(count);
  for (std::size_t i = 0; i < count; ++i) slot[i] = static_cast<std::uint32_t>(i);
  const auto order = m.bodies.order;
  if (order == BodyOrder::Declaration) return slot;
  const std::string key = order == BodyOrder::Pattern ? "bodies.pattern"
                          : order == BodyOrder::Table ? "bodies.table"
                                                      : "bodies.order";
  if (tl == nullptr || tl->entity_count() != count) {
    throw InputError(m.where("bodies.order"), std::string("order \"") + to_string(order) + "\" needs the trace's bodies");
  }
  const auto& ents = tl->entities;
  DiagnosticList diag;
  std::vector<std::int64_t> wanted(count, -1);
  if (order == BodyOrder::Rank || order == BodyOrder::Name) {
    std::vector<std::size_t> sorted(count);
    for (std::size_t i = 0; i < count; ++i) sorted[i] = i;
    if (order == BodyOrder::Rank) {
      for (const auto& e : ents) {
        if (e.rank < 0) diag.add(m.where(key), "order \"rank\": body '" + e.name + "' has no MPI rank in the trace");
      }
      // Ties keep the trace's order (std::sort with the index as tie-breaker: no temporary buffer).
      std::sort(sorted.begin(), sorted.end(), [&](auto a, auto b) {
        return ents[a].rank != ents[b].rank ? ents[a].rank < ents[b].rank : a < b;
      });
    } else {
      std::sort(sorted.begin(), sorted.end(), [&](auto a, auto b) {
        if (natural_less(ents[a].name, ents[b].name)) return true;
        return !natural_less(ents[b].name, ents[a].name) && a < b;
      });
    }
    for (std::size_t k = 0; k < count; ++k) wanted[sorted[k]] = static_cast<std::int64_t>(k);
  } else if (order == BodyOrder::Pattern) {
    const mapping::Pattern re = mapping::mapping_pattern(m, "bodies.pattern", m.bodies.pattern);
    for (std::size_t i = 0; i < count; ++i) {
      const std::string& name = ents[i].name;
      std::int64_t v = -1;
      const std::optional<std::string> group = re.group_in(name, 1);
      if (!group) {
        diag.add(m.where(key), "pattern \"" + m.bodies.pattern + "\" does not match body '" + name + "'");
        continue;
      }
      const std::string& digits = *group;
      const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      if (r.ec != std::errc() || r.ptr != digits.data() + digits.size() || v < 0) {
        diag.add(m.where(key), "pattern \"" + m.bodies.pattern + "\" takes '" + digits + "' from body '" + name +
                                   "', which is not a position (an integer ≥ 0)");
        continue;
      }
      wanted[i] = v;
    }
  } else {
    std::vector<std::string> names;
    for (const auto& e : ents) names.push_back(e.name);
    for (std::size_t i = 0; i < count; ++i) {
      const auto it = m.bodies.table.find(ents[i].name);
      if (it == m.bodies.table.end()) {
        diag.add(m.where(key), "'table' gives no position for body '" + ents[i].name + "'");
      } else {
        wanted[i] = it->second;
      }
    }
    for (const auto& [name, pos] : m.bodies.table) {
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        diag.add(m.where(key), "'table' names '" + name + "', which is not a body of the trace" + did_you_mean(name, names));
      }
    }
  }
  std::vector<std::string> owner(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (wanted[i] < 0) continue;
    if (static_cast<std::size_t>(wanted[i]) >= count) {
      diag.add(m.where(key), "body '" + ents[i].name + "' gets position " + std::to_string(wanted[i]) + " but there are only " +
                                 std::to_string(count) + " positions (0 to " + std::to_string(count - 1) + ")");
      continue;
    }
    auto& o = owner[static_cast<std::size_t>(wanted[i])];
    if (!o.empty()) {
      diag.add(m.where(key), "bodies '" + o + "' and '" + ents[i].name + "' both get position " + std::to_string(wanted[i]));
      continue;
    }
    o = ents[i].name;
    slot[i] = static_cast<std::uint32_t>(wanted[i]);
  }
  diag.throw_if_any();
  return slot;
}

/// Positions in slot order from an explicit placement, or an empty matrix for "topology".
Eigen::Matrix3Xd placed_positions(const mapping::Mapping& m, Placement placement, std::size_t count) {
  const auto& b = m.bodies;
  const auto n = static_cast<Eigen::Index>(count);
  Eigen::Matrix3Xd x(3, n);
  switch (placement) {
    case Placement::Cube: {
      if (count != 8) {
        throw InputError(m.where("bodies.placement"),
                         "placement \"cube\" puts 8 bodies on the vertices of a cube, but the trace has " +
                             std::to_string(count) + " bodies (use \"lattice\", \"ring\", \"sphere\" or \"topology\")");
      }
      // Vertex k has coordinates from the bits of k: x = bit 0, y = bit 1, z = bit 2.
      for (Eigen::Index k = 0; k < 8; ++k) {
        x.col(k) = Eigen::Vector3d(static_cast<double>(k & 1), static_cast<double>((k >> 1) & 1),
                                   static_cast<double>((k >> 2) & 1)) * b.size;
      }
      break;
    }
    case Placement::Lattice: {
      const std::vector<int> dims(b.lattice.begin(), b.lattice.end());
      if (product(dims) != count) {
        throw InputError(m.where("bodies.lattice"), "lattice " + dims_text(dims) + " has " +
                                                        std::to_string(product(dims)) + " sites but the trace has " +
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
    case Placement::Sphere: x = sphere_positions(count, b.size); break;
    case Placement::Topology: x.resize(3, 0); break;
  }
  return x;
}

}  // namespace

Layout build_layout(const mapping::Mapping& m, std::size_t count, const trace::Timeline* timeline) {
  // Every problem at once: the topology, the placement and the order are checked independently.
  DiagnosticList diag;
  auto collect = [&](const InputError& e) {
    for (const auto& d : e.diagnostics()) diag.add(d.loc, d.message);
  };
  Layout out;
  Topology topo;
  bool topology_ok = true;
  try {
    topo = make_topology(m, count, timeline);
  } catch (const InputError& e) {
    collect(e);
    topology_ok = false;
  }
  out.topology = topo.description;
  // Placement: the one written, else the topology's embedding, else the paper's cube for 8
  // bodies, else a sphere.
  Placement placement = m.bodies.placement;
  if (!m.bodies.placement_given) {
    placement = topo.positions.cols() > 0 ? Placement::Topology : count == 8 ? Placement::Cube : Placement::Sphere;
    if (!topology_ok && placement == Placement::Cube) placement = Placement::Sphere;
  }
  Eigen::Matrix3Xd slot_positions;
  try {
    slot_positions = placed_positions(m, placement, count);
    if (placement == Placement::Topology && topology_ok) {
      if (topo.positions.cols() == 0) {
        throw InputError(m.where("bodies.placement"), std::string("placement \"topology\": topology \"") +
                                                          to_string(m.springs.topology) +
                                                          "\" has no embedding of its own; choose another placement");
      }
      slot_positions = std::move(topo.positions);
    }
  } catch (const InputError& e) {
    collect(e);
  }
  out.placement = to_string(placement);
  try {
    out.slot_of_body = body_slots(m, count, timeline);
  } catch (const InputError& e) {
    collect(e);
  }
  diag.throw_if_any();
  std::vector<std::uint32_t> body_of_slot(count);
  for (std::size_t i = 0; i < count; ++i) body_of_slot[out.slot_of_body[i]] = static_cast<std::uint32_t>(i);
  const auto n = static_cast<Eigen::Index>(count);
  out.positions.resize(3, n);
  for (Eigen::Index i = 0; i < n; ++i) out.positions.col(i) = slot_positions.col(out.slot_of_body[static_cast<std::size_t>(i)]);
  for (const auto& e : topo.edges) out.edges.push_back({body_of_slot[e[0]], body_of_slot[e[1]]});
  auto& x = out.positions;
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
  return out;
}

Eigen::Matrix3Xd initial_positions(const mapping::Mapping& m, std::size_t count) {
  return build_layout(m, count).positions;
}

std::vector<std::array<std::uint32_t, 2>> spring_edges(const mapping::Mapping& m, std::size_t count) {
  return build_layout(m, count).edges;
}

std::vector<std::array<std::uint32_t, 2>> mesh_edges(const std::array<int, 3>& dims) {
  return grid_topology({dims[0], dims[1], dims[2]}, false, 1.0).edges;
}

}  // namespace kanoko::models
