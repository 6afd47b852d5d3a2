// [locations] in mappings (issue 19, point 5): named call sites give formulas per-interval seconds
// computing, communicating and waiting there, computed by the profile's code; checked against
// `kanoko profile` on the late sender traces/smpi/late4-locations.trace, and every bad input.
#include <gtest/gtest.h>

#include <cmath>

#include "models/model.hpp"
#include "models/quantities.hpp"
#include "src/base/error.hpp"
#include "src/ingest/schema.hpp"
#include "src/profile/profile.hpp"
#include "tests/support/input_error.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::models {
namespace KANOKO_UNITY_ID {

std::filesystem::path late_trace() { return test::source_dir() / "traces" / "smpi" / "late4-locations.trace"; }

mapping::Mapping shipped() { return mapping::parse_mapping_file(test::source_dir() / "mappings" / "locations.toml"); }

mapping::Mapping parse(const std::string& text) { return mapping::parse_mapping_text(text, "l.toml"); }

const std::string kForces = "[forces.friction]\nbeta = 1\n";

/// The message of the InputError parsing `text` throws ("" when it parses).
std::string parse_error(const std::string& text) {
  return test::input_error_of([&] { (void)parse(text); });
}

TEST(LocationMapping, ShippedExampleFollowsTheProfileInEveryIntervalAndRank) {
  const mapping::Mapping m = shipped();
  ASSERT_EQ(m.code_locations.size(), 2U);
  ingest::SelectionReport report;
  const trace::Timeline tl = ingest::read_body_timeline(late_trace(), m, &report);
  ASSERT_EQ(tl.entity_count(), 4U);
  ASSERT_EQ(tl.located_names, (std::vector<std::string>{"late_recv_computing", "late_recv_communicating", "late_recv_waiting",
                                                        "barrier_computing", "barrier_communicating", "barrier_waiting"}));
  EXPECT_TRUE(report.warnings.empty());
  EXPECT_NE(std::find(report.notes.begin(), report.notes.end(), "[locations] late_recv = late.c:31; barrier = late.c:33"),
            report.notes.end());
  const trace::FormatFacts& facts = trace::format_facts("paje");
  double total_waiting = 0;
  for (std::size_t bin = 0; bin < tl.bin_count; ++bin) {
    for (trace::EntityIndex e = 0; e < tl.entity_count(); ++e) {
      // The profile of that interval and rank, by the library (`kanoko profile --from --to --ranks`).
      profile::ProfileOptions o;
      o.from_s = tl.begin_s + static_cast<double>(bin) * tl.interval_s;
      o.to_s = o.from_s + tl.interval_s;
      o.ranks = {tl.entities[e].rank};
      o.computing = facts.states.computing;
      o.communicating = facts.states.communicating;
      o.idle = facts.states.idle;
      profile::ProfileBuilder builder(o);
      (void)trace::read_trace(late_trace(), builder, "paje");
      const profile::Profile p = builder.take();
      double waiting = 0, computing = 0, barrier_waiting = 0;
      for (const profile::ProfileRow& row : p.rows) {
        if (row.label == "late.c:31") {
          waiting += row.waiting_s;
          computing += row.computing_s;
        }
        if (row.label == "late.c:33") barrier_waiting += row.waiting_s;
      }
      const std::string at = "interval " + std::to_string(bin) + ", rank " + std::to_string(e);
      EXPECT_NEAR(tl.located_at(0, bin, e, 2), waiting, 1e-12) << at;
      EXPECT_NEAR(tl.located_at(0, bin, e, 0), computing, 1e-12) << at;
      EXPECT_NEAR(tl.located_at(1, bin, e, 2), barrier_waiting, 1e-12) << at;
      total_waiting += tl.located_at(0, bin, e, 2);
      if (e == 0) {
        EXPECT_EQ(tl.located_at(0, bin, e, 2), 0.0) << "rank 0 sends, it never receives at line 31";
      }
    }
  }
  // The whole run: `kanoko profile`'s first row (docs/profile.md).
  EXPECT_NEAR(total_waiting, 0.273933, 1e-6);
}

TEST(LocationMapping, MassAndColourFollowTheWaitingAtTheReceive) {
  const mapping::Mapping m = shipped();
  const trace::Timeline tl = ingest::read_body_timeline(late_trace(), m);
  Model model(m, tl);
  const std::vector<Edge> no_springs;
  Quantities q(m, tl, no_springs);
  Eigen::VectorXd colour;
  Eigen::MatrixXd stats;
  const auto names = Model::stat_names(m);
  const auto row = static_cast<Eigen::Index>(std::find(names.begin(), names.end(), "late_recv_waiting") - names.begin());
  ASSERT_LT(row, static_cast<Eigen::Index>(names.size()));
  bool heavy = false;
  for (std::size_t bin = 0; bin < tl.bin_count; ++bin) {
    model.set_interval(bin);
    q.set_interval(bin);
    q.body_values(*m.visual.colour, colour);
    model.current_stats(stats);
    ASSERT_EQ(stats.rows(), static_cast<Eigen::Index>(names.size()));
    for (trace::EntityIndex e = 0; e < tl.entity_count(); ++e) {
      const double w = tl.located_at(0, bin, e, 2);
      EXPECT_NEAR(model.masses()[e], 1 + 9 * w / tl.interval_s, 1e-9);
      EXPECT_NEAR(colour[e], w / tl.interval_s, 1e-12);
      EXPECT_DOUBLE_EQ(stats(row, e), w);
      heavy = heavy || model.masses()[e] > 9.9;
    }
  }
  EXPECT_TRUE(heavy) << "some rank waits a whole interval at late.c:31";
  model.set_interval(tl.bin_count);  // settling: no waiting after the trace
  model.current_stats(stats);
  EXPECT_EQ(stats.row(row).sum(), 0.0);
}

TEST(LocationMapping, PairFormulasSeeBothEnds) {
  const mapping::Mapping m = parse("[locations]\nrecv = 'late\\.c:31\\b'\n[forces.communication]\n"
                                   "weight = \"1 + 1000 * src_recv_waiting + 10 * dst_recv_waiting\"\n" + kForces);
  const trace::Timeline tl = ingest::read_body_timeline(late_trace(), m);
  const std::vector<Edge> no_springs;
  Quantities q(m, tl, no_springs);
  std::size_t checked = 0;
  for (std::size_t bin = 0; bin < tl.bin_count; ++bin) {
    q.set_interval(bin);
    for (const trace::PairTraffic& p : tl.traffic(bin)) {
      EXPECT_DOUBLE_EQ(q.weight(p), 1 + 1000 * tl.located_at(0, bin, p.src, 2) + 10 * tl.located_at(0, bin, p.dst, 2));
      ++checked;
    }
  }
  EXPECT_GE(checked, 9U);  // rank 0's sends
  const std::string unknown = parse_error("[locations]\nrecv = 'x'\n[springs]\ntopology = \"ring\"\nk = \"1 + src_recv_wait\"\n");
  EXPECT_NE(unknown.find("(did you mean 'src_recv_waiting'?)"), std::string::npos) << unknown;
}

TEST(LocationMapping, BadEntriesAreLocatedErrors) {
  EXPECT_NE(parse_error("[locations]\nx = 'late\\.c:(31'\n" + kForces).find("l.toml:2:5: error: 'locations.x' is not a valid regular expression"),
            std::string::npos)
      << parse_error("[locations]\nx = 'late\\.c:(31'\n" + kForces);
  EXPECT_NE(parse_error("[locations]\nx = { file = 'a(?=b)' }\n" + kForces).find("'locations.x.file' is not a valid regular expression"),
            std::string::npos);
  EXPECT_NE(parse_error("[locations]\n\"2x\" = 'a'\n" + kForces).find("l.toml:2:8: error: [locations] name '2x' must start"),
            std::string::npos)
      << parse_error("[locations]\n\"2x\" = 'a'\n" + kForces);
  EXPECT_NE(parse_error("[locations]\nx = 3\n" + kForces).find("'locations.x' must be a pattern"), std::string::npos);
  EXPECT_NE(parse_error("[locations]\nx = {}\n" + kForces).find("matches every location"), std::string::npos);
  EXPECT_NE(parse_error("[locations]\nx = { lines = 3 }\n" + kForces).find("unknown key 'lines' in [locations.x] (did you mean 'line'?)"),
            std::string::npos)
      << parse_error("[locations]\nx = { lines = 3 }\n" + kForces);
  EXPECT_NE(parse_error("[locations]\nx = { line = 0 }\n" + kForces).find("'line' = 0 is out of range"), std::string::npos);
  // A formula naming a location variable no entry defines: located, with a suggestion.
  const std::string unknown = parse_error("[locations]\nrecv = 'late'\n[mass]\nexpression = \"1 + recv_wating\"\n" + kForces);
  EXPECT_NE(unknown.find("l.toml:4:19: error: 'expression': unknown name 'recv_wating' in expression (did you mean 'recv_waiting'?)"),
            std::string::npos)
      << unknown;
  // At most 64 names (profile::LocatedTime's masks): the 65th is refused where it is written.
  std::string many = "[locations]\n";
  for (int i = 0; i < 65; ++i) many += "n" + std::to_string(i) + " = 'x'\n";
  EXPECT_NE(parse_error(many + kForces).find("l.toml:66:7: error: [locations] holds more than 64 names"), std::string::npos)
      << parse_error(many + kForces);
  // Without [locations] the names do not exist.
  EXPECT_NE(parse_error("[mass]\nexpression = \"1 + recv_waiting\"\n" + kForces).find("unknown name 'recv_waiting'"), std::string::npos);
  // Variables that would clash: with a body variable is impossible by the suffixes, with another name is not.
  const std::string twice = parse_error("[locations]\na = 'x'\nb = { site = 'y' }\n" + kForces);
  EXPECT_EQ(twice, "");
  const mapping::Mapping ok = parse("[locations]\nrecv = 'late'\n[mass]\nexpression = \"1 + recv_waiting\"\n" + kForces);
  EXPECT_EQ(ok.mass.expression->extra, (std::vector<std::string>{"recv_computing", "recv_communicating", "recv_waiting"}));
}

TEST(LocationMapping, TraceWithoutLocationsSaysHowToRecordThem) {
  const mapping::Mapping m = parse("[locations]\nrecv = 'late\\.c:31'\n" + kForces);
  try {
    (void)ingest::read_body_timeline(test::source_dir() / "traces" / "smpi" / "pipeline8-flat.trace", m);
    FAIL() << "a trace without locations was accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("l.toml:1:1: error: [locations] names code locations, but"), std::string::npos) << what;
    EXPECT_NE(what.find("records none: SimGrid SMPI writes them"), std::string::npos) << what;
  }
}

TEST(LocationMapping, NameMatchingNoLocationIsAWarning) {
  const mapping::Mapping m = parse("[locations]\nrecv = 'late\\.c:31\\b'\nnothing = { file = 'nowhere\\.f90' }\n" + kForces);
  ingest::SelectionReport report;
  const trace::Timeline tl = ingest::read_body_timeline(late_trace(), m, &report);
  ASSERT_EQ(report.warnings.size(), 1U);
  EXPECT_EQ(report.warnings[0].loc.str(), "l.toml:3:11");
  EXPECT_NE(report.warnings[0].message.find("'nothing' matches none of the trace's 6 code locations"), std::string::npos)
      << report.warnings[0].message;
  for (std::size_t bin = 0; bin < tl.bin_count; ++bin) {
    for (trace::EntityIndex e = 0; e < tl.entity_count(); ++e) EXPECT_EQ(tl.located_at(1, bin, e, 2), 0.0);
  }
}

TEST(LocationMapping, TooManyValuesIsALocatedError) {
  // 64 names x 3 classes x 400 000 intervals x 4 bodies: above the bound. Names whose states all
  // lie at the start (PMPI_Init on common.h:59) are refused at [locations] once the run is read;
  // names whose states span the run are refused at the state that passes the bound.
  for (const auto& [site, expected] : {std::pair{"common\\.h:59", "l.toml:3:1: error: [locations]: 64 names over 400000 "
                                                                     "intervals and 4 bodies need more than"},
                                       std::pair{"late", "late4-locations.trace:"}}) {
    std::string text = "[simulation]\nintervals = 400000\n[locations]\n";
    for (int i = 0; i < 64; ++i) text += "n" + std::to_string(i) + " = '" + site + "'\n";
    const std::string error = test::input_error_of([&] { (void)ingest::read_body_timeline(late_trace(), parse(text + kForces)); });
    EXPECT_NE(error.find(expected), std::string::npos) << error;
    EXPECT_NE(error.find("use a larger interval"), std::string::npos) << error;
  }
}

TEST(LocationMapping, TableFormMatchesEveryPartGiven) {
  // Line 31 in late.c: the receive; line 31 in another file would not count, nor late.c:33.
  const mapping::Mapping m = parse("[locations]\nrecv = { file = 'late\\.c$', line = 31 }\nother = { file = 'common', line = 31 }\n" + kForces);
  ingest::SelectionReport report;
  const trace::Timeline tl = ingest::read_body_timeline(late_trace(), m, &report);
  const mapping::Mapping by_site = parse("[locations]\nrecv = 'late\\.c:31\\b'\n" + kForces);
  const trace::Timeline site = ingest::read_body_timeline(late_trace(), by_site);
  EXPECT_EQ(tl.located_s.size(), 2 * site.located_s.size());
  for (std::size_t i = 0; i < site.located_s.size(); ++i) ASSERT_EQ(tl.located_s[i], site.located_s[i]);
  ASSERT_EQ(report.warnings.size(), 1U) << "no location at common.h:31";
}

}  // namespace
}  // namespace kanoko::models
