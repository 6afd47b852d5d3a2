// Continuing a run from one of its frames (the viewer's re-simulation with changed parameters):
// the copied frames are the earlier run's, the rest follows the new mapping, and a cancelled or
// mismatched continuation leaves no file.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>

#include "src/base/error.hpp"
#include "src/sim/simulate.hpp"
#include "src/trajectory/trajectory.hpp"
#include "tests/support/ring_mapping.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::sim {
namespace KANOKO_UNITY_ID {

using test::TempDir;
using test::write_text;

std::string mapping(double beta) {
  test::RingMapping r;
  r.beta = beta;
  return test::ring_mapping(r);
}

std::string trace() {
  std::string s = "kntr 1\n";
  for (int i = 0; i < 5; ++i) s += "node 0 " + std::to_string(i) + "\n";
  for (int step = 0; step < 12; ++step) {
    s += "msg " + std::to_string(step * 0.05) + " " + std::to_string(step % 5) + " " + std::to_string((step + 2) % 5) +
         " " + std::to_string(100 * (step + 1)) + "\n";
  }
  return s + "end 0.6\n";
}

bool same_frame(const trajectory::Reader& a, const trajectory::Reader& b, std::size_t k) {
  const auto fa = a.frame(k);
  const auto fb = b.frame(k);
  const auto bytes = static_cast<std::size_t>(fa.positions.size()) * sizeof(double);
  return fa.time_s == fb.time_s && std::memcmp(fa.positions.data(), fb.positions.data(), bytes) == 0 &&
         std::memcmp(fa.velocities.data(), fb.velocities.data(), bytes) == 0;
}

struct Runs {
  TempDir dir;
  SimulateOptions base;
  Runs() {
    write_text(dir / "t.kntr", trace());
    write_text(dir / "m.toml", mapping(1.0));
    base.trace = dir / "t.kntr";
    base.mapping = dir / "m.toml";
    base.output = dir / "whole.kntj";
    base.progress = false;
    simulate(base);
  }
};

TEST(Resume, SameParametersReproduceTheWholeRunBitForBit) {
  Runs r;
  const trajectory::Reader whole(r.base.output);
  SimulateOptions o = r.base;
  o.output = r.dir / "continued.kntj";
  o.resume_from = &whole;
  o.resume_frame = 5;  // inside interval 2
  const SimulateSummary s = simulate(o);
  const trajectory::Reader continued(o.output);
  ASSERT_EQ(continued.frame_count(), whole.frame_count());
  for (std::size_t k = 0; k < whole.frame_count(); ++k) EXPECT_TRUE(same_frame(whole, continued, k)) << k;
  EXPECT_EQ(s.steps, (whole.frame_count() - 1 - 5) * 2);
  EXPECT_NE(continued.meta().input_hash, whole.meta().input_hash) << "a continued run is not the whole run";
}

TEST(Resume, ChangedParametersChangeOnlyWhatFollows) {
  Runs r;
  const trajectory::Reader whole(r.base.output);
  SimulateOptions o = r.base;
  o.output = r.dir / "stiffer.kntj";
  o.mapping_text = mapping(4.0);  // much more friction from frame 7 on
  o.resume_from = &whole;
  o.resume_frame = 7;
  double last_progress = -1;
  o.on_progress = [&](double f) {
    EXPECT_GE(f, last_progress);
    last_progress = f;
  };
  simulate(o);
  const trajectory::Reader tuned(o.output);
  ASSERT_EQ(tuned.frame_count(), whole.frame_count());
  for (std::size_t k = 0; k <= 7; ++k) EXPECT_TRUE(same_frame(whole, tuned, k)) << k;
  for (std::size_t k = 8; k < whole.frame_count(); ++k) EXPECT_FALSE(same_frame(whole, tuned, k)) << k;
  EXPECT_NE(tuned.meta().mapping_text.find("beta = 4\n"), std::string::npos);
  // More friction: slower at the end.
  const auto end = whole.frame_count() - 1;
  EXPECT_LT(tuned.frame(end).velocities.norm(), whole.frame(end).velocities.norm());
  EXPECT_EQ(last_progress, 1.0);
}

TEST(Resume, CancelledRunLeavesNoFile) {
  Runs r;
  const trajectory::Reader whole(r.base.output);
  SimulateOptions o = r.base;
  o.output = r.dir / "cancelled.kntj";
  o.resume_from = &whole;
  const std::atomic<bool> cancel{true};
  o.cancel = &cancel;
  EXPECT_THROW(simulate(o), RunError);
  EXPECT_FALSE(std::filesystem::exists(o.output));
}

TEST(Resume, ARunWithAnotherStepIsRefused) {
  Runs r;
  const trajectory::Reader whole(r.base.output);
  SimulateOptions o = r.base;
  o.output = r.dir / "other.kntj";
  test::RingMapping other;
  other.dt = "0.05";
  o.mapping_text = test::ring_mapping(other);
  o.resume_from = &whole;
  o.resume_frame = 3;
  try {
    simulate(o);
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("another step"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(o.output));
  o.mapping_text.reset();
  o.resume_frame = whole.frame_count();
  EXPECT_THROW(simulate(o), InputError);
}

}  // namespace
}  // namespace kanoko::sim
