// Barnes–Hut: an octree rebuilt inside every evaluation.
//
//  1. The bodies' bounding cube is cut into 2²¹ cells per axis; each body gets the 63-bit Morton
//     key of its cell and the bodies are sorted by key (a stable LSD radix sort), so every octree
//     cell is a contiguous range of the sorted bodies.
//  2. The tree is built serially, top down, from the sorted keys: a node with more than leaf_size
//     bodies is split by the next three key bits. Nodes holding at most group_size bodies whose
//     parent holds more are the groups (and so is a leaf at the depth limit that holds more).
//  3. Leaves compute their centre of charge and second moments from their bodies, in parallel;
//     parents combine their children, visited in reverse node order (children always follow their
//     parent). b_max, the radius around the centre of charge that holds the whole cell, is the
//     distance to the cell cube's farthest corner.
//  4. Each group walks the tree once: a cell whose centre is farther than b_max / θ from every
//     point of the group's bounding box goes into the group's cell list; otherwise it is opened,
//     and an opened leaf puts its bodies into the body list. The kernels then sum both lists for
//     all bodies of the group, cells first, each list in walk order (the body list holds ranges of
//     the sorted bodies, read in place). Threads share out the groups. Monopole cells are summed
//     in single precision (the fast kernels, where float_sums_fit): the group's bodies and
//     the cells' centres as float offsets from the centre of the group's box, 16 lanes to a
//     512-bit vector instead of 8; chunks of the float sums go into the double sums. So are the
//     near bodies of a group that has a far field, each offset in two float parts (the rounded
//     offset and what the rounding lost), so that a difference of two close bodies keeps its
//     digits; a group in which a pair comes closer than float's range allows is summed again in
//     double (kFloatNearMaxY). A group without far cells is a direct sum and stays in double.
//
// Refit (RepulsionParams::reuse_tree, for the later stages of a step): steps 1 and 2 are skipped.
// The bodies are gathered in the kept curve order and step 3 runs on the kept tree with each
// node's drift, the farthest any of its bodies has moved since the build, added to b_max: every
// body was inside its cell's cube at the build, so it now lies within b_max + drift of the new
// centre of charge, and the opening criterion stays a bound. The groups are the kept ones; their
// bounding boxes are measured again.
//
// Nothing here depends on the thread count: the sort, the tree and the lists are functions of the
// positions (of this evaluation and, for a refit, of the build's), and threads only share out
// whole groups.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "integrators/forces/force_scratch.hpp"
#include "src/base/interrupt.hpp"

namespace kanoko::integrators::detail {
namespace {

constexpr int kMaxLevel = 21;  ///< Morton key bits per axis = deepest level
constexpr std::uint32_t kCellsPerAxis = 1U << kMaxLevel;
constexpr std::size_t kBlock = kTargetBlock;
constexpr double kFloatMinTheta = 0.05;  ///< see float_sums_fit
/// The largest 1/r (scene units) the float body kernel may meet, 2⁴⁰: y³ ≤ 2¹²⁰ and each term
/// |d| y³ ≤ y² ≤ 2⁸⁰ stay finite floats, and r² ≥ 2⁻⁸⁰ is normal, so the seed holds. A group in
/// which a pair comes closer (r < 2⁻⁴⁰ ≈ 9e-13, possible only with a softening below that) is
/// summed again with its bodies in double.
constexpr float kFloatNearMaxY = 0x1p40F;

/// Spreads the low 21 bits of v so that bit i lands on bit 3i.
std::uint64_t spread_bits(std::uint32_t v) {
  std::uint64_t x = v & 0x1fffffU;
  x = (x | (x << 32U)) & 0x001f00000000ffffULL;
  x = (x | (x << 16U)) & 0x001f0000ff0000ffULL;
  x = (x | (x << 8U)) & 0x100f00f00f00f00fULL;
  x = (x | (x << 4U)) & 0x10c30c30c30c30c3ULL;
  x = (x | (x << 2U)) & 0x1249249249249249ULL;
  return x;
}

/// The inverse of spread_bits: bits 0, 3, 6, … of v packed into the low bits.
std::uint32_t compact_bits(std::uint64_t v) {
  std::uint64_t x = v & 0x1249249249249249ULL;
  x = (x | (x >> 2U)) & 0x10c30c30c30c30c3ULL;
  x = (x | (x >> 4U)) & 0x100f00f00f00f00fULL;
  x = (x | (x >> 8U)) & 0x001f0000ff0000ffULL;
  x = (x | (x >> 16U)) & 0x001f00000000ffffULL;
  x = (x | (x >> 32U)) & 0x1fffffULL;
  return static_cast<std::uint32_t>(x);
}

/// Cell index along one axis, clamped to the grid (positions are finite here).
std::uint32_t quantize(double v, double lo, double cells_per_length) {
  const double q = (v - lo) * cells_per_length;
  if (!(q > 0.0)) return 0;
  if (q >= static_cast<double>(kCellsPerAxis - 1)) return kCellsPerAxis - 1;
  return static_cast<std::uint32_t>(q);
}

/// Stable LSD radix sort of (keys, order) by key, 8 bits per pass; passes in which every key has
/// the same digit are skipped. The result is the unique stable order, whatever the machine.
void radix_sort(ForceScratchData& d, std::size_t n) {
  constexpr unsigned kBits = 8;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  std::array<std::size_t, kBuckets> count{};
  for (unsigned shift = 0; shift < 3 * kMaxLevel; shift += kBits) {
    count.fill(0);
    for (std::size_t i = 0; i < n; ++i) ++count[(d.keys[i] >> shift) & (kBuckets - 1)];
    if (std::any_of(count.begin(), count.end(), [n](std::size_t c) { return c == n; })) continue;
    std::size_t offset = 0;
    for (auto& c : count) {
      const std::size_t k = c;
      c = offset;
      offset += k;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t slot = count[(d.keys[i] >> shift) & (kBuckets - 1)]++;
      d.keys_tmp[slot] = d.keys[i];
      d.order_tmp[slot] = d.order[i];
    }
    d.keys.swap(d.keys_tmp);
    d.order.swap(d.order_tmp);
  }
}

/// Top-down construction from the sorted keys.
struct TreeBuilder {
  ForceScratchData& d;
  std::uint32_t leaf_size;
  std::uint32_t group_size;
  ForceStats& stats;

  void build(std::uint32_t index, std::uint32_t begin, std::uint32_t end, int level, bool in_group) {
    {
      TreeNode& node = d.nodes[index];
      node.begin = begin;
      node.end = end;
      node.level = static_cast<std::uint8_t>(level);
      node.child_count = 0;
    }
    stats.depth = std::max(stats.depth, level);
    const std::uint32_t count = end - begin;
    const bool leaf = count <= leaf_size || level == kMaxLevel;
    // A leaf is always in a group, even an overfull one at the depth limit.
    if (!in_group && (count <= group_size || leaf)) {
      d.groups.push_back(index);
      in_group = true;
    }
    if (leaf) {
      if (count > leaf_size) ++stats.overfull_leaves;
      d.leaves.push_back(index);
    } else {
      split(index, begin, end, level, in_group);
    }
  }

  void split(std::uint32_t index, std::uint32_t begin, std::uint32_t end, int level, bool in_group) {
    // The keys of the range share every bit above `shift + 3`, so the next three bits (the child
    // octant) never decrease along the range: binary search finds each child's end.
    const auto shift = static_cast<unsigned>(3 * (kMaxLevel - 1 - level));
    std::array<std::uint32_t, 9> bounds{};
    bounds[0] = begin;
    for (std::uint32_t octant = 0; octant < 8; ++octant) {
      const auto first = d.keys.begin() + static_cast<std::ptrdiff_t>(bounds[octant]);
      const auto last = d.keys.begin() + static_cast<std::ptrdiff_t>(end);
      const auto split_point =
          std::partition_point(first, last, [&](std::uint64_t key) { return ((key >> shift) & 7U) <= octant; });
      bounds[octant + 1] = static_cast<std::uint32_t>(split_point - d.keys.begin());
    }
    std::uint32_t children = 0;
    for (std::uint32_t octant = 0; octant < 8; ++octant) children += bounds[octant + 1] > bounds[octant] ? 1U : 0U;
    const auto first_child = static_cast<std::uint32_t>(d.nodes.size());
    d.nodes.resize(d.nodes.size() + children);  // may move the array: no references held
    d.nodes[index].first_child = first_child;
    d.nodes[index].child_count = static_cast<std::uint8_t>(children);
    std::uint32_t child = first_child;
    for (std::uint32_t octant = 0; octant < 8; ++octant) {
      if (bounds[octant + 1] > bounds[octant]) {
        build(child++, bounds[octant], bounds[octant + 1], level + 1, in_group);
      }
    }
  }
};

/// b_max of a node: the distance from its centre of charge to the farthest corner of its cube, so
/// every body of the cell lies within it (enlarged by a hair for bodies that rounding put just
/// outside their cell). Measuring to the cube rather than to the outermost body makes the opening
/// test depend on the cell's size, as in Barnes' original criterion, while keeping it safe when the
/// centre of charge sits near a face.
double corner_bound(const ForceScratchData& d, const TreeNode& node) {
  const double side = d.root_side / static_cast<double>(std::uint64_t{1} << node.level);
  const std::uint64_t prefix = d.keys[node.begin] >> static_cast<unsigned>(3 * (kMaxLevel - node.level));
  const std::array<double, 3> c{node.cx, node.cy, node.cz};
  double r2 = 0;
  for (unsigned axis = 0; axis < 3; ++axis) {
    const double lower = d.root_lo[axis] + static_cast<double>(compact_bits(prefix >> axis)) * side;
    const double far = std::max(std::abs(c[axis] - lower), std::abs(lower + side - c[axis]));
    r2 += far * far;
  }
  return std::sqrt(r2) * (1.0 + 1e-12) + 1e-12 * d.root_side;
}

/// The fault TreeFault::CentreOfChargeInSinglePrecision: the centre stored as a float.
void round_centre_to_float(TreeNode& node) {
  node.cx = static_cast<double>(static_cast<float>(node.cx));
  node.cy = static_cast<double>(static_cast<float>(node.cy));
  node.cz = static_cast<double>(static_cast<float>(node.cz));
}

/// Centre of charge, b_max and (for quadrupoles) second moments of a leaf, from its bodies.
void leaf_moments(ForceScratchData& d, std::uint32_t index, bool quadrupole, bool refit, TreeFault fault) {
  TreeNode& node = d.nodes[index];
  const std::uint32_t b = node.begin;
  const std::uint32_t e = node.end;
  const auto count = static_cast<double>(e - b);
  {
    // Relative to the first body, so that a far translation of the system costs no precision.
    const double x0 = d.x[b], y0 = d.y[b], z0 = d.z[b];
    double sx = 0, sy = 0, sz = 0;
    for (std::uint32_t k = b; k < e; ++k) {
      sx += d.x[k] - x0;
      sy += d.y[k] - y0;
      sz += d.z[k] - z0;
    }
    node.cx = x0 + sx / count;
    node.cy = y0 + sy / count;
    node.cz = z0 + sz / count;
  }
  if (fault == TreeFault::CentreOfChargeInSinglePrecision) round_centre_to_float(node);
  node.charge = count + (fault == TreeFault::CellChargeOffByOne ? 1.0 : 0.0);
  node.drift = 0;
  if (refit) {
    double drift2 = 0;
    for (std::uint32_t k = b; k < e; ++k) {
      const double dx = d.x[k] - d.built_x[k], dy = d.y[k] - d.built_y[k], dz = d.z[k] - d.built_z[k];
      drift2 = std::max(drift2, dx * dx + dy * dy + dz * dz);
    }
    node.drift = std::sqrt(drift2);
  }
  node.bmax = corner_bound(d, node) + node.drift;
  if (quadrupole) {
    TreeMoments q;
    for (std::uint32_t k = b; k < e; ++k) {
      const double sx = d.x[k] - node.cx, sy = d.y[k] - node.cy, sz = d.z[k] - node.cz;
      q.xx += sx * sx;
      q.xy += sx * sy;
      q.xz += sx * sz;
      q.yy += sy * sy;
      q.yz += sy * sz;
      q.zz += sz * sz;
    }
    q.trace = q.xx + q.yy + q.zz;
    d.moments[index] = q;
  }
}

/// A parent's centre of charge, b_max and second moments, from its children (already done).
void parent_moments(ForceScratchData& d, std::uint32_t index, bool quadrupole, TreeFault fault) {
  const TreeNode node = d.nodes[index];
  const std::uint32_t first = node.first_child;
  const std::uint32_t last = first + node.child_count;
  const auto count = static_cast<double>(node.end - node.begin);
  const TreeNode& ref = d.nodes[first];
  double sx = 0, sy = 0, sz = 0;
  for (std::uint32_t c = first; c < last; ++c) {
    const TreeNode& child = d.nodes[c];
    const auto n = static_cast<double>(child.end - child.begin);
    sx += n * (child.cx - ref.cx);
    sy += n * (child.cy - ref.cy);
    sz += n * (child.cz - ref.cz);
  }
  TreeNode& out = d.nodes[index];
  out.cx = ref.cx + sx / count;
  out.cy = ref.cy + sy / count;
  out.cz = ref.cz + sz / count;
  if (fault == TreeFault::CentreOfChargeInSinglePrecision) round_centre_to_float(out);
  out.charge = count + (fault == TreeFault::CellChargeOffByOne ? 1.0 : 0.0);
  out.drift = 0;
  for (std::uint32_t c = first; c < last; ++c) out.drift = std::max(out.drift, d.nodes[c].drift);
  out.bmax = corner_bound(d, out) + out.drift;
  if (!quadrupole) return;
  TreeMoments q;
  for (std::uint32_t c = first; c < last; ++c) {
    const TreeNode& child = d.nodes[c];
    const double dx = child.cx - out.cx, dy = child.cy - out.cy, dz = child.cz - out.cz;
    const TreeMoments& cq = d.moments[c];
    // Parallel-axis theorem: the child's moments about the parent's centre.
    const double n =
        fault == TreeFault::QuadrupoleWithoutParallelAxis ? 0.0 : static_cast<double>(child.end - child.begin);
    q.xx += cq.xx + n * dx * dx;
    q.xy += cq.xy + n * dx * dy;
    q.xz += cq.xz + n * dx * dz;
    q.yy += cq.yy + n * dy * dy;
    q.yz += cq.yz + n * dy * dz;
    q.zz += cq.zz + n * dz * dz;
  }
  q.trace = q.xx + q.yy + q.zz;
  d.moments[index] = q;
}

/// An axis-aligned box around some bodies.
struct Box {
  double lox, loy, loz, hix, hiy, hiz;
};

/// The bounding box of the bodies [begin, end) (in Morton order).
Box bounding_box(const ForceScratchData& d, std::uint32_t begin, std::uint32_t end) {
  Box b{d.x[begin], d.y[begin], d.z[begin], d.x[begin], d.y[begin], d.z[begin]};
  for (std::uint32_t k = begin + 1; k < end; ++k) {
    b.lox = std::min(b.lox, d.x[k]);
    b.hix = std::max(b.hix, d.x[k]);
    b.loy = std::min(b.loy, d.y[k]);
    b.hiy = std::max(b.hiy, d.y[k]);
    b.loz = std::min(b.loz, d.z[k]);
    b.hiz = std::max(b.hiz, d.z[k]);
  }
  return b;
}

/// The opening criterion: the node may act as a whole on every point of the box, θ·d > b_max
/// with d the distance from the node's centre of charge to the box.
inline bool accepts(const Box& box, const TreeNode& node, double theta2) {
  const double dx = std::max(0.0, std::max(box.lox - node.cx, node.cx - box.hix));
  const double dy = std::max(0.0, std::max(box.loy - node.cy, node.cy - box.hiy));
  const double dz = std::max(0.0, std::max(box.loz - node.cz, node.cz - box.hiz));
  return theta2 * (dx * dx + dy * dy + dz * dz) > node.bmax * node.bmax;
}

/// Whether the monopole far field and the near bodies may be summed in float (KernelMath::Fast
/// tables): the rounding, a few parts in 10⁷ per term, must stay far below the monopole's own
/// error, of order θ² (hence θ ≥ kFloatMinTheta), and every float quantity must stay normal and
/// finite. An accepted cell lies within the root cube's diagonal, √3·side, and no nearer than
/// b_max / θ, b_max being at least the half-diagonal of a cell at the deepest level,
/// side·2⁻²¹·√3/2. With every such distance in [1e-9, 1e9] and ε ≤ 1e9 (ε may be 0), r² stays in
/// [1e-18, 4e18] and y³ in [1e-28, 1e27]: times a charge below 2³², still a normal float. Near
/// bodies are no farther apart than the diagonal either; how near they come is checked as they
/// are summed (kFloatNearMaxY).
bool float_sums_fit(double side, double theta, double softening) {
  const double nearest = side * std::ldexp(std::sqrt(3.0) / 2.0, -kMaxLevel) / theta;
  const double farthest = std::sqrt(3.0) * side;
  return theta >= kFloatMinTheta && nearest >= 1e-9 && farthest <= 1e9 && softening <= 1e9;
}

/// Builds the group's interaction list with one walk from the root and sums it, cells first, then
/// bodies, for the group's bodies into d.ax/ay/az/phi. Returns the body–body and body–cell
/// interaction counts, and 1 if the near field was meant for float but summed in double.
std::array<std::uint64_t, 3> walk_group(ForceScratchData& d, WalkScratch& w, std::uint32_t group, double theta2,
                                        double eps2, bool quadrupole, bool potential, bool float_far_field,
                                        bool float_near_field, TreeFault fault, const KernelTable& kernels) {
  const std::uint32_t gb = d.nodes[group].begin;
  const std::uint32_t ge = d.nodes[group].end;
  const Box box = bounding_box(d, gb, ge);
  w.cells.clear();
  w.ranges.clear();
  w.body_count = 0;
  w.stack.clear();
  // Decides one node: into the cell list, its bodies into the body list, or onto the stack to be
  // opened. Children of an opened node are decided together (they are contiguous in memory).
  auto decide = [&](std::uint32_t index) {
    const TreeNode& node = d.nodes[index];
    const bool holds_group_body = node.begin < ge && gb < node.end;
    if (!holds_group_body && accepts(box, node, theta2)) {
      w.cells.push(node, quadrupole ? &d.moments[index] : nullptr);
    } else if (node.child_count == 0) {
      const std::uint32_t end =
          fault == TreeFault::LeafDropsLastBody && node.end - node.begin > 1 ? node.end - 1 : node.end;
      if (!w.ranges.empty() && w.ranges.back().second == node.begin) {
        w.ranges.back().second = end;
      } else {
        w.ranges.emplace_back(node.begin, end);
      }
      w.body_count += end - node.begin;
    } else {
      w.stack.push_back(index);
    }
  };
  decide(0);
  while (!w.stack.empty()) {
    const std::uint32_t index = w.stack.back();
    w.stack.pop_back();
    const std::uint32_t first = d.nodes[index].first_child;
    const std::uint32_t last = first + d.nodes[index].child_count;
    for (std::uint32_t c = first; c < last; ++c) decide(c);
    w.peak_stack = std::max(w.peak_stack, w.stack.size());
  }
  w.peak_cells = std::max(w.peak_cells, w.cells.size());
  w.peak_ranges = std::max(w.peak_ranges, w.ranges.size());

  const std::size_t n = ge - gb;
  const std::size_t padded = (n + kBlock - 1) / kBlock * kBlock;
  w.peak_targets = std::max(w.peak_targets, padded);
  w.peak_bodies = std::max(w.peak_bodies, w.body_count);
  auto zero_sums = [&] {
    for (auto* v : {&w.ax, &w.ay, &w.az}) v->assign(padded, 0.0);
    if (potential) w.phi.assign(padded, 0.0);
  };
  zero_sums();
  const TargetBlock targets{d.x.data() + gb, d.y.data() + gb, d.z.data() + gb, padded};
  const Accumulators acc{w.ax.data(), w.ay.data(), w.az.data(), potential ? w.phi.data() : nullptr};
  // Offsets from the box's centre: the group's bodies are near it, so a difference body − cell
  // centre keeps float's relative precision wherever the group sits.
  const std::array<double, 3> origin{0.5 * (box.lox + box.hix), 0.5 * (box.loy + box.hiy),
                                     0.5 * (box.loz + box.hiz)};
  // A group whose list has no far cell is a direct sum: it stays in double (only the multipole
  // error, orders of magnitude larger, lets float's rounding go unnoticed).
  const bool near_in_float = float_near_field && w.body_count > 0 && w.cells.size() > 0;
  if ((float_far_field && w.cells.size() > 0) || near_in_float) {
    w.targets.clear();
    w.targets.append(d.x, d.y, d.z, gb, ge, origin);
    w.targets.pad_to(padded);
  }
  auto sum_cells = [&] {
    if (w.cells.size() == 0) return;
    if (float_far_field) {
      kernels.float_monopoles(w.targets.points(), w.cells.offsets_from(origin), static_cast<float>(eps2), acc);
    } else {
      (quadrupole ? kernels.quadrupoles : kernels.monopoles)(targets, w.cells.sources(), eps2, acc);
    }
  };
  auto sum_bodies_in_double = [&] {
    for (const auto& [first, last] : w.ranges) {
      kernels.bodies(targets, BodySources{d.x.data() + first, d.y.data() + first, d.z.data() + first, last - first},
                     eps2, acc);
    }
  };
  sum_cells();
  bool near_in_double = false;
  if (near_in_float) {
    w.near.clear();
    for (const auto& [first, last] : w.ranges) w.near.append(d.x, d.y, d.z, first, last, origin);
    const float y_max = kernels.float_bodies(w.targets.points(), w.near.points(), static_cast<float>(eps2), acc);
    if (!(y_max <= kFloatNearMaxY)) {
      // A pair closer than float's range allows: the group's sums again, the bodies in double.
      near_in_double = true;
      zero_sums();
      sum_cells();
      sum_bodies_in_double();
    }
  } else {
    sum_bodies_in_double();
  }
  std::copy_n(w.ax.begin(), n, d.ax.begin() + gb);
  std::copy_n(w.ay.begin(), n, d.ay.begin() + gb);
  std::copy_n(w.az.begin(), n, d.az.begin() + gb);
  if (potential) std::copy_n(w.phi.begin(), n, d.phi.begin() + gb);
  return {static_cast<std::uint64_t>(n) * w.body_count, static_cast<std::uint64_t>(n) * w.cells.size(),
          near_in_double ? 1U : 0U};
}

/// Splits the groups (in curve order) into `parts` runs of about equal work, the work of a body
/// being its group's list length in the last evaluation (1 for all at the first): d.part_groups
/// gets each part's first group, d.part_bounds its first body. Every process computes the same
/// split, since the costs are shared with the sums.
void split_groups(ForceScratchData& d, std::size_t n, int parts) {
  const auto p_count = static_cast<std::size_t>(parts);
  if (d.body_cost.size() != n) d.body_cost.assign(n, 1.0);
  const std::size_t groups = d.groups.size();
  double total = 0;
  for (std::size_t k = 0; k < n; ++k) total += d.body_cost[d.order[k]];
  d.part_groups.assign(p_count + 1, groups);
  d.part_groups[0] = 0;
  double done = 0;
  std::size_t p = 1;
  for (std::size_t g = 0; g < groups && p < p_count; ++g) {
    while (p < p_count && done >= total * static_cast<double>(p) / static_cast<double>(p_count)) d.part_groups[p++] = g;
    const TreeNode& node = d.nodes[d.groups[g]];
    for (std::uint32_t k = node.begin; k < node.end; ++k) done += d.body_cost[d.order[k]];
  }
  d.part_bounds.resize(p_count + 1);
  for (std::size_t q = 0; q <= p_count; ++q) {
    d.part_bounds[q] = d.part_groups[q] < groups ? d.nodes[d.groups[d.part_groups[q]]].begin : n;
  }
}

}  // namespace

void barnes_hut_sums(const Eigen::Ref<const Eigen::Matrix3Xd>& positions, const RepulsionParams& params,
                     TreeFault fault, bool potential, int threads, const KernelTable& kernels, bool keep,
                     ForceScratch& scratch) {
  ForceScratchData& d = ForceAccess::data(scratch);
  ForceStats& stats = ForceAccess::stats(scratch);
  const auto n = static_cast<std::size_t>(positions.cols());
  const auto count = static_cast<std::int64_t>(n);
  const bool quadrupole = params.multipole == Multipole::Quadrupole;
  const bool parallel = threads > 1 && n >= 2 * params.group_size;
  const bool refit = params.reuse_tree && d.tree_kept && d.tree_bodies == n && d.tree_leaf_size == params.leaf_size &&
                     d.tree_group_size == params.group_size;
  stats.refitted = refit;
  d.tree_kept = false;  // until this evaluation has finished with a tree that may be kept

  if (!refit) {
    // 1. Bounding cube and Morton keys.
    double lo[3], hi[3];
    for (Eigen::Index a = 0; a < 3; ++a) {
      lo[a] = positions.row(a).minCoeff();
      hi[a] = positions.row(a).maxCoeff();
    }
    double side = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
    if (!(side > 0.0)) side = 1.0;  // one body, or all at one point
    d.root_lo = {lo[0], lo[1], lo[2]};
    d.root_side = side;
    const double cells_per_length = static_cast<double>(kCellsPerAxis) / side;
    d.keys.resize(n);
    d.keys_tmp.resize(n);
    d.order.resize(n);
    d.order_tmp.resize(n);
#pragma omp parallel for schedule(static) num_threads(threads) if (parallel)
    for (std::int64_t i = 0; i < count; ++i) {
      const auto s = static_cast<std::size_t>(i);
      const std::uint32_t qx = quantize(positions(0, i), lo[0], cells_per_length);
      const std::uint32_t qy = quantize(positions(1, i), lo[1], cells_per_length);
      const std::uint32_t qz = quantize(positions(2, i), lo[2], cells_per_length);
      d.keys[s] = spread_bits(qx) | (spread_bits(qy) << 1U) | (spread_bits(qz) << 2U);
      d.order[s] = static_cast<std::uint32_t>(s);
    }
    radix_sort(d, n);
    check_interrupt();
  }

  // Bodies in curve order.
  const std::size_t padded = n + kBlock;
  for (auto* v : {&d.x, &d.y, &d.z, &d.ax, &d.ay, &d.az}) v->resize(padded);
  if (potential) d.phi.resize(padded);
#pragma omp parallel for schedule(static) num_threads(threads) if (parallel)
  for (std::int64_t k = 0; k < count; ++k) {
    const auto s = static_cast<std::size_t>(k);
    const auto i = static_cast<Eigen::Index>(d.order[s]);
    d.x[s] = positions(0, i);
    d.y[s] = positions(1, i);
    d.z[s] = positions(2, i);
  }
  for (auto* v : {&d.x, &d.y, &d.z}) std::fill(v->begin() + count, v->end(), 0.0);

  if (!refit) {
    // 2. Tree and groups.
    d.nodes.clear();
    d.nodes.resize(1);
    d.leaves.clear();
    d.groups.clear();
    TreeBuilder builder{d, params.leaf_size, params.group_size, stats};
    builder.build(0, 0, static_cast<std::uint32_t>(n), 0, false);
    if (keep) {
      d.built_x.assign(d.x.begin(), d.x.begin() + count);
      d.built_y.assign(d.y.begin(), d.y.begin() + count);
      d.built_z.assign(d.z.begin(), d.z.begin() + count);
    }
  } else {
    for (const TreeNode& node : d.nodes) stats.depth = std::max(stats.depth, static_cast<int>(node.level));
    for (const std::uint32_t leaf : d.leaves) {
      if (d.nodes[leaf].end - d.nodes[leaf].begin > params.leaf_size) ++stats.overfull_leaves;
    }
  }
  stats.nodes = d.nodes.size();
  stats.groups = d.groups.size();
  check_interrupt();

  // 3. Moments: leaves in parallel, then parents bottom-up.
  if (quadrupole) d.moments.resize(d.nodes.size());
  const auto leaves = static_cast<std::int64_t>(d.leaves.size());
#pragma omp parallel for schedule(static) num_threads(threads) if (parallel)
  for (std::int64_t l = 0; l < leaves; ++l) {
    leaf_moments(d, d.leaves[static_cast<std::size_t>(l)], quadrupole, refit, fault);
  }
  for (std::size_t index = d.nodes.size(); index-- > 0;) {
    if (d.nodes[index].child_count > 0) parent_moments(d, static_cast<std::uint32_t>(index), quadrupole, fault);
  }
  check_interrupt();

  // 4. One walk per group, the groups shared out among threads (and, with a partition, among
  // processes first: this one walks groups [first_group, last_group)).
  if (d.walk.size() < static_cast<std::size_t>(threads)) d.walk.resize(static_cast<std::size_t>(threads));
  const double theta2 = params.theta * params.theta;
  const double eps2 = params.softening * params.softening;
  const bool float_fits = float_sums_fit(d.root_side, params.theta, params.softening);
  const bool float_far_field = float_fits && kernels.float_monopoles != nullptr && !quadrupole;
  const bool float_near_field = float_fits && kernels.float_bodies != nullptr;
  stats.float_far_field = float_far_field;
  stats.float_near_field = float_near_field;
  Partition* partition = params.partition;
  std::int64_t first_group = 0, last_group = static_cast<std::int64_t>(d.groups.size());
  if (partition != nullptr) {
    split_groups(d, n, partition->parts());
    const auto part = static_cast<std::size_t>(partition->part());
    first_group = static_cast<std::int64_t>(d.part_groups[part]);
    last_group = static_cast<std::int64_t>(d.part_groups[part + 1]);
    d.cost.resize(n);
  }
  std::uint64_t body_body = 0, body_cell = 0, near_in_double = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (last_group - first_group > 1) \
    reduction(+ : body_body, body_cell, near_in_double)
  for (std::int64_t g = first_group; g < last_group; ++g) {
    // A signal abandons the remaining groups (an exception must not leave the parallel region);
    // the calling thread throws below.
    if (interrupt_requested()) continue;
    WalkScratch& w = d.walk[static_cast<std::size_t>(omp_get_thread_num())];
    const std::uint32_t group = d.groups[static_cast<std::size_t>(g)];
    const auto counts = walk_group(d, w, group, theta2, eps2, quadrupole, potential, float_far_field,
                                   float_near_field, fault, kernels);
    body_body += counts[0];
    body_cell += counts[1];
    near_in_double += counts[2];
    if (partition != nullptr) {
      // The group's work per body (list length), for the next evaluation's split.
      const auto work = static_cast<double>(w.body_count + w.cells.size());
      std::fill(d.cost.begin() + d.nodes[group].begin, d.cost.begin() + d.nodes[group].end, work);
    }
  }
  check_interrupt();
  stats.body_body = body_body;
  stats.body_cell = body_cell;
  stats.near_field_in_double = near_in_double;
  if (partition != nullptr) {
    share_sums(d, *partition, d.part_bounds, potential, true);
    for (std::size_t k = 0; k < n; ++k) d.body_cost[d.order[k]] = d.cost[k];
  }

  // Which thread walks which group changes from call to call: give every thread room for the
  // longest lists any thread needed, plus a quarter for bodies that move, so that later calls do
  // not allocate.
  std::size_t cells = 0, ranges = 0, bodies = 0, targets = 0, stack = 0;
  for (const WalkScratch& w : d.walk) {
    cells = std::max(cells, w.peak_cells);
    ranges = std::max(ranges, w.peak_ranges);
    bodies = std::max(bodies, w.peak_bodies);
    targets = std::max(targets, w.peak_targets);
    stack = std::max(stack, w.peak_stack);
  }
  for (WalkScratch& w : d.walk) w.reserve(cells * 5 / 4, ranges * 5 / 4 + 16, bodies * 5 / 4, targets, stack * 5 / 4 + 64);
  if (keep && fault == TreeFault::None) {
    d.tree_kept = true;
    d.tree_bodies = n;
    d.tree_leaf_size = params.leaf_size;
    d.tree_group_size = params.group_size;
  }
}

}  // namespace kanoko::integrators::detail
