// For tests only: deliberately broken variants of the Barnes–Hut tree. Accuracy tests run them to
// show that each of their tolerances can fail (a tolerance nobody has seen fail may be checking
// nothing). Production code never sets a fault.
#pragma once

#include "integrators/forces/repulsion.hpp"

namespace kanoko::integrators {

/// One deliberate bug in the tree.
enum class TreeFault {
  None,
  /// Every cell counts one body too many (a wrong cell mass).
  CellChargeOffByOne,
  /// Centres of charge are stored in single precision: accurate near the origin, wrong far from it
  /// (breaks translation invariance).
  CentreOfChargeInSinglePrecision,
  /// A leaf opened in the near field contributes all its bodies but the last.
  LeafDropsLastBody,
  /// Parents add their children's second moments without the parallel-axis term.
  QuadrupoleWithoutParallelAxis,
};

/// add_repulsion with `fault` injected into the Barnes–Hut tree (the evaluator must resolve to
/// Barnes–Hut).
void add_repulsion_with_fault(const Eigen::Ref<const Eigen::Matrix3Xd>& positions, const RepulsionParams& params,
                              TreeFault fault, ForceScratch& scratch, Eigen::Ref<Eigen::Matrix3Xd> force);

}  // namespace kanoko::integrators
