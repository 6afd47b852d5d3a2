// profile::LocatedTime, the per-interval time at named code locations behind a mapping's
// [locations]: states cut into intervals by the profile's rule, classes, masks, and its memory bound.
#include <gtest/gtest.h>

#include <string>

#include "src/base/error.hpp"
#include "src/profile/located.hpp"
#include "src/profile/profile.hpp"

namespace kanoko::profile {
namespace KANOKO_UNITY_ID {

LocatedOptions options(std::size_t quantities, double interval_s) {
  LocatedOptions o;
  o.interval_s = interval_s;
  o.idle = {"MPI_Recv"};
  o.computing = {"compute"};
  for (std::size_t q = 0; q < quantities; ++q) {
    // Quantity q counts the locations whose line is a multiple of q + 1.
    o.matchers.emplace_back([q](const trace::CodeLocation& l, const std::string&) { return l.line % static_cast<std::int64_t>(q + 1) == 0; });
  }
  return o;
}

void state(LocatedTime& t, double begin, double end, trace::EntityIndex e, const char* name, trace::LocationIndex at) {
  trace::StateInterval s;
  s.begin_s = begin;
  s.end_s = end;
  s.entity = e;
  s.name = name;
  s.location = at;
  t.on_state(s);
}

TEST(LocatedTime, StatesAreCutIntoIntervalsByTheProfilesRule) {
  LocatedTime t(options(2, 0.1));
  t.on_location(1, trace::CodeLocation{"a.c", 3, "", 0});  // quantity 0 only
  t.on_location(2, trace::CodeLocation{"a.c", 4, "", 0});  // quantities 0 and 1
  state(t, 0.05, 0.32, 1, "MPI_Recv", 2);
  state(t, 0.1, 0.1, 0, "MPI_Recv", 2);   // no length: nothing
  state(t, -1, 0.02, 0, "compute", 1);     // before 0: its part in the first interval
  state(t, -2, -1, 0, "compute", 1);       // all before 0: nothing
  state(t, 0.2, 0.3, 0, "other", 1);       // no class: nothing
  state(t, 0.2, 0.3, 0, "compute", 0);     // no location: nothing
  state(t, 0.2, 9.0, 0, "compute", 1);     // past the last interval: cut
  const LocatedSeconds s = t.take(4, 3);
  EXPECT_EQ(s.locations, 2U);
  EXPECT_EQ(s.matched_locations, (std::vector<std::uint64_t>{2, 1}));
  EXPECT_EQ(s.examples[1], std::vector<std::string>{"a.c:4"});
  const double expected[4] = {0.05, 0.1, 0.1, 0.02};
  for (std::size_t b = 0; b < 4; ++b) {
    trace::StateInterval whole;
    whole.begin_s = 0.05;
    whole.end_s = 0.32;
    const double from = static_cast<double>(b) * 0.1;
    EXPECT_DOUBLE_EQ(s.at(0, b, 1, LocatedSeconds::kWaiting), state_part(whole, from, from + 0.1));
    EXPECT_NEAR(s.at(0, b, 1, LocatedSeconds::kWaiting), expected[b], 1e-12) << b;
    EXPECT_DOUBLE_EQ(s.at(1, b, 1, LocatedSeconds::kWaiting), s.at(0, b, 1, LocatedSeconds::kWaiting));
    EXPECT_EQ(s.at(0, b, 1, LocatedSeconds::kComputing), 0.0);
    EXPECT_EQ(s.at(0, b, 2, LocatedSeconds::kWaiting), 0.0);
  }
  EXPECT_NEAR(s.at(0, 0, 0, LocatedSeconds::kComputing), 0.02, 1e-12);
  EXPECT_NEAR(s.at(0, 2, 0, LocatedSeconds::kComputing), 0.1, 1e-12);
  EXPECT_NEAR(s.at(0, 3, 0, LocatedSeconds::kComputing), 0.1, 1e-12);
  EXPECT_EQ(s.at(1, 3, 0, LocatedSeconds::kComputing), 0.0) << "line 3 is not quantity 1's";
}

TEST(LocatedTime, MoreValuesThanTheBoundIsAnErrorNotAnAllocation) {
  LocatedTime t(options(64, 1e-6));
  t.on_location(1, trace::CodeLocation{"a.c", 1, "", 0});
  try {
    state(t, 0, 1.0, 0, "MPI_Recv", 1);  // 10^6 intervals × 64 names × 3 classes
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("[locations]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("use a larger interval"), std::string::npos) << e.what();
  }
  LocatedTime far(options(1, 0.1));
  far.on_location(1, trace::CodeLocation{"a.c", 1, "", 0});
  EXPECT_THROW(state(far, 0, 1e300, 0, "MPI_Recv", 1), InputError);
}

}  // namespace
}  // namespace kanoko::profile
