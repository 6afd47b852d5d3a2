// sim::SimulationJob: `kanoko simulate` on a worker thread, whose growing output a reader can
// follow, that can be cancelled (no output left) and that hands its failure back.
#include "src/sim/simulate_job.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "src/base/error.hpp"
#include "src/trajectory/trajectory.hpp"
#include "tests/support/model_fixtures.hpp"
#include "tests/support/ring_mapping.hpp"
#include "tests/support/sim_fixture.hpp"

namespace kanoko::sim {
namespace KANOKO_UNITY_ID {

/// A ring of `n` bodies with traffic for 1 s of trace time and `settle` s of settling.
test::SimFixture ring_run(int n, double settle_s) {
  std::string trace = test::node_lines(n);
  for (int step = 0; step < 20; ++step) {
    const double t = step * 0.05;
    trace += "msg " + std::to_string(t) + " " + std::to_string(step % n) + " " + std::to_string((step + 1) % n) + " 100\n";
  }
  trace += "end 1\n";
  test::RingMapping m;
  m.dt = "0.001";
  m.settle_s = settle_s;
  return test::SimFixture(test::ring_mapping(m), trace);
}

void wait_until(const std::function<bool()>& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(done());
}

TEST(SimulationJob, ItsOutputCanBeFollowedWhileItRunsAndIsCompleteAfter) {
  test::SimFixture f = ring_run(6, 0.0);
  SimulationJob job(f.options);
  wait_until([&] { return job.writing().has_value(); });
  const auto writing = job.writing();
  job.wait();
  ASSERT_TRUE(job.summary().has_value()) << job.problem();
  EXPECT_EQ(job.problem(), "");
  EXPECT_DOUBLE_EQ(job.progress(), 1.0);
  EXPECT_EQ(*job.writing(), f.options.output);  // the temporary became the output
  EXPECT_NE(*writing, f.options.output);
  EXPECT_FALSE(std::filesystem::exists(*writing));
  const trajectory::Reader run(f.options.output);
  EXPECT_EQ(run.frame_count(), job.summary()->frames);
  // Run again: the cached run is reused.
  SimulationJob again(f.options);
  again.wait();
  ASSERT_TRUE(again.summary().has_value());
  EXPECT_TRUE(again.summary()->reused);
}

TEST(SimulationJob, CancellingLeavesNoOutput) {
  test::SimFixture f = ring_run(6, 500.0);  // settles for minutes
  SimulationJob job(f.options);
  wait_until([&] { return job.writing().has_value(); });
  const auto writing = *job.writing();
  job.cancel();
  EXPECT_TRUE(job.done());
  EXPECT_FALSE(job.summary().has_value());
  EXPECT_EQ(job.problem(), "the simulation was cancelled");
  EXPECT_FALSE(std::filesystem::exists(f.options.output));
  EXPECT_FALSE(std::filesystem::exists(writing));
}

TEST(SimulationJob, AFailureIsHandedBack) {
  test::SimFixture f = ring_run(6, 0.0);
  f.options.integrator = "rk5";
  SimulationJob job(f.options);
  job.wait();
  EXPECT_FALSE(job.summary().has_value());
  EXPECT_NE(job.problem().find("the simulation failed: "), std::string::npos) << job.problem();
  EXPECT_NE(job.problem().find("unknown integrator 'rk5'"), std::string::npos) << job.problem();
  EXPECT_THROW(job.rethrow(), InputError);
  EXPECT_FALSE(job.writing().has_value());
}

}  // namespace
}  // namespace kanoko::sim
