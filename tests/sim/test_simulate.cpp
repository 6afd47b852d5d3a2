// The simulate pipeline: output, cache, determinism, failures that leave nothing behind.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "src/base/error.hpp"
#include "src/mapping/mapping.hpp"
#include "src/sim/simulate.hpp"
#include "src/trajectory/trajectory.hpp"
#include "tests/support/model_fixtures.hpp"
#include "tests/support/ring_mapping.hpp"
#include "tests/support/sim_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::sim {
namespace KANOKO_UNITY_ID {

using test::TempDir;
using test::write_text;

const std::string kMapping =
    test::ring_mapping({"0.03          # reduced to 0.025 so that 4 steps fill one interval", 0.2, 1.0, 1.0});

std::string ring_trace() {
  std::string s = test::node_lines(4);
  for (int step = 0; step < 10; ++step) {
    const double t = step * 0.05;
    s += "msg " + std::to_string(t) + " " + std::to_string(step % 4) + " " + std::to_string((step + 1) % 4) + " 100\n";
    s += "load " + std::to_string(t) + " " + std::to_string(step % 4) + " 0.5\n";
  }
  return s + "end 0.5\n";
}

struct Fixture : test::SimFixture {
  Fixture(const std::string& mapping = kMapping, const std::string& trace = ring_trace()) : SimFixture(mapping, trace) {}
};

TEST(Simulate, WritesTheExpectedFrames) {
  Fixture f;
  const SimulateSummary s = simulate(f.options);
  EXPECT_FALSE(s.reused);
  EXPECT_DOUBLE_EQ(s.dt_s, 0.025);
  EXPECT_EQ(s.steps, 5U * 4U + 8U);  // 5 intervals of 4 steps, then 0.2 s of settling
  EXPECT_EQ(s.evaluations, 4 * s.steps);
  const trajectory::Reader r(f.options.output);
  EXPECT_EQ(r.frame_count(), 1 + s.steps / 2);
  EXPECT_DOUBLE_EQ(r.begin_time(), 0.0);
  EXPECT_NEAR(r.end_time(), 0.7, 1e-12);
  EXPECT_EQ(r.meta().body_count(), 4U);
  EXPECT_EQ(r.meta().edges.size(), 4U);
  EXPECT_EQ(r.meta().bodies[2].name, "b2");
  EXPECT_EQ(r.meta().integrator, "rk4");
  EXPECT_EQ(r.meta().mapping_text, kMapping);
  EXPECT_DOUBLE_EQ(r.meta().interval_s, 0.1);
  EXPECT_EQ(r.meta().steps_per_frame, 2U);
  // Bodies moved, and every stored number is finite.
  EXPECT_GT((r.frame(r.frame_count() - 1).positions - r.frame(0).positions).norm(), 1e-3);
  for (std::size_t k = 0; k < r.frame_count(); ++k) ASSERT_TRUE(r.frame(k).positions.allFinite());
  const int sent_total = r.meta().stat_index("bytes_sent_total");
  ASSERT_GE(sent_total, 0);
  EXPECT_EQ(r.frame(r.frame_count() - 1).stats.row(sent_total).sum(), 1000);
  // The per-interval traffic section: two messages of 100 bytes per 0.1 s interval, around the ring.
  ASSERT_EQ(r.meta().traffic_intervals(), 5U);
  for (std::size_t bin = 0; bin < 5; ++bin) {
    const auto pairs = r.meta().traffic_in(bin);
    ASSERT_EQ(pairs.size(), 2U) << bin;
    std::set<std::pair<std::uint32_t, std::uint32_t>> got;
    for (const auto& p : pairs) {
      EXPECT_EQ(p.bytes, 100.0);
      EXPECT_EQ(p.messages, 1.0);
      got.insert({p.src, p.dst});
    }
    const auto a = static_cast<std::uint32_t>((2 * bin) % 4);
    const std::set<std::pair<std::uint32_t, std::uint32_t>> want{{a, (a + 1) % 4}, {(a + 1) % 4, (a + 2) % 4}};
    EXPECT_EQ(got, want) << bin;
  }
}

TEST(Simulate, ReusesACachedTrajectoryOnlyWhenInputsMatch) {
  Fixture f;
  simulate(f.options);
  const auto first_write = std::filesystem::last_write_time(f.options.output);
  EXPECT_TRUE(simulate(f.options).reused);
  EXPECT_EQ(std::filesystem::last_write_time(f.options.output), first_write);
  f.options.force = true;
  EXPECT_FALSE(simulate(f.options).reused);
  f.options.force = false;
  // Any change to the mapping text or trace invalidates the cache.
  write_text(f.dir / "m.toml", std::string(kMapping) + "# comment\n");
  EXPECT_FALSE(simulate(f.options).reused);
  EXPECT_TRUE(simulate(f.options).reused);
  write_text(f.dir / "t.kntr", ring_trace() + "# more\n");
  EXPECT_FALSE(simulate(f.options).reused);
}

TEST(Simulate, CacheKeyCoversEveryFileTheReaderOpens) {
  // Paraver's .pcf and .row, an OTF2 archive's per-location files, a TI index's rank files: a
  // change in any of them must not reuse a run made from the old ones.
  namespace fs = std::filesystem;
  TempDir dir;
  const mapping::Mapping m = mapping::parse_mapping_text(kMapping, "m.toml");
  const fs::path shared = test::shared_dir() / "traces";
  const auto copy = [&](const fs::path& from, const std::string& name) {
    fs::copy(from, dir / name, fs::copy_options::recursive);
    fs::permissions(dir / name, fs::perms::owner_write, fs::perm_options::add);
    if (!fs::is_directory(dir / name)) return;
    for (const auto& e : fs::recursive_directory_iterator(dir / name)) {
      fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
    }
  };
  const auto changes_key = [&](const fs::path& trace, const fs::path& companion) {
    const std::uint64_t before = input_hash(trace, m);
    EXPECT_EQ(input_hash(trace, m), before);
    std::ofstream(companion, std::ios::app) << "\n";
    return input_hash(trace, m) != before;
  };
  fs::create_directories(dir / "prv");
  for (const char* ext : {".prv", ".pcf", ".row"}) {
    copy(shared / "paraver" / (std::string("lulesh_4+4_with_uncores_sockets1+2.chop_5it") + ext), std::string("prv/l") + ext);
  }
  EXPECT_TRUE(changes_key(dir / "prv/l.prv", dir / "prv/l.pcf"));
  EXPECT_TRUE(changes_key(dir / "prv/l.prv", dir / "prv/l.row"));
  copy(shared / "otf2" / "ping-pong-otf2-papi", "otf2");
  EXPECT_TRUE(changes_key(dir / "otf2/traces.otf2", dir / "otf2/traces/1.evt"));
  EXPECT_TRUE(changes_key(dir / "otf2/traces.otf2", dir / "otf2/traces.def"));
  EXPECT_TRUE(changes_key(dir / "otf2", dir / "otf2/traces/0.def"));
  fs::create_directories(dir / "ti");
  copy(shared / "simgrid-ti" / "smpi_replay.txt", "ti/smpi_replay.txt");
  copy(shared / "simgrid-ti" / "ti_traces_32_1", "ti/ti_traces_32_1");
  EXPECT_TRUE(changes_key(dir / "ti/smpi_replay.txt", dir / "ti/ti_traces_32_1/ti_trace7.txt"));
  // The control: a file the trace does not name changes nothing.
  write_text(dir / "prv/unrelated.txt", "x");
  EXPECT_FALSE(changes_key(dir / "prv/l.prv", dir / "prv/unrelated.txt"));
}

TEST(Simulate, IsDeterministic) {
  Fixture f;
  simulate(f.options);
  const std::string a = test::read_text(f.options.output);
  f.options.force = true;
  simulate(f.options);
  EXPECT_EQ(a, test::read_text(f.options.output));
}

TEST(Simulate, BlowUpNamesStepAndBodyAndLeavesNoFile) {
  // A huge attraction with a coarse step and no friction throws bodies through each other.
  std::string mapping = R"(
[simulation]
interval = 0.1
dt = 0.1
[bodies]
placement = "ring"
size = 0.01
[forces.repulsion]
strength = 1e6
)";
  Fixture f(mapping);
  write_text(f.options.output, "previous content");
  try {
    simulate(f.options);
    FAIL() << "expected a blow-up";
  } catch (const RunError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("step 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("body 0 'b0'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("dt"), std::string::npos) << msg;
  }
  EXPECT_EQ(test::read_text(f.options.output), "previous content");
  EXPECT_EQ(test::list_dir(f.dir.path()), (std::vector<std::string>{"m.toml", "run.kntj", "t.kntr"}));
}

TEST(Simulate, BadInputsLeaveNoFile) {
  Fixture f;
  write_text(f.dir / "t.kntr", "kntr 1\nnode 0 0\nmsg 0.1 0 9 10\n");
  try {
    simulate(f.options);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.kntr:3:11"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(f.options.output));
  EXPECT_EQ(test::list_dir(f.dir.path()).size(), 2U);
}

TEST(Simulate, UnknownIntegratorIsAMappingError) {
  Fixture f(std::string(kMapping).replace(std::string(kMapping).find("settle"), 0, "integrator = \"rk5\"\n"));
  try {
    simulate(f.options);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("m.toml:6:14"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("did you mean 'rk4'"), std::string::npos) << e.what();
  }
}

TEST(Simulate, MappingThatDoesNotFitTheTraceIsReported) {
  Fixture f(std::string(kMapping).replace(std::string(kMapping).find("\"ring\""), 6, "\"cube\""));
  try {
    simulate(f.options);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("m.toml:8:13"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kanoko::sim
