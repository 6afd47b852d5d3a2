// The calibration probe steps coarser than the run (src/sim/simulate.hpp, kProbeStepFactor): it
// measures a scale for the gain, and on real programs that scale is the one a probe at the run's
// own step measures.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "src/ingest/infer.hpp"
#include "src/sim/simulate.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko {
namespace {

/// The gain factor the calibration noted ("gain scaled by F so that ...").
double gain_factor(const sim::SimulateSummary& s) {
  for (const std::string& note : s.notes) {
    const auto at = note.find("gain scaled by ");
    if (at != std::string::npos) return std::stod(note.substr(at + 15));
  }
  return 0;
}

TEST(ProbeStep, ACoarseProbeCalibratesRealProgramsAsOneAtTheRunsStep) {
  test::TempDir dir;
  for (const std::string name : {"halo2d-16-slow5", "pipeline8-flat", "farm8-anytag", "halo3d-27-torus-heavy",
                                 "alltoall8-fattree", "late4-locations"}) {
    const auto trace = test::source_dir() / "traces" / "smpi" / (name + ".trace");
    sim::SimulateOptions so;
    so.trace = trace;
    so.mapping_text = ingest::infer_mapping(trace, ingest::InferOptions{}).text;
    so.mapping_label = trace.string() + " (inferred)";
    so.progress = false;
    so.threads = 1;
    so.output = dir / (name + "-coarse.kntj");
    const double coarse = gain_factor(sim::simulate(so));
    so.probe_step_factor = 1;
    so.output = dir / (name + "-fine.kntj");
    const double fine = gain_factor(sim::simulate(so));
    ASSERT_GT(fine, 0) << name;
    EXPECT_NEAR(coarse / fine, 1.0, 0.02) << name << ": coarse probe " << coarse << ", at the run's step " << fine;
  }
}

}  // namespace
}  // namespace kanoko
