// Internal to the force evaluators: the inner loops ("kernels") that sum the interactions of a block
// of target bodies with a list of sources. One table per instruction set; each is compiled in its
// own file with its own target flags and selected at run time, so the binary still runs on CPUs
// without AVX2.
//
// Every kernel computes, for each target t and each source s in list order,
//   d = t − s;  r² = |d|² + ε²;  y = r² ≠ 0 ? 1 / √r² : 0
// and accumulates the contribution with the operations written in force_kernels_impl.hpp, in
// exactly that order: KernelMath::Exact with a correctly rounded √ and ÷ and separate multiplies
// and adds, KernelMath::Fast with fused multiply-adds and Newton steps from an exact bit-level
// seed. IEEE arithmetic makes every step correctly rounded (an FMA rounds once), so all
// instruction sets produce bit-identical sums for the same KernelMath.
#pragma once

#include <cstddef>

namespace kanoko::integrators::detail {

/// How the kernels compute 1/√r² and their sums (see force_kernels_impl.hpp).
enum class KernelMath {
  Exact,  ///< √ and ÷, no FMA (issue 4's kernels; the benchmark baseline)
  Fast,   ///< seed + two higher-order Newton steps, FMAs: round-off-level error, no √ or ÷
};

/// Targets are processed in blocks of this many; callers pad the target arrays (and accumulators)
/// to a multiple of it. Padding lanes compute garbage that the caller ignores.
inline constexpr std::size_t kTargetBlock = 16;

/// Target positions (structure of arrays), `count` a multiple of kTargetBlock.
struct TargetBlock {
  const double* x;
  const double* y;
  const double* z;
  std::size_t count;
};

/// Sums added to, per target (length ≥ count). `phi` may be null: no potential is computed.
struct Accumulators {
  double* x;
  double* y;
  double* z;
  double* phi;
};

/// Point sources of charge 1.
struct BodySources {
  const double* x;
  const double* y;
  const double* z;
  std::size_t count;
};

/// Cells: centre of charge, charge, and (for quadrupole kernels) the second moments about the
/// centre, Σ s sᵀ over the cell's bodies with s = body − centre, and their trace.
struct CellSources {
  const double* x;
  const double* y;
  const double* z;
  const double* m;
  const double* qxx;
  const double* qxy;
  const double* qxz;
  const double* qyy;
  const double* qyz;
  const double* qzz;
  const double* qtr;
  std::size_t count;
};

/// Points for the single-precision kernels (KernelMath::Fast tables only): targets and sources as
/// offsets from one origin near the targets (the group's centre), in two float parts, x the offset
/// rounded to float and lx what that rounding lost, rounded to float; so a difference target −
/// source keeps float's relative precision (one part, cells) or about 48 bits of the offsets (two
/// parts, bodies; see FloatBodyKernel). The cell kernel reads the targets' first parts only.
struct FloatPoints {
  const float* x;
  const float* y;
  const float* z;
  const float* lx;
  const float* ly;
  const float* lz;
  std::size_t count;  ///< as targets, a multiple of kTargetBlock
};
/// The group's bodies, as targets of the float kernels.
using FloatTargets = FloatPoints;
/// Bodies of charge 1, as sources of the float body kernel.
using FloatBodies = FloatPoints;

/// Monopole cells for the float kernel (see FloatPoints): centres in one part, charges as floats.
struct FloatCells {
  const float* x;
  const float* y;
  const float* z;
  const float* m;
  std::size_t count;
};

/// The float kernels sum at most this many cells in float before adding the partial sums to the
/// double accumulators, which bounds the rounding a long list can gather.
inline constexpr std::size_t kFloatChunk = 64;

/// Accumulates, for every target, Σ_s d y³ (force / R) and, if acc.phi, Σ_s y (potential / R).
using BodyKernel = void (*)(const TargetBlock& t, const BodySources& s, double eps2, const Accumulators& acc);
/// The same for cells: monopole m d y³ (and m y), or monopole plus quadrupole terms.
using CellKernel = void (*)(const TargetBlock& t, const CellSources& s, double eps2, const Accumulators& acc);

/// Monopole cells in single precision: m d y³ (and m y) summed in float, kFloatChunk cells at a
/// time, each chunk's sums added to the double accumulators.
using FloatCellKernel = void (*)(const FloatTargets& t, const FloatCells& s, float eps2, const Accumulators& acc);
/// Bodies of charge 1 in single precision, d y³ (and y) summed as the float cells are, with each
/// difference taken in two parts, (x_t − x_s) + (lx_t − lx_s): it keeps about 48 bits of the
/// offsets, so near pairs lose no more than float's rounding of d itself. Returns the largest y met
/// (over padding lanes too), from which the caller tells whether a pair came too close for float.
using FloatBodyKernel = float (*)(const FloatTargets& t, const FloatBodies& s, float eps2, const Accumulators& acc);

/// The kernels of one instruction set.
struct KernelTable {
  BodyKernel bodies;
  CellKernel monopoles;
  CellKernel quadrupoles;
  FloatCellKernel float_monopoles;  ///< KernelMath::Fast only (null in the Exact tables)
  FloatBodyKernel float_bodies;     ///< KernelMath::Fast only (null in the Exact tables)
};

/// Plain C++ (compiled without extra target flags; std::fma for the fused operations).
const KernelTable& portable_kernels(KernelMath math);
/// AVX2 and FMA, 4 doubles per vector; call only if the CPU supports both.
const KernelTable& avx2_kernels(KernelMath math);
/// AVX-512F, 8 doubles per vector; call only if the CPU supports AVX-512F.
const KernelTable& avx512_kernels(KernelMath math);

/// Arithmetic operations per interaction as the kernels perform them (÷ and √ counted as one),
/// for reporting achieved floating-point rates.
/// (KernelMath::Exact; the fast kernels do the same work in more, cheaper operations, and are
/// credited with the same counts so that rates compare.)
inline constexpr int kFlopsBodyBody = 19;   ///< 3 −, 3 ×, 3 + (r²), √, ÷, 2 × (y³), 3 ×, 3 +
inline constexpr int kFlopsBodyMonopole = 20;  ///< the same plus × m
inline constexpr int kFlopsBodyQuadrupole = 55;  ///< see quadrupole_kernel

}  // namespace kanoko::integrators::detail
