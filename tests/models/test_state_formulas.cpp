// Formulas over the state categories (`communicating`, `idle`, their totals and `busy_total`)
// on a hand-written native trace with known state intervals, read through the mapping.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/quantities.hpp"
#include "src/base/error.hpp"
#include "src/ingest/schema.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::models {
namespace KANOKO_UNITY_ID {

// Intervals of 0.1 s. Body a: compute 0–0.02, send 0.02–0.07, idle 0.07–0.1, recv 0.1–0.2.
// Body b: compute 0–0.2.
const std::string kTrace =
    "kntr 1\nnode 0 0 name=a\nnode 0 1 name=b\n"
    "state 0 0 0.02 compute\nstate 0 1 0.2 compute\nstate 0.02 0 0.05 send\nstate 0.07 0 0.03 idle\n"
    "state 0.1 0 0.1 recv\nend 0.2\n";

struct Loaded {
  mapping::Mapping mapping;
  trace::Timeline timeline;
};

Loaded run(const std::string& mapping_text) {
  test::TempDir dir;
  test::write_text(dir / "t.kntr", kTrace);
  Loaded r{mapping::parse_mapping_text(mapping_text, "f.toml"), {}};
  r.timeline = ingest::read_body_timeline(dir / "t.kntr", r.mapping);
  return r;
}

/// Masses of both bodies in each interval.
std::vector<std::vector<double>> masses(const Loaded& r) {
  const std::vector<Edge> no_springs;
  Quantities q(r.mapping, r.timeline, no_springs);
  std::vector<std::vector<double>> out;
  Eigen::VectorXd m;
  for (std::size_t bin = 0; bin < r.timeline.bin_count; ++bin) {
    q.set_interval(bin);
    q.masses(m);
    out.push_back({m[0], m[1]});
  }
  return out;
}

TEST(StateFormulas, CommunicatingFractionPerInterval) {
  const Loaded r = run("[simulation]\ninterval = 0.1\n[mass]\nexpression = \"1 + 10 * communicating\"\n[forces.friction]\nbeta = 1\n");
  const auto m = masses(r);
  ASSERT_EQ(m.size(), 2U);
  EXPECT_NEAR(m[0][0], 1 + 10 * 0.5, 1e-9);  // send: 0.05 of 0.1 s
  EXPECT_NEAR(m[1][0], 1 + 10 * 1.0, 1e-9);  // recv: the whole interval
  EXPECT_NEAR(m[0][1], 1.0, 1e-12);          // b only computes
  EXPECT_NEAR(m[1][1], 1.0, 1e-12);
  // The mapping decides: with only `recv` communicating and `send` idle, the first interval has
  // none (an unlisted `send` would be communicating by the MPI call table).
  const auto recv_only = masses(run(
      "[simulation]\ninterval = 0.1\n[trace]\ncommunicating = [\"recv\"]\nidle = [\"send\", \"idle\"]\n[mass]\n"
      "expression = \"1 + 10 * communicating\"\n[forces.friction]\nbeta = 1\n"));
  EXPECT_NEAR(recv_only[0][0], 1.0, 1e-12);
  EXPECT_NEAR(recv_only[1][0], 11.0, 1e-9);
}

TEST(StateFormulas, IdleBusyAndRunningTotals) {
  const Loaded r = run("[simulation]\ninterval = 0.1\n[mass]\nexpression = \"1 + idle + 100 * communicating_total + 1000 * busy_total + 10000 * idle_total\"\n"
                    "[visual]\ncolour = \"busy + communicating + idle\"\n[forces.friction]\nbeta = 1\n");
  const auto m = masses(r);
  // a, interval 0: idle 0.3, comm total 0.05, busy total 0.02, idle total 0.03.
  EXPECT_NEAR(m[0][0], 1 + 0.3 + 5 + 20 + 300, 1e-9);
  // a, interval 1: idle 0, comm total 0.15, busy total 0.02, idle total 0.03.
  EXPECT_NEAR(m[1][0], 1 + 0 + 15 + 20 + 300, 1e-9);
  // b: busy total 0.1 then 0.2.
  EXPECT_NEAR(m[0][1], 1 + 100, 1e-9);
  EXPECT_NEAR(m[1][1], 1 + 200, 1e-9);
  // The three fractions of a cover its whole first interval.
  const std::vector<Edge> no_springs;
  Quantities q(r.mapping, r.timeline, no_springs);
  Eigen::VectorXd v;
  q.set_interval(0);
  q.body_values(*r.mapping.visual.colour, v);
  EXPECT_NEAR(v[0], 1.0, 1e-12);
  // Going back recomputes the totals from the start.
  q.set_interval(1);
  q.set_interval(0);
  q.masses(v);
  EXPECT_NEAR(v[0], 1 + 0.3 + 5 + 20 + 300, 1e-9);
  // After the trace (settling), totals hold at their last value.
  q.set_interval(5);
  q.masses(v);
  EXPECT_NEAR(v[1], 1 + 200, 1e-9);
}

TEST(StateFormulas, UnknownNamesAreRefusedAtLoad) {
  try {
    (void)mapping::parse_mapping_text("[mass]\nexpression = \"1 + comunicating\"\n[forces.friction]\nbeta = 1\n", "f.toml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("f.toml:2:19: error: 'expression': unknown name 'comunicating' in expression (did you mean 'communicating'?)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kanoko::models
