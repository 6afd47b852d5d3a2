// The worked example of [locations] (docs/mapping-language.md, "Code locations"): simulated with
// mappings/locations.toml, the late receivers' stored waiting at late.c:31 and their mass follow
// `kanoko profile --json` interval by interval, and the cue on that waiting fires once per
// iteration on ranks 1-3, never on rank 0 (the late sender).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>

#include "sonify/cues.hpp"
#include "src/mapping/mapping.hpp"
#include "src/trajectory/trajectory.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::sonify {
namespace KANOKO_UNITY_ID {

std::string late_trace() { return (test::source_dir() / "traces" / "smpi" / "late4-locations.trace").string(); }

/// The interval whose statistics a frame at `t` stores: the one that starts there or before
/// (src/sim/simulate.cpp enters an interval before writing the frame at its start).
std::size_t bin_of_frame(double t, const trajectory::Metadata& meta) {
  return static_cast<std::size_t>(std::floor((t - meta.trace_begin_s) / meta.interval_s + 1e-6));
}

/// waiting_s of late.c:31 for one rank in [from, to) by `kanoko profile --json` (0 without a row).
double profile_waiting(double from, double to, int rank) {
  char range[2][32];
  std::snprintf(range[0], sizeof range[0], "%.17g", from);
  std::snprintf(range[1], sizeof range[1], "%.17g", to);
  const auto r = test::run_kanoko({"profile", late_trace(), "--json", "--top", "0", "--ranks", std::to_string(rank), "--from",
                                   range[0], "--to", range[1]});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  const std::regex row(R"(\{"label":"late\.c:31"[^}]*"waiting_s":([-0-9.eE+]+))");
  return std::regex_search(r.out, m, row) ? std::stod(m[1]) : 0.0;
}

TEST(LocationCues, WorkedExampleFollowsTheProfileAndFiresOncePerIteration) {
  test::TempDir dir;
  const auto run = dir / "late.kntj";
  const auto sim = test::run_kanoko({"simulate", late_trace(), "-m", (test::source_dir() / "mappings" / "locations.toml").string(),
                                     "-o", run.string(), "--quiet"});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const trajectory::Reader reader(run);
  const trajectory::Metadata& meta = reader.meta();
  ASSERT_EQ(meta.body_count(), 4U);
  const int waiting = meta.stat_index("late_recv_waiting");
  const int mass = meta.stat_index("mass");
  ASSERT_GE(waiting, 0);
  ASSERT_GE(meta.stat_index("barrier_waiting"), 0);
  const double interval = meta.interval_s;
  const auto bins = static_cast<std::size_t>(std::ceil((meta.trace_end_s - meta.trace_begin_s) / interval - 1e-9));
  ASSERT_EQ(bins, 100U);
  // The profile of one interval and rank, by the command line, asked once.
  std::map<std::pair<std::size_t, std::int64_t>, double> asked;
  const auto profile = [&](std::size_t b, std::int64_t rank) {
    const auto key = std::pair(b, rank);
    if (asked.count(key) == 0U) {
      const double from = meta.trace_begin_s + static_cast<double>(b) * interval;
      asked[key] = profile_waiting(from, from + interval, static_cast<int>(rank));
    }
    return asked[key];
  };
  // Rank 1 (body 1) in every interval: the stored statistic (in each of the interval's frames) and
  // the mass are the profile's number.
  ASSERT_EQ(meta.bodies[1].rank, 1);
  std::size_t checked = 0;
  for (std::size_t k = 0; k < reader.frame_count(); ++k) {
    const trajectory::FrameView f = reader.frame(k);
    const std::size_t b = bin_of_frame(f.time_s, meta);
    if (b >= bins) break;  // settling: no forcing
    const double expected = profile(b, 1);
    EXPECT_NEAR(f.stats(waiting, 1), expected, 1e-9) << "t = " << f.time_s;
    EXPECT_NEAR(f.stats(mass, 1), 1 + 9 * expected / interval, 1e-6) << "t = " << f.time_s;
    EXPECT_EQ(f.stats(waiting, 0), 0.0) << "rank 0 never receives at late.c:31";
    ++checked;
  }
  EXPECT_GE(checked, 790U);
  // The cue: once per iteration on each late receiver, where its waiting at the receive rises.
  const mapping::Mapping m = mapping::parse_mapping_text(meta.mapping_text, "locations.toml");
  const std::vector<Cue> cues = detect_cues(reader, resolve_cue_rules(m.audio, meta));
  std::vector<int> per_rank(4, 0);
  for (const Cue& c : cues) {
    const std::int64_t rank = meta.bodies[c.body].rank;
    ++per_rank[static_cast<std::size_t>(rank)];
    const std::size_t b = bin_of_frame(c.time_s, meta);
    ASSERT_GT(b, 0U);
    EXPECT_GT(profile(b, rank), profile(b - 1, rank)) << "cue at " << c.time_s << " on rank " << rank;
    EXPECT_NEAR(reader.frame(static_cast<std::size_t>(std::lround((c.time_s - meta.trace_begin_s) / (meta.dt_s * meta.steps_per_frame))))
                    .stats(waiting, c.body),
                profile(b, rank), 1e-9);
  }
  EXPECT_EQ(per_rank, (std::vector<int>{0, 3, 3, 3}));
}

TEST(LocationCues, CueOnAnUnknownLocationVariableSuggestsTheRightOne) {
  test::TempDir dir;
  const auto map = dir / "m.toml";
  std::string text = test::read_text(test::source_dir() / "mappings" / "locations.toml");
  text.replace(text.find("quantity = \"late_recv_waiting\""), 30, "quantity = \"late_recv_wating\" ");
  test::write_text(map, text);
  const auto sim = test::run_kanoko({"simulate", late_trace(), "-m", map.string(), "-o", (dir / "r.kntj").string(), "--quiet"});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const trajectory::Reader reader(dir / "r.kntj");
  const mapping::Mapping m = mapping::parse_mapping_text(reader.meta().mapping_text, map.string());
  try {
    (void)resolve_cue_rules(m.audio, reader.meta());
    FAIL() << "an unknown quantity was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("late_recv_waiting"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kanoko::sonify
