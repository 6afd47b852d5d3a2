// The views' models against traces with known answers: the 4-rank ring with one slow rank of the
// HYVT seed (T000-1), the communication matrix against the trace's own message counts, and the
// level-of-detail merge, which must never lose a message from the counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "src/base/error.hpp"
#include "src/trace/native_reader.hpp"
#include "src/views/models.hpp"
#include "src/views/trace_index.hpp"
#include "src/views/view.hpp"
#include "tests/views/view_test_traces.hpp"

namespace kanoko::views {
namespace KANOKO_UNITY_ID {

TEST(ViewModels, RingWithSlowRankSharesToThePercent) {
  const TraceIndex ix = index_text(ring_trace(5, true));
  ASSERT_EQ(ix.entity_count(), 4U);
  EXPECT_NEAR(ix.end_s, 10.5, 1e-12);
  const SummaryModel s = compute_summary(ix);
  for (std::size_t p = 0; p < 4; ++p) {
    const auto& row = s.rows[p];
    const double busy = p == 2 ? 95.24 : 47.62;
    const double idle = p == 2 ? 0.0 : 47.62;
    EXPECT_NEAR(100 * row.share[0], busy, 0.01) << "rank " << p;
    EXPECT_NEAR(100 * row.share[1], 4.76, 0.01) << "rank " << p;
    EXPECT_NEAR(100 * row.share[2], idle, 0.01) << "rank " << p;
    EXPECT_EQ(row.messages_sent, 5U);
    EXPECT_EQ(row.messages_received, 5U);
    EXPECT_EQ(row.bytes_sent, 5U * 1000U);
    // Waiting at the barrier: 1 s per iteration, none for the slow rank.
    EXPECT_NEAR(row.time.waiting_s, p == 2 ? 0.0 : 5.0, 1e-9) << "rank " << p;
    EXPECT_NEAR(row.no_state_share, 0.0, 1e-12) << "rank " << p;
  }
  EXPECT_NEAR(100 * s.overall[0], 59.52, 0.01);
  EXPECT_NEAR(100 * s.overall[1], 4.76, 0.01);
  EXPECT_NEAR(100 * s.overall[2], 35.71, 0.01);
}

TEST(ViewModels, SummaryFollowsTheCursor) {
  const TraceIndex ix = index_text(ring_trace(5, true));
  // After two iterations: the same shares, two messages each, 2 s of barrier for the fast ranks.
  const SummaryModel s = compute_summary(ix, 4.2);
  EXPECT_NEAR(100 * s.rows[2].share[0], 95.24, 0.01);
  EXPECT_NEAR(100 * s.rows[0].share[2], 47.62, 0.01);
  EXPECT_NEAR(100 * s.overall[0], 59.52, 0.01);
  for (const auto& row : s.rows) {
    EXPECT_EQ(row.messages_sent, 2U);
    EXPECT_EQ(row.messages_received, 2U);
  }
  EXPECT_NEAR(s.rows[0].time.waiting_s, 2.0, 1e-9);
  // Half-way into the first iteration's compute: all busy, nothing sent.
  const SummaryModel early = compute_summary(ix, 0.5);
  EXPECT_NEAR(early.overall[0], 1.0, 1e-12);
  EXPECT_EQ(early.rows[1].messages_sent, 0U);
  // The same from the bins alone (raw detail dropped), at a bin boundary.
  IndexOptions o;
  o.max_detail_records = 4;
  const TraceIndex binned = index_text(ring_trace(5, true), o);
  const SummaryModel b = compute_summary(binned, binned.end_s / 2);
  const SummaryModel e = compute_summary(ix, ix.end_s / 2);
  for (std::size_t p = 0; p < 4; ++p) {
    EXPECT_NEAR(b.rows[p].share[0], e.rows[p].share[0], 0.01);
    EXPECT_NEAR(b.rows[p].time.waiting_s, e.rows[p].time.waiting_s, 2 * binned.bin_width_s);
  }
}

TEST(ViewModels, RingWithoutBarrierEntriesCountsGapsAsNoStateNotWaiting) {
  // docs/statistics.md: time in no state is not waiting (the simulator's idle does not count it).
  const TraceIndex ix = index_text(ring_trace(3, false));
  const SummaryModel s = compute_summary(ix);
  EXPECT_NEAR(100 * s.rows[0].share[2], 0.0, 1e-9);
  EXPECT_NEAR(100 * s.rows[0].no_state_share, 47.62, 0.01);
  EXPECT_NEAR(s.rows[0].time.waiting_s, 0.0, 1e-12);
  EXPECT_NEAR(100 * s.overall[0], 59.52, 0.01);
  EXPECT_NEAR(100 * s.overall_no_state, 35.71, 0.01);
}

TEST(ViewModels, KiviatAndUtilisationFollowTheWindow) {
  const TraceIndex ix = index_text(ring_trace(5, true));
  // The first second of an iteration: everyone computes.
  const KiviatModel k0 = compute_kiviat(ix, 2.1, 3.1);
  for (double f : k0.busy_fraction) EXPECT_NEAR(f, 1.0, 1e-9);
  // One whole iteration: the shares of the summary.
  const KiviatModel k1 = compute_kiviat(ix, 2.1, 4.2);
  EXPECT_NEAR(k1.busy_fraction[2], 2.0 / 2.1, 1e-9);
  EXPECT_NEAR(k1.busy_fraction[0], 1.0 / 2.1, 1e-9);
  // Utilisation: 4 busy during [0, 1), then rank 2 alone, in 21 columns of 0.1 s.
  const UtilisationModel u = compute_utilisation(ix, 0.0, 2.1, 21);
  ASSERT_EQ(u.counts.size(), 21U);
  EXPECT_NEAR(u.counts[3][0], 4.0, 1e-9);
  EXPECT_NEAR(u.counts[15][0], 1.0, 1e-9);
  EXPECT_NEAR(u.counts[15][2], 3.0, 1e-9);
  for (const auto& c : u.counts) EXPECT_NEAR(c[0] + c[1] + c[2], 4.0, 1e-9);
}

TEST(ViewModels, CurrentIntervalIsTheRunsIntervalHoldingTheCursor) {
  // docs/statistics.md: a run's binning interval (here 1 s from 0.25 s) holding the cursor, as the
  // inspect panel and the export count it; a bare trace: a twentieth of the run ending there.
  const TraceIndex ix = index_text(ring_trace(5, true));
  ViewState s = default_view_state(ix, 1.0, 0.25);
  ASSERT_TRUE(s.run_intervals);
  double t0 = 0;
  double t1 = 0;
  s.time_s = 3.0;
  current_interval(ix, s, t0, t1);
  EXPECT_NEAR(t0, 2.25, 1e-12);
  EXPECT_NEAR(t1, 3.25, 1e-12);
  s.time_s = 3.25;  // on a boundary: the interval that starts there
  current_interval(ix, s, t0, t1);
  EXPECT_NEAR(t0, 3.25, 1e-12);
  s.time_s = ix.end_s;  // at the end: the last interval, cut at the end
  current_interval(ix, s, t0, t1);
  EXPECT_NEAR(t0, 10.25, 1e-12);
  EXPECT_NEAR(t1, 10.5, 1e-12);
  ViewState bare = default_view_state(ix);
  EXPECT_FALSE(bare.run_intervals);
  bare.time_s = 3.0;
  current_interval(ix, bare, t0, t1);
  EXPECT_NEAR(t1 - t0, ix.span_s() / 20, 1e-12);
  EXPECT_NEAR(t1, 3.0, 1e-12);
}

TEST(ViewModels, MatrixEqualsTheTraceMessageCounts) {
  const TraceIndex ix = index_text(ring_trace(5, true));
  const MatrixModel m = compute_matrix(ix, ix.begin_s, ix.end_s);
  for (EntityIndex s = 0; s < 4; ++s) {
    for (EntityIndex d = 0; d < 4; ++d) {
      EXPECT_EQ(m.count(s, d), d == (s + 1) % 4 ? 5U : 0U) << s << "->" << d;
      EXPECT_EQ(m.bytes[s * 4 + d], d == (s + 1) % 4 ? 5000U : 0U);
    }
  }
  // One iteration's interval holds one message per ring pair.
  const MatrixModel one = compute_matrix(ix, 2.1, 4.2);
  EXPECT_EQ(one.count(0, 1), 1U);
  EXPECT_EQ(one.count(3, 0), 1U);

  // A random trace: the matrix equals the counts written into it, with and without raw detail.
  std::map<std::pair<int, int>, std::uint64_t> written;
  const std::string text = random_trace(6, 3000, 7, &written);
  for (std::size_t limit : {std::size_t{1} << 24U, std::size_t{100}}) {
    IndexOptions o;
    o.max_detail_records = limit;
    const TraceIndex r = index_text(text, o);
    EXPECT_EQ(r.detail_complete, limit > 100);
    const MatrixModel rm = compute_matrix(r, r.begin_s, r.end_s);
    std::uint64_t total = 0;
    for (EntityIndex s = 0; s < 6; ++s) {
      for (EntityIndex d = 0; d < 6; ++d) {
        const auto it = written.find({static_cast<int>(s), static_cast<int>(d)});
        EXPECT_EQ(rm.count(s, d), it == written.end() ? 0U : it->second) << s << "->" << d << " limit " << limit;
        total += rm.count(s, d);
      }
    }
    EXPECT_EQ(total, 3000U);
  }
}

TEST(ViewModels, LevelOfDetailNeverDropsAMessage) {
  std::map<std::pair<int, int>, std::uint64_t> written;
  const std::string text = random_trace(8, 20000, 11, &written);
  for (std::size_t limit : {std::size_t{1} << 24U, std::size_t{1000}}) {
    IndexOptions o;
    o.max_detail_records = limit;
    o.bins = 64;
    const TraceIndex ix = index_text(text, o);
    for (std::size_t columns : {1U, 3U, 17U, 400U}) {
      const MessageBundles b = bundle_messages(ix, ix.begin_s, ix.end_s, columns);
      EXPECT_EQ(b.messages, 20000U) << "columns " << columns << " limit " << limit;
      std::uint64_t sum = 0;
      std::map<std::pair<int, int>, std::uint64_t> per_pair;
      for (const auto& m : b.bundles) {
        sum += m.messages;
        per_pair[{static_cast<int>(m.src), static_cast<int>(m.dst)}] += m.messages;
      }
      EXPECT_EQ(sum, 20000U);
      EXPECT_EQ(per_pair, written);
      // Merging is real: with few columns there are far fewer bundles than messages.
      if (columns <= 3) {
        EXPECT_LE(b.bundles.size(), 8U * 8U * (columns + 2) * (columns + 2));
      }
      // The state columns keep every classified second of every entity (the rest is no state).
      const StateColumns sc = state_columns(ix, ix.begin_s, ix.end_s, columns);
      for (EntityIndex e = 0; e < 8; ++e) {
        double total = 0;
        for (std::size_t c = 0; c < sc.columns; ++c) total += sc.cell(e, c)[0] + sc.cell(e, c)[1] + sc.cell(e, c)[2];
        const ClassSeconds& whole = ix.totals[e].class_s;
        EXPECT_NEAR(total, whole[0] + whole[1] + whole[2], 1e-6 * ix.span_s()) << "columns " << columns << " limit " << limit;
      }
    }
  }
}

TEST(ViewModels, BinnedFallbackAgreesWithTheExactSweep) {
  const std::string text = random_trace(5, 20000, 3, nullptr);
  IndexOptions exact_o;
  const TraceIndex exact = index_text(text, exact_o);
  IndexOptions binned_o;
  binned_o.max_detail_records = 10;
  const TraceIndex binned = index_text(text, binned_o);
  ASSERT_TRUE(exact.detail_complete);
  ASSERT_FALSE(binned.detail_complete);
  // Whole-run totals are exact either way.
  for (EntityIndex e = 0; e < 5; ++e) {
    for (std::size_t k = 0; k < kClassCount; ++k) {
      EXPECT_NEAR(exact.totals[e].class_s[k], binned.totals[e].class_s[k], 1e-9);
      EXPECT_NEAR(exact.class_time(e, exact.begin_s, exact.end_s)[k], exact.totals[e].class_s[k], 1e-6);
      EXPECT_NEAR(binned.class_time(e, binned.begin_s, binned.end_s)[k], exact.totals[e].class_s[k], 1e-6);
    }
  }
  // A window of many bins: the bins are uniform within a bin, so they agree to about two bins.
  const double t0 = exact.span_s() * 0.25;
  const double t1 = exact.span_s() * 0.75;
  for (EntityIndex e = 0; e < 5; ++e) {
    const ClassSeconds a = exact.class_time(e, t0, t1);
    const ClassSeconds b = binned.class_time(e, t0, t1);
    for (std::size_t k = 0; k < kClassCount; ++k) EXPECT_NEAR(a[k], b[k], 2 * binned.bin_width_s);
  }
}

TEST(ViewModels, NestedStatesGiveTimeToTheInnermost) {
  // compute [0, 10) with a send [2, 3) inside it and a wait [5, 7).
  const TraceIndex ix = index_text(
      "kntr 1\nnode 0 0\nstate 0 0 10 compute\nstate 2 0 1 send\nstate 5 0 2 wait\nend 12\n");
  const auto& t = ix.totals[0];
  EXPECT_NEAR(t.class_s[0], 7.0, 1e-12);
  EXPECT_NEAR(t.class_s[1], 1.0, 1e-12);
  EXPECT_NEAR(t.class_s[2], 2.0, 1e-12);  // wait 2 s; the 2 s after the end of compute are in no state
  ASSERT_EQ(ix.segments[0].size(), 5U);
  EXPECT_EQ(ix.state_names[ix.segments[0][1].name], "send");
  EXPECT_NEAR(ix.segments[0][4].end_s, 10.0, 1e-12);
}

TEST(ViewModels, ClassRulesAreConfigurable) {
  IndexOptions o;
  o.rules.busy = {"work"};
  o.rules.idle = {"spin"};
  o.rules.overhead = {"chat"};
  const TraceIndex ix = index_text(
      "kntr 1\nnode 0 0\nstate 0 0 1 work\nstate 1 0 1 spin\nstate 2 0 1 compute\nstate 3 0 1 chat\n"
      "state 4 0 1 MPI_Wait\nstate 5 0 1 mystery\nend 6\n", o);
  // "MPI_Wait" is in no list: the MPI call table makes it idle (as in the timeline); "compute"
  // is not busy when the busy list leaves it out, and with "mystery" it is in no rule: no state.
  EXPECT_NEAR(ix.totals[0].class_s[0], 1.0, 1e-12);
  EXPECT_NEAR(ix.totals[0].class_s[1], 1.0, 1e-12);
  EXPECT_NEAR(ix.totals[0].class_s[2], 2.0, 1e-12);
  EXPECT_NEAR(ix.split(0, 0, 6).no_state_s, 2.0, 1e-12);
}

TEST(ViewModels, HostileTimesStayBounded) {
  // A huge end time must not make the bins grow or loop for long.
  const TraceIndex ix = index_text("kntr 1\nnode 0 0\nstate 0 0 1 compute\nmsg 0.5 0 0 8\nend 1e300\n");
  EXPECT_EQ(ix.bin_count, IndexOptions{}.bins);
  EXPECT_GE(ix.bin_width_s * static_cast<double>(ix.bin_count), 1e300);
  const MessageBundles b = bundle_messages(ix, ix.begin_s, ix.end_s, 100);
  EXPECT_EQ(b.messages, 1U);
}

TEST(ViewModels, MutatedAndTruncatedTracesNeverBreakTheIndex) {
  // Whatever the reader accepts, the index and every model must cope (ASan/UBSan run this too).
  const std::string seed = ring_trace(2, true) + "state 4.2 0 1 compute\nstate 4.3 0 0.1 send\nmsg 4.3 3 3 0\n";
  std::mt19937 rng(7);
  const std::string alphabet = "0123456789. e-+\nstatemsgcolnd";
  int accepted = 0;
  for (int i = 0; i < 1500; ++i) {
    std::string s = seed;
    if (i % 5 == 0) {
      s.resize(rng() % (s.size() + 1));
    } else {
      for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k) {
        const std::size_t at = rng() % s.size();
        s[at] = alphabet[rng() % alphabet.size()];
      }
    }
    IndexOptions o;
    o.bins = 16;
    o.max_detail_records = i % 2 == 0 ? 10 : 1000;
    try {
      const TraceIndex ix = index_text(s, o);
      ++accepted;
      const double t1 = ix.end_s > ix.begin_s ? ix.end_s : ix.begin_s + 1;
      const MessageBundles b = bundle_messages(ix, ix.begin_s, t1, 5);
      EXPECT_EQ(b.messages, ix.detail_complete ? ix.messages.size() : ix.message_count);
      (void)state_columns(ix, ix.begin_s, t1, 5);
      (void)compute_matrix(ix, ix.begin_s, t1);
      (void)compute_summary(ix);
      (void)compute_kiviat(ix, ix.begin_s, t1);
    } catch (const InputError&) {
    }
  }
  EXPECT_GT(accepted, 30);
}

TEST(ViewModels, EntitiesFindByNameOrIndex) {
  const TraceIndex ix = index_text(ring_trace(1, true));
  EXPECT_EQ(ix.find_entity("r2"), 2);
  EXPECT_EQ(ix.find_entity("3"), 3);
  EXPECT_EQ(ix.find_entity("4"), -1);
  EXPECT_EQ(ix.find_entity("nobody"), -1);
}

}  // namespace
}  // namespace kanoko::views
