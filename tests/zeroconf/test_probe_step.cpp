// The calibration probe steps coarser than the run (src/sim/simulate.hpp, kProbeStepFactor) and
// holds the repulsion where springs dominate it: it measures a scale for the gain, and on real
// programs that scale is the one a probe at the run's own step, summing the repulsion, measures.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "src/ingest/infer.hpp"
#include "src/mapping/edit.hpp"
#include "src/mapping/mapping.hpp"
#include "src/sim/simulate.hpp"
#include "src/trajectory/trajectory.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko {
namespace KANOKO_UNITY_ID {

/// The gain factor the calibration noted ("gain scaled by F so that ...").
double gain_factor(const sim::SimulateSummary& s) {
  for (const std::string& note : s.notes) {
    const auto at = note.find("gain scaled by ");
    if (at != std::string::npos) return std::stod(note.substr(at + 15));
  }
  return 0;
}

/// Options simulating the SMPI program `name` of traces/smpi with its inferred mapping, quietly,
/// on one thread.
sim::SimulateOptions inferred_run(const std::string& name) {
  const auto trace = test::source_dir() / "traces" / "smpi" / (name + ".trace");
  sim::SimulateOptions so;
  so.trace = trace;
  so.mapping_text = ingest::infer_mapping(trace, ingest::InferOptions{}).text;
  so.mapping_label = trace.string() + " (inferred)";
  so.progress = false;
  so.threads = 1;
  return so;
}

/// The SMPI programs of traces/smpi the probe is checked on.
const char* const kPrograms[] = {"halo2d-16-slow5",   "pipeline8-flat",   "farm8-anytag",
                                 "halo3d-27-torus-heavy", "alltoall8-fattree", "late4-locations"};

/// Simulates `name` with its inferred mapping into dir/NAME-as-is.kntj, then again with `change`
/// made to the options into dir/NAME-changed.kntj; returns both summaries.
std::pair<sim::SimulateSummary, sim::SimulateSummary> run_twice(const std::string& name, const std::filesystem::path& dir,
                                                                const std::function<void(sim::SimulateOptions&)>& change) {
  sim::SimulateOptions so = inferred_run(name);
  so.output = dir / (name + "-as-is.kntj");
  sim::SimulateSummary as_is = sim::simulate(so);
  change(so);
  so.output = dir / (name + "-changed.kntj");
  return {std::move(as_is), sim::simulate(so)};
}

TEST(ProbeStep, ACoarseProbeCalibratesRealProgramsAsOneAtTheRunsStep) {
  test::TempDir dir;
  for (const std::string name : kPrograms) {
    const auto [coarse_run, fine_run] =
        run_twice(name, dir.path(), [](sim::SimulateOptions& so) { so.probe_step_factor = 1; });
    const double coarse = gain_factor(coarse_run), fine = gain_factor(fine_run);
    ASSERT_GT(fine, 0) << name;
    EXPECT_NEAR(coarse / fine, 1.0, 0.03) << name << ": coarse probe " << coarse << ", at the run's step " << fine;
  }
}

/// Whether the calibration noted that its probe held the repulsion at its resting value.
bool probe_held_repulsion(const sim::SimulateSummary& s) {
  return std::any_of(s.notes.begin(), s.notes.end(),
                     [](const std::string& n) { return n.find("the repulsion held at its resting value") != std::string::npos; });
}

TEST(ProbeStep, HoldingTheRepulsionCalibratesRealProgramsAsSummingIt) {
  // Where springs hold the layout, the probe holds the repulsion at its value in the relaxed
  // layout instead of summing it at every step (a Barnes–Hut sum each on big runs): the gain it
  // sets is the one a probe that sums it sets. Without springs the repulsion is what keeps the
  // bodies apart against the pulls, and the probe sums it.
  test::TempDir dir;
  for (const std::string name : kPrograms) {
    const auto [held, summed] =
        run_twice(name, dir.path(), [](sim::SimulateOptions& so) { so.probe_holds_repulsion = false; });
    EXPECT_FALSE(probe_held_repulsion(summed)) << name;
    const trajectory::Reader run(dir / (name + "-as-is.kntj"));
    EXPECT_EQ(probe_held_repulsion(held), !run.meta().edges.empty()) << name << ": springs " << run.meta().edges.size();
    ASSERT_GT(gain_factor(summed), 0) << name;
    EXPECT_NEAR(gain_factor(held) / gain_factor(summed), 1.0, 0.05)
        << name << ": held " << gain_factor(held) << ", summed " << gain_factor(summed);
  }
}

/// The median over bodies of the distance between frame 0 of two runs of the same bodies.
double median_start_distance(const trajectory::Reader& a, const trajectory::Reader& b) {
  const trajectory::FrameView fa = a.frame(0), fb = b.frame(0);
  std::vector<double> d(a.meta().body_count());
  for (std::size_t i = 0; i < d.size(); ++i) {
    const auto c = static_cast<Eigen::Index>(i);
    d[i] = (fa.positions.col(c) - fb.positions.col(c)).norm();
  }
  std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
  return d[d.size() / 2];
}

TEST(ProbeStep, TheLayoutRelaxesOnceAtTheCoarseStepToTheRestTheRunsStepFinds) {
  // A calibrated run starts at rest from the relaxed layout (relaxed once, at the probe's coarse
  // step, for the probe and the run): its frame 0 is where a relaxation at the run's own step
  // ends, and far from the unrelaxed layout the same constants start from without calibration.
  test::TempDir dir;
  sim::SimulateOptions so = inferred_run("halo2d-16-slow5");
  so.output = dir / "coarse.kntj";
  const sim::SimulateSummary coarse_summary = sim::simulate(so);
  EXPECT_TRUE(std::any_of(coarse_summary.notes.begin(), coarse_summary.notes.end(),
                          [](const std::string& n) { return n.find("the layout relaxed") != std::string::npos; }));
  so.probe_step_factor = 1;
  so.output = dir / "fine.kntj";
  sim::simulate(so);
  const trajectory::Reader coarse(dir / "coarse.kntj"), fine(dir / "fine.kntj");
  // The same constants without calibration: no relaxation, the layout as placed.
  const std::string text = coarse.meta().mapping_text;
  const mapping::Mapping calibrated = mapping::parse_mapping_text(text, "calibrated");
  sim::SimulateOptions raw = so;
  raw.probe_step_factor = 0;
  raw.mapping_text = mapping::set_value(text, calibrated, "simulation", "calibrate", "\"off\"");
  raw.output = dir / "raw.kntj";
  sim::simulate(raw);
  const trajectory::Reader unrelaxed(dir / "raw.kntj");
  const double relaxed_by = median_start_distance(coarse, unrelaxed);
  ASSERT_GT(relaxed_by, 0) << "the relaxation moved nothing";
  EXPECT_LT(median_start_distance(coarse, fine), 0.05 * relaxed_by)
      << "the coarse relaxation ends elsewhere than the one at the run's step";
  const trajectory::FrameView start = coarse.frame(0);
  EXPECT_EQ(start.velocities.cwiseAbs().maxCoeff(), 0.0) << "a calibrated run starts at rest";
}

TEST(ProbeStep, AStepTooLongForTheLayoutFallsBackToTheRunsStep) {
  // A coarse step far beyond the stiffest spring's stability (64 of the run's steps) makes the
  // relaxation diverge, possibly to numbers that are still finite. The energy it ends with (more
  // than it started with, with no forcing) gives it away: relaxation and probe then step at the
  // run's own step, and the run is the one a probe at that step makes, not a layout blown apart.
  test::TempDir dir;
  sim::SimulateOptions so = inferred_run("halo2d-16-slow5");
  so.probe_step_factor = 64;
  so.output = dir / "too-coarse.kntj";
  const double too_coarse = gain_factor(sim::simulate(so));
  so.probe_step_factor = 1;
  so.output = dir / "fine.kntj";
  const double fine = gain_factor(sim::simulate(so));
  ASSERT_GT(fine, 0);
  EXPECT_DOUBLE_EQ(too_coarse, fine);
  const trajectory::Reader a(dir / "too-coarse.kntj"), b(dir / "fine.kntj");
  EXPECT_EQ(median_start_distance(a, b), 0.0) << "the run starts where the relaxation at the run's step ends";
}

}  // namespace
}  // namespace kanoko
