#include "models/graph_layout.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <queue>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "models/topology.hpp"

namespace kanoko::models {

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();
/// Room between components placed side by side, and between them and the ring of isolated bodies.
constexpr double kGap = 1.5;

std::string number_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

/// Checks every edge and merges duplicate pairs (summing weights): a < b, sorted by (a, b).
std::vector<WeightedEdge> merged_edges(std::size_t n, std::span<const WeightedEdge> edges) {
  if (n == 0) throw std::invalid_argument("graph layout: no bodies (n = 0)");
  if (n > std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument("graph layout: " + std::to_string(n) + " bodies, more than 2^32 - 1");
  }
  std::vector<WeightedEdge> out;
  out.reserve(edges.size());
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const WeightedEdge& e = edges[i];
    const std::string where =
        "graph layout: edge " + std::to_string(i) + " (" + std::to_string(e.a) + ", " + std::to_string(e.b) + ")";
    if (e.a >= n || e.b >= n) {
      throw std::invalid_argument(where + ": body " + std::to_string(std::max(e.a, e.b)) + " does not exist (n = " +
                                  std::to_string(n) + ")");
    }
    if (e.a == e.b) throw std::invalid_argument(where + ": joins body " + std::to_string(e.a) + " to itself");
    if (!std::isfinite(e.weight) || !(e.weight > 0)) {
      throw std::invalid_argument(where + ": weight " + number_text(e.weight) + " is not a finite number > 0");
    }
    out.push_back({std::min(e.a, e.b), std::max(e.a, e.b), e.weight});
  }
  std::sort(out.begin(), out.end(),
            [](const WeightedEdge& x, const WeightedEdge& y) { return std::tie(x.a, x.b) < std::tie(y.a, y.b); });
  std::size_t kept = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (kept > 0 && out[kept - 1].a == out[i].a && out[kept - 1].b == out[i].b) {
      out[kept - 1].weight += out[i].weight;
      if (!std::isfinite(out[kept - 1].weight)) {
        throw std::invalid_argument("graph layout: the weights of pair (" + std::to_string(out[i].a) + ", " +
                                    std::to_string(out[i].b) + ") add up to more than the largest number");
      }
    } else {
      out[kept++] = out[i];
    }
  }
  out.resize(kept);
  return out;
}

double median_weight(const std::vector<WeightedEdge>& merged) {
  if (merged.empty()) return 1.0;
  std::vector<double> w(merged.size());
  for (std::size_t i = 0; i < merged.size(); ++i) w[i] = merged[i].weight;
  const auto mid = w.begin() + static_cast<std::ptrdiff_t>(w.size() / 2);
  std::nth_element(w.begin(), mid, w.end());
  return *mid;
}

/// The documented rule: heavier edges are shorter; the cube root because traffic spans decades.
double target_length(double weight, double median) { return std::clamp(std::cbrt(median / weight), 0.5, 2.0); }

RareEdgeFilter filter_merged(const std::vector<WeightedEdge>& merged, double fraction) {
  RareEdgeFilter f;
  f.threshold = fraction * median_weight(merged);
  for (const auto& e : merged) {
    if (e.weight >= f.threshold) {
      f.kept.push_back(e);
    } else {
      ++f.dropped;
    }
  }
  return f;
}

/// An undirected graph in compressed rows: the neighbours of v, sorted, are adj[start[v], start[v+1]).
struct Graph {
  std::vector<std::size_t> start{0};
  std::vector<std::uint32_t> adj;
  std::vector<double> length;  ///< target length of each adjacency entry

  [[nodiscard]] std::size_t size() const { return start.size() - 1; }
  [[nodiscard]] std::size_t degree(std::uint32_t v) const { return start[v + 1] - start[v]; }
  [[nodiscard]] std::span<const std::uint32_t> neighbours(std::uint32_t v) const {
    return {adj.data() + start[v], degree(v)};
  }
  [[nodiscard]] bool adjacent(std::uint32_t u, std::uint32_t v) const {
    const auto nb = neighbours(u);
    return std::binary_search(nb.begin(), nb.end(), v);
  }
  [[nodiscard]] std::size_t edge_count() const { return adj.size() / 2; }
};

Graph build_graph(std::size_t n, const std::vector<WeightedEdge>& merged, double median) {
  struct Half {
    std::uint32_t from, to;
    double length;
  };
  std::vector<Half> halves;
  halves.reserve(2 * merged.size());
  for (const auto& e : merged) {
    const double l = target_length(e.weight, median);
    halves.push_back({e.a, e.b, l});
    halves.push_back({e.b, e.a, l});
  }
  std::sort(halves.begin(), halves.end(),
            [](const Half& x, const Half& y) { return std::tie(x.from, x.to) < std::tie(y.from, y.to); });
  Graph g;
  g.start.assign(n + 1, 0);
  for (const auto& h : halves) ++g.start[h.from + 1];
  for (std::size_t v = 0; v < n; ++v) g.start[v + 1] += g.start[v];
  g.adj.reserve(halves.size());
  g.length.reserve(halves.size());
  for (const auto& h : halves) {
    g.adj.push_back(h.to);
    g.length.push_back(h.length);
  }
  return g;
}

/// Connected components, each a sorted list of vertices, in order of their smallest vertex.
std::vector<std::vector<std::uint32_t>> components(const Graph& g) {
  std::vector<std::vector<std::uint32_t>> out;
  std::vector<char> seen(g.size(), 0);
  std::vector<std::uint32_t> stack;
  for (std::uint32_t v = 0; v < g.size(); ++v) {
    if (seen[v] != 0) continue;
    std::vector<std::uint32_t> comp;
    seen[v] = 1;
    stack.push_back(v);
    while (!stack.empty()) {
      const std::uint32_t u = stack.back();
      stack.pop_back();
      comp.push_back(u);
      for (std::uint32_t w : g.neighbours(u)) {
        if (seen[w] == 0) {
          seen[w] = 1;
          stack.push_back(w);
        }
      }
    }
    std::sort(comp.begin(), comp.end());
    out.push_back(std::move(comp));
  }
  return out;
}

/// The subgraph on `vertices` (sorted, closed under adjacency), renumbered 0.. in their order.
Graph subgraph(const Graph& g, const std::vector<std::uint32_t>& vertices, std::vector<std::uint32_t>& local_of) {
  for (std::size_t i = 0; i < vertices.size(); ++i) local_of[vertices[i]] = static_cast<std::uint32_t>(i);
  Graph h;
  h.start.assign(vertices.size() + 1, 0);
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const std::uint32_t v = vertices[i];
    for (std::size_t k = g.start[v]; k < g.start[v + 1]; ++k) {
      h.adj.push_back(local_of[g.adj[k]]);  // monotone renumbering: stays sorted
      h.length.push_back(g.length[k]);
    }
    h.start[i + 1] = h.adj.size();
  }
  return h;
}

/// Shortest-path distances from `source` over the edge lengths (Dijkstra); dist has g.size() entries.
void shortest_paths(const Graph& g, std::uint32_t source, std::vector<double>& dist) {
  using Item = std::pair<double, std::uint32_t>;
  std::fill(dist.begin(), dist.end(), kInf);
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  dist[source] = 0;
  heap.push({0.0, source});
  while (!heap.empty()) {
    const auto [d, v] = heap.top();
    heap.pop();
    if (d > dist[v]) continue;
    for (std::size_t k = g.start[v]; k < g.start[v + 1]; ++k) {
      const double nd = d + g.length[k];
      if (nd < dist[g.adj[k]]) {
        dist[g.adj[k]] = nd;
        heap.push({nd, g.adj[k]});
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Lattices. A mesh, torus or hypercube is a Cartesian product of paths or cycles. Seeding the axis
// directions of one vertex's edges determines every other edge's direction by completing squares
// (the far corner of a square is the one common neighbour of two adjacent corners besides the
// third), so the labelling is found in O(n D³) per seed; the coordinates it yields are then checked
// exactly (a bijection onto the box, every edge a lattice edge, the right number of edges), so a
// graph is never called a lattice that is not one.

struct Lattice {
  std::vector<int> dims;             // longest first
  std::vector<std::uint32_t> slot;   // vertex → x + d0 (y + d1 z ...)
};

/// Edge directions per vertex: dir 2k is +axis k, 2k+1 is −axis k; kNone: no neighbour that way.
class DirectionLabels {
 public:
  DirectionLabels(std::size_t n, int axes)
      : dirs_(static_cast<std::size_t>(2 * axes)), nb_(n * dirs_, kNone), known_(n * dirs_, 0) {}

  [[nodiscard]] std::size_t dirs() const { return dirs_; }
  [[nodiscard]] bool known(std::uint32_t v, std::size_t d) const { return known_[v * dirs_ + d] != 0; }
  [[nodiscard]] std::uint32_t at(std::uint32_t v, std::size_t d) const { return nb_[v * dirs_ + d]; }

  /// Records that v's neighbour in direction d is w (kNone: none). False on a contradiction.
  bool set(std::uint32_t v, std::size_t d, std::uint32_t w) {
    if (!set_one(v, d, w)) return false;
    return w == kNone || set_one(w, d ^ 1U, v);
  }

 private:
  bool set_one(std::uint32_t v, std::size_t d, std::uint32_t w) {
    const std::size_t i = v * dirs_ + d;
    if (known_[i] != 0) return nb_[i] == w;
    known_[i] = 1;
    nb_[i] = w;
    return true;
  }

  std::size_t dirs_;
  std::vector<std::uint32_t> nb_;
  std::vector<char> known_;
};

/// The one common neighbour of u and w other than `except`, or kNone when there is not exactly one.
std::uint32_t square_corner(const Graph& g, std::uint32_t u, std::uint32_t w, std::uint32_t except) {
  const auto a = g.neighbours(u);
  const auto b = g.neighbours(w);
  std::uint32_t found = kNone;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      if (a[i] != except) {
        if (found != kNone) return kNone;
        found = a[i];
      }
      ++i;
      ++j;
    }
  }
  return found;
}

/// Labels the edges of `v`'s neighbour w = v + δ from v's (complete) labels. False on a contradiction.
bool label_from(const Graph& g, DirectionLabels& lab, std::uint32_t v, std::size_t delta, std::vector<char>& complete,
                std::vector<std::uint32_t>& queue) {
  const std::uint32_t w = lab.at(v, delta);
  for (std::size_t gamma = 0; gamma < lab.dirs(); ++gamma) {
    if (gamma / 2 == delta / 2) continue;
    const std::uint32_t x = lab.at(v, gamma);
    if (x == kNone) {
      if (!lab.set(w, gamma, kNone)) return false;  // same coordinate along gamma: no neighbour there either
      continue;
    }
    const std::uint32_t y = square_corner(g, w, x, v);
    if (y == kNone || !lab.set(w, gamma, y) || !lab.set(x, delta, y)) return false;
  }
  if (complete[w] != 0) return true;
  // The one neighbour of w not yet labelled (if any) continues straight on.
  std::vector<std::uint32_t> labelled;
  for (std::size_t d = 0; d < lab.dirs(); ++d) {
    if (lab.at(w, d) != kNone) labelled.push_back(lab.at(w, d));
  }
  std::uint32_t rest = kNone;
  std::size_t rest_count = 0;
  for (std::uint32_t u : g.neighbours(w)) {
    if (std::find(labelled.begin(), labelled.end(), u) == labelled.end()) {
      rest = u;
      ++rest_count;
    }
  }
  if (lab.known(w, delta) ? rest_count != 0 : (rest_count > 1 || !lab.set(w, delta, rest))) return false;
  std::size_t labels = 0;
  for (std::size_t d = 0; d < lab.dirs(); ++d) labels += lab.at(w, d) != kNone ? 1U : 0U;
  if (labels != g.degree(w)) return false;
  complete[w] = 1;
  queue.push_back(w);
  return true;
}

/// Coordinates of a product of paths (wrap = false) or cycles (wrap = true) of `axes` factors,
/// seeded by the directions of origin's neighbours; empty when the graph is no such product.
std::optional<Lattice> grid_coordinates(const Graph& g, std::uint32_t origin, const std::vector<std::size_t>& seed,
                                        int axes, bool wrap) {
  const std::size_t n = g.size();
  DirectionLabels lab(n, axes);
  const auto origin_nb = g.neighbours(origin);
  for (std::size_t i = 0; i < origin_nb.size(); ++i) {
    if (!lab.set(origin, seed[i], origin_nb[i])) return std::nullopt;
  }
  for (std::size_t d = 0; d < lab.dirs(); ++d) {
    if (!lab.known(origin, d) && !lab.set(origin, d, kNone)) return std::nullopt;
  }
  std::vector<char> complete(n, 0);
  std::vector<std::uint32_t> queue{origin};
  complete[origin] = 1;
  for (std::size_t q = 0; q < queue.size(); ++q) {
    const std::uint32_t v = queue[q];
    for (std::size_t d = 0; d < lab.dirs(); ++d) {
      if (lab.at(v, d) != kNone && !label_from(g, lab, v, d, complete, queue)) return std::nullopt;
    }
  }
  if (queue.size() != n) return std::nullopt;
  // Axis lengths: walk from the origin until the line ends (mesh) or comes back (torus).
  std::vector<int> dims(static_cast<std::size_t>(axes));
  std::size_t product = 1;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    std::uint32_t u = origin;
    std::size_t len = 1;
    for (;;) {
      u = lab.at(u, 2 * k);
      if (u == kNone || u == origin) break;
      if (++len > n) return std::nullopt;
    }
    if ((u == origin) != wrap || (wrap && len < 3) || len < 2) return std::nullopt;
    dims[k] = static_cast<int>(len);
    product *= len;
    if (product > n) return std::nullopt;
  }
  if (product != n) return std::nullopt;
  // Longest axis first (stable), coordinates by a walk over the labels.
  std::vector<std::size_t> axis_order(dims.size());
  for (std::size_t k = 0; k < axis_order.size(); ++k) axis_order[k] = k;
  std::stable_sort(axis_order.begin(), axis_order.end(), [&](std::size_t x, std::size_t y) { return dims[x] > dims[y]; });
  std::vector<std::size_t> stride(dims.size());
  std::size_t s = 1;
  for (std::size_t rank = 0; rank < axis_order.size(); ++rank) {
    stride[axis_order[rank]] = s;
    s *= static_cast<std::size_t>(dims[axis_order[rank]]);
  }
  std::vector<std::uint32_t> slot(n, kNone);
  std::vector<std::vector<int>> coord(n);
  coord[origin].assign(dims.size(), 0);
  slot[origin] = 0;
  std::vector<std::uint32_t> walk{origin};
  for (std::size_t q = 0; q < walk.size(); ++q) {
    const std::uint32_t v = walk[q];
    for (std::size_t d = 0; d < lab.dirs(); ++d) {
      const std::uint32_t w = lab.at(v, d);
      if (w == kNone || slot[w] != kNone) continue;
      std::vector<int> c = coord[v];
      const std::size_t k = d / 2;
      c[k] += (d % 2 == 0) ? 1 : -1;
      if (wrap) c[k] = (c[k] + dims[k]) % dims[k];
      if (c[k] < 0 || c[k] >= dims[k]) return std::nullopt;
      std::size_t sl = 0;
      for (std::size_t a = 0; a < dims.size(); ++a) sl += static_cast<std::size_t>(c[a]) * stride[a];
      slot[w] = static_cast<std::uint32_t>(sl);
      coord[w] = std::move(c);
      walk.push_back(w);
    }
  }
  // Exact check: a bijection onto the box whose edges are exactly the lattice's.
  std::vector<char> used(n, 0);
  for (std::uint32_t v = 0; v < n; ++v) {
    if (slot[v] == kNone || used[slot[v]] != 0) return std::nullopt;
    used[slot[v]] = 1;
  }
  std::size_t lattice_edges = 0;
  for (int d : dims) lattice_edges += wrap ? n : n / static_cast<std::size_t>(d) * static_cast<std::size_t>(d - 1);
  if (g.edge_count() != lattice_edges) return std::nullopt;
  for (std::uint32_t v = 0; v < n; ++v) {
    for (std::uint32_t w : g.neighbours(v)) {
      std::size_t differing = 0;
      for (std::size_t k = 0; k < dims.size(); ++k) {
        const int diff = std::abs(coord[v][k] - coord[w][k]);
        if (diff == 0) continue;
        ++differing;
        if (diff != 1 && !(wrap && diff == dims[k] - 1)) return std::nullopt;
      }
      if (differing != 1) return std::nullopt;
    }
  }
  Lattice out;
  for (std::size_t k : axis_order) out.dims.push_back(dims[k]);
  out.slot = std::move(slot);
  return out;
}

/// Every way of pairing 2D neighbours into D axes (first of a pair +, second −), in turn.
template <typename F>
bool for_each_pairing(std::vector<std::size_t>& seed, std::vector<char>& taken, std::size_t axis, const F& f) {
  const auto first = std::find(taken.begin(), taken.end(), 0);
  if (first == taken.end()) return f(seed);
  const auto i = static_cast<std::size_t>(first - taken.begin());
  taken[i] = 1;
  seed[i] = 2 * axis;
  for (std::size_t j = i + 1; j < taken.size(); ++j) {
    if (taken[j] != 0) continue;
    taken[j] = 1;
    seed[j] = 2 * axis + 1;
    if (for_each_pairing(seed, taken, axis + 1, f)) return true;
    taken[j] = 0;
  }
  taken[i] = 0;
  return false;
}

struct Recognised {
  std::string kind;
  Lattice lattice;
  std::string reason;
};

/// Recognises a connected graph of ≥ 2 vertices as a ring, path, mesh, torus or hypercube.
std::optional<Recognised> recognise_lattice(const Graph& g) {
  const std::size_t n = g.size();
  std::size_t min_deg = std::numeric_limits<std::size_t>::max(), max_deg = 0;
  std::uint32_t corner = 0;
  for (std::uint32_t v = 0; v < n; ++v) {
    if (g.degree(v) < min_deg) {
      min_deg = g.degree(v);
      corner = v;
    }
    max_deg = std::max(max_deg, g.degree(v));
  }
  // Torus (a ring when 1-D): every vertex has 2D neighbours; try each pairing of vertex 0's.
  if (min_deg == max_deg && min_deg % 2 == 0 && min_deg >= 2 && min_deg <= 6) {
    const int axes = static_cast<int>(min_deg / 2);
    std::vector<std::size_t> seed(min_deg);
    std::vector<char> taken(min_deg, 0);
    std::optional<Lattice> found;
    for_each_pairing(seed, taken, 0, [&](const std::vector<std::size_t>& s) {
      found = grid_coordinates(g, 0, s, axes, true);
      return found.has_value();
    });
    if (found) {
      if (axes == 1) return Recognised{"ring", *found, "every body has 2 neighbours, in one cycle: a ring of " + std::to_string(n)};
      return Recognised{"torus", *found,
                        "every body has " + std::to_string(min_deg) + " neighbours forming a " +
                            dims_text(found->dims) + " torus"};
    }
  }
  // Mesh (a path when 1-D, a hypercube when every side is 2): seeded at a corner, all axes +.
  // Sides ≥ 2: a mesh vertex has between D and 2D neighbours; beyond 3 axes only the hypercube.
  const bool cube_size = min_deg < 31 && n == std::size_t{1} << static_cast<unsigned>(min_deg);
  if (min_deg >= 1 && max_deg <= 2 * min_deg && (min_deg <= 3 || (cube_size && max_deg == min_deg))) {
    const int axes = static_cast<int>(min_deg);
    std::vector<std::size_t> seed(min_deg);
    for (std::size_t i = 0; i < seed.size(); ++i) seed[i] = 2 * i;
    auto found = grid_coordinates(g, corner, seed, axes, false);
    if (found) {
      const bool cube = std::all_of(found->dims.begin(), found->dims.end(), [](int d) { return d == 2; });
      if (axes == 1) {
        return Recognised{"path", *found, "two end bodies with 1 neighbour, the others 2, in one line: a path of " + std::to_string(n)};
      }
      if (cube && axes >= 3) {
        return Recognised{"hypercube", *found,
                          "every body has " + std::to_string(axes) + " neighbours forming a " + std::to_string(axes) +
                              "-dimensional hypercube"};
      }
      if (axes <= 3) {
        return Recognised{"mesh", *found,
                          std::to_string(std::size_t{1} << static_cast<unsigned>(axes)) + " corner bodies with " +
                              std::to_string(axes) + " neighbours forming a " + dims_text(found->dims) + " mesh"};
      }
    }
  }
  return std::nullopt;
}

/// The regular embedding of a recognised lattice (unit spacing), in slot order.
Eigen::Matrix3Xd lattice_positions(const Recognised& r) {
  const std::size_t n = r.lattice.slot.size();
  if (r.kind == "ring") return ring_topology(n, 1.0).positions;
  if (r.kind == "hypercube") return hypercube_topology(static_cast<int>(r.lattice.dims.size()), 1.0).positions;
  return grid_topology(r.lattice.dims, r.kind == "torus", 1.0).positions;
}

// ---------------------------------------------------------------------------------------------
// Embedding: pivot MDS (Brandes & Pich 2006) as the start, then sparse stress majorisation
// (Ortmann, Klimenta & Brandes 2016): each vertex keeps its edges exactly and sees the rest of the
// graph through k pivots, a pivot standing for the vertices of its region (those nearer to it
// than to any other pivot) that are no farther than half the vertex's distance to it.

/// splitmix64: well-spread bits from an index, for the fixed pseudo-random choices below.
std::uint64_t mix(std::uint64_t i) {
  std::uint64_t z = i + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31U);
}

/// A small deterministic perturbation in [-1, 1), to leave symmetric starts.
double jitter(std::uint64_t i) { return static_cast<double>(mix(i) >> 11U) * 0x1.0p-52 - 1.0; }

/// Terms of the stress model beyond edges and pivots: up to kTwoHop per vertex.
constexpr std::size_t kTwoHop = 4;

struct Term {
  std::uint32_t other = kNone;  ///< kNone: unused slot
  double length = 0;
};

/// For each vertex i, kTwoHop slots: a vertex k two edges away (i–j–k, k not i's neighbour), picked
/// by a hash of (i, slot), wanting the length of that path. Slots without one stay unused.
std::vector<Term> two_hop_terms(const Graph& h) {
  std::vector<Term> out(h.size() * kTwoHop);
  for (std::uint32_t i = 0; i < h.size(); ++i) {
    if (h.degree(i) == 0) continue;
    for (std::size_t t = 0; t < kTwoHop; ++t) {
      const std::uint64_t r = mix((kTwoHop * i + t) | (std::uint64_t{1} << 63U));
      const std::size_t e = h.start[i] + r % h.degree(i);
      const std::uint32_t j = h.adj[e];
      const std::size_t f = h.start[j] + (r >> 20U) % h.degree(j);
      const std::uint32_t other = h.adj[f];
      if (other == i || h.adjacent(i, other)) continue;
      bool repeated = false;
      for (std::size_t u = 0; u < t; ++u) repeated = repeated || out[kTwoHop * i + u].other == other;
      if (!repeated) out[kTwoHop * i + t] = {other, h.length[e] + h.length[f]};
    }
  }
  return out;
}

/// Layout of one connected component (≥ 2 vertices), centred on 0.
Eigen::Matrix3Xd embed_component(const Graph& h, const GraphLayoutOptions& options) {
  const std::size_t s = h.size();
  const auto cols = static_cast<Eigen::Index>(s);
  Eigen::Matrix3Xd x = Eigen::Matrix3Xd::Zero(3, cols);
  if (s == 2) {
    x(0, 0) = -0.5 * h.length[0];
    x(0, 1) = 0.5 * h.length[0];
    return x;
  }
  const std::size_t k = std::clamp<std::size_t>(options.pivots, 3, s);
  const auto kc = static_cast<Eigen::Index>(k);
  // Pivots by max-min distance, starting from the first vertex; dist (s × k), column per pivot.
  Eigen::MatrixXd dist(cols, kc);
  std::vector<std::uint32_t> pivot(k);
  std::vector<double> column(s), nearest(s, kInf);
  std::uint32_t next = 0;
  for (std::size_t p = 0; p < k; ++p) {
    pivot[p] = next;
    shortest_paths(h, next, column);
    for (std::size_t i = 0; i < s; ++i) {
      dist(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(p)) = column[i];
      nearest[i] = std::min(nearest[i], column[i]);
    }
    next = static_cast<std::uint32_t>(std::max_element(nearest.begin(), nearest.end()) - nearest.begin());
  }
  {
    // Pivot MDS: double-centred squared distances C (s × k); axes from the top eigenvectors of CᵀC.
    Eigen::MatrixXd c = dist.array().square().matrix();
    const Eigen::VectorXd row_mean = c.rowwise().mean();
    const Eigen::RowVectorXd col_mean = c.colwise().mean();
    const double grand = c.mean();
    c = (-0.5 * ((c.colwise() - row_mean).rowwise() - col_mean).array() - 0.5 * grand).matrix();
    const Eigen::MatrixXd ctc = c.transpose() * c;
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(ctc);
    const Eigen::MatrixXd axes = eig.eigenvectors().rightCols(3).rowwise().reverse();
    x = (c * axes).transpose();
  }
  // Best scale for the edges' lengths, then a jitter of 1 % of an edge against degenerate starts.
  double num = 0, den = 0;
  for (std::uint32_t i = 0; i < s; ++i) {
    for (std::size_t e = h.start[i]; e < h.start[i + 1]; ++e) {
      const double len = (x.col(i) - x.col(h.adj[e])).norm();
      num += h.length[e] * len;
      den += len * len;
    }
  }
  if (den > 0) x *= num / den;
  for (Eigen::Index i = 0; i < cols; ++i) {
    for (Eigen::Index a = 0; a < 3; ++a) x(a, i) += 0.01 * jitter(static_cast<std::uint64_t>(3 * i + a));
  }
  // Pivot columns per vertex (k × s), so that a sweep reads each vertex's terms contiguously.
  const Eigen::MatrixXd pivot_dist = dist.transpose();
  dist.resize(0, 0);
  // Pivot weights: |{j in region(p) : d(j, p) ≤ d(i, p) / 2}| / d(i, p)².
  std::vector<std::vector<double>> region(k);
  for (Eigen::Index i = 0; i < cols; ++i) {
    Eigen::Index best = 0;
    pivot_dist.col(i).minCoeff(&best);
    region[static_cast<std::size_t>(best)].push_back(pivot_dist(best, i));
  }
  for (auto& r : region) std::sort(r.begin(), r.end());
  Eigen::MatrixXd pivot_weight(kc, cols);
  for (Eigen::Index i = 0; i < cols; ++i) {
    for (Eigen::Index p = 0; p < kc; ++p) {
      const auto& r = region[static_cast<std::size_t>(p)];
      const double d = pivot_dist(p, i);
      const auto count = static_cast<double>(std::upper_bound(r.begin(), r.end(), 0.5 * d) - r.begin());
      pivot_weight(p, i) = d > 0 ? std::max(count, 1.0) / (d * d) : 0.0;
    }
  }
  // A few vertices two edges away per vertex, at the length of that path: bodies that see the same
  // neighbours and pivots (the leaves of a star) would otherwise settle on one spot.
  const std::vector<Term> near = two_hop_terms(h);
  // Sweeps of localised majorisation (Gauss–Seidel: each vertex moves to the weighted mean of where
  // each of its terms would put it).
  std::vector<std::uint32_t> stamp(s, kNone);
  for (int sweep = 0; sweep < options.stress_iterations; ++sweep) {
    for (std::uint32_t i = 0; i < s; ++i) {
      const Eigen::Vector3d xi = x.col(i);
      Eigen::Vector3d target = Eigen::Vector3d::Zero();
      double total = 0;
      auto pull = [&](std::uint32_t j, double want, double w) {
        const Eigen::Vector3d d = xi - x.col(j);
        const double len = d.norm();
        target += w * (len > 0 ? Eigen::Vector3d(x.col(j) + (want / len) * d) : Eigen::Vector3d(x.col(j)));
        total += w;
      };
      for (std::size_t e = h.start[i]; e < h.start[i + 1]; ++e) {
        stamp[h.adj[e]] = i;
        pull(h.adj[e], h.length[e], 1.0 / (h.length[e] * h.length[e]));
      }
      for (std::size_t t = i * kTwoHop; t < (i + 1) * kTwoHop; ++t) {
        if (near[t].other != kNone) pull(near[t].other, near[t].length, 1.0 / (near[t].length * near[t].length));
      }
      const auto pd = pivot_dist.col(i);
      const auto pw = pivot_weight.col(i);
      for (std::size_t p = 0; p < k; ++p) {
        const auto pi = static_cast<Eigen::Index>(p);
        if (pivot[p] == i || stamp[pivot[p]] == i || pw(pi) == 0) continue;
        pull(pivot[p], pd(pi), pw(pi));
      }
      if (total > 0) x.col(i) = target / total;
    }
  }
  x.colwise() -= x.rowwise().mean();
  return x;
}

/// Components side by side in the x–y plane (shelf packing, largest first), isolated vertices on a
/// ring around them; writes into `out` (3 × n). Returns a short description.
std::string place_components(const Graph& g, const GraphLayoutOptions& options, Eigen::Matrix3Xd& out) {
  const auto comps = components(g);
  std::vector<std::uint32_t> local_of(g.size(), 0);
  struct Placed {
    const std::vector<std::uint32_t>* vertices;
    Eigen::Matrix3Xd x;
    Eigen::Vector3d lo, hi;
  };
  std::vector<Placed> placed;
  std::vector<std::uint32_t> isolated;
  for (const auto& c : comps) {
    if (c.size() == 1) {
      isolated.push_back(c[0]);
      continue;
    }
    Placed p{&c, embed_component(subgraph(g, c, local_of), options), {}, {}};
    p.lo = p.x.rowwise().minCoeff();
    p.hi = p.x.rowwise().maxCoeff();
    placed.push_back(std::move(p));
  }
  std::stable_sort(placed.begin(), placed.end(),
                   [](const Placed& a, const Placed& b) { return a.vertices->size() > b.vertices->size(); });
  double area = 0, widest = 0;
  for (const auto& p : placed) {
    area += (p.hi.x() - p.lo.x() + kGap) * (p.hi.y() - p.lo.y() + kGap);
    widest = std::max(widest, p.hi.x() - p.lo.x());
  }
  const double row_width = std::max(widest, std::sqrt(area));
  double cx = 0, cy = 0, row_height = 0;
  Eigen::Vector3d lo = Eigen::Vector3d::Constant(kInf), hi = Eigen::Vector3d::Constant(-kInf);
  for (auto& p : placed) {
    const double w = p.hi.x() - p.lo.x(), h = p.hi.y() - p.lo.y();
    if (cx > 0 && cx + w > row_width) {
      cy += row_height + kGap;
      cx = 0;
      row_height = 0;
    }
    const Eigen::Vector3d shift(cx - p.lo.x(), cy - p.lo.y(), 0.0);
    for (std::size_t i = 0; i < p.vertices->size(); ++i) {
      out.col((*p.vertices)[i]) = p.x.col(static_cast<Eigen::Index>(i)) + shift;
    }
    lo = lo.cwiseMin(p.lo + shift);
    hi = hi.cwiseMax(p.hi + shift);
    cx += w + kGap;
    row_height = std::max(row_height, h);
  }
  double reach = 0;  // radius of the placed components around their box centre, in the x–y plane
  if (!placed.empty()) {
    const Eigen::Vector3d centre = 0.5 * (lo + hi);
    for (const auto& p : placed) {
      for (std::uint32_t v : *p.vertices) {
        out.col(v) -= centre;
        reach = std::max(reach, out.col(v).head<2>().norm());
      }
    }
  }
  if (!isolated.empty()) {
    Eigen::Matrix3Xd ring = ring_topology(isolated.size(), 1.0).positions;
    const double r = ring.col(0).norm();
    const double want = placed.empty() ? r : reach + kGap;
    if (r > 0) {
      ring *= std::max(1.0, want / r);
    } else {
      ring.col(0) = Eigen::Vector3d(want, 0, 0);
    }
    for (std::size_t i = 0; i < isolated.size(); ++i) out.col(isolated[i]) = ring.col(static_cast<Eigen::Index>(i));
  }
  std::string what = "3-D stress embedding of " + std::to_string(placed.size()) +
                     (placed.size() == 1 ? " component" : " components side by side");
  if (!isolated.empty()) {
    what += ", " + std::to_string(isolated.size()) + (isolated.size() == 1 ? " isolated body" : " isolated bodies") +
            " on a ring around " + (placed.empty() ? "the centre" : "them");
  }
  return what;
}

void centre(Eigen::Matrix3Xd& x) {
  if (x.cols() > 0) x.colwise() -= x.rowwise().mean();
}

GraphLayoutResult lattice_result(const Recognised& r, const std::string& note) {
  GraphLayoutResult out;
  const Eigen::Matrix3Xd slots = lattice_positions(r);
  const std::size_t n = r.lattice.slot.size();
  out.positions.resize(3, static_cast<Eigen::Index>(n));
  for (std::size_t v = 0; v < n; ++v) out.positions.col(static_cast<Eigen::Index>(v)) = slots.col(r.lattice.slot[v]);
  centre(out.positions);
  out.kind = r.kind;
  out.dims = r.lattice.dims;
  out.order = r.lattice.slot;
  out.reason = r.reason + note;
  return out;
}

/// The lattice `g` is, when it is connected over all its vertices (n ≥ 2) and one.
std::optional<Recognised> recognise_whole(const Graph& g) {
  if (g.size() < 2 || components(g).size() != 1) return std::nullopt;
  return recognise_lattice(g);
}

}  // namespace

RareEdgeFilter drop_rare_edges(std::size_t n, std::span<const WeightedEdge> edges, double fraction) {
  if (!std::isfinite(fraction) || fraction < 0) {
    throw std::invalid_argument("graph layout: rare-edge fraction " + number_text(fraction) +
                                " is not a finite number ≥ 0");
  }
  return filter_merged(merged_edges(n, edges), fraction);
}

GraphLayoutResult infer_graph_layout(std::size_t n, std::span<const WeightedEdge> edges,
                                     const GraphLayoutOptions& options) {
  const std::vector<WeightedEdge> merged = merged_edges(n, edges);
  GraphLayoutResult out;
  if (n == 1) {
    out.positions = Eigen::Matrix3Xd::Zero(3, 1);
    out.kind = "single";
    out.reason = "a single body, at the origin";
    return out;
  }
  if (merged.empty()) {
    out.positions = ring_topology(n, 1.0).positions;
    centre(out.positions);
    out.kind = "isolated";
    out.reason = "no two bodies communicate: " + std::to_string(n) + " bodies on a ring, 1 apart";
    return out;
  }
  const double median = median_weight(merged);
  const Graph g = build_graph(n, merged, median);
  if (options.recognise_lattices) {
    if (auto r = recognise_whole(g)) return lattice_result(*r, "");
    if (options.rare_fraction > 0) {
      const RareEdgeFilter f = filter_merged(merged, options.rare_fraction);
      if (f.dropped > 0) {
        if (auto r = recognise_whole(build_graph(n, f.kept, median))) {
          return lattice_result(*r, " (after dropping " + std::to_string(f.dropped) + " rare pair" +
                                        (f.dropped == 1 ? "" : "s") + " lighter than " +
                                        number_text(options.rare_fraction) + " × the median weight)");
        }
      }
    }
  }
  out.positions = Eigen::Matrix3Xd::Zero(3, static_cast<Eigen::Index>(n));
  const std::string what = place_components(g, options, out.positions);
  centre(out.positions);
  out.kind = "embedding";
  out.reason = std::string(options.recognise_lattices ? "not a ring, path, mesh, torus or hypercube"
                                                      : "lattice recognition off") +
               ": " + what;
  return out;
}

LayoutQuality layout_quality(std::size_t n, std::span<const WeightedEdge> edges, const Eigen::Matrix3Xd& positions,
                             std::size_t sources) {
  const std::vector<WeightedEdge> merged = merged_edges(n, edges);
  if (positions.cols() != static_cast<Eigen::Index>(n)) {
    throw std::invalid_argument("layout quality: " + std::to_string(positions.cols()) + " positions for " +
                                std::to_string(n) + " bodies");
  }
  const Graph g = build_graph(n, merged, median_weight(merged));
  sources = std::min(sources, n);
  std::vector<double> graph_d, layout_d, dist(n);
  for (std::size_t q = 0; q < sources; ++q) {
    const auto src = static_cast<std::uint32_t>(q * n / sources);
    shortest_paths(g, src, dist);
    for (std::uint32_t t = 0; t < n; ++t) {
      if (t == src || !std::isfinite(dist[t])) continue;
      graph_d.push_back(dist[t]);
      layout_d.push_back((positions.col(src) - positions.col(t)).norm());
    }
  }
  LayoutQuality q;
  q.pairs = graph_d.size();
  if (q.pairs < 2) return q;
  // Spearman: Pearson correlation of the ranks, ties sharing their mean rank.
  auto ranks = [](const std::vector<double>& v) {
    std::vector<std::size_t> idx(v.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
    Eigen::VectorXd r(static_cast<Eigen::Index>(v.size()));
    for (std::size_t i = 0; i < idx.size();) {
      std::size_t j = i;
      while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
      for (std::size_t t = i; t <= j; ++t) r(static_cast<Eigen::Index>(idx[t])) = 0.5 * static_cast<double>(i + j);
      i = j + 1;
    }
    return Eigen::VectorXd(r.array() - r.mean());
  };
  const Eigen::VectorXd rg = ranks(graph_d), rl = ranks(layout_d);
  const double norms = rg.norm() * rl.norm();
  q.spearman = norms > 0 ? rg.dot(rl) / norms : 0.0;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < q.pairs; ++i) {
    num += layout_d[i] / graph_d[i];
    den += layout_d[i] * layout_d[i] / (graph_d[i] * graph_d[i]);
  }
  const double scale = den > 0 ? num / den : 0.0;
  double stress = 0;
  for (std::size_t i = 0; i < q.pairs; ++i) {
    const double r = (scale * layout_d[i] - graph_d[i]) / graph_d[i];
    stress += r * r;
  }
  q.stress = stress / static_cast<double>(q.pairs);
  return q;
}

}  // namespace kanoko::models
