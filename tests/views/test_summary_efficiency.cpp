// The summary view's efficiency block: the POP metrics and outliers from the views' index equal
// those `kanoko info` computes from the timeline (one function, trace::compute_efficiency), and
// the block's text carries them (docs/efficiency.md).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/trace/efficiency.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trace/timeline.hpp"
#include "src/views/draw.hpp"
#include "src/views/models.hpp"
#include "tests/views/view_test_traces.hpp"

namespace kanoko::views {
namespace KANOKO_UNITY_ID {

/// Rank 3 computes 6 s; ranks 0-2 compute 3 s, then wait (idle) 3 s; each sends rank 3 100 bytes
/// at 4 s.
std::string overloaded() {
  TraceText t(4);
  for (int r = 0; r < 3; ++r) {
    t.add(0, "state 0 " + std::to_string(r) + " 3 compute");
    t.add(3, "state 3 " + std::to_string(r) + " 3 idle");
    t.add(4, "msg 4 " + std::to_string(r) + " 3 100");
  }
  t.add(0, "state 0 3 6 compute");
  return t.text(6);
}

trace::Efficiency from_timeline(const std::string& text) {
  trace::TimelineOptions o;
  o.interval_s = 0.5;
  o.busy_states = {"compute"};
  o.communicating_states = {"send", "recv", "wait"};
  o.idle_states = {"idle"};
  trace::TimelineBuilder b(o);
  trace::read_native_trace_text(text, "t.kntr", b);
  return trace::timeline_efficiency(b.take());
}

TEST(SummaryEfficiency, SameNumbersAsTheTimeline) {
  const TraceIndex ix = index_text(overloaded());
  const trace::Efficiency v = compute_summary_efficiency(ix, compute_summary(ix));
  const trace::Efficiency t = from_timeline(overloaded());
  ASSERT_TRUE(v.metrics.available);
  EXPECT_NEAR(v.metrics.load_balance, 0.625, 1e-12);
  EXPECT_NEAR(v.metrics.load_balance, t.metrics.load_balance, 1e-12);
  EXPECT_NEAR(v.metrics.communication_efficiency, t.metrics.communication_efficiency, 1e-12);
  EXPECT_NEAR(v.metrics.parallel_efficiency, t.metrics.parallel_efficiency, 1e-12);
  ASSERT_EQ(v.outliers.size(), t.outliers.size());
  for (std::size_t i = 0; i < v.outliers.size(); ++i) {
    EXPECT_EQ(v.outliers[i].quantity, t.outliers[i].quantity) << i;
    EXPECT_EQ(v.outliers[i].entity, t.outliers[i].entity) << i;
    EXPECT_NEAR(v.outliers[i].value, t.outliers[i].value, 1e-9) << i;
  }
  // Rank 3 in all but communicating: computing 6 s and waiting 0 s against 3 s, sent 0 bytes
  // against 100, received 300 against 0.
  ASSERT_EQ(v.outliers.size(), 4U);
  for (const trace::Outlier& o : v.outliers) EXPECT_EQ(o.entity, 3U);
  EXPECT_EQ(v.outliers[2].quantity, trace::OutlierQuantity::BytesSent);
  EXPECT_EQ(v.outliers[3].quantity, trace::OutlierQuantity::BytesReceived);
}

TEST(SummaryEfficiency, TheBlockShowsTheNumbers) {
  const TraceIndex ix = index_text(overloaded());
  const trace::Efficiency e = compute_summary_efficiency(ix, compute_summary(ix));
  const std::vector<std::string> lines = summary_efficiency_lines(ix, e, 3);
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[0], "POP  load balance 62.5 %   communication efficiency 100.0 %   parallel efficiency 62.5 %");
  EXPECT_EQ(lines[1], "outlier  r3: computing 6 s, 2× the median (3 s), MAD 0");
  EXPECT_EQ(lines[2], "outlier  r3: waiting 0 s, 0× the median (3 s), MAD 0   (+2 more: kanoko info)");
  // A short panel: the metrics alone.
  EXPECT_EQ(summary_efficiency_lines(ix, e, 1), std::vector<std::string>{lines[0]});
  // Up to the cursor at 3 s everybody computed: balanced, no outliers.
  const trace::Efficiency head = compute_summary_efficiency(ix, compute_summary(ix, 3.0), 3.0);
  EXPECT_EQ(summary_efficiency_lines(ix, head, 3),
            (std::vector<std::string>{
                "POP  load balance 100.0 %   communication efficiency 100.0 %   parallel efficiency 100.0 %",
                "outliers: none"}));
}

TEST(SummaryEfficiency, UnavailableWithoutStates) {
  TraceText t(3);
  t.add(1, "msg 1 0 1 10");
  const TraceIndex ix = index_text(t.text(2));
  const trace::Efficiency e = compute_summary_efficiency(ix, compute_summary(ix));
  EXPECT_EQ(summary_efficiency_lines(ix, e, 3).front(),
            "POP metrics unavailable: the trace has no states, so no time can be told useful (computing) or not");
  // The view draws it (and the table) without failing.
  const auto png = render_view_png(*make_view("summary"), ix, default_view_state(ix), 640, 400);
  EXPECT_GT(png.size(), 100U);
}

}  // namespace
}  // namespace kanoko::views
