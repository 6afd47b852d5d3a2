// Iteration markers: Chrome instant events, Pajé point events and user states, Paraver user
// events whose type names iterations; the detected series, iteration starts and ends, and the
// time window of iter:K bounds; traces without markers and malformed bounds are one-line errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <filesystem>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/ingest/survey.hpp"
#include "src/ingest/window.hpp"
#include "tests/support/iteration_traces.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::ingest {
namespace KANOKO_UNITY_ID {

namespace fs = std::filesystem;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Markers, ChromeInstantEventsMarkIterations) {
  test::TempDir dir;
  const fs::path path = dir / "it.json";
  test::write_text(path, test::chrome_iterations_json(true));
  const TraceMarkers m = find_markers(path, "auto", {});
  const MarkerSeries* s = m.detected();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->name, "iteration");
  EXPECT_FALSE(s->from_states);
  EXPECT_EQ(s->count(), 15U);
  EXPECT_EQ(s->entities(), 3U);
  EXPECT_EQ(s->iterations(), 5U);
  EXPECT_DOUBLE_EQ(s->start(2), 2.0);  // rank 0 reaches each iteration first
  EXPECT_DOUBLE_EQ(s->end(3), 4.0);
  EXPECT_DOUBLE_EQ(s->end(5), 5.52);  // the last iteration ends with the trace
  EXPECT_NEAR(s->mean_period(), 1.0, 1e-12);

  const TimeWindow w = resolve_window(WindowBound{0, 2}, WindowBound{0, 3}, path, "auto", {});
  EXPECT_DOUBLE_EQ(w.from_s, 2.0);
  EXPECT_DOUBLE_EQ(w.to_s, 4.0);
  // Mixed bounds: seconds stay seconds.
  const TimeWindow mixed = resolve_window(WindowBound{1.5, 0}, WindowBound{0, 1}, path, "auto", {});
  EXPECT_DOUBLE_EQ(mixed.from_s, 1.5);
  EXPECT_DOUBLE_EQ(mixed.to_s, 2.0);
  // A repeated slice name, named: its begins count.
  const TimeWindow slices = resolve_window(WindowBound{0, 4}, std::nullopt, path, "auto", {}, "compute");
  EXPECT_DOUBLE_EQ(slices.from_s, 4.0);
  EXPECT_EQ(slices.to_s, TimeWindow{}.to_s);
}

TEST(Markers, WithoutMarkersIterationBoundsAreOneLineErrors) {
  test::TempDir dir;
  const fs::path path = dir / "plain.json";
  test::write_text(path, test::chrome_iterations_json(false));
  EXPECT_EQ(find_markers(path, "auto", {}).detected(), nullptr);  // "compute" names no iteration
  const std::string e = error_of([&] { resolve_window(WindowBound{0, 1}, std::nullopt, path, "auto", {}); });
  EXPECT_EQ(e.rfind(path.string() + ": error: iter:K needs iteration markers and this trace has none", 0), 0U) << e;
  EXPECT_NE(e.find("'iter', 'step', 'loop'"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  const std::string named = error_of([&] { resolve_window(WindowBound{0, 1}, std::nullopt, path, "auto", {}, "tick"); });
  EXPECT_NE(named.find("no marker and no state named 'tick'"), std::string::npos) << named;
  test::write_text(dir / "it.json", test::chrome_iterations_json(true));
  const std::string many = error_of([&] { resolve_window(std::nullopt, WindowBound{0, 6}, dir / "it.json", "auto", {}); });
  EXPECT_NE(many.find("iter:6: the trace has only 5 iterations by its 'iteration' markers"), std::string::npos) << many;
  const std::string empty =
      error_of([&] { resolve_window(WindowBound{0, 3}, WindowBound{2.5, 0}, dir / "it.json", "auto", {}); });
  EXPECT_NE(empty.find("the time window is empty"), std::string::npos) << empty;
}

const std::string kPajeHeader =
    "%EventDef PajeDefineContainerType 0\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n"
    "%EventDef PajeDefineStateType 1\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n"
    "%EventDef PajeDefineEventType 2\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n"
    "%EventDef PajeCreateContainer 3\n% Time date\n% Alias string\n% Type string\n% Container string\n"
    "% Name string\n%EndEventDef\n"
    "%EventDef PajePushState 4\n% Time date\n% Type string\n% Container string\n% Value string\n%EndEventDef\n"
    "%EventDef PajePopState 5\n% Time date\n% Type string\n% Container string\n%EndEventDef\n"
    "%EventDef PajeNewEvent 6\n% Time date\n% Type string\n% Container string\n% Value string\n%EndEventDef\n"
    "0 R 0 RANK\n1 S R STATE\n1 U R USER\n2 E R MARK\n3 0 r0 R 0 rank-0\n3 0 r1 R 0 rank-1\n";

TEST(Markers, PajeUserStatesAndPointEvents) {
  test::TempDir dir;
  // Both ranks: a user state "iteration" every second (4), a point event "step" every half
  // second (8), computing in between.
  std::vector<std::pair<double, std::string>> events;
  const auto add = [&](double t, const std::string& line) {
    char time[32];
    std::snprintf(time, sizeof time, "%.3f", t);
    events.emplace_back(t, line.substr(0, 2) + time + line.substr(1));
  };
  for (int half = 0; half < 8; ++half) {
    for (const std::string r : {"r0", "r1"}) {
      const double t = 1 + 0.5 * half + (r == "r1" ? 0.02 : 0.0);
      if (half % 2 == 0) add(t, "4 U " + r + " iteration\n");
      if (half % 2 == 1) add(t + 0.4, "5 U " + r + "\n");
      add(t, "6 E " + r + " step\n");
      add(t, "4 S " + r + " computing\n");
      add(t + 0.25, "5 S " + r + "\n");
    }
  }
  std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string text = kPajeHeader;
  for (const auto& e : events) text += e.second;
  const fs::path path = dir / "m.paje";
  test::write_text(path, text);
  const TraceMarkers m = find_markers(path, "auto", {});
  ASSERT_EQ(m.series.size(), 2U);
  const MarkerSeries* s = m.detected();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->name, "step");  // the more frequent of the two iteration names
  EXPECT_EQ(s->count(), 16U);
  EXPECT_EQ(s->iterations(), 8U);
  EXPECT_DOUBLE_EQ(s->start(3), 2.0);
  const MarkerSeries* user = m.find("iteration");
  ASSERT_NE(user, nullptr);
  EXPECT_TRUE(user->from_states);
  EXPECT_EQ(user->iterations(), 4U);
  const TimeWindow w = resolve_window(WindowBound{0, 2}, WindowBound{0, 3}, path, "auto", {}, "iteration");
  EXPECT_DOUBLE_EQ(w.from_s, 2.0);
  EXPECT_DOUBLE_EQ(w.to_s, 4.0);
}

TEST(Markers, ParaverUserEventsWhoseTypeNamesIterations) {
  test::TempDir dir;
  test::write_text(dir / "p.pcf",
                   "DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\n\n\n"
                   "STATES\n1    Running\n\n\nEVENT_TYPE\n0    60000001    Time step\nVALUES\n0   End\n\n\n"
                   "EVENT_TYPE\n0    70000000    Cache misses\n");
  std::string prv = "#Paraver (01/02/2024 at 10:00):9000000000_ns:1(2):1:2(1:1,1:1)\n";
  for (int k = 1; k <= 3; ++k) {
    for (int task = 1; task <= 2; ++task) {
      const std::string t = std::to_string(k * 1000000000LL + (task - 1) * 1000000LL);
      prv += "2:" + std::to_string(task) + ":1:" + std::to_string(task) + ":1:" + t + ":60000001:" + std::to_string(k) +
             ":70000000:5\n";
    }
  }
  prv += "2:1:1:1:1:8000000000:60000001:0\n";
  test::write_text(dir / "p.prv", prv);
  const TraceMarkers m = find_markers(dir / "p.prv", "auto", {});
  ASSERT_EQ(m.series.size(), 1U);  // value 0 ends a step; cache misses name no iteration
  const MarkerSeries* s = m.detected();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->name, "Time step");
  EXPECT_EQ(s->iterations(), 3U);
  EXPECT_DOUBLE_EQ(s->start(2), 2.0);
  EXPECT_DOUBLE_EQ(s->end(2), 3.0);
}

TEST(Markers, WindowBoundsParse) {
  EXPECT_DOUBLE_EQ(parse_window_bound("1.5", FileLoc{"--from"}).seconds, 1.5);
  EXPECT_FALSE(parse_window_bound("1.5", FileLoc{"--from"}).is_iteration());
  EXPECT_EQ(parse_window_bound("iter:12", FileLoc{"--from"}).iteration, 12U);
  for (const char* bad : {"iter:0", "iter:", "iter:x", "iter:3.5", "iter:-1", "abc", "", "1.5s", "inf"}) {
    const std::string e = error_of([&] { parse_window_bound(bad, FileLoc{"--to"}); });
    EXPECT_EQ(e.rfind("--to: error: expected ", 0), 0U) << bad << ": " << e;
  }
}

/// Keeps markers only.
class Markers final : public trace::TraceSink {
 public:
  std::vector<double> times;
  void on_entity(const trace::Entity&) override {}
  void on_link(const trace::Link&) override {}
  void on_message(const trace::Message&) override {}
  void on_load(const trace::LoadSample&) override {}
  void on_state(const trace::StateInterval&) override {}
  void on_marker(const trace::Marker& m) override { times.push_back(m.time_s); }
  void on_end(double) override {}
};

TEST(Markers, WindowSinkShiftsMarkersAndDropsOutside) {
  Markers down;
  WindowSink w(TimeWindow{2, 4}, down);
  for (const double t : {1.0, 2.0, 3.5, 4.0}) w.on_marker(trace::Marker{t, 0, "iteration"});
  EXPECT_EQ(down.times, (std::vector<double>{0.0, 1.5}));
}

}  // namespace
}  // namespace kanoko::ingest
