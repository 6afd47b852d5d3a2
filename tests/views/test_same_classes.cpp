// The views class states as the timeline does: the same computing / communicating / waiting
// fractions from trace::TimelineBuilder and from the views' index, the summary and the
// utilisation model, for a hand-written trace with known answers and for a real SMPI trace.
#include <gtest/gtest.h>

#include <string>

#include "src/trace/native_reader.hpp"
#include "src/trace/readers.hpp"
#include "src/trace/timeline.hpp"
#include "src/views/models.hpp"
#include "src/views/trace_index.hpp"
#include "tests/support/test_support.hpp"
#include "tests/views/view_test_traces.hpp"

namespace kanoko::views {
namespace KANOKO_UNITY_ID {

/// Whole-run fractions of one entity from a timeline: computing, communicating, waiting.
ClassSeconds timeline_fractions(const trace::Timeline& t, EntityIndex e) {
  ClassSeconds s{};
  for (std::size_t b = 0; b < t.bin_count; ++b) {
    s[0] += t.busy_s[b * t.entity_count() + e];
    s[1] += t.comm_at(b, e);
    s[2] += t.idle_at(b, e);
  }
  for (double& x : s) x /= t.end_s - t.begin_s;
  return s;
}

trace::Timeline timeline_text(const std::string& text, const std::string& format) {
  trace::TimelineOptions o;
  const trace::StateDefaults& d = trace::format_facts(format).states;
  o.interval_s = 0.25;
  o.busy_states = d.computing;
  o.communicating_states = d.communicating;
  o.idle_states = d.idle;
  o.gaps = trace::GapPolicy::Auto;  // as the views decide
  trace::TimelineBuilder b(o);
  trace::read_native_trace_text(text, "same.kntr", b);
  return b.take();
}

// Rank 0: compute 2 s, MPI_Send 0.5 s, MPI_Recv 1.5 s (waiting). Rank 1: compute 1 s, MPI_Isend
// 1 s, MPI_Waitall 1 s, MPI_Barrier 1 s. Both covered from 0 to 4 s.
const std::string kTrace =
    "kntr 1\nnode 0 0\nnode 0 1\n"
    "state 0 0 2 compute\nstate 0 1 1 compute\nstate 1 1 1 MPI_Isend\nstate 2 0 0.5 MPI_Send\n"
    "state 2 1 1 MPI_Waitall\nstate 2.5 0 1.5 MPI_Recv\nstate 3 1 1 MPI_Barrier\nend 4\n";

TEST(SameClasses, TimelineAndViewsAgreeOnAHandWrittenTrace) {
  const trace::Timeline t = timeline_text(kTrace, "native");
  const TraceIndex ix = index_text(kTrace);
  const SummaryModel summary = compute_summary(ix);
  const UtilisationModel util = compute_utilisation(ix, ix.begin_s, ix.end_s, 1);
  const ClassSeconds expected[2] = {{0.5, 0.125, 0.375}, {0.25, 0.25, 0.5}};
  ClassSeconds util_sum{};
  for (EntityIndex e = 0; e < 2; ++e) {
    const ClassSeconds tl = timeline_fractions(t, e);
    const ClassSeconds from_index = ix.class_time(e, ix.begin_s, ix.end_s);
    for (std::size_t k = 0; k < kClassCount; ++k) {
      EXPECT_NEAR(tl[k], expected[e][k], 1e-12) << "timeline, entity " << e << " class " << k;
      EXPECT_NEAR(from_index[k] / ix.span_s(), tl[k], 1e-12) << "index, entity " << e << " class " << k;
      EXPECT_NEAR(ix.totals[e].class_s[k] / ix.span_s(), tl[k], 1e-12) << "totals, entity " << e << " class " << k;
      EXPECT_NEAR(summary.rows[e].share[k], tl[k], 1e-12) << "summary, entity " << e << " class " << k;
      util_sum[k] += tl[k];
    }
  }
  // The utilisation view counts entities per class: the sums of the fractions.
  for (std::size_t k = 0; k < kClassCount; ++k) EXPECT_NEAR(util.counts[0][k], util_sum[k], 1e-12) << k;
}

TEST(SameClasses, GapsAreComputingInBothWhenNoStateIsComputing) {
  // The same trace without its compute states (SMPI without tracing/smpi/computing).
  const std::string text =
      "kntr 1\nnode 0 0\nnode 0 1\n"
      "state 0 0 0 MPI_Init\nstate 0 1 0 MPI_Init\nstate 1 1 1 MPI_Isend\nstate 2 0 0.5 MPI_Send\n"
      "state 2 1 1 MPI_Waitall\nstate 2.5 0 1.5 MPI_Recv\nstate 3 1 1 MPI_Barrier\nend 4\n";
  const trace::Timeline t = timeline_text(text, "native");
  const TraceIndex ix = index_text(text);
  ASSERT_TRUE(t.gaps_counted_as_computing);
  EXPECT_TRUE(ix.gaps_computing);
  for (EntityIndex e = 0; e < 2; ++e) {
    const ClassSeconds tl = timeline_fractions(t, e);
    EXPECT_GT(tl[0], 0.2);
    for (std::size_t k = 0; k < kClassCount; ++k) {
      EXPECT_NEAR(ix.totals[e].class_s[k] / ix.span_s(), tl[k], 1e-12) << "entity " << e << " class " << k;
    }
  }
}

TEST(SameClasses, TimeInNoStateIsNotWaitingInEither) {
  // docs/statistics.md: compute [0, 1), nothing [1, 2), MPI_Recv [2, 3) (waiting), nothing [3, 4).
  // The simulator's idle is 25 %; the views said 75 % when they counted no state as idle.
  const std::string text = "kntr 1\nnode 0 0\nstate 0 0 1 compute\nstate 2 0 1 MPI_Recv\nend 4\n";
  const trace::Timeline t = timeline_text(text, "native");
  const TraceIndex ix = index_text(text);
  EXPECT_FALSE(t.gaps_counted_as_computing);
  EXPECT_FALSE(ix.gaps_computing);
  const ClassSeconds tl = timeline_fractions(t, 0);
  const ClassSeconds expected{0.25, 0.0, 0.25};
  const SummaryModel summary = compute_summary(ix);
  for (std::size_t k = 0; k < kClassCount; ++k) {
    EXPECT_NEAR(tl[k], expected[k], 1e-12) << "timeline class " << k;
    EXPECT_NEAR(summary.rows[0].share[k], expected[k], 1e-12) << "summary class " << k;
  }
  EXPECT_NEAR(summary.rows[0].no_state_share, 0.5, 1e-12);
  const trace::TimeSplit s = ix.split(0, 0, 4);
  EXPECT_NEAR(s.no_state_s, 2.0, 1e-12);
  EXPECT_NEAR(s.waiting_s, 1.0, 1e-12);
  // The space-time diagram leaves no-state time blank instead of painting it idle.
  const StateColumns cols = state_columns(ix, 0, 4, 4);
  EXPECT_EQ(cols.dominant(0, 0), StateClass::Busy);
  EXPECT_EQ(cols.dominant(0, 1), StateClass::None);
  EXPECT_EQ(cols.dominant(0, 2), StateClass::Idle);
  EXPECT_EQ(cols.dominant(0, 3), StateClass::None);
}

TEST(SameClasses, SmpiTaskFarmShowsItsWaiting) {
  // The case: a master that waits most of its run showed 0 % idle.
  const auto path = test::source_dir() / "tests" / "trace" / "data" / "smpi-farm.trace";
  const TraceIndex ix = build_trace_index(path);
  const SummaryModel summary = compute_summary(ix);
  EXPECT_GT(summary.rows[0].share[static_cast<std::size_t>(StateClass::Idle)], 0.5);
  trace::TimelineOptions o;
  const trace::StateDefaults& d = trace::format_facts("paje").states;
  o.interval_s = 0.0001;
  o.busy_states = d.computing;
  o.gaps = trace::GapPolicy::Auto;
  trace::TimelineBuilder b(o);
  trace::read_trace(path, b);
  const trace::Timeline t = b.take();
  for (EntityIndex e = 0; e < ix.entity_count(); ++e) {
    const ClassSeconds tl = timeline_fractions(t, e);
    for (std::size_t k = 0; k < kClassCount; ++k) {
      EXPECT_NEAR(summary.rows[e].share[k], tl[k], 1e-9) << "entity " << e << " class " << k;
    }
  }
}

}  // namespace
}  // namespace kanoko::views
