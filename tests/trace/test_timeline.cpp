// The timeline: binning of messages, loads and states, checked against values computed by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <filesystem>
#include <cstdio>
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trace/readers.hpp"
#include "src/trace/timeline.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

Timeline bin(const std::string& text, double interval_s = 0.1, std::vector<std::string> busy = {"compute"}) {
  TimelineOptions o;
  o.interval_s = interval_s;
  o.busy_states = std::move(busy);
  TimelineBuilder b(o);
  read_native_trace_text(text, "tl.kntr", b);
  return b.take();
}

std::string nodes(int n) {
  std::string s = "kntr 1\n";
  for (int i = 0; i < n; ++i) s += "node 0 " + std::to_string(i) + "\n";
  return s;
}

/// "src>dst:bytes/messages" for each pair of a bin, in stored order.
std::vector<std::string> traffic(const Timeline& tl, std::size_t b) {
  std::vector<std::string> out;
  for (const auto& p : tl.traffic(b)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%u>%u:%g/%u", p.src, p.dst, p.bytes, p.messages);
    out.emplace_back(buf);
  }
  return out;
}

using Strings = std::vector<std::string>;

/// Traffic by (src, dst): bytes and messages.
using PairTotals = std::map<std::pair<EntityIndex, EntityIndex>, std::pair<double, std::uint32_t>>;

/// Expects bin b of tl to hold exactly the pairs of `want`, in (src, dst) order, with their totals.
void expect_traffic(const Timeline& tl, std::size_t b, const PairTotals& want) {
  const auto got = tl.traffic(b);
  ASSERT_EQ(got.size(), want.size()) << "bin " << b;
  std::size_t k = 0;
  for (const auto& [pair, sums] : want) {
    ASSERT_EQ(got[k].src, pair.first) << "bin " << b << " pair " << k;
    ASSERT_EQ(got[k].dst, pair.second) << "bin " << b << " pair " << k;
    EXPECT_EQ(got[k].bytes, sums.first) << "bin " << b << " pair " << k;
    EXPECT_EQ(got[k].messages, sums.second) << "bin " << b << " pair " << k;
    ++k;
  }
}

TEST(Timeline, ABinOfThousandsOfPairsKeepsThemInSourceThenDestinationOrder) {
  // Large bins are sorted by a radix sort over the bits the bin's entities use: pairs arriving in
  // a scrambled order, with sources and destinations of every width up to 3,000 entities, come
  // out as (src, dst) order would put them, with their totals.
  constexpr int kEntities = 3000;
  std::string text = nodes(kEntities);
  PairTotals want0;
  PairTotals want1;
  std::uint64_t x = 12345;
  const auto next = [&x] { return static_cast<int>((x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 33U); };
  for (int i = 0; i < 20000; ++i) {
    const int src = next() % kEntities;
    const int dst = i % 7 == 0 ? next() % 5 : next() % kEntities;  // some narrow keys too
    const bool late = i >= 12000;
    text += "msg " + std::string(late ? "0.15" : "0.05") + " " + std::to_string(src) + " " + std::to_string(dst) + " 2\n";
    auto& w = (late ? want1 : want0)[{static_cast<EntityIndex>(src), static_cast<EntityIndex>(dst)}];
    w.first += 2;
    ++w.second;
  }
  text += "end 0.2\n";
  const Timeline tl = bin(text);
  ASSERT_EQ(tl.bin_count, 2U);
  expect_traffic(tl, 0, want0);
  expect_traffic(tl, 1, want1);
}

TEST(Timeline, ABinOfMorePairsThanTheRecentOnesAddsEachPairsMessagesOnce) {
  // The builder remembers a bin's recent pairs (TimelineBuilder::kRecentPairBits) and gives a
  // pair it missed another entry, merged at the bin's end or when the entries pass
  // kMinCompaction. 90,000 pairs each sending three times in turn (270,000 messages: the recent
  // pairs miss every one, entries merge twice in the bin), and one pair sending between every
  // message, with amounts of every size, must come out once each with their totals; and so must
  // the pairs of a sparse bin.
  constexpr EntityIndex kEntities = 600;
  TimelineOptions o;
  o.interval_s = 1.0;
  TimelineBuilder b(o);
  for (EntityIndex e = 0; e < kEntities; ++e) b.on_entity(Entity{e, e, "pe" + std::to_string(e), "", -1, {}});
  PairTotals want0, want1;
  double t = 0;
  std::uint64_t x = 99;
  const auto next = [&x] { return (x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 20U; };
  const auto send = [&](EntityIndex src, EntityIndex dst, std::uint64_t bytes, double at) {
    b.on_message(Message{at, -1, src, dst, bytes, -1, 0});
    auto& w = (at < 1.0 ? want0 : want1)[{src, dst}];
    w.first += static_cast<double>(bytes);
    ++w.second;
  };
  for (int round = 0; round < 3; ++round) {
    for (EntityIndex k = 0; k < 90000; ++k) {
      t += 1e-6;
      send(k % kEntities, (k / kEntities + 7 * k) % kEntities, next() % (std::uint64_t{1} << (k % 40)), t);
      send(3, 5, 1 + k % 3, t);
    }
  }
  // A sparse bin (fewer entries than sources: the radix sort's): 400 pairs from sources all over.
  for (EntityIndex k = 0; k < 400; ++k) send((k * 397) % kEntities, k % 9, 1 + k, 1.2 + 1e-4 * k);
  send(1, 2, 10, 1.5);
  send(2, 1, 20, 1.6);
  send(1, 2, 30, 1.7);
  b.on_end(2.0);
  const Timeline tl = b.take();
  ASSERT_EQ(tl.bin_count, 2U);
  expect_traffic(tl, 0, want0);
  expect_traffic(tl, 1, want1);
  EXPECT_EQ(tl.message_count, 540403U);
}

TEST(Timeline, MessagesAreBinnedBySendTime) {
  const Timeline tl = bin(nodes(3) +
                          "msg 0 0 1 10\n"
                          "msg 0.05 0 1 20 recv=0.31\n"  // the receive time does not matter
                          "msg 0.0999 1 0 5\n"
                          "msg 0.1 0 1 7\n"  // exactly on the boundary: bin 1
                          "msg 0.3 2 0 1\n"  // 0.3 / 0.1 is 2.9999999999999996 in binary: still bin 3
                          "msg 0.35 0 2 3\n"
                          "end 0.5\n");
  ASSERT_EQ(tl.bin_count, 5U);
  ASSERT_EQ(tl.pair_begin.size(), 6U);
  EXPECT_EQ(traffic(tl, 0), (Strings{"0>1:30/2", "1>0:5/1"}));
  EXPECT_EQ(traffic(tl, 1), (Strings{"0>1:7/1"}));
  EXPECT_TRUE(tl.traffic(2).empty());
  EXPECT_EQ(traffic(tl, 3), (Strings{"0>2:3/1", "2>0:1/1"}));
  EXPECT_TRUE(tl.traffic(4).empty());
  EXPECT_EQ(tl.message_count, 6U);
}

TEST(Timeline, PairsAreSortedAndMergedWithinABin) {
  const Timeline tl = bin(nodes(3) +
                          "msg 0.01 2 1 1\nmsg 0.02 1 2 2\nmsg 0.03 0 2 4\nmsg 0.04 2 0 8\n"
                          "msg 0.05 1 0 16\nmsg 0.06 2 1 32\nmsg 0.07 0 2 64\nmsg 0.08 1 1 128\n");
  ASSERT_EQ(tl.bin_count, 1U);
  EXPECT_EQ(traffic(tl, 0), (Strings{"0>2:68/2", "1>0:16/1", "1>1:128/1", "1>2:2/1", "2>0:8/1", "2>1:33/2"}));
}

TEST(Timeline, EveryDecimalBoundaryGoesToTheBinItStarts) {
  for (const double interval : {0.1, 0.05, 0.3, 0.25, 1.0}) {
    std::string text = nodes(2);
    for (int k = 0; k < 200; ++k) {
      char t[64];
      std::snprintf(t, sizeof t, "%.15g", k * interval);  // the decimal a person would write
      text += std::string("msg ") + t + " 0 1 " + std::to_string(k + 1) + "\n";
    }
    char end[64];
    std::snprintf(end, sizeof end, "%.15g", 200 * interval);
    const Timeline tl = bin(text + "end " + end + "\n", interval);
    ASSERT_EQ(tl.bin_count, 200U) << interval;
    for (std::size_t k = 0; k < 200; ++k) {
      ASSERT_EQ(tl.traffic(k).size(), 1U) << "interval " << interval << " bin " << k;
      EXPECT_EQ(tl.traffic(k)[0].bytes, static_cast<double>(k + 1)) << "interval " << interval << " bin " << k;
    }
  }
}

TEST(Timeline, JustBeforeABoundaryStaysInTheEarlierBin) {
  const Timeline tl = bin(nodes(2) + "msg 0.0999999 0 1 1\nmsg 0.1999999 0 1 2\nend 0.3\n");
  EXPECT_EQ(traffic(tl, 0), (Strings{"0>1:1/1"}));
  EXPECT_EQ(traffic(tl, 1), (Strings{"0>1:2/1"}));
  EXPECT_TRUE(tl.traffic(2).empty());
}

TEST(Timeline, LoadIsThePiecewiseConstantTimeMean) {
  // Node 0: 0.2 on [0, 0.05), 1.0 on [0.05, 0.25), 0.5 on [0.25, 0.4).
  // Node 1: no sample until 0.15 (0 before), then 1.
  const Timeline tl = bin(nodes(2) +
                          "load 0 0 0.2\nload 0.05 0 1.0\nload 0.15 1 1\nload 0.25 0 0.5\nend 0.4\n");
  ASSERT_EQ(tl.bin_count, 4U);
  EXPECT_NEAR(tl.load_at(0, 0), (0.2 * 0.05 + 1.0 * 0.05) / 0.1, 1e-12);  // 0.6
  EXPECT_NEAR(tl.load_at(1, 0), 1.0, 1e-12);
  EXPECT_NEAR(tl.load_at(2, 0), (1.0 * 0.05 + 0.5 * 0.05) / 0.1, 1e-12);  // 0.75
  EXPECT_NEAR(tl.load_at(3, 0), 0.5, 1e-12);
  EXPECT_NEAR(tl.load_at(0, 1), 0.0, 1e-12);
  EXPECT_NEAR(tl.load_at(1, 1), 0.5, 1e-12);
  EXPECT_NEAR(tl.load_at(2, 1), 1.0, 1e-12);
  EXPECT_NEAR(tl.load_at(3, 1), 1.0, 1e-12);
  EXPECT_EQ(tl.load_sample_count, 4U);
}

TEST(Timeline, ASampleHeldOverManyBins) {
  const Timeline tl = bin(nodes(1) + "load 0.03 0 0.8\nload 0.73 0 0.1\nend 1\n");
  ASSERT_EQ(tl.bin_count, 10U);
  EXPECT_NEAR(tl.load_at(0, 0), 0.8 * 0.07 / 0.1, 1e-12);
  for (std::size_t b = 1; b < 7; ++b) EXPECT_NEAR(tl.load_at(b, 0), 0.8, 1e-12) << b;
  EXPECT_NEAR(tl.load_at(7, 0), (0.8 * 0.03 + 0.1 * 0.07) / 0.1, 1e-12);
  for (std::size_t b = 8; b < 10; ++b) EXPECT_NEAR(tl.load_at(b, 0), 0.1, 1e-12) << b;
}

TEST(Timeline, PartialLastBinIsAveragedOverItsOwnWidth) {
  // end 0.25: bins [0, 0.1), [0.1, 0.2), [0.2, 0.25).
  const Timeline tl = bin(nodes(1) + "load 0 0 1\nstate 0.2 0 0.05 compute\nload 0.22 0 0\nend 0.25\n");
  ASSERT_EQ(tl.bin_count, 3U);
  EXPECT_NEAR(tl.load_at(1, 0), 1.0, 1e-12);
  EXPECT_NEAR(tl.load_at(2, 0), (1.0 * 0.02) / 0.05, 1e-12);  // 0.4
  EXPECT_NEAR(tl.busy_s[2], 0.05, 1e-12);
  // Busy the whole partial bin is a busy fraction of 1, as a load of 1 would be.
  EXPECT_NEAR(tl.busy_fraction(2, 0), 1.0, 1e-12);
  EXPECT_NEAR(tl.busy_fraction(1, 0), 0.0, 1e-12);
}

TEST(Timeline, BusySecondsOfStatesSpanningSeveralBins) {
  const Timeline tl = bin(nodes(2) +
                          "state 0.05 0 0.3 compute\n"  // [0.05, 0.35)
                          "state 0.1 1 0.2 idle\n"      // not busy
                          "state 0.12 1 0.01 compute\n" // [0.12, 0.13)
                          "end 0.4\n");
  ASSERT_EQ(tl.bin_count, 4U);
  const std::vector<double> expected0{0.05, 0.1, 0.1, 0.05};
  for (std::size_t b = 0; b < 4; ++b) {
    EXPECT_NEAR(tl.busy_s[b * 2 + 0], expected0[b], 1e-12) << b;
    EXPECT_NEAR(tl.busy_fraction(b, 0), expected0[b] / 0.1, 1e-9) << b;
  }
  EXPECT_NEAR(tl.busy_s[1 * 2 + 1], 0.01, 1e-12);
  EXPECT_NEAR(tl.busy_s[0 * 2 + 1] + tl.busy_s[2 * 2 + 1] + tl.busy_s[3 * 2 + 1], 0.0, 1e-15);
  EXPECT_EQ(tl.state_count, 3U);
}

TEST(Timeline, BusyStatesOptionChoosesTheNames) {
  const std::string text = nodes(1) + "state 0 0 0.02 compute\nstate 0.02 0 0.03 send\nstate 0.05 0 0.04 idle\nend 0.1\n";
  EXPECT_NEAR(bin(text).busy_s[0], 0.02, 1e-12);
  EXPECT_NEAR(bin(text, 0.1, {"compute", "send"}).busy_s[0], 0.05, 1e-12);
  EXPECT_NEAR(bin(text, 0.1, {"idle"}).busy_s[0], 0.04, 1e-12);
  EXPECT_NEAR(bin(text, 0.1, {}).busy_s[0], 0.0, 1e-15);
}

TEST(Timeline, EndComesFromTheEndEntryOrTheLatestTime) {
  EXPECT_EQ(bin(nodes(2) + "load 0.05 0 1\nend 0.5\n").bin_count, 5U);
  EXPECT_EQ(bin(nodes(2) + "load 0.05 0 1\nend 0.5\n").end_s, 0.5);
  // Observed: the latest of times, receive times and state ends.
  EXPECT_EQ(bin(nodes(2) + "msg 0.05 0 1 1 recv=0.42\n").end_s, 0.42);
  EXPECT_EQ(bin(nodes(2) + "msg 0.05 0 1 1 recv=0.42\n").bin_count, 5U);
  EXPECT_EQ(bin(nodes(2) + "state 0.05 0 0.6 idle\n").bin_count, 7U);
  EXPECT_EQ(bin(nodes(2) + "end 0.3\n").bin_count, 3U);
  EXPECT_EQ(bin(nodes(2) + "end 0.30000000000000004\n").bin_count, 3U);
  EXPECT_EQ(bin(nodes(2) + "end 0.31\n").bin_count, 4U);
  EXPECT_EQ(bin(nodes(2)).bin_count, 1U);  // an empty run still has one bin
  const Timeline tl = bin(nodes(2) + "end 0.5\n", 0.25);
  EXPECT_EQ(tl.begin_s, 0.0);
  EXPECT_EQ(tl.interval_s, 0.25);
  EXPECT_EQ(tl.end_s, 0.5);
  EXPECT_EQ(tl.bin_count, 2U);
  EXPECT_TRUE(tl.load.empty());  // no load samples: no array of zeros (load_at is 0)
  EXPECT_EQ(tl.load_at(1, 1), 0.0);
  EXPECT_EQ(tl.busy_s.size(), 4U);
}

TEST(Timeline, TheLoadArrayAppearsWithTheFirstSample) {
  // A sample after two bins exist: the bins before it read 0, as they would have without it.
  const Timeline tl = bin(nodes(2) + "state 0 0 0.6 compute\nload 0.5 1 2\nend 1\n", 0.25);
  ASSERT_EQ(tl.bin_count, 4U);
  ASSERT_EQ(tl.load.size(), 8U);
  EXPECT_EQ(tl.load_at(0, 1), 0.0);
  EXPECT_EQ(tl.load_at(1, 1), 0.0);
  EXPECT_NEAR(tl.load_at(2, 1), 2.0, 1e-12);
  EXPECT_NEAR(tl.load_at(3, 1), 2.0, 1e-12);
  for (std::size_t b = 0; b < 4; ++b) EXPECT_EQ(tl.load_at(b, 0), 0.0) << b;
}

TEST(Timeline, NothingLandsInABinPastTheEnd) {
  // A state ending exactly at the end, a message sent at the end.
  Timeline tl = bin(nodes(2) + "state 0.1 0 0.1 compute\nend 0.2\n");
  EXPECT_EQ(tl.bin_count, 2U);
  EXPECT_NEAR(tl.busy_s[1 * 2 + 0], 0.1, 1e-12);
  tl = bin(nodes(2) + "msg 0.2 0 1 9\nend 0.2\n");
  ASSERT_EQ(tl.bin_count, 2U);
  EXPECT_EQ(traffic(tl, 1), (Strings{"0>1:9/1"}));
  tl = bin(nodes(2) + "state 0 0 0.3 compute\n");  // observed end 0.3
  EXPECT_EQ(tl.bin_count, 3U);
  EXPECT_NEAR(tl.busy_s[2 * 2 + 0], 0.1, 1e-12);
  // A state running past a declared end is cut at the end.
  tl = bin(nodes(2) + "state 0.15 0 5 compute\nend 0.25\n");
  ASSERT_EQ(tl.bin_count, 3U);
  EXPECT_NEAR(tl.busy_s[1 * 2 + 0], 0.05, 1e-12);
  EXPECT_NEAR(tl.busy_s[2 * 2 + 0], 0.05, 1e-12);
  EXPECT_NEAR(tl.busy_fraction(2, 0), 1.0, 1e-9);
  ASSERT_EQ(tl.pair_begin.size(), 4U);
}

/// The timeline of `path` read twice: as a stream, then told its end before (TimelineOptions::known_end_s).
std::pair<Timeline, Timeline> without_and_with_known_end(const std::filesystem::path& path, const std::string& text = {}) {
  const auto read = [&](std::optional<double> end) {
    TimelineOptions o;
    o.interval_s = 0.1;
    o.busy_states = {"compute", "Computing", "computing", "Running"};
    o.communicating_states = {"send", "MPI_*"};
    o.idle_states = {"idle", "wait*"};
    o.known_end_s = end;
    TimelineBuilder b(o);
    if (text.empty()) {
      read_trace(path, b);
    } else {
      read_native_trace_text(text, path.string(), b);
    }
    return b.take();
  };
  Timeline streamed = read(std::nullopt);
  const double end = streamed.end_s;
  return {std::move(streamed), read(end)};
}

void expect_same_timeline(const Timeline& a, const Timeline& b, double relative) {
  ASSERT_EQ(a.bin_count, b.bin_count);
  EXPECT_EQ(a.pair_begin, b.pair_begin);
  ASSERT_EQ(a.pairs.size(), b.pairs.size());
  for (std::size_t i = 0; i < a.pairs.size(); ++i) EXPECT_EQ(a.pairs[i].bytes, b.pairs[i].bytes) << i;
  for (const auto member : {&Timeline::busy_s, &Timeline::comm_s, &Timeline::idle_s, &Timeline::load}) {
    const std::vector<double>& x = a.*member;
    const std::vector<double>& y = b.*member;
    ASSERT_EQ(x.size(), y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (relative == 0) {
        EXPECT_EQ(x[i], y[i]) << "cell " << i;
      } else {
        EXPECT_NEAR(x[i], y[i], relative * std::max(1.0, std::abs(x[i]))) << "cell " << i;
      }
    }
  }
}

TEST(Timeline, AKnownEndGivesTheTimelineOfTheHeldStates) {
  // States one after another on each entity: bit for bit. A state running past the end is cut
  // there; categories appear late; an entity is declared after states began.
  const std::string text = nodes(3) +
                           "state 0.05 0 0.3 compute\nstate 0.1 1 0.2 idle\nstate 0.12 2 0.01 send\nmsg 0.13 0 1 5\n"
                           "load 0.2 2 3\nnode 0.2 3\nstate 0.21 3 0.02 wait\nstate 0.3 1 4 compute\n"
                           "state 0.35 0 0.01 compute\nend 0.45\n";
  const auto [held, told] = without_and_with_known_end("known.kntr", text);
  expect_same_timeline(held, told, 0);
  EXPECT_NEAR(told.busy_s[4 * 4 + 1], 0.05, 1e-12) << "cut at the end";
}

TEST(Timeline, AKnownEndGivesTheTimelineOfRealTraces) {
  // Nested MPI states (SMPI), Paraver's and OTF2's states: equal within rounding (overlapping
  // states of one entity add in another order).
  for (const auto& path : {test::source_dir() / "traces/smpi/late4-locations.trace", test::source_dir() / "traces/smpi/halo2d-16-slow5.trace",
                           test::shared_dir() / "traces/paraver/lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv",
                           test::shared_dir() / "traces/otf2/ping-pong-otf2/traces.otf2"}) {
    SCOPED_TRACE(path.string());
    const auto [held, told] = without_and_with_known_end(path);
    expect_same_timeline(held, told, 1e-12);
    double seconds = 0;
    for (const auto* v : {&told.busy_s, &told.comm_s, &told.idle_s}) {
      for (const double x : *v) seconds += x;
    }
    EXPECT_GT(seconds, 0) << "no state time: the comparison would be empty";
  }
}

/// Every bin's busy_fractions against busy_fraction entity by entity, bit for bit.
void expect_busy_fractions_match(const Timeline& tl) {
  std::vector<double> all(tl.entity_count());
  for (std::size_t b = 0; b < tl.bin_count; ++b) {
    tl.busy_fractions(b, all);
    for (std::size_t e = 0; e < tl.entity_count(); ++e) {
      ASSERT_EQ(all[e], tl.busy_fraction(b, static_cast<EntityIndex>(e))) << "bin " << b << ", entity " << e;
    }
  }
}

TEST(Timeline, BusyFractionsOfABinAreEachEntitysBusyFraction) {
  // Overlapping states past the bin's width (cut), within rounding of it (kept), a partial last
  // bin, and bodies standing for several members.
  Timeline tl = bin(nodes(3) +
                    "state 0 0 0.1 compute\nstate 0 0 0.05 compute\nstate 0.1 1 0.1000000000000001 compute\n"
                    "state 0.2 2 0.03 compute\nstate 0.21 2 0.2 compute\nend 0.33\n");
  ASSERT_EQ(tl.bin_count, 4U);
  expect_busy_fractions_match(tl);
  EXPECT_EQ(tl.busy_fraction(0, 0), 1.0) << "0.15 s in a 0.1 s bin: the excess is cut";
  tl.members = {2, 1, 3};
  expect_busy_fractions_match(tl);
  EXPECT_NEAR(tl.busy_fraction(0, 0), 1.5, 1e-12) << "0.15 s of two members' 0.1 s";
  for (const auto& path : {test::source_dir() / "traces/smpi/halo2d-16-slow5.trace",
                           test::shared_dir() / "traces/paraver/lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv"}) {
    SCOPED_TRACE(path.string());
    TimelineOptions o;
    o.interval_s = 0.1;
    o.busy_states = {"compute", "Running", "Computing"};
    TimelineBuilder b(o);
    read_trace(path, b);
    expect_busy_fractions_match(b.take());
  }
}

TEST(Timeline, AKnownEndReservesTheArraysOnce) {
  // Ten bins of three nodes, reached one by one: told the end, the arrays are reserved for all
  // of them at the first (no doubling, no copies); the bins themselves are the same.
  std::string text = nodes(3);
  for (int b = 0; b < 10; ++b) {
    text += "load " + std::to_string(b) + ".05 1 " + std::to_string(b + 1) + "\n";
    text += "state " + std::to_string(b) + ".1 2 0.5 compute\n";
    text += "msg " + std::to_string(b) + ".2 0 1 " + std::to_string(100 * (b + 1)) + "\n";
  }
  text += "end 10\n";
  const auto read = [&](std::optional<double> end) {
    TimelineOptions o;
    o.interval_s = 1;
    o.busy_states = {"compute"};
    o.known_end_s = end;
    TimelineBuilder b(o);
    read_native_trace_text(text, "ten.kntr", b);
    return b.take();
  };
  const Timeline streamed = read(std::nullopt);
  const Timeline told = read(10.0);
  ASSERT_EQ(told.bin_count, 10U);
  expect_same_timeline(streamed, told, 0);
  EXPECT_EQ(told.load.capacity(), 30U);
  EXPECT_EQ(told.busy_s.capacity(), 30U);
  EXPECT_GT(streamed.load.capacity(), 30U);  // grown by doubling: the case the reservation avoids
  EXPECT_NEAR(told.busy_s[9 * 3 + 2], 0.5, 1e-12);
  EXPECT_NEAR(told.load[4 * 3 + 1], 0.95 * 5 + 0.05 * 4, 1e-12);
}

TEST(Timeline, ABigTimelineMappedAheadIsTheSameAsOneWithout) {
  // Reserved for three million messages (72 MB of pair records: from 64 MiB the pages are mapped
  // ahead of the filling on a thread of their own, src/base/prefault.hpp): the bins are exactly
  // those of the same read with nothing reserved.
  constexpr int kNodes = 400;
  constexpr int kBins = 200;
  std::string text = nodes(kNodes);
  for (int b = 0; b < kBins; ++b) {
    for (int e = 0; e < kNodes; e += 3) {
      const std::string t = std::to_string(b + 0.1 + 0.002 * e);  // in time order
      text += "state " + t + " " + std::to_string(e) + " 0.15 compute\n";
      text += "msg " + t + " " + std::to_string(e) + " " + std::to_string((e * 7 + b) % kNodes) + " " +
              std::to_string(64 * (e + b + 1)) + "\n";
    }
  }
  text += "end " + std::to_string(kBins) + "\n";
  const auto read = [&](std::uint64_t expected_messages) {
    TimelineOptions o;
    o.interval_s = 1;
    o.busy_states = {"compute"};
    o.known_end_s = kBins;
    o.expected_messages = expected_messages;
    TimelineBuilder b(o);
    read_native_trace_text(text, "big.kntr", b);
    return b.take();
  };
  const Timeline plain = read(0);
  const Timeline ahead = read(3'000'000);
  ASSERT_EQ(ahead.bin_count, static_cast<std::size_t>(kBins));
  ASSERT_GT(ahead.pairs.size(), 20'000U);
  expect_same_timeline(plain, ahead, 0);
  for (std::size_t i = 0; i < plain.pairs.size(); ++i) {
    ASSERT_EQ(std::tie(plain.pairs[i].src, plain.pairs[i].dst, plain.pairs[i].messages),
              std::tie(ahead.pairs[i].src, ahead.pairs[i].dst, ahead.pairs[i].messages))
        << i;
  }
}

TEST(Timeline, AnEndOtherThanTheKnownOneIsAnError) {
  TimelineOptions o;
  o.interval_s = 0.1;
  o.known_end_s = 0.3;
  TimelineBuilder b(o);
  try {
    read_native_trace_text(nodes(1) + "state 0 0 0.1 compute\nend 0.25\n", "changed.kntr", b);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did it change while it was read"), std::string::npos) << e.what();
  }
}

TEST(Timeline, EntityDeclaredAfterTrafficBeganKeepsEarlierData) {
  const Timeline tl = bin(nodes(2) +
                          "load 0 0 0.5\nload 0 1 0.25\n"
                          "state 0.02 0 0.2 compute\n"  // bins 0..2 of node 0
                          "msg 0.15 0 1 3\n"
                          "node 0.25 7 name=late\n"
                          "load 0.25 7 1\n"
                          "msg 0.26 7 0 5\n"
                          "state 0.3 7 0.05 compute\n"
                          "end 0.4\n");
  ASSERT_EQ(tl.entity_count(), 3U);
  EXPECT_EQ(tl.entities[2].name, "late");
  EXPECT_EQ(tl.entities[2].id, 7);
  ASSERT_EQ(tl.bin_count, 4U);
  ASSERT_EQ(tl.load.size(), 12U);
  for (std::size_t b = 0; b < 4; ++b) {
    EXPECT_NEAR(tl.load_at(b, 0), 0.5, 1e-12) << b;
    EXPECT_NEAR(tl.load_at(b, 1), 0.25, 1e-12) << b;
  }
  EXPECT_NEAR(tl.load_at(0, 2), 0.0, 1e-12);
  EXPECT_NEAR(tl.load_at(1, 2), 0.0, 1e-12);
  EXPECT_NEAR(tl.load_at(2, 2), 0.5, 1e-12);
  EXPECT_NEAR(tl.load_at(3, 2), 1.0, 1e-12);
  EXPECT_NEAR(tl.busy_s[0 * 3 + 0], 0.08, 1e-12);
  EXPECT_NEAR(tl.busy_s[1 * 3 + 0], 0.1, 1e-12);
  EXPECT_NEAR(tl.busy_s[2 * 3 + 0], 0.02, 1e-12);
  EXPECT_NEAR(tl.busy_s[3 * 3 + 2], 0.05, 1e-12);
  EXPECT_NEAR(tl.busy_s[3 * 3 + 0], 0.0, 1e-15);
  EXPECT_EQ(traffic(tl, 1), (Strings{"0>1:3/1"}));
  EXPECT_EQ(traffic(tl, 2), (Strings{"2>0:5/1"}));
}

TEST(Timeline, EntitiesLinksAndCountsAreCopied) {
  const Timeline tl = bin(nodes(3) + "link 0 4 0 2 name=x\nmsg 0 0 1 1\nmsg 0 1 0 1\nload 0 0 1\nstate 0 0 0 idle\n");
  ASSERT_EQ(tl.links.size(), 1U);
  EXPECT_EQ(tl.links[0].id, 4);
  EXPECT_EQ(tl.links[0].b, 2U);
  EXPECT_EQ(tl.links[0].name, "x");
  EXPECT_EQ(tl.entity_count(), 3U);
  EXPECT_EQ(tl.message_count, 2U);
  EXPECT_EQ(tl.load_sample_count, 1U);
  EXPECT_EQ(tl.state_count, 1U);
}

TEST(Timeline, ZeroLengthRunKeepsTheLoadInEffect) {
  // A run that ends at 0 has one bin of no width; its load is the value in effect, not 0 or NaN.
  const Timeline tl = bin(nodes(1) + "load 0 0 0.75\n");
  ASSERT_EQ(tl.bin_count, 1U);
  EXPECT_EQ(tl.load_at(0, 0), 0.75);
  EXPECT_EQ(tl.busy_fraction(0, 0), 0.0);
}

TEST(Timeline, BinOfClampsAndSnaps) {
  const Timeline tl = bin(nodes(1) + "end 1\n");
  ASSERT_EQ(tl.bin_count, 10U);
  EXPECT_EQ(tl.bin_of(-5), 0U);
  EXPECT_EQ(tl.bin_of(0), 0U);
  EXPECT_EQ(tl.bin_of(0.0999), 0U);
  EXPECT_EQ(tl.bin_of(0.1), 1U);
  EXPECT_EQ(tl.bin_of(0.3), 3U);
  EXPECT_EQ(tl.bin_of(0.7), 7U);
  EXPECT_EQ(tl.bin_of(0.95), 9U);
  EXPECT_EQ(tl.bin_of(1.0), 9U);
  EXPECT_EQ(tl.bin_of(1e300), 9U);
}

TEST(Timeline, ImpossiblyManyBinsIsAnInputError) {
  for (const std::string& line : {std::string("end 1e300\n"), std::string("msg 1e18 0 1 1\n"),
                                  std::string("state 0 0 1e12 compute\n"), std::string("load 1e12 0 1\n")}) {
    try {
      bin(nodes(2) + line);
      ADD_FAILURE() << line << " accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.diagnostics().at(0).loc.line, 4) << e.what();
      EXPECT_NE(std::string(e.what()).find("interval"), std::string::npos) << e.what();
    }
  }
  // A tiny interval on an ordinary trace, likewise.
  EXPECT_THROW(bin(nodes(2) + "end 10\n", 1e-300), InputError);
  // Many nodes times many bins.
  EXPECT_THROW(bin(nodes(100) + "end 100000\n", 0.01), InputError);
  // The limit is far above real runs: an hour at 0.1 s for 64 nodes.
  EXPECT_NO_THROW(bin(nodes(64) + "end 3600\n"));
}

TEST(Timeline, OverlappingStatesFitIntoTheBin) {
  // Nested states (a host's two services at once): their seconds add up to more than the bin,
  // but the fractions are of the bin's time, computing first.
  TimelineOptions o;
  o.interval_s = 0.1;
  o.busy_states = {"compute"};
  o.idle_states = {"idle"};
  TimelineBuilder b(o);
  read_native_trace_text(nodes(1) + "state 0 0 0.1 compute\nstate 0 0 0.1 compute\nstate 0 0 0.1 idle\nend 0.2\n",
                         "tl.kntr", b);
  const Timeline tl = b.take();
  EXPECT_DOUBLE_EQ(tl.busy_s[0], 0.2);  // the raw seconds keep both states
  EXPECT_DOUBLE_EQ(tl.busy_fraction(0, 0), 1.0);
  EXPECT_DOUBLE_EQ(tl.idle_fraction(0, 0), 0.0);
  EXPECT_DOUBLE_EQ(tl.bin_time(0, 0).busy_s, 0.1);
  EXPECT_DOUBLE_EQ(tl.busy_fraction(1, 0), 0.0);
}

}  // namespace
}  // namespace kanoko::trace
