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
// With RepulsionParams::reuse_tree the tree is that of the scratch's last building evaluation,
// refitted to the new positions, so the result is a function of those two sets of positions (the
// model builds at the first evaluation of each step). Threads only decide which thread computes
// which bodies, so the result is bit-identical for any thread count. The SIMD kernels (AVX-512,
// AVX2+FMA) and the portable fallback perform the same correctly rounded operations (+, −, ×, and
// fused multiply-adds, with an exact integer seed for 1/√; or √ and ÷ for the baseline's exact
// kernels) in the same order per body, so they too give bit-identical results and the choice of
// instruction set does not show in a trajectory. See docs/engine-performance.md.
#pragma once

#include <Eigen/Core>
#include <array>
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
  /// Issue 4's Barnes–Hut, kept as the benchmarks' baseline (not offered in mapping files): the tree
  /// rebuilt at every evaluation (reuse_tree ignored), 1/√ by a √ and a ÷, groups of 192 bodies,
  /// threads from 256 bodies on.
  BarnesHutV1,
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

/// Barnes–Hut's default group size (RepulsionParams::group_size = 0). Measured with the fast
/// kernels by bench/bench_forces.cpp (BarnesHutTuning, N = 100k): smaller groups do less pair work
/// but walk the tree more often and were slower (64: 1.2–1.5× the time of 192) and less accurate
/// (median error 4.2e-4 against 3.3e-4). With the far field in float (cells cost half as much),
/// 384 was as fast as 256 and more accurate. With the near bodies in float too (pairs cost about
/// half as much), larger groups cost little more and are more accurate (AMD EPYC, 2 threads):
/// at 100k 768 takes 74 ms against 72 for 384 and 1024 72–74 ms, with median error 2.24e-4
/// against 2.72e-4 and p99 1.67e-3 against 2.17e-3; at 1M 768 takes 823 ms against 826, with
/// p99 9.6e-4 against 1.42e-3.
inline constexpr std::uint32_t kGroupSize = 768;

/// Below this many bodies an evaluation runs on one thread whatever RepulsionParams::threads says:
/// the work (at most about 1 ms with either evaluator) is too small to pay for waking a second
/// thread, and on a machine whose other cores are busy the wait for them made 1k-body evaluations
/// 25–75× slower (issue 15).
inline constexpr std::size_t kParallelMinBodies = 2048;

/// Shares one evaluation among processes (the ranks of an MPI run; this library knows nothing of
/// MPI, src/sim/mpi_run.hpp implements it). Every process sorts the same bodies and builds the same
/// tree, then sums only the targets of its own part, a contiguous run of them (index order for
/// direct summation, curve order for Barnes–Hut); share() then hands every process every part's
/// sums. A body's sum takes the same operations in the same order whichever process computes it, so
/// the forces are bit-identical to one process's. Barnes–Hut balances the parts by the work each
/// body's group did in the previous evaluation (shared as well, so every process draws the same
/// bounds); direct summation by bodies.
class Partition {
 public:
  virtual ~Partition() = default;
  /// Number of parts (processes), ≥ 1.
  [[nodiscard]] virtual int parts() const = 0;
  /// This process's part, in [0, parts()).
  [[nodiscard]] virtual int part() const = 0;
  /// Called by every process at once with the same `bounds` (parts() + 1 item offsets: part p owns
  /// items [bounds[p], bounds[p + 1])) and `stride` (values per item). On entry `values` holds this
  /// part's items; on return it holds every part's. Throws (Interrupted, RunError) rather than hang
  /// when the run is stopped or a process is lost.
  virtual void share(double* values, const std::vector<std::size_t>& bounds, std::size_t stride) = 0;
};

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
  /// tests/integrators/forces/test_barnes_hut.cpp.
  double theta = 0.5;
  /// Terms kept for far cells.
  Multipole multipole = Multipole::Monopole;
  /// Largest number of bodies in a leaf of the octree (a bucket). Deeper than 21 levels the
  /// Morton key runs out of bits and a leaf holds whatever is left (coincident bodies).
  std::uint32_t leaf_size = 8;
  /// Largest number of bodies in a group that shares one tree walk and one interaction list.
  /// Larger groups walk the tree less often but share longer lists (more pair work: a group's list
  /// must hold for its whole bounding box). 0 = the evaluator's default: kGroupSize for
  /// barnes-hut, 192 for barnes-hut-v1 (bench/bench_forces.cpp measures them).
  std::uint32_t group_size = 0;
  /// Barnes–Hut: keep the octree of the last evaluation that built one in this scratch (same body
  /// count, leaf and group sizes) and refit it to the new positions — new centres of charge and
  /// moments, b_max grown by how far the cell's bodies have moved since the build, which keeps
  /// the opening criterion a bound — instead of sorting and building again. Meant for the stages
  /// of one integration step, where bodies move a tiny fraction of a cell. False = build.
  bool reuse_tree = false;
  /// Threads (OpenMP); 0 = all the cores OpenMP offers. Does not change the result.
  int threads = 0;
  /// Instruction set of the inner kernels. Does not change the result.
  Simd simd = Simd::Best;
  /// Shares the evaluation among processes (not owned); null = this process sums every body. Does
  /// not change the result.
  Partition* partition = nullptr;
};

/// Counts from the last evaluation, for benchmarks and run summaries.
struct ForceStats {
  Evaluator evaluator = Evaluator::Direct;  ///< the algorithm actually used (auto resolved)
  Simd simd = Simd::Portable;               ///< the kernels actually used
  int threads = 1;                          ///< threads actually used
  std::uint64_t body_body = 0;   ///< body–body interactions evaluated (including a body with itself)
  std::uint64_t body_cell = 0;   ///< body–cell interactions (Barnes–Hut far field)
  bool float_far_field = false;  ///< the monopole far field was summed in float (see barnes_hut.cpp)
  bool float_near_field = false;  ///< near bodies summed in float (in groups with far cells, but those below)
  std::uint64_t near_field_in_double = 0;  ///< groups whose near bodies came too close for float
  std::size_t nodes = 0;         ///< octree nodes
  std::size_t groups = 0;        ///< groups (tree walks)
  int depth = 0;                 ///< deepest octree level
  std::size_t overfull_leaves = 0;  ///< leaves at the depth limit holding more than leaf_size bodies
  bool refitted = false;         ///< Barnes–Hut reused the previous tree (RepulsionParams::reuse_tree)
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

/// The evaluators a user may choose (mapping files, `kanoko simulate --evaluator`), in declaration
/// order: all but the benchmarks' baseline barnes-hut-v1.
inline constexpr std::array<Evaluator, 3> kUserEvaluators{Evaluator::Auto, Evaluator::Direct, Evaluator::BarnesHut};
/// Every multipole choice, in declaration order.
inline constexpr std::array<Multipole, 2> kMultipoles{Multipole::Monopole, Multipole::Quadrupole};

/// Names used in mapping files and on the command line: "auto", "direct", "barnes-hut"; and
/// "barnes-hut-v1" for the benchmarks' baseline.
const char* to_string(Evaluator e);
/// "monopole", "quadrupole".
const char* to_string(Multipole m);
/// "best", "avx512", "avx2", "portable".
const char* to_string(Simd s);
/// The names of kUserEvaluators, in that order (the mapping's choices, help texts, suggestions).
std::vector<std::string> evaluator_names();
/// The names of kMultipoles, in that order.
std::vector<std::string> multipole_names();

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

/// The threads an evaluation of `bodies` bodies by `evaluator` (resolved) uses when asked for
/// `threads`: one below kParallelMinBodies (256 for barnes-hut-v1, as in issue 4), else
/// effective_threads(threads).
int evaluation_threads(int threads, Evaluator evaluator, std::size_t bodies);

}  // namespace kanoko::integrators
