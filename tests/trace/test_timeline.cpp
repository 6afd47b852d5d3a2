// The timeline: binning of messages, loads and states, checked against values computed by hand.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::trace {
namespace {

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
  EXPECT_EQ(tl.load.size(), 4U);
  EXPECT_EQ(tl.busy_s.size(), 4U);
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
