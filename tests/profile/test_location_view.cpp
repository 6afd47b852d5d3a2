// The profile as the viewer shows it (src/profile/location_view): profiles made again from the
// recorded events equal `kanoko profile`'s, per body and range; where a location dominates; the
// inspect panel's lines; a trace without locations.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "src/profile/location_view.hpp"
#include "src/trace/readers.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::profile {
namespace KANOKO_UNITY_ID {

std::filesystem::path late4() { return test::source_dir() / "traces/smpi/late4-locations.trace"; }

std::int64_t late_line(const std::string& marker) { return test::line_with(test::source_dir() / "traces/smpi/late.c", marker); }

/// The profile straight from the file, as `kanoko profile` makes it.
Profile read_directly(const std::filesystem::path& path, ProfileOptions o) {
  const ProfileOptions classes = profile_defaults(trace::detect_format(path));
  o.computing = classes.computing;
  o.communicating = classes.communicating;
  o.idle = classes.idle;
  ProfileBuilder b(o);
  (void)trace::read_trace(path, b);
  return b.take();
}

void expect_same(const Profile& a, const Profile& b) {
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    EXPECT_TRUE(same_row(a.rows[i], b.rows[i])) << a.rows[i].label << " / " << b.rows[i].label;
    EXPECT_EQ(a.rows[i].calls, b.rows[i].calls) << a.rows[i].label;
    EXPECT_DOUBLE_EQ(a.rows[i].waiting_s, b.rows[i].waiting_s) << a.rows[i].label;
    EXPECT_DOUBLE_EQ(a.rows[i].computing_s, b.rows[i].computing_s) << a.rows[i].label;
    EXPECT_DOUBLE_EQ(a.rows[i].communicating_s, b.rows[i].communicating_s) << a.rows[i].label;
    EXPECT_EQ(a.rows[i].bytes, b.rows[i].bytes) << a.rows[i].label;
    EXPECT_EQ(a.rows[i].spread.ranks, b.rows[i].spread.ranks) << a.rows[i].label;
  }
}

TEST(LocationView, ReplayedProfilesAreThoseOfKanokoProfile) {
  const LocationSource src = read_location_source(late4());
  EXPECT_TRUE(src.no_locations.empty());
  EXPECT_TRUE(src.trace.complete());
  ASSERT_EQ(src.trace.entities().size(), 4U);
  for (const GroupBy by : {GroupBy::Line, GroupBy::Function, GroupBy::Path}) {
    ProfileOptions o = src.defaults;
    o.by = by;
    expect_same(profile_of(src.trace, o), read_directly(late4(), o));
    // A range, and one body: `kanoko profile --from --to --ranks R`.
    o.from_s = 0.03;
    o.to_s = 0.09;
    for (trace::EntityIndex e = 0; e < 4; ++e) {
      ProfileOptions ranked = o;
      ranked.ranks = {src.trace.entities()[e].rank >= 0 ? src.trace.entities()[e].rank : std::int64_t{e}};
      expect_same(profile_of(src.trace, o, e), read_directly(late4(), ranked));
    }
  }
}

TEST(LocationView, TheLateReceiveDominatesTheReceiversAndItsTimes) {
  const LocationSource src = read_location_source(late4());
  const Profile run = profile_of(src.trace, src.defaults);
  ASSERT_FALSE(run.rows.empty());
  const ProfileRow& recv = run.rows.front();
  ASSERT_EQ(recv.line, late_line("/* RECEIVE */")) << recv.label;
  const Dominance d = dominance(src.trace, src.defaults, recv, 50);
  EXPECT_TRUE(d.by_waiting);
  ASSERT_EQ(d.dominant.size(), 4U);
  // Rank 0 is the late sender: it never receives; ranks 1-3 wait there most.
  for (trace::EntityIndex e = 0; e < 4; ++e) {
    EXPECT_EQ(d.dominant[e], src.trace.entities()[e].rank != 0) << src.trace.entities()[e].name;
  }
  EXPECT_EQ(d.share[0], 0.0);
  EXPECT_GT(d.share[1], 0.5);
  // The receives wait in each of the 3 iterations, not all the time.
  ASSERT_FALSE(d.spans.empty());
  double covered = 0;
  for (const auto& [a, b] : d.spans) {
    EXPECT_LT(a, b);
    EXPECT_GE(a, src.trace.begin_s() - 1e-12);
    EXPECT_LE(b, src.trace.end_s() + 1e-9);
    covered += b - a;
  }
  EXPECT_GT(covered, 0.1 * (src.trace.end_s() - src.trace.begin_s()));
  EXPECT_LT(covered, 0.999 * (src.trace.end_s() - src.trace.begin_s()));
  // The compute line dominates by its waiting elsewhere: not on the receivers' bodies alone.
  const Dominance other = dominance(src.trace, src.defaults, run.rows[1], 50);
  EXPECT_NE(other.dominant, d.dominant);
}

TEST(LocationView, InspectLinesListTheBodysTopLocationsForTheIntervalAndTheRun) {
  const LocationSource src = read_location_source(late4());
  trace::EntityIndex r3 = 0;
  for (trace::EntityIndex e = 0; e < 4; ++e) {
    if (src.trace.entities()[e].rank == 3) r3 = e;
  }
  ProfileOptions interval = src.defaults;
  interval.from_s = 0.0;
  interval.to_s = 1e-9;  // nothing of rank 3 happens there
  const std::string text =
      locations_text(profile_of(src.trace, interval, r3), profile_of(src.trace, src.defaults, r3), 5);
  const std::string site = "late.c:" + std::to_string(late_line("/* RECEIVE */"));
  const std::size_t run_at = text.find("whole run");
  ASSERT_NE(run_at, std::string::npos) << text;
  // The first row of the whole run is the receive.
  const std::size_t first_row = text.find('\n', run_at) + 1;
  const std::string row = text.substr(first_row, text.find('\n', first_row) - first_row);
  EXPECT_NE(row.find(site), std::string::npos) << text;
  EXPECT_NE(text.find("this interval"), std::string::npos);
}

TEST(LocationView, ATraceWithoutLocationsSaysHowToRecordThem) {
  const LocationSource src = read_location_source(test::source_dir() / "traces/smpi/pipeline8-flat.trace");
  EXPECT_NE(src.no_locations.find("no code locations in this paje trace"), std::string::npos) << src.no_locations;
  EXPECT_NE(src.no_locations.find("trace-call-location"), std::string::npos) << src.no_locations;
  EXPECT_EQ(src.no_locations.find('\n'), std::string::npos) << "one line";
}

}  // namespace
}  // namespace kanoko::profile

namespace kanoko::profile {
namespace KANOKO_UNITY_ID {

TEST(LocationView, RowsSortByAnyColumnEitherWay) {
  Profile p;
  for (const auto& [label, waiting, calls] : std::vector<std::tuple<std::string, double, std::uint64_t>>{
           {"b", 3.0, 1}, {"a", 1.0, 7}, {"c", 2.0, 7}}) {
    ProfileRow r;
    r.label = label;
    r.waiting_s = waiting;
    r.calls = calls;
    p.rows.push_back(r);
  }
  const auto order = [&] {
    std::string s;
    for (const ProfileRow& r : p.rows) s += r.label;
    return s;
  };
  sort_rows(p, SortBy::waiting);
  EXPECT_EQ(order(), "bca");
  sort_rows(p, SortBy::waiting, true);
  EXPECT_EQ(order(), "acb");
  sort_rows(p, SortBy::calls);
  EXPECT_EQ(order(), "acb") << "ties keep their order";
  sort_rows(p, SortBy::location);
  EXPECT_EQ(order(), "abc");
  sort_rows(p, SortBy::location, true);
  EXPECT_EQ(order(), "cba");
}

}  // namespace
}  // namespace kanoko::profile

namespace kanoko::profile {
namespace KANOKO_UNITY_ID {

TEST(LocationView, InspectLinesPutTheLocationFirstAndCutLongOnesWhole) {
  Profile p;
  ProfileRow r;
  r.label = std::string(20, 'a') + "\xc3\xa9\xc3\xa9\xc3\xa9" + std::string(60, 'b');  // é at the cut
  r.waiting_s = 1.5;
  r.calls = 2;
  p.rows.push_back(r);
  const std::string text = locations_text(p, p, 5);
  // 21 bytes would end inside the first é: the cut keeps 20.
  EXPECT_NE(text.find("\n  " + std::string(20, 'a') + "...  1.5 "), std::string::npos) << text;
  std::string one_line = text;
  std::replace(one_line.begin(), one_line.end(), '\n', ' ');
  EXPECT_EQ(printable(one_line), one_line) << "no character cut in two";
}

}  // namespace
}  // namespace kanoko::profile
