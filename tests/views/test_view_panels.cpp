// The views inside the viewer (src/scene/view_panels): clicks in a panel select the body, the
// pair's spring (or a line where there is no spring) and the time in the 3-D scene; a pick in the
// scene reaches the panels. Built on a real simulated run; no display is needed (the scene graph
// is built but not drawn), and the viewer itself is run under a display when there is one.
#include <gtest/gtest.h>

#if defined(KANOKO_TEST_HAVE_SCENE)

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <limits>
#include <stdexcept>
#include <thread>

#include "src/scene/view_panels.hpp"
#include "tests/support/test_support.hpp"
#include "tests/views/view_test_traces.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using views::Selection;

class ViewPanelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_text(dir_ / "ring.kntr", views::ring_trace(3, true));
    const auto sim = test::run_kanoko({"simulate", (dir_ / "ring.kntr").string(), "--mapping",
                                       (test::source_dir() / "mappings/from-trace.toml").string(), "-o",
                                       (dir_ / "ring.kntj").string()});
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
  }

  // A window point in panel `i` where a click picks something that `want` accepts.
  template <class Want>
  std::optional<std::pair<double, double>> find_click(const ViewPanels& panels, std::size_t i, Want want) {
    const views::Rect r = panels.panel_rect(i);
    for (double y = r.y + 1; y < r.y + r.h; y += 1) {
      for (double x = r.x + 1; x < r.x + r.w; x += 1) {
        const Selection s = panels.view(i).pick(x - r.x, y - r.y, views::Rect{0, 0, r.w, r.h}, panels.index(),
                                                panels.state(i));
        if (want(s)) return std::make_pair(x, y);
      }
    }
    return std::nullopt;
  }

  test::TempDir dir_;
};

TEST_F(ViewPanelsTest, ClicksSelectInTheSceneAndScenePicksReachThePanels) {
  const trajectory::Reader reader(dir_ / "ring.kntj");
  TrajectoryScene scene(reader, 1200, 800);
  ReplayClock clock(reader.begin_time(), reader.end_time(), 1.0);
  ViewPanels panels(reader, scene, clock, views::build_trace_index(dir_ / "ring.kntr"), {"summary", "matrix", "spacetime"});
  panels.refresh();
  panels.finish_drawing();
  ASSERT_EQ(panels.panel_count(), 3U);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(panels.draw_count(i), 1U);
  panels.refresh();
  panels.finish_drawing();  // nothing changed: nothing redrawn
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(panels.draw_count(i), 1U);

  // Summary row of r2 → body r2 selected in the scene, and every panel redrawn with it.
  const auto row = find_click(panels, 0, [](const Selection& s) { return s.entity == 2; });
  ASSERT_TRUE(row);
  EXPECT_TRUE(panels.click(row->first, row->second));
  ASSERT_TRUE(scene.selection());
  EXPECT_EQ(scene.selection()->kind, Pick::Kind::body);
  EXPECT_EQ(reader.meta().bodies[scene.selection()->index].name, "r2");
  panels.refresh();
  panels.finish_drawing();
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(panels.draw_count(i), 2U);
  EXPECT_EQ(panels.state().selection.entity, 2);

  // Matrix cell r0 → r1: a pair with a spring (the run's springs are its communication graph).
  const auto cell = find_click(panels, 1, [](const Selection& s) { return s.pair_src == 0 && s.pair_dst == 1; });
  ASSERT_TRUE(cell);
  EXPECT_TRUE(panels.click(cell->first, cell->second));
  panels.refresh();
  panels.finish_drawing();
  ASSERT_TRUE(scene.selection());
  EXPECT_EQ(scene.selection()->kind, Pick::Kind::spring);
  const auto& edge = reader.meta().edges[scene.selection()->index];
  EXPECT_EQ(reader.meta().bodies[edge[0]].name + reader.meta().bodies[edge[1]].name, "r0r1");
  EXPECT_FALSE(panels.pair_line_visible());

  // r0 → r2 never talk: no spring, so the bodies are joined by the highlight line.
  const auto none = find_click(panels, 1, [](const Selection& s) { return s.pair_src == 0 && s.pair_dst == 2; });
  ASSERT_TRUE(none);
  panels.click(none->first, none->second);
  EXPECT_TRUE(panels.pair_line_visible());
  EXPECT_EQ(scene.selection()->kind, Pick::Kind::body);

  // A click in the space-time diagram moves the clock to the clicked time.
  const auto when = find_click(panels, 2, [](const Selection& s) { return s.has_time() && s.time_s > 4.0 && s.time_s < 5.0; });
  ASSERT_TRUE(when);
  panels.click(when->first, when->second);
  EXPECT_GT(clock.time_s(), 4.0);
  EXPECT_LT(clock.time_s(), 5.0);

  // A body picked in the 3-D scene is selected in the panels.
  std::size_t body3 = 0;
  while (reader.meta().bodies[body3].name != "r3") ++body3;
  scene.select(Pick{Pick::Kind::body, body3, 0.0});
  panels.refresh();
  panels.finish_drawing();
  EXPECT_EQ(panels.hub().current().entity, 3);
  EXPECT_FALSE(panels.hub().current().has_pair());
  EXPECT_FALSE(panels.pair_line_visible());

  // Clicks outside the panels are not theirs.
  EXPECT_FALSE(panels.click(1199, 799));
}

TEST_F(ViewPanelsTest, HiddenPanelsTakeNoClicks) {
  const trajectory::Reader reader(dir_ / "ring.kntj");
  TrajectoryScene scene(reader, 1200, 800);
  ReplayClock clock(reader.begin_time(), reader.end_time(), 1.0);
  ViewPanels panels(reader, scene, clock, views::build_trace_index(dir_ / "ring.kntr"), {"summary"});
  panels.refresh();
  panels.finish_drawing();
  const auto row = find_click(panels, 0, [](const Selection& s) { return s.entity == 2; });
  ASSERT_TRUE(row);
  panels.set_visible(false);  // View → Companion views off
  EXPECT_FALSE(panels.visible());
  EXPECT_EQ(panels.panel_at(row->first, row->second), -1);
  EXPECT_FALSE(panels.click(row->first, row->second));
  EXPECT_FALSE(scene.selection().has_value());
  panels.set_visible(true);
  EXPECT_TRUE(panels.click(row->first, row->second));
  ASSERT_TRUE(scene.selection());
  EXPECT_EQ(reader.meta().bodies[scene.selection()->index].name, "r2");
}

TEST_F(ViewPanelsTest, EachPanelZoomsAndPansOnItsOwn) {
  const trajectory::Reader reader(dir_ / "ring.kntj");
  TrajectoryScene scene(reader, 1200, 800);
  ReplayClock clock(reader.begin_time(), reader.end_time(), 1.0);
  ViewPanels panels(reader, scene, clock, views::build_trace_index(dir_ / "ring.kntr"), {"spacetime", "utilisation"});
  panels.refresh();
  panels.finish_drawing();
  const double t0 = panels.state(0).window_t0_s;
  const double t1 = panels.state(0).window_t1_s;
  ASSERT_LT(t0, t1);
  EXPECT_FALSE(panels.zoomed(0));
  const views::Rect r = panels.panel_rect(0);
  // Magnify around the panel's middle: the window narrows, the other panel keeps its own.
  panels.zoom(0, r.x + 0.5 * r.w, r.y + 0.5 * r.h, 2.0);
  EXPECT_TRUE(panels.zoomed(0));
  EXPECT_FALSE(panels.zoomed(1));
  EXPECT_NEAR(panels.state(0).window_t1_s - panels.state(0).window_t0_s, 0.5 * (t1 - t0), 1e-9 * (t1 - t0));
  EXPECT_GT(panels.state(0).window_t0_s, t0);
  EXPECT_LT(panels.state(0).window_t1_s, t1);
  panels.refresh();
  panels.finish_drawing();
  EXPECT_EQ(panels.draw_count(0), 2U);
  EXPECT_EQ(panels.draw_count(1), 1U);
  // Dragging right shows earlier times, never before the run.
  const double before = panels.state(0).window_t0_s;
  panels.pan(0, 0.1 * r.w, 0);
  EXPECT_LT(panels.state(0).window_t0_s, before);
  panels.pan(0, 100 * r.w, 0);
  EXPECT_DOUBLE_EQ(panels.state(0).window_t0_s, t0);
  // Zooming out is bounded by the whole run; absurd factors are ignored.
  panels.zoom(0, r.x + 0.5 * r.w, r.y + 0.5 * r.h, 1e-9);
  EXPECT_FALSE(panels.zoomed(0));
  panels.zoom(0, r.x + 0.5 * r.w, r.y + 0.5 * r.h, 0.0);
  panels.zoom(0, r.x + 0.5 * r.w, r.y + 0.5 * r.h, std::numeric_limits<double>::quiet_NaN());
  EXPECT_FALSE(panels.zoomed(0));
  panels.zoom(0, r.x + 0.5 * r.w, r.y + 0.5 * r.h, 1e30);  // one step is clamped
  EXPECT_TRUE(panels.zoomed(0));
  EXPECT_GT(panels.state(0).window_t1_s - panels.state(0).window_t0_s, 0.0);
  panels.reset_zoom(0);
  EXPECT_FALSE(panels.zoomed(0));
}

TEST_F(ViewPanelsTest, TheIndexBuildsInTheBackground) {
  const trajectory::Reader reader(dir_ / "ring.kntj");
  TrajectoryScene scene(reader, 1200, 800);
  ReplayClock clock(reader.begin_time(), reader.end_time(), 1.0);
  std::promise<views::TraceIndex> promise;
  std::shared_future<views::TraceIndex> future = promise.get_future().share();
  double fraction = 0.25;
  PendingIndex pending;
  pending.ready = [future] { return future.wait_for(std::chrono::seconds(0)) == std::future_status::ready; };
  pending.take = [future] { return future.get(); };
  pending.fraction = [&fraction] { return fraction; };
  pending.text = [] { return std::string("indexing trace: 25 %"); };
  ViewPanels panels(reader, scene, clock, pending, {"summary"}, "ring.kntr");
  // Not ready: the panels say so, take no clicks and draw nothing.
  EXPECT_FALSE(panels.ready());
  EXPECT_NE(panels.status().find("indexing trace: 25 % of ring.kntr"), std::string::npos) << panels.status();
  EXPECT_DOUBLE_EQ(panels.progress(), 0.25);
  fraction = -1;  // unknown
  EXPECT_DOUBLE_EQ(panels.progress(), -1.0);
  const views::Rect r = panels.panel_rect(0);
  EXPECT_EQ(panels.panel_at(r.x + 1, r.y + 1), -1);
  panels.refresh();
  panels.finish_drawing();
  EXPECT_EQ(panels.draw_count(0), 0U);
  promise.set_value(views::build_trace_index(dir_ / "ring.kntr"));
  EXPECT_TRUE(panels.ready());
  EXPECT_EQ(panels.status(), "");
  EXPECT_DOUBLE_EQ(panels.progress(), 1.0);
  panels.refresh();
  panels.finish_drawing();
  EXPECT_EQ(panels.draw_count(0), 1U);
  EXPECT_EQ(panels.image(0).width, static_cast<int>(r.w));
}

TEST_F(ViewPanelsTest, AFailedIndexBuildTurnsThePanelsOffWithItsReason) {
  const trajectory::Reader reader(dir_ / "ring.kntj");
  TrajectoryScene scene(reader, 1200, 800);
  ReplayClock clock(reader.begin_time(), reader.end_time(), 1.0);
  // The views' own background build of a trace that is not there.
  auto job = std::make_shared<views::IndexBuildJob>(dir_ / "gone.kntr");
  ViewPanels panels(reader, scene, clock, pending_index(job), {"summary"}, "gone.kntr");
  for (int k = 0; k < 1000 && !job->ready(); ++k) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_FALSE(panels.ready());
  EXPECT_NE(panels.status().find("gone.kntr"), std::string::npos) << panels.status();
  EXPECT_NE(panels.status().find("off"), std::string::npos) << panels.status();
  EXPECT_FALSE(panels.ready());  // asked again: still off, no crash
  panels.refresh();
  EXPECT_EQ(panels.draw_count(0), 0U);
}

TEST_F(ViewPanelsTest, ViewerShowsPanelsUnderADisplay) {
  if (std::getenv("DISPLAY") == nullptr) GTEST_SKIP() << "needs a display (run under xvfb-run)";
  const auto shot = dir_ / "shot.png";
  const auto r = test::run_kanoko({"view", (dir_ / "ring.kntj").string(), "--views", "spacetime,summary", "--view-group",
                                   "mine", "--view-groups", (dir_ / "groups.toml").string(), "--exit-after", "1.5",
                                   "--screenshot", shot.string(), "--select", "r1", "--no-sound", "--size", "800x600"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(std::filesystem::file_size(shot), 1000U);
  EXPECT_NE(test::read_text(dir_ / "groups.toml").find("mine = [\"spacetime\", \"summary\"]"), std::string::npos);
  // The group loads back by name.
  const auto again = test::run_kanoko({"view", (dir_ / "ring.kntj").string(), "--view-group", "mine", "--view-groups",
                                       (dir_ / "groups.toml").string(), "--exit-after", "0.5", "--no-sound"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  const auto bad = test::run_kanoko({"view", (dir_ / "ring.kntj").string(), "--view-group", "min", "--view-groups",
                                     (dir_ / "groups.toml").string(), "--exit-after", "0.5", "--no-sound"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("did you mean 'mine'"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace kanoko::scene

#endif
