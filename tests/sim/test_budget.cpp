// Every run is bounded before it starts (src/sim/budget.hpp): the estimate, the limits, located
// refusals, and `check` agreeing with `simulate` because both call the same function.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "src/base/error.hpp"
#include "src/ingest/schema.hpp"
#include "src/mapping/mapping.hpp"
#include "src/sim/budget.hpp"
#include "src/sim/simulate.hpp"
#include "src/trajectory/trajectory.hpp"
#include "tests/support/input_error.hpp"
#include "tests/support/model_fixtures.hpp"
#include "tests/support/ring_mapping.hpp"
#include "tests/support/sim_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::sim {
namespace KANOKO_UNITY_ID {


/// The ring mapping with `dt` (line 4, value at column 6) and `settle` (line 6, column 10).
std::string ring(const std::string& dt = "0.025", double settle = 0.2) {
  return test::ring_mapping({dt, settle, 1.0, 1.0});
}

/// Four ranks passing messages round a ring for 0.5 s; `last` is the last line (26).
std::string ring_trace(const std::string& last = "end 0.5\n") {
  std::string s = test::node_lines(4);
  for (int step = 0; step < 10; ++step) {
    const double t = step * 0.05;
    s += "msg " + std::to_string(t) + " " + std::to_string(step % 4) + " " + std::to_string((step + 1) % 4) + " 100\n";
    s += "load " + std::to_string(t) + " " + std::to_string(step % 4) + " 0.5\n";
  }
  return s + last;
}

/// A message whose time stamp is corrupted to 20000 s on line 26 (time at column 5).
const std::string kCorrupted = "msg 20000 0 1 100\n";

struct Fixture : test::SimFixture {
  explicit Fixture(const std::string& mapping = ring(), const std::string& trace = ring_trace()) : SimFixture(mapping, trace) {}
};

Budget roomy() {
  Budget b;
  b.max_output_bytes = std::uint64_t{1} << 40U;
  b.max_memory_bytes = std::uint64_t{1} << 40U;
  b.max_steps = kDefaultMaxSteps;
  return b;
}

/// The InputError that bounding `mapping_text` on its own throws ("" if none).
std::string mapping_refusal(const std::string& mapping_text) {
  return test::input_error_of([&] { bound_mapping(mapping::parse_mapping_text(mapping_text, "m.toml"), roomy()); });
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Budget, HealthyRunIsEstimatedExactlyAndNotRefused) {
  Fixture f;
  const SimulateSummary s = simulate(f.options);
  const mapping::Mapping m = mapping::parse_mapping_file(f.options.mapping);
  ingest::SelectionReport r;
  trace::Timeline tl = ingest::read_body_timeline(f.options.trace, m, &r);
  mapping::Mapping prepared = m;
  prepared.simulation.interval_s = tl.interval_s;
  const RunEstimate e = bound_run(prepared, tl, r, default_budget(f.options.output));
  EXPECT_EQ(e.plan.total_steps, s.steps);
  EXPECT_EQ(e.plan.frames, s.frames);
  EXPECT_DOUBLE_EQ(e.plan.dt_s, s.dt_s);
  EXPECT_EQ(e.bodies, 4U);
  // The file's frames and footers exactly, the sections from above (within 16 KiB).
  const auto size = std::filesystem::file_size(f.options.output);
  EXPECT_GE(e.output_bytes, size);
  EXPECT_LT(e.output_bytes, size + 16384);
  EXPECT_FALSE(e.long_run());
}

TEST(Budget, ACorruptedTimestampIsRefusedNamingItsRecord) {
  Fixture f(ring(), ring_trace(kCorrupted));
  Budget b = roomy();
  b.max_output_bytes = 64U << 20U;
  f.options.budget = b;
  const std::string error = test::input_error_of([&] { simulate(f.options); });
  EXPECT_TRUE(has(error, "t.kntr:26:5: error: the run would write")) << error;
  EXPECT_TRUE(has(error, "t = 20000 s")) << error;
  EXPECT_TRUE(has(error, "--to")) << error;
  EXPECT_TRUE(has(error, "--max-output")) << error;
  EXPECT_FALSE(std::filesystem::exists(f.options.output));
}

TEST(Budget, MemoryIsBoundedToo) {
  Fixture f(ring(), ring_trace(kCorrupted));
  Budget b = roomy();
  b.max_memory_bytes = 80U << 20U;  // the timeline of 200000 intervals and the model's sums pass it
  f.options.budget = b;
  const std::string error = test::input_error_of([&] { simulate(f.options); });
  EXPECT_TRUE(has(error, "t.kntr:26:5: error: the run would need")) << error;
  EXPECT_TRUE(has(error, "--max-memory")) << error;
}

TEST(Budget, OverflowingMappingValuesAreLocatedErrors) {
  // dt so small that the steps of one interval cannot be counted.
  std::string e = mapping_refusal(ring("1e-300"));
  EXPECT_TRUE(has(e, "m.toml:4:6: error: dt = 1e-300 s makes")) << e;
  // settle so long that its steps cannot be counted (it used to be silently ignored).
  e = mapping_refusal(ring("0.025", 1e300));
  EXPECT_TRUE(has(e, "m.toml:6:10: error: settle = 1e+300 s makes")) << e;
}

TEST(Budget, HugeStepCountsAreRefusedAtTheirKey) {
  // Countable, but hundreds of thousands of hours: past the step limit.
  std::string e = mapping_refusal(ring("1e-12"));
  // One interval of 1e11 steps and 0.2 s of settling of 2e11: the step is the cause.
  EXPECT_TRUE(has(e, "m.toml:4:6: error: the run would take 300000000000 steps (limit 2000000000)")) << e;
  EXPECT_TRUE(has(e, "dt = 1e-12 s makes 100000000000 steps per interval of 100 ms")) << e;
  EXPECT_TRUE(has(e, "--max-steps")) << e;
  e = mapping_refusal(ring("0.025", 1e9));
  EXPECT_TRUE(has(e, "m.toml:6:10: error: the run would take")) << e;
  EXPECT_TRUE(has(e, "settle = 1e+09 s adds 4000000000")) << e;  // 4e10 steps
  std::string hex = ring();
  hex.replace(hex.find("settle = 0.2"), 12, "settle = 0x7fffffff");
  e = mapping_refusal(hex);
  EXPECT_TRUE(has(e, "m.toml:6:10: error: the run would take")) << e;
  // The same mapping within the limits passes.
  EXPECT_EQ(mapping_refusal(ring()), "");
}

TEST(Budget, SimulateRefusesWhatCheckRefusesWithTheSameMessage) {
  for (const std::string& dt : {std::string("1e-300"), std::string("1e-12")}) {
    Fixture f(ring(dt));
    const test::CommandResult check =
        test::run_kanoko({"check", (f.dir / "m.toml").string(), "--trace", (f.dir / "t.kntr").string()});
    const test::CommandResult sim = test::run_kanoko(
        {"simulate", (f.dir / "t.kntr").string(), "--mapping", (f.dir / "m.toml").string(), "-o", (f.dir / "r.kntj").string()});
    const test::CommandResult alone = test::run_kanoko({"check", (f.dir / "m.toml").string()});
    EXPECT_NE(check.exit_code, 0) << dt;
    EXPECT_NE(sim.exit_code, 0) << dt;
    EXPECT_NE(alone.exit_code, 0) << dt;
    const std::string line = check.err.substr(0, check.err.find('\n'));
    EXPECT_TRUE(has(line, "m.toml:4:6: error:")) << check.err;
    EXPECT_TRUE(has(sim.err, line)) << "check: " << check.err << "\nsimulate: " << sim.err;
    EXPECT_TRUE(has(alone.err, "m.toml:4:6: error:")) << alone.err;
    EXPECT_FALSE(std::filesystem::exists(f.dir / "r.kntj"));
  }
}

TEST(Budget, CorruptedTraceCheckAndSimulateAgreeAndTheOptionRaisesTheLimit) {
  Fixture f(ring(), ring_trace(kCorrupted));
  const std::string m = (f.dir / "m.toml").string(), t = (f.dir / "t.kntr").string(), o = (f.dir / "r.kntj").string();
  const test::CommandResult check = test::run_kanoko({"check", m, "--trace", t, "--max-output", "64M"});
  const test::CommandResult sim = test::run_kanoko({"simulate", t, "--mapping", m, "-o", o, "--max-output", "64M"});
  EXPECT_NE(check.exit_code, 0);
  EXPECT_NE(sim.exit_code, 0);
  const std::string line = check.err.substr(0, check.err.find('\n'));
  EXPECT_TRUE(has(line, "t.kntr:26:5: error: the run would write")) << check.err;
  EXPECT_TRUE(has(sim.err, line)) << "check: " << check.err << "\nsimulate: " << sim.err;
  const test::CommandResult raised = test::run_kanoko({"check", m, "--trace", t, "--max-output", "1G"});
  EXPECT_EQ(raised.exit_code, 0) << raised.err;
  EXPECT_TRUE(has(raised.out, "estimate: 800008 steps")) << raised.out;  // 200000 intervals of 4 steps, 8 settling
  const test::CommandResult bad = test::run_kanoko({"check", m, "--max-output", "lots"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_TRUE(has(bad.err, "--max-output")) << bad.err;
}

TEST(Budget, SizesParse) {
  EXPECT_EQ(parse_size("20G", "--max-output"), std::uint64_t{20} << 30U);
  EXPECT_EQ(parse_size("512M", "--max-output"), std::uint64_t{512} << 20U);
  EXPECT_EQ(parse_size("1.5k", "--max-output"), 1536U);
  EXPECT_EQ(parse_size("64KiB", "--max-output"), 65536U);
  EXPECT_EQ(parse_size("1000", "--max-output"), 1000U);
  for (const char* bad : {"", "G", "12X", "-1G", "1e30T", "nan"}) {
    EXPECT_TRUE(has(test::input_error_of([&] { (void)parse_size(bad, "--max-memory"); }), "--max-memory: error:")) << bad;
  }
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(12), "12 B");
}

TEST(Budget, TheFileSizeFollowsTheTrajectoryFormat) {
  // 64 frames of one body with no statistics: 64 × 8 × 7 bytes in one block, one footer.
  EXPECT_EQ(trajectory::file_size_for(1, 0, 64, 0), 144 + 7 + 64 * 56 + 48U);
  EXPECT_EQ(trajectory::file_size_for(1, 0, 65, 0), 144 + 7 + 65 * 56 + 2 * 48U);
  EXPECT_EQ(trajectory::file_size_for(std::uint64_t{1} << 62U, 6, 1, 0), ~std::uint64_t{0});
}

}  // namespace
}  // namespace kanoko::sim
