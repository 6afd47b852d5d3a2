// The pairwise inverse-square repulsion R Σ_{j≠i} (x_i − x_j) / (|x_i − x_j|² + ε²)^{3/2}, by
// one of two evaluators chosen by name:
//
//   direct       exact all-pairs summation, O(N²): the right choice below a few thousand bodies;
//   barnes-hut   an octree rebuilt inside every evaluation, O(N log N): far-away groups of bodies
//                act through their total charge at their centre (monopole) and, optionally, their
//                second moments (quadrupole).
//
// Both are pure functions: positions and parameters in, forces added to an output, scratch buffers
// passed explicitly (REBOUND's gravity routines without the hidden state). After the first call
// with a given N the scratch holds every buffer, so later calls do not allocate.
//
// Every body carries charge 1, so a cell's "mass" is the number of bodies in it; Barnes–Hut
// applies exactly as for gravity with the sign of the force flipped.
//
// Determinism. The force on body i is a sum over sources in an order fixed by the positions alone
// (all bodies in index order for `direct`; the cells, then the bodies, of the interaction list of
// i's group for `barnes-hut`, the tree being built serially from a sort along the Morton curve).
// Threads only decide which thread computes which bodies, so the result is bit-identical for any
// thread count. The SIMD kernels (AVX-512, AVX2) and the portable fallback perform the same
// correctly rounded operations (+, −, ×, ÷, √; no fused multiply-add) in the same order per body,
// so they too give bit-identical results and the choice of instruction set does not show in a
// trajectory.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kanoko::integrators {

/// Which algorithm evaluates the repulsion.
enum class Evaluator {
  Auto,       ///< direct up to kAutoDirectMaxBodies bodies, Barnes–Hut above
  Direct,     ///< exact all-pairs summation
  BarnesHut,  ///< octree with the opening angle θ
};

/// How much of a far cell's charge distribution Barnes–Hut keeps.
enum class Multipole {
  Monopole,    ///< total charge at the centre of charge (error ∝ θ² per cell)
  Quadrupole,  ///< plus the second moments about the centre of charge (error ∝ θ³ per cell)
};

/// The instruction set of the inner kernels. All give bit-identical results (see the file comment);
/// tests and benchmarks select a narrower one to compare them.
enum class Simd {
  Best,     ///< the widest the CPU supports: AVX-512, else AVX2, else portable
  Avx512,   ///< 8 doubles per instruction (needs AVX-512F)
  Avx2,     ///< 4 doubles per instruction (needs AVX2)
  Portable, ///< plain C++
};

/// `auto` uses direct summation up to this many bodies. Measured on the reference machine
/// (bench/bench_forces.cpp): at 2 048 bodies direct summation and Barnes–Hut at θ = 0.5 cost about
/// the same, and direct summation is exact.
inline constexpr std::size_t kAutoDirectMaxBodies = 2048;

/// Parameters of one repulsion evaluation.
struct RepulsionParams {
  /// R, the strength of the repulsion (force units × length²). Each pair at distance r pushes its
  /// bodies apart with R / r² (softened as below).
  double strength = 0;
  /// ε, the softening length (scene units): the force law is R d / (|d|² + ε²)^{3/2}. ε = 0 is the
  /// paper's exact inverse-square law; ε > 0 keeps close encounters finite. Two bodies at exactly
  /// the same place with ε = 0 exert no force on each other (there is no direction to push along).
  /// Barnes–Hut applies the same softened law to its cells.
  double softening = 0;
  /// The algorithm.
  Evaluator evaluator = Evaluator::Auto;
  /// θ, the Barnes–Hut opening angle (dimensionless, ≥ 0). Let b be the distance from a cell's
  /// centre of charge to the farthest corner of its cube (so every body of the cell lies within b
  /// of the centre; b ≈ 0.87 × the cell's edge when the centre is near the middle). The cell acts
  /// as a whole on a group of bodies only when every point of the group's bounding box is farther
  /// than b / θ from the centre; otherwise it is opened. θ = 0 opens every cell, which is direct
  /// summation in tree order. Measured errors at θ = 0.5 (monopole) are in
  /// tests/integrators/test_barnes_hut.cpp.
  double theta = 0.5;
  /// Terms kept for far cells.
  Multipole multipole = Multipole::Monopole;
  /// Largest number of bodies in a leaf of the octree (a bucket). Deeper than 21 levels the
  /// Morton key runs out of bits and a leaf holds whatever is left (coincident bodies).
  std::uint32_t leaf_size = 8;
  /// Largest number of bodies in a group that shares one tree walk and one interaction list.
  /// Larger groups walk the tree less often but share longer lists; 8 and 192 were the fastest
  /// pair on the reference machine for 10⁴ to 10⁵ Plummer-sphere bodies (bench/bench_forces.cpp).
  std::uint32_t group_size = 192;
  /// Threads (OpenMP); 0 = all the cores OpenMP offers. Does not change the result.
  int threads = 0;
  /// Instruction set of the inner kernels. Does not change the result.
  Simd simd = Simd::Best;
};

/// Counts from the last evaluation, for benchmarks and run summaries.
struct ForceStats {
  Evaluator evaluator = Evaluator::Direct;  ///< the algorithm actually used (auto resolved)
  Simd simd = Simd::Portable;               ///< the kernels actually used
  int threads = 1;                          ///< threads actually used
  std::uint64_t body_body = 0;   ///< body–body interactions evaluated (including a body with itself)
  std::uint64_t body_cell = 0;   ///< body–cell interactions (Barnes–Hut far field)
  std::size_t nodes = 0;         ///< octree nodes
  std::size_t groups = 0;        ///< groups (tree walks)
  int depth = 0;                 ///< deepest octree level
  std::size_t overfull_leaves = 0;  ///< leaves at the depth limit holding more than leaf_size bodies
};

struct ForceScratchData;

/// Buffers reused from one evaluation to the next. Create one per model (or per thread of a caller
/// that evaluates several systems at once) and pass it to every call.
class ForceScratch {
 public:
  ForceScratch();
  ~ForceScratch();
  ForceScratch(ForceScratch&&) noexcept;
  ForceScratch& operator=(ForceScratch&&) noexcept;
  ForceScratch(const ForceScratch&) = delete;
  ForceScratch& operator=(const ForceScratch&) = delete;

  /// Counts from the last evaluation.
  [[nodiscard]] const ForceStats& stats() const { return stats_; }
  /// Bytes currently held by the buffers (capacity, not size).
  [[nodiscard]] std::size_t bytes() const;

 private:
  friend struct ForceAccess;
  std::unique_ptr<ForceScratchData> data_;  ///< defined in force_scratch.hpp (internal)
  ForceStats stats_;
};

/// The evaluator that `auto` (or an explicit choice) means for `bodies` bodies.
Evaluator resolve_evaluator(Evaluator requested, std::size_t bodies);

/// The kernels that Simd::Best selects on this CPU.
Simd best_simd();
/// True if this CPU can run `simd`.
bool simd_supported(Simd simd);

/// Names used in mapping files and on the command line: "auto", "direct", "barnes-hut".
const char* to_string(Evaluator e);
/// "monopole", "quadrupole".
const char* to_string(Multipole m);
/// "best", "avx512", "avx2", "portable".
const char* to_string(Simd s);
/// All evaluator names, in declaration order (for help texts and suggestions).
std::vector<std::string> evaluator_names();

/// Adds the repulsion to `force` (3×N, same order as `positions`). `params.strength` = 0 adds
/// nothing. Non-finite positions give non-finite forces (the caller reports the blow-up).
void add_repulsion(const Eigen::Ref<const Eigen::Matrix3Xd>& positions, const RepulsionParams& params,
                   ForceScratch& scratch, Eigen::Ref<Eigen::Matrix3Xd> force);

/// The potential energy of the repulsion, R Σ_{i<j} 1 / (|x_i − x_j|² + ε²)^{1/2}, with the same
/// evaluator (so Barnes–Hut gives it to the same accuracy as its forces). Sums in a fixed order.
double repulsion_potential(const Eigen::Ref<const Eigen::Matrix3Xd>& positions, const RepulsionParams& params,
                           ForceScratch& scratch);

/// The number of threads `threads` means (0 = all OpenMP offers).
int effective_threads(int threads);

}  // namespace kanoko::integrators
