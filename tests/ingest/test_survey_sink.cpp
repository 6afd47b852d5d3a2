// SurveySink's totals per state name (src/ingest/survey.cpp) against a plain map: it finds the
// states seen last without searching, so names that share a length and a first character, more
// names than it remembers, an empty name and a caller that rewrites one buffer for every name
// (as the readers do) must all still be counted under their own names.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "src/ingest/survey.hpp"

namespace kanoko::ingest {
namespace KANOKO_UNITY_ID {

TEST(SurveySink, StateTotalsPerNameMatchAPlainMap) {
  const std::vector<std::string> names{"s1a", "s1b", "s2a", "sxx", "compute", "idle", "", "MPI_Send", "MPI_Recv", "s1c", "t"};
  TraceSurvey survey;
  SurveySink sink(survey);
  trace::Entity e;
  e.name = "rank-0";
  sink.on_entity(e);
  std::map<std::string, StateTotal> expected;
  std::mt19937 rng(3);
  std::uniform_int_distribution<std::size_t> pick(0, names.size() - 1);
  // One buffer for every name, rewritten before each state: the sink may keep nothing of it.
  char buffer[16];
  double t = 0;
  for (int i = 0; i < 20000; ++i) {
    // Runs of one name, alternations of two, and jumps among all of them.
    const std::string& name = i % 3 == 0 ? names[pick(rng)] : names[static_cast<std::size_t>(i / 7) % 4];
    std::memset(buffer, 'z', sizeof buffer);
    std::memcpy(buffer, name.data(), name.size());
    trace::StateInterval s;
    s.begin_s = t;
    s.end_s = t + 0.25 * static_cast<double>(name.size() + 1);
    s.name = std::string_view(buffer, name.size());
    sink.on_state(s);
    StateTotal& x = expected[name];
    ++x.count;
    x.seconds += s.end_s - s.begin_s;
    t += 1;
  }
  sink.on_end(t);
  ASSERT_EQ(survey.states.size(), expected.size());
  for (const auto& [name, total] : expected) {
    const auto it = survey.states.find(name);
    ASSERT_NE(it, survey.states.end()) << "'" << name << "' is missing";
    EXPECT_EQ(it->second.count, total.count) << "'" << name << "'";
    EXPECT_EQ(it->second.seconds, total.seconds) << "'" << name << "'";
  }
  EXPECT_EQ(survey.state_count, 20000U);
}

/// The histogram as it was counted before it remembered its last bin: a division per time.
struct PlainHistogram {
  double width_s = 1e-9;
  std::array<std::uint64_t, EventHistogram::kBins> counts{};
  void add(double t) {
    constexpr std::size_t kBins = EventHistogram::kBins;
    if (!(t >= 0) || !std::isfinite(t)) t = 0;
    while (t >= width_s * static_cast<double>(kBins)) {
      for (std::size_t k = 0; k < kBins / 2; ++k) counts[k] = counts[2 * k] + counts[2 * k + 1];
      std::fill(counts.begin() + kBins / 2, counts.end(), 0);
      width_s *= 2;
    }
    ++counts[std::min(kBins - 1, static_cast<std::size_t>(t / width_s))];
  }
};

TEST(EventHistogram, CountsEveryTimeWhereADivisionPutsIt) {
  // Times in order with repeats, through several coarsenings, with each boundary ahead and an
  // ulp either side of it (there the division and the bin's bounds disagree: 3e-9 less an ulp,
  // divided by 1e-9, is 3); then out of order, negative, infinite and NaN ones.
  EventHistogram h;
  PlainHistogram plain;
  std::vector<double> times;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> step(0, 3e-7);
  double t = 0;
  for (int i = 0; i < 300000; ++i) {
    t += step(rng);
    times.push_back(t);
    if (i % 97 == 0) {
      const double edge = std::ceil(t / plain.width_s) * plain.width_s;  // a boundary ahead
      times.push_back(std::nextafter(edge, 0.0));
      times.push_back(edge);
      times.push_back(std::nextafter(edge, 1.0));
      t = std::max(t, std::nextafter(edge, 1.0));
    }
    if (i % 1000 == 0) times.push_back(t);  // a repeat
    for (const double x : times) {
      h.add(x);
      plain.add(x);
    }
    times.clear();
  }
  for (const double odd : {0.0, -0.0, -1.0, 1e-300, t / 3, t, std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(), t * 10, 1e-9}) {
    h.add(odd);
    plain.add(odd);
  }
  EXPECT_EQ(h.width_s, plain.width_s);
  for (std::size_t k = 0; k < EventHistogram::kBins; ++k) ASSERT_EQ(h.counts[k], plain.counts[k]) << "bin " << k;
}

}  // namespace KANOKO_UNITY_ID
}  // namespace kanoko::ingest
