// The POP efficiency metrics and the outlier rule against native traces with answers worked out
// by hand (docs/efficiency.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <string>
#include <vector>

#include "src/trace/efficiency.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

/// Bins a native trace with the native format's default state classes.
Timeline bin(const std::string& text, double interval_s = 0.5) {
  TimelineOptions o;
  o.interval_s = interval_s;
  o.busy_states = {"compute"};
  o.communicating_states = {"send", "recv", "wait"};
  o.idle_states = {"idle"};
  TimelineBuilder b(o);
  read_native_trace_text(text, "eff.kntr", b);
  return b.take();
}

std::string nodes(int n) {
  std::string s = "kntr 1\n";
  for (int i = 0; i < n; ++i) s += "node 0 " + std::to_string(i) + " name=r" + std::to_string(i) + "\n";
  return s;
}

/// A native trace of `n` nodes from `(time, entry)` pairs given in any order, sorted by time.
std::string sorted_trace(int n, std::vector<std::pair<double, std::string>> entries, double end_s) {
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string s = nodes(n);
  for (const auto& [t, line] : entries) s += line + "\n";
  return s + "end " + std::to_string(end_s) + "\n";
}

/// Ranks 0-2 compute 3 s then wait (idle) 3 s; rank 3 computes 6 s; the run ends at 6 s.
std::string overloaded() {
  std::vector<std::pair<double, std::string>> e;
  for (int r = 0; r < 3; ++r) {
    e.emplace_back(0, "state 0 " + std::to_string(r) + " 3 compute");
    e.emplace_back(3, "state 3 " + std::to_string(r) + " 3 idle");
  }
  e.emplace_back(0, "state 0 3 6 compute");
  return sorted_trace(4, e, 6);
}

std::vector<std::string> names(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("r" + std::to_string(i));
  return out;
}

std::vector<std::string> described(const Efficiency& e, int n) {
  std::vector<std::string> out;
  for (const Outlier& o : e.outliers) out.push_back(describe_outlier(o, names(n)));
  return out;
}

/// Four ranks, each computing 2 s then sending 100 bytes to the next (0.5 s) four times; the run
/// ends at 10 s. `slow` ranks compute `factor` times longer per step.
std::string steps(int ranks, double compute_s, int slow = -1, double factor = 1.0, double end_s = 10) {
  std::string s = nodes(ranks);
  for (int step = 0; step < 4; ++step) {
    for (int r = 0; r < ranks; ++r) {
      const double c = r == slow ? compute_s * factor : compute_s;
      const double t0 = step * 2.5;
      s += "state " + std::to_string(t0) + " " + std::to_string(r) + " " + std::to_string(c) + " compute\n";
    }
    for (int r = 0; r < ranks; ++r) {
      s += "msg " + std::to_string(step * 2.5 + 2) + " " + std::to_string(r) + " " + std::to_string((r + 1) % ranks) +
           " 100\n";
    }
  }
  return s + "end " + std::to_string(end_s) + "\n";
}

TEST(Efficiency, BalancedRunIsFullyBalancedWithNoOutliers) {
  const Efficiency e = timeline_efficiency(bin(steps(4, 2.0)));
  ASSERT_TRUE(e.metrics.available) << e.metrics.unavailable_reason;
  EXPECT_DOUBLE_EQ(e.from_s, 0.0);
  EXPECT_DOUBLE_EQ(e.to_s, 10.0);
  ASSERT_EQ(e.entities.size(), 4U);
  for (const EntityActivity& a : e.entities) {
    EXPECT_NEAR(a.useful_s, 8.0, 1e-12);
    EXPECT_EQ(a.messages_sent, 4U);
    EXPECT_EQ(a.messages_received, 4U);
    EXPECT_DOUBLE_EQ(a.bytes_sent, 400.0);
    EXPECT_DOUBLE_EQ(a.bytes_received, 400.0);
  }
  EXPECT_NEAR(e.metrics.load_balance, 1.0, 1e-12);
  EXPECT_NEAR(e.metrics.communication_efficiency, 0.8, 1e-12);  // 8 s useful of 10 s
  EXPECT_NEAR(e.metrics.parallel_efficiency, 0.8, 1e-12);
  EXPECT_TRUE(e.outliers.empty()) << ::testing::PrintToString(described(e, 4));
}

TEST(Efficiency, NoiseOnABalancedRunIsNoOutlier) {
  // Sixteen ranks computing 1 s ± 0.4 %: the MAD is tiny, but no departure reaches a tenth of
  // the median.
  std::string s = nodes(16);
  for (int r = 0; r < 16; ++r) {
    s += "state 0 " + std::to_string(r) + " " + std::to_string(1.0 + 0.0005 * ((r * 7) % 16 - 8)) + " compute\n";
  }
  const Efficiency e = timeline_efficiency(bin(s + "end 1.1\n", 0.1));
  ASSERT_TRUE(e.metrics.available);
  EXPECT_GT(e.metrics.load_balance, 0.99);
  EXPECT_TRUE(e.outliers.empty()) << ::testing::PrintToString(described(e, 16));
  // Fifteen ranks at exactly 1 s and one at 1.02 s: the MAD is 0, so 1.02 stands out, but 2 %
  // of the median does not matter.
  std::string exact = nodes(16);
  for (int r = 0; r < 16; ++r) exact += "state 0 " + std::to_string(r) + (r == 9 ? " 1.02" : " 1") + " compute\n";
  const Efficiency x = timeline_efficiency(bin(exact + "end 1.1\n", 0.1));
  EXPECT_TRUE(x.outliers.empty()) << ::testing::PrintToString(described(x, 16));
}

TEST(Efficiency, OneOverloadedRank) {
  const Efficiency e = timeline_efficiency(bin(overloaded()));
  ASSERT_TRUE(e.metrics.available);
  // mean useful = (3 + 3 + 3 + 6) / 4 = 3.75; max = 6; runtime 6.
  EXPECT_NEAR(e.metrics.mean_useful_s, 3.75, 1e-12);
  EXPECT_NEAR(e.metrics.max_useful_s, 6.0, 1e-12);
  EXPECT_NEAR(e.metrics.load_balance, 0.625, 1e-12);
  EXPECT_NEAR(e.metrics.communication_efficiency, 1.0, 1e-12);
  EXPECT_NEAR(e.metrics.parallel_efficiency, 0.625, 1e-12);
  EXPECT_NEAR(e.entities[0].waiting_s, 3.0, 1e-12);
  EXPECT_NEAR(e.entities[3].waiting_s, 0.0, 1e-12);
  // Computing: median 3, MAD 0, rank 3 at 6 = 2x. Waiting: median 3, MAD 0, rank 3 at 0.
  ASSERT_EQ(e.outliers.size(), 2U) << ::testing::PrintToString(described(e, 4));
  EXPECT_EQ(e.outliers[0].quantity, OutlierQuantity::Computing);
  EXPECT_EQ(e.outliers[0].entity, 3U);
  EXPECT_DOUBLE_EQ(e.outliers[0].value, 6.0);
  EXPECT_DOUBLE_EQ(e.outliers[0].median, 3.0);
  EXPECT_TRUE(std::isinf(e.outliers[0].mads));
  EXPECT_EQ(describe_outlier(e.outliers[0], names(4)), "r3: computing 6 s, 2× the median (3 s), MAD 0");
  EXPECT_EQ(e.outliers[1].quantity, OutlierQuantity::Waiting);
  EXPECT_EQ(e.outliers[1].entity, 3U);
  EXPECT_EQ(describe_outlier(e.outliers[1], names(4)), "r3: waiting 0 s, 0× the median (3 s), MAD 0");
}

TEST(Efficiency, KnownWaitingGivesTheCommunicationEfficiency) {
  // Three ranks: compute 3 s, receive 0.5 s, wait (idle) 0.5 s, compute 1 s; end 5 s.
  // Useful 4 s each: LB 100 %, CommE = 4 / 5 = 80 %.
  std::vector<std::pair<double, std::string>> entries;
  for (int r = 0; r < 3; ++r) {
    const std::string id = std::to_string(r);
    entries.emplace_back(0, "state 0 " + id + " 3 compute");
    entries.emplace_back(3, "state 3 " + id + " 0.5 recv");
    entries.emplace_back(3.5, "state 3.5 " + id + " 0.5 idle");
    entries.emplace_back(4, "state 4 " + id + " 1 compute");
  }
  const Efficiency e = timeline_efficiency(bin(sorted_trace(3, entries, 5)));
  ASSERT_TRUE(e.metrics.available);
  EXPECT_NEAR(e.metrics.load_balance, 1.0, 1e-12);
  EXPECT_NEAR(e.metrics.communication_efficiency, 0.8, 1e-12);
  EXPECT_NEAR(e.metrics.parallel_efficiency, 0.8, 1e-12);
  for (const EntityActivity& a : e.entities) {
    EXPECT_NEAR(a.useful_s, 4.0, 1e-12);
    EXPECT_NEAR(a.communicating_s, 0.5, 1e-12);
    EXPECT_NEAR(a.waiting_s, 0.5, 1e-12);
  }
  EXPECT_TRUE(e.outliers.empty());
  EXPECT_EQ(metric_lines(e.metrics),
            (std::vector<std::string>{"load balance:             100.0 %", "communication efficiency: 80.0 %",
                                      "parallel efficiency:      80.0 %"}));
}

TEST(Efficiency, WindowUsesTheBinsItTouches) {
  // Same as the overloaded run; over [0, 3) everybody computes: LB 100 %. Over [2.9, 4.2) the
  // window widens to the bins [2.5, 4.5): ranks 0-2 compute 0.5 s of 2 s, rank 3 all 2 s.
  const Timeline tl = bin(overloaded());
  const Efficiency head = timeline_efficiency(tl, 0, 3);
  EXPECT_DOUBLE_EQ(head.to_s, 3.0);
  EXPECT_NEAR(head.metrics.load_balance, 1.0, 1e-12);
  EXPECT_NEAR(head.metrics.communication_efficiency, 1.0, 1e-12);
  const Efficiency mid = timeline_efficiency(tl, 2.9, 4.2);
  EXPECT_DOUBLE_EQ(mid.from_s, 2.5);
  EXPECT_DOUBLE_EQ(mid.to_s, 4.5);
  EXPECT_NEAR(mid.entities[0].useful_s, 0.5, 1e-12);
  EXPECT_NEAR(mid.entities[3].useful_s, 2.0, 1e-12);
  EXPECT_NEAR(mid.metrics.load_balance, (3 * 0.5 + 2.0) / 4 / 2.0, 1e-12);
  EXPECT_NEAR(mid.metrics.communication_efficiency, 1.0, 1e-12);
  // A window past the end is empty: no length, no metrics.
  const Efficiency past = timeline_efficiency(tl, 7, 8);
  EXPECT_FALSE(past.metrics.available);
  EXPECT_EQ(past.metrics.unavailable_reason, "the run has no length (it ends where it starts)");
}

TEST(Efficiency, UnavailableWithoutStatesOrLength) {
  const Efficiency none = timeline_efficiency(bin(nodes(3) + "msg 0.5 0 1 10\nend 2\n"));
  EXPECT_FALSE(none.metrics.available);
  EXPECT_EQ(metric_lines(none.metrics),
            (std::vector<std::string>{
                "unavailable: the trace has no states, so no time can be told useful (computing) or not"}));
  const Efficiency zero = timeline_efficiency(bin(nodes(2) + "state 0 0 0 compute\nend 0\n"));
  EXPECT_FALSE(zero.metrics.available);
  EXPECT_EQ(zero.metrics.unavailable_reason, "the run has no length (it ends where it starts)");
  const Efficiency idle = timeline_efficiency(bin(nodes(2) + "state 0 0 1 idle\nend 1\n"));
  EXPECT_FALSE(idle.metrics.available);
  EXPECT_EQ(idle.metrics.unavailable_reason, "no time is spent in a computing state");
  const Efficiency empty = compute_efficiency({}, 0, 1, true);
  EXPECT_FALSE(empty.metrics.available);
  EXPECT_EQ(empty.metrics.unavailable_reason, "the trace has no entities");
}

TEST(Efficiency, OverlappingStatesNeverExceedTheRuntime) {
  // Two overlapping compute states, [0, 2) and [1, 3), and a recv inside them, in a 3 s run: 3 s
  // of useful time, not 4, and no communicating time left.
  const Efficiency e = timeline_efficiency(
      bin(nodes(1) + "state 0 0 2 compute\nstate 1 0 2 compute\nstate 1.5 0 0.5 recv\nend 3\n"));
  ASSERT_TRUE(e.metrics.available);
  EXPECT_NEAR(e.entities[0].useful_s, 3.0, 1e-12);
  EXPECT_NEAR(e.entities[0].communicating_s, 0.0, 1e-12);
  EXPECT_NEAR(e.metrics.communication_efficiency, 1.0, 1e-12);
}

TEST(Efficiency, OneEntity) {
  const Efficiency e = timeline_efficiency(bin(nodes(1) + "state 0 0 1.5 compute\nend 2\n"));
  ASSERT_TRUE(e.metrics.available);
  EXPECT_DOUBLE_EQ(e.metrics.load_balance, 1.0);
  EXPECT_DOUBLE_EQ(e.metrics.communication_efficiency, 0.75);
  EXPECT_TRUE(e.outliers.empty());
}

TEST(Efficiency, TheLargestOfARampIsListed) {
  // Useful times 1..8 s: the MAD rule finds nothing (median 4.5, scaled MAD 2.97), but the
  // maximum is 8 / 4.5 = 1.78x the median.
  std::string s = nodes(8);
  for (int r = 0; r < 8; ++r) s += "state 0 " + std::to_string(r) + " " + std::to_string(r + 1) + " compute\n";
  const Efficiency e = timeline_efficiency(bin(s + "end 8\n"));
  ASSERT_EQ(e.outliers.size(), 1U) << ::testing::PrintToString(described(e, 8));
  EXPECT_TRUE(e.outliers[0].largest);
  EXPECT_EQ(e.outliers[0].entity, 7U);
  EXPECT_EQ(describe_outlier(e.outliers[0], names(8)),
            "r7: computing 8 s, the largest, 1.78× the median (4.5 s), 1.2 MADs out");
  EXPECT_NEAR(e.metrics.load_balance, 4.5 / 8, 1e-12);
}

TEST(Efficiency, NearlyTiedMaximaAreNotNamed) {
  // Useful times 1, 2, 3, 4, 7.99, 8 s: 8 is 2.29x the median 3.5 but only 0.1 % above 7.99.
  std::string s = nodes(6);
  const double useful[] = {1, 2, 3, 4, 7.99, 8};
  for (int r = 0; r < 6; ++r) s += "state 0 " + std::to_string(r) + " " + std::to_string(useful[r]) + " compute\n";
  const Efficiency e = timeline_efficiency(bin(s + "end 8\n"));
  EXPECT_TRUE(e.outliers.empty()) << ::testing::PrintToString(described(e, 6));
}

TEST(Efficiency, AtMostAHandfulPerQuantityFarthestFirst) {
  // Twenty ranks: twelve compute 1 s, eight compute 2 to 3.4 s: eight outliers, five listed.
  std::string s = nodes(20);
  for (int r = 0; r < 20; ++r) {
    const double c = r < 12 ? 1.0 : 2.0 + 0.2 * (r - 12);
    s += "state 0 " + std::to_string(r) + " " + std::to_string(c) + " compute\n";
  }
  const Efficiency e = timeline_efficiency(bin(s + "end 4\n"));
  ASSERT_EQ(e.outliers.size(), kMaxOutliersPerQuantity);
  EXPECT_EQ(e.outliers_left_out[0], 3U);
  for (std::size_t i = 0; i < e.outliers.size(); ++i) EXPECT_EQ(e.outliers[i].entity, 19U - i);
}

TEST(Efficiency, TheOnlySenderIsAnOutlierOfBytes) {
  // A root sends 1000 bytes to each of five ranks: sent bytes median 0, received all equal.
  std::string s = nodes(6) + "state 0 0 1 compute\n";
  for (int r = 1; r < 6; ++r) s += "msg 0.5 0 " + std::to_string(r) + " 1000\n";
  const Efficiency e = timeline_efficiency(bin(s + "end 1\n"));
  ASSERT_FALSE(e.outliers.empty());
  ASSERT_EQ(e.outliers.size(), 3U);
  EXPECT_EQ(describe_outlier(e.outliers[1], names(6)), "r0: bytes sent 5000 B, the median is 0, MAD 0");
  // Rank 0 also received nothing, while the median received is 1000 bytes: listed there too.
  EXPECT_EQ(describe_outlier(e.outliers[2], names(6)), "r0: bytes received 0 B, 0× the median (1000 B), MAD 0");
  std::vector<OutlierQuantity> quantities;
  for (const Outlier& x : e.outliers) quantities.push_back(x.quantity);
  EXPECT_EQ(quantities, (std::vector<OutlierQuantity>{OutlierQuantity::Computing, OutlierQuantity::BytesSent,
                                                     OutlierQuantity::BytesReceived}));
}

}  // namespace
}  // namespace kanoko::trace
