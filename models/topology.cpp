#include "models/topology.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <set>
#include <vector>

#include "src/base/flat_index.hpp"

namespace kanoko::models {

namespace {

constexpr double kPi = std::numbers::pi;

/// Adds {a, b} once (as min, max), skipping loops.
class EdgeSet {
 public:
  void add(std::size_t a, std::size_t b) {
    if (a == b) return;
    const Edge e{static_cast<std::uint32_t>(std::min(a, b)), static_cast<std::uint32_t>(std::max(a, b))};
    if (seen_.insert({e[0], e[1]}).second) edges_.push_back(e);
  }
  std::vector<Edge> take() { return std::move(edges_); }

 private:
  std::set<std::pair<std::uint32_t, std::uint32_t>> seen_;
  std::vector<Edge> edges_;
};

/// Radius of a circle on which n points are `spacing` apart (n = 1: 0; n = 2: spacing / 2).
double circle_radius(std::size_t n, double spacing) {
  if (n <= 1) return 0;
  return spacing / (2 * std::sin(kPi / static_cast<double>(n)));
}

Eigen::Vector3d on_circle(std::size_t k, std::size_t n, double radius) {
  const double a = 2 * kPi * static_cast<double>(k) / static_cast<double>(std::max<std::size_t>(n, 1));
  return {radius * std::cos(a), radius * std::sin(a), 0.0};
}

}  // namespace

std::string dims_text(const std::vector<int>& dims) {
  std::string s;
  for (int d : dims) s += (s.empty() ? "" : "×") + std::to_string(d);
  return s;
}

Topology ring_topology(std::size_t n, double spacing) {
  Topology t;
  EdgeSet edges;
  t.positions.resize(3, static_cast<Eigen::Index>(n));
  const double r = circle_radius(n, spacing);
  for (std::size_t i = 0; i < n; ++i) {
    edges.add(i, (i + 1) % n);
    t.positions.col(static_cast<Eigen::Index>(i)) = on_circle(i, n, r);
  }
  t.edges = edges.take();
  t.description = "ring of " + std::to_string(n);
  return t;
}

Topology grid_topology(const std::vector<int>& dims_in, bool wrap, double spacing) {
  std::array<std::size_t, 3> d{1, 1, 1};
  for (std::size_t k = 0; k < dims_in.size() && k < 3; ++k) d[k] = static_cast<std::size_t>(dims_in[k]);
  const std::size_t n = d[0] * d[1] * d[2];
  Topology t;
  t.positions.resize(3, static_cast<Eigen::Index>(n));
  EdgeSet edges;
  auto slot = [&](std::size_t x, std::size_t y, std::size_t z) { return x + d[0] * (y + d[1] * z); };
  const std::size_t dimensionality = dims_in.size();
  const double big_r = circle_radius(d[0], spacing);
  const double small_r = circle_radius(d[1], spacing);
  for (std::size_t z = 0; z < d[2]; ++z) {
    for (std::size_t y = 0; y < d[1]; ++y) {
      for (std::size_t x = 0; x < d[0]; ++x) {
        const std::size_t i = slot(x, y, z);
        const std::array<std::size_t, 3> c{x, y, z};
        for (std::size_t k = 0; k < 3; ++k) {
          auto next = c;
          if (c[k] + 1 < d[k]) {
            next[k] = c[k] + 1;
          } else if (wrap && d[k] > 2) {
            next[k] = 0;
          } else {
            continue;
          }
          edges.add(i, slot(next[0], next[1], next[2]));
        }
        Eigen::Vector3d p(static_cast<double>(x), static_cast<double>(y), static_cast<double>(z));
        p *= spacing;
        if (wrap && dimensionality == 2 && d[0] > 2 && d[1] > 2) {
          // Ring torus: x runs around the z axis, y around the tube.
          const double major = std::max(big_r, small_r + spacing);
          const double u = 2 * kPi * static_cast<double>(x) / static_cast<double>(d[0]);
          const double v = 2 * kPi * static_cast<double>(y) / static_cast<double>(d[1]);
          p = Eigen::Vector3d((major + small_r * std::cos(v)) * std::cos(u), (major + small_r * std::cos(v)) * std::sin(u),
                              small_r * std::sin(v));
        } else if (wrap && dimensionality == 3 && d[0] > 2) {
          // x wrapped into a ring around z; (y, z) a lattice cross-section outside the ring.
          const double major = std::max(big_r, static_cast<double>(d[1]) * spacing);
          const double u = 2 * kPi * static_cast<double>(x) / static_cast<double>(d[0]);
          const double radial = major + (static_cast<double>(y) - 0.5 * static_cast<double>(d[1] - 1)) * spacing;
          p = Eigen::Vector3d(radial * std::cos(u), radial * std::sin(u), static_cast<double>(z) * spacing);
        }
        t.positions.col(static_cast<Eigen::Index>(i)) = p;
      }
    }
  }
  t.edges = edges.take();
  t.description = std::to_string(dimensionality) + "-D " + (wrap ? "torus " : "mesh ") + dims_text(dims_in);
  return t;
}

Topology hypercube_topology(int dimension, double spacing) {
  const std::size_t n = std::size_t{1} << static_cast<unsigned>(dimension);
  Topology t;
  t.positions = Eigen::Matrix3Xd::Zero(3, static_cast<Eigen::Index>(n));
  EdgeSet edges;
  for (std::size_t i = 0; i < n; ++i) {
    for (int b = 0; b < dimension; ++b) {
      const std::size_t bit = std::size_t{1} << static_cast<unsigned>(b);
      if ((i & bit) != 0) {
        t.positions(b % 3, static_cast<Eigen::Index>(i)) += spacing * std::pow(2.5, b / 3);
      } else {
        edges.add(i, i | bit);
      }
    }
  }
  t.edges = edges.take();
  t.description = std::to_string(dimension) + "-dimensional hypercube (" + std::to_string(n) + " nodes)";
  return t;
}

Topology fat_tree_topology(const std::vector<int>& levels, double spacing) {
  std::size_t n = 1;
  for (int a : levels) n *= static_cast<std::size_t>(a);
  Topology t;
  t.positions = Eigen::Matrix3Xd::Zero(3, static_cast<Eigen::Index>(n));
  EdgeSet edges;
  // stride[l]: slots per subtree of level l (leaves of one switch at level l+1 ...).
  std::vector<std::size_t> stride(levels.size() + 1, 1);
  for (std::size_t l = 0; l < levels.size(); ++l) stride[l + 1] = stride[l] * static_cast<std::size_t>(levels[l]);
  double extent = 0;  // radius of a subtree of the current level
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const auto a = static_cast<std::size_t>(levels[l]);
    const bool stack = l >= 2 && l % 2 == 0;
    const double r = stack ? 0.0 : circle_radius(a, l == 0 ? spacing : 2 * extent + 2 * spacing);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t digit = (i / stride[l]) % a;
      Eigen::Vector3d offset = on_circle(digit, a, r);
      if (stack) offset = Eigen::Vector3d(0, 0, static_cast<double>(digit) * (2 * extent + 2 * spacing));
      t.positions.col(static_cast<Eigen::Index>(i)) += offset;
      if (l == 0) {
        for (std::size_t other = digit + 1; other < a; ++other) edges.add(i, i + (other - digit) * stride[l]);
      } else if (a > 1) {
        const std::size_t next = (digit + 1) % a;
        if (a > 2 || digit == 0) edges.add(i, i - digit * stride[l] + next * stride[l]);
      }
    }
    extent = stack ? std::max(extent, static_cast<double>(a) * (extent + spacing)) : r + extent;
  }
  t.edges = edges.take();
  t.description = "fat tree " + dims_text(levels) + " (" + std::to_string(n) + " leaves)";
  return t;
}

Topology dragonfly_topology(int groups, int routers, int per_router, double spacing) {
  const auto g_n = static_cast<std::size_t>(groups);
  const auto a_n = static_cast<std::size_t>(routers);
  const auto p_n = static_cast<std::size_t>(per_router);
  const std::size_t n = g_n * a_n * p_n;
  auto slot = [&](std::size_t g, std::size_t a, std::size_t p) { return p + p_n * (a + a_n * g); };
  Topology t;
  t.positions.resize(3, static_cast<Eigen::Index>(n));
  EdgeSet edges;
  const double router_r = circle_radius(a_n, spacing);
  const double group_r = circle_radius(g_n, 2 * router_r + 2 * spacing);
  for (std::size_t g = 0; g < g_n; ++g) {
    const Eigen::Vector3d centre = on_circle(g, g_n, group_r);
    for (std::size_t a = 0; a < a_n; ++a) {
      for (std::size_t p = 0; p < p_n; ++p) {
        const std::size_t i = slot(g, a, p);
        t.positions.col(static_cast<Eigen::Index>(i)) =
            centre + on_circle(a, a_n, router_r) +
            Eigen::Vector3d(0, 0, (static_cast<double>(p) - 0.5 * static_cast<double>(p_n - 1)) * spacing);
        for (std::size_t q = p + 1; q < p_n; ++q) edges.add(i, slot(g, a, q));
        for (std::size_t b = a + 1; b < a_n; ++b) edges.add(i, slot(g, b, p));
      }
    }
    for (std::size_t h = g + 1; h < g_n; ++h) edges.add(slot(g, h % a_n, 0), slot(h, g % a_n, 0));
  }
  t.edges = edges.take();
  t.description = "dragonfly of " + std::to_string(groups) + " groups × " + std::to_string(routers) + " routers × " +
                  std::to_string(per_router) + " bodies";
  return t;
}

Eigen::Matrix3Xd sphere_positions(std::size_t n, double spacing) {
  Eigen::Matrix3Xd x(3, static_cast<Eigen::Index>(n));
  if (n == 1) {
    x.setZero();
    return x;
  }
  // Area per point ≈ that of a hexagon of side `spacing`.
  const double radius = spacing * std::sqrt(static_cast<double>(n) * std::sqrt(3.0) / (8 * kPi)) + 0.5 * spacing;
  const double golden = kPi * (3 - std::sqrt(5.0));
  for (std::size_t i = 0; i < n; ++i) {
    const double z = 1 - 2 * (static_cast<double>(i) + 0.5) / static_cast<double>(n);
    const double r = std::sqrt(std::max(0.0, 1 - z * z));
    const double a = golden * static_cast<double>(i);
    x.col(static_cast<Eigen::Index>(i)) = radius * Eigen::Vector3d(r * std::cos(a), r * std::sin(a), z);
  }
  return x;
}

Eigen::Matrix3Xd graph_layout(std::size_t n, const std::vector<Edge>& edges, double spacing) {
  Eigen::Matrix3Xd x = sphere_positions(n, spacing);
  if (n < 3 || n > 2000 || edges.empty()) return x;
  const auto cols = static_cast<Eigen::Index>(n);
  Eigen::Matrix3Xd f(3, cols);
  double step = spacing;
  for (int iteration = 0; iteration < 300; ++iteration) {
    f.setZero();
    for (Eigen::Index i = 0; i < cols; ++i) {
      for (Eigen::Index j = i + 1; j < cols; ++j) {
        const Eigen::Vector3d d = x.col(i) - x.col(j);
        const double r2 = std::max(d.squaredNorm(), 1e-6 * spacing * spacing);
        const Eigen::Vector3d push = (spacing * spacing / r2) * d;
        f.col(i) += push;
        f.col(j) -= push;
      }
    }
    for (const auto& e : edges) {
      const Eigen::Vector3d d = x.col(e[1]) - x.col(e[0]);
      const Eigen::Vector3d pull = (d.norm() / spacing) * d;
      f.col(e[0]) += pull;
      f.col(e[1]) -= pull;
    }
    for (Eigen::Index i = 0; i < cols; ++i) {
      const double norm = f.col(i).norm();
      if (norm > 0) x.col(i) += (std::min(norm, step) / norm) * f.col(i);
    }
    step *= 0.985;
  }
  double mean = 0;
  for (const auto& e : edges) mean += (x.col(e[0]) - x.col(e[1])).norm();
  mean /= static_cast<double>(edges.size());
  if (mean > 0) x *= spacing / mean;
  return x;
}

// The pairs of every interval (millions in a big run, a few thousand distinct) are summed in the
// timeline's order, each distinct pair once in `sums`, found by a PairIndex (a source's first
// partners beside it; an interval's pairs come in source order): a std::map lookup per entry took
// half a second at 10,000 ranks, a hash index 0.45 s of 14 million entries.
PairSums pair_sums(const trace::Timeline& tl) {
  PairIndex slot_of;    // (src, dst) → slot
  FlatIndex pair_slot;  // (min << 32 | max) → slot: both directions of a pair share one
  std::vector<std::pair<std::uint64_t, std::pair<double, double>>> sums;
  for (const auto& p : tl.pairs) {
    if (p.src == p.dst) continue;
    const std::uint32_t* slot = slot_of.find(p.src, p.dst);
    if (slot == nullptr) {
      const std::uint64_t key = std::uint64_t{std::min(p.src, p.dst)} << 32U | std::max(p.src, p.dst);
      const auto [found, added] = pair_slot.try_emplace(key, static_cast<std::uint32_t>(sums.size()));
      if (added) sums.push_back({key, {0.0, 0.0}});
      slot = slot_of.try_emplace(p.src, p.dst, *found).first;
    }
    auto& t = sums[*slot].second;
    t.first += p.bytes;
    t.second += static_cast<double>(p.messages);
  }
  std::sort(sums.begin(), sums.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  PairSums total;
  for (const auto& [key, t] : sums) {
    total.emplace_hint(total.end(), std::pair{static_cast<std::uint32_t>(key >> 32U), static_cast<std::uint32_t>(key)}, t);
  }
  return total;
}

std::vector<Edge> traffic_edges(const trace::Timeline& tl, double min_bytes, double min_messages) {
  return traffic_edges(pair_sums(tl), min_bytes, min_messages);
}

std::vector<Edge> traffic_edges(const PairSums& all, double min_bytes, double min_messages) {
  std::vector<Edge> edges;
  for (const auto& [pair, sums] : all) {
    const bool bytes_ok = sums.first > min_bytes || (min_bytes == 0 && sums.first >= 0);
    if (bytes_ok && sums.second >= min_messages) edges.push_back({pair.first, pair.second});
  }
  return edges;
}

std::map<std::pair<std::uint32_t, std::uint32_t>, double> pair_totals(const trace::Timeline& tl) {
  return pair_totals(pair_sums(tl));
}

std::map<std::pair<std::uint32_t, std::uint32_t>, double> pair_totals(const PairSums& sums) {
  const bool any_bytes = std::any_of(sums.begin(), sums.end(), [](const auto& kv) { return kv.second.first > 0; });
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> out;
  for (const auto& [pair, s] : sums) out[pair] = any_bytes ? s.first : s.second;
  return out;
}

std::vector<Edge> link_edges(const trace::Timeline& tl) {
  EdgeSet edges;
  for (const auto& l : tl.links) edges.add(l.a, l.b);
  return edges.take();
}

}  // namespace kanoko::models
