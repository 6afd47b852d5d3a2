// The ingest's warnings about degenerate inputs: each fires on an input made to have the problem
// and stays silent on a healthy one (docs/zero-configuration.md, "Warnings").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/ingest/checks.hpp"
#include "src/ingest/infer.hpp"
#include "src/ingest/schema.hpp"
#include "src/mapping/mapping.hpp"
#include "tests/support/input_error.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::ingest {
namespace KANOKO_UNITY_ID {

/// A healthy native trace: 4 ranks in a ring, each computing and sending every 10 ms for 2 s.
std::string healthy_trace(bool sizes = true, bool states = true, double late_event_s = -1) {
  std::string t = "kntr 1\n";
  for (int i = 0; i < 4; ++i) t += "node 0 " + std::to_string(i) + " name=rank-" + std::to_string(i) + "\n";
  for (int k = 0; k < 200; ++k) {
    const double at = 0.01 * k;
    char line[160];
    for (int i = 0; i < 4 && states; ++i) {
      std::snprintf(line, sizeof line, "state %.4f %d %.4f compute\n", at, i, 0.002 * (1 + i + k % 3));
      t += line;
    }
    for (int i = 0; i < 4; ++i) {
      std::snprintf(line, sizeof line, "msg %.4f %d %d %d\n", at + 0.0001, i, (i + 1) % 4, sizes ? 1000 * (1 + k % 5) : 0);
      t += line;
    }
  }
  if (late_event_s > 0) t += "msg " + std::to_string(late_event_s) + " 0 1 8\n";
  return t;
}

const char* const kMapping = R"(
[simulation]
interval = "auto"
[mass]
load_gain = 9.0
load = "busy"
[springs]
topology = "ring"
[forces.communication]
gain = 1.0
)";

struct Checked {
  std::vector<std::string> adapted;
  std::vector<std::string> warnings;
};

Checked check(const std::string& trace, const std::string& mapping_text) {
  test::TempDir dir;
  test::write_text(dir.path() / "t.kntr", trace);
  mapping::Mapping m = mapping::parse_mapping_text(mapping_text, "m.toml");
  SelectionReport r;
  const trace::Timeline tl = read_body_timeline(dir.path() / "t.kntr", m, &r);
  Checked c;
  c.adapted = adapt_to_trace(m, r);
  m.simulation.interval_s = tl.interval_s;
  c.warnings = input_warnings(m, tl, r);
  return c;
}

bool mentions(const std::vector<std::string>& lines, const std::string& what) {
  for (const auto& l : lines) {
    if (l.find(what) != std::string::npos) return true;
  }
  return false;
}

TEST(IngestWarnings, AHealthyTraceHasNone) {
  const Checked c = check(healthy_trace(), kMapping);
  EXPECT_TRUE(c.adapted.empty());
  for (const auto& w : c.warnings) ADD_FAILURE() << w;
}

TEST(IngestWarnings, BytesWithoutSizesFallBackToCountsUnlessTheMappingInsists) {
  const Checked c = check(healthy_trace(/*sizes=*/false), kMapping);
  ASSERT_EQ(c.adapted.size(), 1U);
  EXPECT_NE(c.adapted[0].find("counts messages, not bytes"), std::string::npos);
  EXPECT_FALSE(mentions(c.warnings, "zero over the whole run"));  // counts do pull
  const std::string insists = std::string(kMapping) + "quantity = \"bytes\"\n";
  const std::string error = test::input_error_of([&] { (void)check(healthy_trace(false), insists); });
  EXPECT_NE(error.find("m.toml:11:"), std::string::npos) << error;
  EXPECT_NE(error.find("quantity = \"messages\""), std::string::npos) << error;
}

TEST(IngestWarnings, ConstantMassIsSaid) {
  const Checked c = check(healthy_trace(true, /*states=*/false), kMapping);
  EXPECT_TRUE(mentions(c.warnings, "mass is meant to follow load but stays constant")) << testing::PrintToString(c.warnings);
}

TEST(IngestWarnings, FewIntervalsAreSaid) {
  std::string fixed = kMapping;
  fixed.replace(fixed.find("interval = \"auto\""), 17, "interval = 0.1");
  const Checked c = check(healthy_trace(), fixed);
  EXPECT_TRUE(mentions(c.warnings, "only 20 intervals")) << testing::PrintToString(c.warnings);
}

TEST(IngestWarnings, EventsCrowdedByALateEventNameIt) {
  const Checked c = check(healthy_trace(true, true, /*late_event_s=*/900.0), kMapping);
  EXPECT_TRUE(mentions(c.warnings, "of the events fall in")) << testing::PrintToString(c.warnings);
  EXPECT_TRUE(mentions(c.warnings, "'rank-0' at t = 900 s")) << testing::PrintToString(c.warnings);
  // The record itself: the late message is line 1606 (header, 4 nodes, 200 × 8 entries), its time column 5.
  EXPECT_TRUE(mentions(c.warnings, "t.kntr:1606:5")) << testing::PrintToString(c.warnings);
  EXPECT_TRUE(mentions(c.warnings, "--to")) << testing::PrintToString(c.warnings);
}

TEST(IngestWarnings, ZeroForcingIsSaid) {
  std::string t = "kntr 1\nnode 0 0\nnode 0 1\n";
  for (int k = 0; k < 300; ++k) t += "state " + std::to_string(0.01 * k) + " " + std::to_string(k % 2) + " 0.005 compute\n";
  const Checked c = check(t, kMapping);
  EXPECT_TRUE(mentions(c.warnings, "communication force is zero over the whole run")) << testing::PrintToString(c.warnings);
}

TEST(IngestInference, WindowedAutoIntervalFollowsTheWindow) {
  test::TempDir dir;
  test::write_text(dir.path() / "t.kntr", healthy_trace());
  mapping::Mapping m = mapping::parse_mapping_text(std::string(kMapping) + "[trace]\nfrom = 0.5\nto = 1.5\n", "m.toml");
  SelectionReport r;
  const trace::Timeline tl = read_body_timeline(dir.path() / "t.kntr", m, &r);
  EXPECT_DOUBLE_EQ(tl.begin_s, 0.5);
  EXPECT_NEAR(tl.end_s, 1.5, 1e-12);
  EXPECT_EQ(tl.bin_count, 200U);  // 400 messages + 400 states over 4 bodies: the 200 floor
  EXPECT_NEAR(tl.interval_s, 1.0 / 200, 1e-12);
  EXPECT_EQ(tl.message_count, 400U);
}

TEST(IngestInference, ZeroDurationWindowIsALocatedError) {
  test::TempDir dir;
  test::write_text(dir.path() / "t.kntr", healthy_trace());
  const mapping::Mapping m = mapping::parse_mapping_text(std::string(kMapping) + "[trace]\nfrom = 50\n", "m.toml");
  const std::string error = test::input_error_of([&] { (void)read_body_timeline(dir.path() / "t.kntr", m); });
  EXPECT_NE(error.find("m.toml:3:"), std::string::npos) << error;
  EXPECT_NE(error.find("window lasts no time"), std::string::npos) << error;
}

TEST(IngestInference, InferredMappingsParseAndSayWhatTheTraceLacks) {
  test::TempDir dir;
  test::write_text(dir.path() / "plain.kntr", healthy_trace(false, false));
  for (const auto& p : purposes()) {
    InferOptions o;
    o.purpose = p.purpose;
    const InferredMapping inferred = infer_mapping(dir.path() / "plain.kntr", o);
    const mapping::Mapping m = mapping::parse_mapping_text(inferred.text, "inferred.toml");
    EXPECT_TRUE(m.simulation.calibrate);
    EXPECT_TRUE(m.simulation.interval_auto);
    EXPECT_EQ(m.communication->quantity, mapping::CommunicationQuantity::Messages) << p.name;
    if (p.purpose == Purpose::Balance) {
      EXPECT_TRUE(mentions(inferred.warnings, "mass cannot follow load"));
    }
    if (p.purpose == Purpose::Placement) {
      EXPECT_TRUE(mentions(inferred.warnings, "declares no platform graph"));
    }
    EXPECT_NE(inferred.summary.find(p.name), std::string::npos);
  }
  const std::string error = test::input_error_of([] { (void)find_purpose("balanse", FileLoc{"--purpose"}); });
  EXPECT_NE(error.find("did you mean 'balance'?"), std::string::npos) << error;
  test::write_text(dir.path() / "empty.kntr", "kntr 1\nend 1\n");
  const std::string none = test::input_error_of([&] { (void)infer_mapping(dir.path() / "empty.kntr", InferOptions{}); });
  EXPECT_NE(none.find("declares no entity"), std::string::npos) << none;
}

TEST(IngestInference, TimeIndependentReplayRatesComeFromTheMapping) {
  const auto trace = test::shared_dir() / "traces" / "simgrid-ti" / "actions_with_isend.txt";
  const std::string base = "[simulation]\ninterval = \"auto\"\n[forces.friction]\nbeta = 1.0\n[trace]\nformat = \"simgrid-ti\"\n";
  const trace::Timeline fast = read_body_timeline(trace, mapping::parse_mapping_text(base, "m.toml"));
  const trace::Timeline slow = read_body_timeline(
      trace, mapping::parse_mapping_text(base + "flop_rate = 1e6\nbandwidth = 1e3\nlatency = 0.5\n", "m.toml"));
  EXPECT_GT(slow.end_s, 10 * fast.end_s);
  // Elsewhere the keys change nothing, and say so.
  SelectionReport r;
  test::TempDir dir;
  test::write_text(dir.path() / "t.kntr", healthy_trace());
  (void)read_body_timeline(dir.path() / "t.kntr", mapping::parse_mapping_text(std::string(kMapping) + "[trace]\nflop_rate = 1e6\n", "m.toml"), &r);
  ASSERT_EQ(r.warnings.size(), 1U);
  EXPECT_NE(r.warnings[0].message.find("'flop_rate' sets the SimGrid time-independent replay"), std::string::npos);
}

}  // namespace
}  // namespace kanoko::ingest

namespace kanoko::ingest {
namespace KANOKO_UNITY_ID {

TEST(InferredLabels, NamesShowOnSmallRunsAndStayOffOnBigOnes) {
  // 16 ranks keep their names on screen; 200 would cover the picture with text.
  test::TempDir dir;
  for (const int nodes : {16, 200}) {
    std::string trace = "kntr 1\n";
    for (int i = 0; i < nodes; ++i) trace += "node 0 " + std::to_string(i) + "\n";
    for (int i = 0; i + 1 < nodes; ++i) trace += "msg 0.5 " + std::to_string(i) + " " + std::to_string(i + 1) + " 100\n";
    trace += "end 1\n";
    test::write_text(dir.path() / "t.kntr", trace);
    const std::string text = infer_mapping(dir.path() / "t.kntr", InferOptions{}).text;
    const bool named = text.find("labels = \"name\"\n") != std::string::npos && text.find("labels = \"none\"") == std::string::npos;
    EXPECT_EQ(named, nodes == 16) << nodes << " bodies:\n" << text;
  }
}

}  // namespace
}  // namespace kanoko::ingest
