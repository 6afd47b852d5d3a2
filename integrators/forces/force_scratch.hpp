// Internal to the force evaluators: what a ForceScratch holds, and the entry point that the public
// functions and the fault-injection hook for tests share.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "integrators/forces/force_kernels.hpp"
#include "integrators/forces/repulsion.hpp"
#include "integrators/forces/forces_testing.hpp"

namespace kanoko::integrators {

/// One octree node. Children of a node are contiguous and come after it in the node array, so a
/// pass in reverse index order visits children before parents.
struct TreeNode {
  double cx = 0, cy = 0, cz = 0;  ///< centre of charge
  double charge = 0;              ///< bodies in the cell (each of charge 1)
  double bmax = 0;                ///< centre of charge to the cube's farthest corner: holds every body
  std::uint32_t begin = 0;        ///< first body, in Morton order
  std::uint32_t end = 0;          ///< one past the last body
  std::uint32_t first_child = 0;  ///< index of the first child (children are contiguous)
  std::uint8_t child_count = 0;   ///< 0 for a leaf
  std::uint8_t level = 0;         ///< 0 for the root
  double drift = 0;               ///< farthest any of its bodies moved since the tree was built
};

/// Second moments of a node about its centre of charge, Σ s sᵀ, and their trace.
struct TreeMoments {
  double xx = 0, xy = 0, xz = 0, yy = 0, yz = 0, zz = 0, trace = 0;
};

/// Cells of an interaction list, as structure of arrays (see detail::CellSources).
struct CellList {
  std::vector<double> x, y, z, m, qxx, qxy, qxz, qyy, qyz, qzz, qtr;
  /// The cells for the float kernel (offsets_from).
  std::vector<float> fx, fy, fz, fm;

  void clear();
  /// Appends a cell; `q` (second moments) only for quadrupole lists.
  void push(const TreeNode& node, const TreeMoments* q);
  [[nodiscard]] std::size_t size() const { return x.size(); }
  void reserve(std::size_t cells);
  [[nodiscard]] detail::CellSources sources() const;
  /// The monopoles as floats: centres as offsets from `origin` (subtracted in double, then
  /// rounded), charges rounded.
  [[nodiscard]] detail::FloatCells offsets_from(const std::array<double, 3>& origin);
  [[nodiscard]] std::size_t bytes() const;
};

/// Points as float offsets from an origin in two parts (detail::FloatPoints):
/// x = (float)(p − origin), lx = (float)((p − origin) − x), each difference taken in double.
struct SplitFloats {
  std::vector<float> x, y, z, lx, ly, lz;

  /// Bodies [begin, end) of the curve-ordered d.x/y/z, appended.
  void append(const std::vector<double>& px, const std::vector<double>& py, const std::vector<double>& pz,
              std::size_t begin, std::size_t end, const std::array<double, 3>& origin);
  /// Repeats the last point up to `count` points (so padding lanes behave as a real body).
  void pad_to(std::size_t count);
  void clear();
  void reserve(std::size_t count);
  [[nodiscard]] detail::FloatPoints points() const;
  [[nodiscard]] std::size_t bytes() const;
};

/// Per-thread buffers of the tree walk: the interaction list of one group and its sums.
struct WalkScratch {
  std::vector<std::uint32_t> stack;
  CellList cells;
  // Bodies of the list, as ranges [first, second) of the bodies in Morton order: leaves opened one
  // after another are mostly neighbours on the curve, so their ranges merge and the kernels read
  // the bodies in place.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges;
  std::size_t body_count = 0;  ///< bodies in `ranges`
  // The group's sums, padded to a multiple of kTargetBlock.
  std::vector<double> ax, ay, az, phi;
  // The group's bodies (padded) and the bodies of the list as float offsets from the group's
  // centre, for the float sums.
  SplitFloats targets, near;
  // The longest lists and largest group this thread has met, for WalkScratch::reserve.
  std::size_t peak_cells = 0, peak_ranges = 0, peak_bodies = 0, peak_targets = 0, peak_stack = 0;

  /// Makes room for lists of these lengths, so that later walks do not allocate.
  void reserve(std::size_t cell_count, std::size_t body_ranges, std::size_t bodies, std::size_t padded_targets,
               std::size_t stack_depth);

  [[nodiscard]] std::size_t bytes() const;
};

/// Everything a ForceScratch owns.
struct ForceScratchData {
  /// Bodies as structure of arrays, padded by detail::kTargetBlock entries so that the kernels may
  /// read a whole block past the last body. Original order for direct summation, Morton order for
  /// Barnes–Hut.
  std::vector<double> x, y, z;
  /// Per-body sums in the same order, before the factor R.
  std::vector<double> ax, ay, az, phi;
  // Barnes–Hut: Morton keys and the permutation (order[k] = original index of the k-th body
  // along the curve), with the radix sort's second buffers.
  std::vector<std::uint64_t> keys, keys_tmp;
  std::vector<std::uint32_t> order, order_tmp;
  std::vector<TreeNode> nodes;
  std::vector<TreeMoments> moments;   ///< per node, quadrupole only
  std::vector<std::uint32_t> leaves;  ///< node indices of the leaves
  std::vector<std::uint32_t> groups;  ///< node indices of the groups, in Morton order
  std::vector<WalkScratch> walk;      ///< one per thread
  std::array<double, 3> root_lo{};    ///< lower corner of the root cube
  double root_side = 0;               ///< edge of the root cube
  /// The bodies in curve order when the tree was built (for refits; not kept by barnes-hut-v1).
  std::vector<double> built_x, built_y, built_z;
  /// With a Partition: the exchange buffer (stride values per item), each part's first item, and
  /// (Barnes–Hut) the work per body of its group's walk in the last evaluation, by body index, with
  /// its curve-order copy written by the walks.
  std::vector<double> shared;
  std::vector<std::size_t> part_bounds;
  std::vector<std::size_t> part_groups;
  std::vector<double> body_cost, cost;
  /// The tree can be refitted: built for this many bodies, leaf size and group size.
  bool tree_kept = false;
  std::size_t tree_bodies = 0;
  std::uint32_t tree_leaf_size = 0, tree_group_size = 0;

  [[nodiscard]] std::size_t bytes() const;
};

/// Private access to a ForceScratch for the evaluator's own files.
struct ForceAccess {
  static ForceScratchData& data(ForceScratch& s);
  static ForceStats& stats(ForceScratch& s) { return s.stats_; }
};

namespace detail {

/// With a partition: hands every part's sums d.ax/ay/az (and d.phi with `potential`, and d.cost
/// with `cost`), stored in the items' order, to every process. `bounds` as Partition::share.
void share_sums(ForceScratchData& d, Partition& partition, const std::vector<std::size_t>& bounds, bool potential,
                bool cost);

/// The kernel table for `simd` (Best resolved) and `math`; the CPU must support it.
const KernelTable& kernels_for(Simd simd, KernelMath math);

/// Barnes–Hut: builds the tree (or refits the kept one, if params.reuse_tree and it fits) and fills
/// data.ax/ay/az (and phi if `potential`) in Morton order, with data.order mapping back to body
/// indices. `keep` keeps a built tree for later refits. params.group_size must be resolved (> 0).
/// Positions must be finite.
void barnes_hut_sums(const Eigen::Ref<const Eigen::Matrix3Xd>& positions, const RepulsionParams& params,
                     TreeFault fault, bool potential, int threads, const KernelTable& kernels, bool keep,
                     ForceScratch& scratch);

}  // namespace detail
}  // namespace kanoko::integrators
