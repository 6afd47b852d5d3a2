// The viewer's interface: the edge layout, the timeline model, the replay loop, range statistics
// and the --script reader without a display; under Xvfb, scripted sessions that click, drag and
// scroll through the real window and report the layout and state as JSON.
#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include <algorithm>
#include <cmath>
#include <osg/Image>
#include <osgDB/ReadFile>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/scene/offscreen.hpp"
#include "src/scene/replay_clock.hpp"
#include "src/scene/model/timeline.hpp"
#include "src/scene/model/view_script.hpp"
#include "src/scene/viewer_ui.hpp"
#include "src/trajectory/range_stats.hpp"
#include "src/trajectory/trajectory.hpp"
#include "tests/scene/tiny_run.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using test::TempDir;

double area(const PixelRect& r) { return r.w * r.h; }

bool light(const unsigned char* px) { return px[0] > 150 && px[1] > 150 && px[2] > 150; }

/// Pixels of `image` in [x0, x1) × [y0, y1) (image rows, origin bottom-left) that `keep` accepts.
template <typename Keep>
int count_pixels(const osg::Image& image, int x0, int y0, int x1, int y1, Keep keep) {
  int n = 0;
  for (int y = std::max(y0, 0); y < std::min(y1, image.t()); ++y) {
    for (int x = std::max(x0, 0); x < std::min(x1, image.s()); ++x) {
      if (keep(image.data(static_cast<unsigned>(x), static_cast<unsigned>(y)), x, y)) ++n;
    }
  }
  return n;
}

TEST(UiLayout, EdgePanelsAndTheViewTileTheWindowWithoutOverlap) {
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{1280, 720}, {1920, 1080}, {640, 480}, {320, 240}}) {
    for (const double side : {0.0, 380.0}) {
      const UiLayout l = ui_layout(w, h, 21, 118, side);
      const std::vector<PixelRect> rects = {l.menu, l.timeline, l.side, l.viewport};
      double total = 0;
      for (std::size_t i = 0; i < rects.size(); ++i) {
        total += area(rects[i]);
        for (std::size_t j = i + 1; j < rects.size(); ++j) {
          EXPECT_FALSE(overlaps(rects[i], rects[j])) << w << "x" << h << " side " << side << ": " << i << " " << j;
        }
      }
      EXPECT_DOUBLE_EQ(total, static_cast<double>(w) * h) << w << "x" << h;
      // The 3-D view keeps at least a quarter of each side.
      EXPECT_GE(l.viewport.w, 0.25 * w);
      EXPECT_GE(l.viewport.h, 0.25 * h - 1e-9);
    }
  }
}

TEST(UiLayout, OverlapIsInteriorArea) {
  EXPECT_TRUE(overlaps({0, 0, 10, 10}, {9, 9, 10, 10}));
  EXPECT_FALSE(overlaps({0, 0, 10, 10}, {10, 0, 10, 10}));  // touching edges
  EXPECT_FALSE(overlaps({0, 0, 0, 10}, {0, 0, 10, 10}));    // empty
}

TEST(UiLayout, TheWindowFitsTheScreen) {
  const WindowPlacement p = fit_window(1280, 800, 1280, 720);
  EXPECT_LE(p.width, 1280);
  EXPECT_LE(p.height + p.y, 720);
  const WindowPlacement q = fit_window(1024, 768, 1920, 1080);
  EXPECT_EQ(q.width, 1024);
  EXPECT_EQ(q.height, 768);
  const WindowPlacement tiny = fit_window(1280, 800, 100, 100);
  EXPECT_EQ(tiny.width, 320);
  EXPECT_EQ(tiny.height, 240);
}

TEST(Timeline, PixelsAndTimesRoundTripAndZoomKeepsTheAnchor) {
  TimelineView t(10.0, 20.0);
  EXPECT_DOUBLE_EQ(t.time_at(50, 0, 100), 15.0);
  EXPECT_DOUBLE_EQ(t.x_of(12.5, 0, 100), 25.0);
  EXPECT_DOUBLE_EQ(t.time_at(-40, 0, 100), 10.0);  // clamped to the run
  t.zoom(0.5, 12.0);
  EXPECT_NEAR(t.view_end_s() - t.view_begin_s(), 5.0, 1e-12);
  EXPECT_NEAR(t.x_of(12.0, 0, 100), 20.0, 1e-9);  // 12 s stays under the same pixel
  EXPECT_FALSE(t.whole());
  t.pan(1000, 100);  // far to the right: stops at the run's end
  EXPECT_DOUBLE_EQ(t.view_end_s(), 20.0);
  t.zoom(1e-12, 15.0);  // never narrower than a millionth of the run
  EXPECT_NEAR(t.view_end_s() - t.view_begin_s(), 1e-5, 1e-12);
  t.zoom(1e9, 15.0);
  EXPECT_TRUE(t.whole());
  t.select(18, 11);
  ASSERT_TRUE(t.selection().has_value());
  EXPECT_EQ(*t.selection(), std::make_pair(11.0, 18.0));
  t.select(5, 5);
  EXPECT_FALSE(t.selection().has_value());
}

TEST(Timeline, TicksAreOneTwoOrFiveTimesAPowerOfTen) {
  EXPECT_DOUBLE_EQ(tick_step(10.0, 1000, 90), 1.0);
  EXPECT_DOUBLE_EQ(tick_step(0.031, 1264, 90), 0.005);
  EXPECT_DOUBLE_EQ(tick_step(100.0, 300, 90), 50.0);
}

TEST(ReplayClockLoop, PlayingPastTheEndStartsOver) {
  ReplayClock c(0.0, 10.0, 1.0);
  c.set_loop(true);
  c.seek(9.0);
  c.advance(2.5);
  EXPECT_FALSE(c.paused());
  EXPECT_NEAR(c.time_s(), 1.5, 1e-12);
  c.reverse();
  c.advance(2.0);
  EXPECT_NEAR(c.time_s(), 9.5, 1e-12);
  c.set_loop(false);
  c.advance(20.0);
  EXPECT_TRUE(c.paused());
  EXPECT_EQ(c.time_s(), 0.0);
}

TEST(RangeStats, TrafficIsWeightedByOverlapAndSplitPerBody) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const trajectory::Reader run(dir / "run.kntj");
  // Intervals 2 and 3 whole: red -> green 3000 + 4000, green -> red 10 + 10.
  const auto a = trajectory::range_statistics(run, 2.0, 4.0);
  ASSERT_EQ(a.bodies.size(), 3U);
  EXPECT_NEAR(a.bodies[0].bytes_sent, 7000, 1e-9);
  EXPECT_NEAR(a.bodies[1].bytes_recv, 7000, 1e-9);
  EXPECT_NEAR(a.bodies[1].bytes_sent, 20, 1e-9);
  EXPECT_NEAR(a.bytes, 7020, 1e-9);
  EXPECT_NEAR(a.messages, 4, 1e-9);
  // Half of interval 4 and half of 5 (given the other way round): red -> blue starts at 5.
  const auto b = trajectory::range_statistics(run, 5.5, 4.5);
  EXPECT_NEAR(b.bodies[0].bytes_sent, 0.5 * 5000 + 0.5 * 6000 + 0.5 * 5000, 1e-9);
  EXPECT_NEAR(b.bodies[2].bytes_recv, 2500, 1e-9);
  EXPECT_NEAR(b.bodies[2].msgs_recv, 1, 1e-9);
  // The tiny run stores no busy fraction: shown as unknown, not as 0.
  EXPECT_TRUE(std::isnan(a.bodies[0].busy));
}

TEST(RangeStats, ActivityPutsTheBytesInTheirBins) {
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const trajectory::Reader run(dir / "run.kntj");
  const auto act = trajectory::run_activity(run, 10);
  ASSERT_EQ(act.bytes.size(), 10U);
  EXPECT_NEAR(act.bytes[0], 1010, 1e-9);
  EXPECT_NEAR(act.bytes[9], 10000 + 10 + 5000, 1e-9);
  EXPECT_NEAR(act.max_bytes, act.bytes[9], 1e-9);
}

TEST(FindBodies, NameHostOrRankCaseInsensitive) {
  std::vector<trajectory::BodyInfo> b(4);
  const char* names[] = {"rank-0", "rank-1", "Rank-10", "io"};
  for (std::size_t i = 0; i < b.size(); ++i) {
    b[i].name = names[i];
    b[i].host = i < 2 ? "nodeA" : "nodeB";
    b[i].rank = static_cast<std::int64_t>(i);
  }
  EXPECT_EQ(find_bodies(b, "rank-1"), (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(find_bodies(b, "  NODEB "), (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(find_bodies(b, "3"), (std::vector<std::size_t>{3}));  // rank 3 (its name has no 3)
  EXPECT_TRUE(find_bodies(b, "").empty());
  EXPECT_TRUE(find_bodies(b, "gpu").empty());
}

TEST(ViewScript, ReadsEveryCommand) {
  const auto c = parse_view_script_text(
      "# a demo\nwait 0.5\nframes 3\nkey space\nkey f1\nclick button.play\nclick timeline.strip 0.25 0.5\n"
      "click body rank-3\nclick 10 20\ndrag timeline.strip 0.1 0.5 0.4 0.5 shift\nscroll timeline.strip -2\n"
      "seek 1.5\nselect 1 2\nscreenshot a.png\nlayout a.json\nquit\n",
      "demo.txt");
  ASSERT_EQ(c.size(), 15U);
  EXPECT_EQ(c[0].op, ScriptCommand::Op::wait);
  EXPECT_EQ(c[0].line, 2U);
  EXPECT_EQ(c[5].op, ScriptCommand::Op::click);
  EXPECT_DOUBLE_EQ(c[5].v[0], 0.25);
  EXPECT_EQ(c[6].op, ScriptCommand::Op::click_body);
  EXPECT_EQ(c[6].name, "rank-3");
  EXPECT_EQ(c[7].op, ScriptCommand::Op::click_at);
  EXPECT_TRUE(c[8].shift);
  EXPECT_DOUBLE_EQ(c[9].v[0], -2);
  EXPECT_EQ(c[14].op, ScriptCommand::Op::quit);
}

TEST(ViewScript, BadLinesNameFileLineAndColumn) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"wait 1\nzoom 3\n", "s.txt:2:1: error: unknown command 'zoom'"},
      {"key space\nkey hyper\n", "s.txt:2:5: error: unknown key 'hyper'"},
      {"click timeline.strip 1.5 0\n", "s.txt:1:22: error: fractions are 0 to 1"},
      {"wait\n", "s.txt:1:5: error: too few arguments"},
      {"frames 2.5\n", "s.txt:1:8: error: frames takes a whole number"},
      {"wait soon\n", "s.txt:1:6: error: expected seconds, found 'soon'"},
      {"drag x 0 0 1 1 ctrl\n", "s.txt:1:16: error: expected 'shift'"},
      {"quit now\n", "s.txt:1:6: error: too many arguments"},
      {"inspect\n", "s.txt:1:8: error: too few arguments"},
  };
  for (const auto& [text, expected] : cases) {
    try {
      (void)parse_view_script_text(text, "s.txt");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

// --- Under X: scripted sessions through the real window --------------------------------------

rapidjson::Document read_json(const std::filesystem::path& p) {
  rapidjson::Document d;
  d.Parse(test::read_text(p).c_str());
  EXPECT_FALSE(d.HasParseError()) << p;
  return d;
}

PixelRect rect_of(const rapidjson::Value& v) {
  return {v["x"].GetDouble(), v["y"].GetDouble(), v["w"].GetDouble(), v["h"].GetDouble()};
}

/// Runs `kanoko view RUN --script` with the given script; `screen` "WxH" runs it on an X server
/// of that size of its own (xvfb-run), else on the current display.
test::CommandResult run_script(const std::filesystem::path& run, const std::filesystem::path& dir,
                               const std::string& script, const std::vector<std::string>& extra = {},
                               const std::string& screen = "") {
  test::write_text(dir / "script.txt", script);
  std::vector<std::string> args = {"view", run.string(), "--no-sound", "--script", (dir / "script.txt").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  if (screen.empty()) return test::run_kanoko(args);
  std::vector<std::string> argv = {"xvfb-run", "-a", "-s", "-screen 0 " + screen + "x24 -noreset", test::kanoko_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return test::run_program(argv);
}

/// Checks that the 3-D viewport and the edge windows of a `layout` file tile the window (no two
/// overlap, their areas add up to it); returns how many rectangles there are.
std::size_t expect_tiling(const rapidjson::Document& d, const std::string& size) {
  std::vector<std::pair<std::string, PixelRect>> rects = {{"viewport", rect_of(d["viewport"])}};
  for (const auto& m : d["windows"].GetObject()) rects.emplace_back(m.name.GetString(), rect_of(m.value));
  double total = 0;
  for (std::size_t i = 0; i < rects.size(); ++i) {
    total += area(rects[i].second);
    for (std::size_t j = i + 1; j < rects.size(); ++j) {
      EXPECT_FALSE(overlaps(rects[i].second, rects[j].second)) << size << ": " << rects[i].first << " " << rects[j].first;
    }
  }
  EXPECT_DOUBLE_EQ(total, d["window"]["w"].GetDouble() * d["window"]["h"].GetDouble()) << size;
  return rects.size();
}

TEST(ViewerUi, NoTwoRectanglesOverlapAndTheLegendIsDrawn) {
  if (!display_variable_set()) GTEST_SKIP() << "needs an X display; run under xvfb-run";
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  for (const auto& [size, screen] : std::vector<std::pair<std::string, std::string>>{{"1280x720", "1280x720"},
                                                                                     {"1920x1080", "1920x1080"}}) {
    const auto r = run_script(dir / "run.kntj", dir.path(),
                              "frames 5\nlayout " + (dir / "l.json").string() + "\nscreenshot " +
                                  (dir / "s.png").string() + "\n",
                              {"--size", size, "--help-window", "on"}, screen);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto d = read_json(dir / "l.json");
    const int w = d["window"]["w"].GetInt();
    const int h = d["window"]["h"].GetInt();
    EXPECT_EQ(std::to_string(w) + "x" + std::to_string(h), size);
    EXPECT_EQ(expect_tiling(d, size), 4U) << "viewport, menu, timeline and the help's side panel";
    // The timeline's legend is on the screenshot: light text pixels inside its rectangle.
    const PixelRect legend = rect_of(d["elements"]["timeline.legend"]);
    osg::ref_ptr<osg::Image> image = osgDB::readImageFile((dir / "s.png").string());
    ASSERT_TRUE(image.valid());
    ASSERT_EQ(image->s(), w);
    // Window rows are top-down, image rows bottom-up.
    const int lit = count_pixels(*image, static_cast<int>(legend.x), h - static_cast<int>(legend.y + legend.h),
                                 static_cast<int>(legend.x + legend.w), h - static_cast<int>(legend.y),
                                 [](const unsigned char* px, int, int) { return light(px); });
    EXPECT_GT(lit, 50) << size;
    EXPECT_TRUE(d["elements"].HasMember("side.legend")) << "a colour key is shown by default";
  }
}

TEST(ViewerUi, CompanionViewsTileTheLeftEdgeZoomOnTheirOwnAndSelect) {
  if (!display_variable_set()) GTEST_SKIP() << "needs an X display; run under xvfb-run";
  TempDir dir;
  const auto trace = test::source_dir() / "traces/smpi/halo2d-16-slow5.trace";
  const auto sim = test::run_kanoko({"simulate", trace.string(), "-o", (dir / "run.kntj").string()});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const std::string L = (dir / "l").string();
  for (const auto& [size, screen] : std::vector<std::pair<std::string, std::string>>{{"1280x720", "1280x720"},
                                                                                     {"1920x1080", "1920x1080"}}) {
    const auto r = run_script(dir / "run.kntj", dir.path(),
                              "frames 3\nwait 1\nframes 3\n"
                              "layout " + L + "1.json\n"
                              "scroll views.spacetime 3\n"
                              "frames 2\n"
                              "layout " + L + "2.json\n"
                              "click views.summary 0.3 0.75\n"
                              "frames 2\n"
                              "layout " + L + "3.json\n"
                              "click views.spacetime.reset\n"
                              "frames 2\n"
                              "layout " + L + "4.json\n",
                              {"--size", size, "--paused", "--views", "spacetime,matrix,summary"}, screen);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto d = read_json(L + "1.json");
    ASSERT_TRUE(d["windows"].HasMember("views")) << size;
    EXPECT_EQ(expect_tiling(d, size), 5U) << "viewport, menu, timeline, side panel and views";
    // Each panel inside the views column, none over another.
    const PixelRect column = rect_of(d["windows"]["views"]);
    std::vector<PixelRect> panels;
    for (const char* name : {"views.spacetime", "views.matrix", "views.summary"}) {
      ASSERT_TRUE(d["elements"].HasMember(name)) << size << ": " << name;
      const PixelRect p = rect_of(d["elements"][name]);
      EXPECT_GE(p.x, column.x);
      EXPECT_GE(p.y, column.y);
      EXPECT_LE(p.x + p.w, column.x + column.w);
      EXPECT_LE(p.y + p.h, column.y + column.h);
      EXPECT_GT(p.h, 60) << size << ": " << name;
      for (const PixelRect& q : panels) EXPECT_FALSE(overlaps(p, q)) << size << ": " << name;
      panels.push_back(p);
    }
    EXPECT_FALSE(d["elements"].HasMember("views.spacetime.reset")) << "the whole run at first";
    // The wheel over the space-time panel zoomed that panel (its "whole run" button appears).
    const auto d2 = read_json(L + "2.json");
    EXPECT_TRUE(d2["elements"].HasMember("views.spacetime.reset")) << size;
    // A click on a rank's row of the summary selects its body in the scene.
    const auto d3 = read_json(L + "3.json");
    ASSERT_TRUE(d3["selected_body"].IsString()) << size;
    EXPECT_EQ(std::string(d3["selected_body"].GetString()).rfind("rank-", 0), 0U) << d3["selected_body"].GetString();
    // "whole run" resets the zoom.
    const auto d4 = read_json(L + "4.json");
    EXPECT_FALSE(d4["elements"].HasMember("views.spacetime.reset")) << size;
  }
}

TEST(ViewerUi, PicturesCarryACaptionAndLabelsByDefault) {
  if (!display_variable_set()) GTEST_SKIP() << "needs an X display; run under xvfb-run";
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const auto r = test::run_kanoko({"render", (dir / "run.kntj").string(), "--size", "1280x720", "-o",
                                   (dir / "a.png").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  osg::ref_ptr<osg::Image> image = osgDB::readImageFile((dir / "a.png").string());
  ASSERT_TRUE(image.valid());
  // The caption sits in the bottom-left corner (the dial and its time in the bottom-right).
  const int caption = count_pixels(*image, 0, 0, 400, 60, [](const unsigned char* px, int, int) { return light(px); });
  EXPECT_GT(caption, 40) << "no caption text in the bottom-left corner";
  // Three bodies: labelled by default, so there is light text beside them too.
  const auto bare = test::run_kanoko({"render", (dir / "run.kntj").string(), "--size", "1280x720", "--labels=none",
                                      "-o", (dir / "b.png").string()});
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  osg::ref_ptr<osg::Image> unlabelled = osgDB::readImageFile((dir / "b.png").string());
  ASSERT_TRUE(unlabelled.valid());
  const int differ = count_pixels(*image, 0, 60, 1280, 720, [&](const unsigned char* a, int x, int y) {
    return light(a) && unlabelled->data(static_cast<unsigned>(x), static_cast<unsigned>(y))[1] < 100;
  });
  EXPECT_GT(differ, 100) << "labels are on by default for a run of three bodies";
}

TEST(ViewerUi, TimelineSeeksSelectsZoomsAndTheButtonsPlay) {
  if (!display_variable_set()) GTEST_SKIP() << "needs an X display; run under xvfb-run";
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const std::string L = (dir / "l").string();
  const auto r = run_script(dir / "run.kntj", dir.path(),
                            "frames 3\n"
                            "click timeline.strip 0.25 0.5\n"
                            "layout " + L + "1.json\n"
                            "drag timeline.strip 0.2 0.5 0.6 0.5 shift\n"
                            "frames 5\n"
                            "layout " + L + "2.json\n"
                            "scroll timeline.strip 3\n"
                            "layout " + L + "3.json\n"
                            "click button.loop\n"
                            "click button.play\n"
                            "layout " + L + "4.json\n"
                            "click body 1\n"
                            "frames 3\n"
                            "layout " + L + "5.json\n",
                            {"--size", "800x600", "--paused"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double end = test::kTinyRunEnd_s;
  const auto d1 = read_json(L + "1.json");
  // The strip spans the run; a click a quarter across seeks there (within a pixel or two).
  const double strip_w = d1["elements"]["timeline.strip"]["w"].GetDouble();
  EXPECT_NEAR(d1["time_s"].GetDouble(), 0.25 * end, 2.5 * end / strip_w);
  EXPECT_TRUE(d1["paused"].GetBool());
  const auto d2 = read_json(L + "2.json");
  ASSERT_TRUE(d2["timeline"]["selection"].IsArray());
  EXPECT_NEAR(d2["timeline"]["selection"][0].GetDouble(), 0.2 * end, 2.5 * end / strip_w);
  EXPECT_NEAR(d2["timeline"]["selection"][1].GetDouble(), 0.6 * end, 2.5 * end / strip_w);
  EXPECT_TRUE(d2["elements"].HasMember("side.range")) << "the range's statistics are shown";
  EXPECT_TRUE(d2["windows"].HasMember("side"));
  const auto d3 = read_json(L + "3.json");
  const double span = d3["timeline"]["view"][1].GetDouble() - d3["timeline"]["view"][0].GetDouble();
  EXPECT_NEAR(span, end * std::pow(0.8, 3), 1e-6) << "three wheel steps zoom the timeline";
  const auto d4 = read_json(L + "4.json");
  EXPECT_TRUE(d4["loop"].GetBool());
  EXPECT_FALSE(d4["paused"].GetBool());
  const auto d5 = read_json(L + "5.json");
  ASSERT_TRUE(d5["selected_body"].IsString());
  EXPECT_EQ(std::string(d5["selected_body"].GetString()), trajectory::Reader(dir / "run.kntj").meta().bodies[1].name);
  EXPECT_TRUE(d5["elements"].HasMember("side.selection")) << "the selection's statistics are in the side panel";
}

TEST(ViewerUi, ScriptErrorsNameTheLineAndExitNonZero) {
  if (!display_variable_set()) GTEST_SKIP() << "needs an X display; run under xvfb-run";
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  // Read before the window opens.
  const auto bad = run_script(dir / "run.kntj", dir.path(), "frames 2\nfly away\n");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("script.txt:2:1: error: unknown command 'fly'"), std::string::npos) << bad.err;
  // Found missing while running.
  const auto missing = run_script(dir / "run.kntj", dir.path(), "frames 2\n\nclick button.nowhere\n");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("script.txt:3: no element 'button.nowhere'"), std::string::npos) << missing.err;
  const auto body = run_script(dir / "run.kntj", dir.path(), "click body nobody\n");
  EXPECT_NE(body.exit_code, 0);
  EXPECT_NE(body.err.find("nobody"), std::string::npos) << body.err;
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"run.kntj", "script.txt"}));
}

TEST(ViewerUi, HelpOpensOnTheFirstRunOnly) {
  if (!display_variable_set()) GTEST_SKIP() << "needs an X display; run under xvfb-run";
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const std::string script = "frames 2\nlayout " + (dir / "l.json").string() + "\n";
  test::write_text(dir / "script.txt", script);
  const std::vector<std::string> view = {"env", "XDG_CONFIG_HOME=" + (dir / "config").string(), test::kanoko_binary(),
                                         "view", (dir / "run.kntj").string(), "--no-sound", "--script",
                                         (dir / "script.txt").string()};
  for (const bool expected : {true, false}) {
    const auto r = test::run_program(view);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(read_json(dir / "l.json")["help"].GetBool(), expected);
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "config" / "kanoko" / "help-shown"));
}

TEST(ViewerUi, FindHighlightsAndIsolatesBodies) {
  if (!display_variable_set()) GTEST_SKIP() << "needs an X display; run under xvfb-run";
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const std::string L = (dir / "l").string();
  const auto r = run_script(dir / "run.kntj", dir.path(),
                            "frames 3\nclick side.find\ntype node1\nframes 3\nlayout " + L + "1.json\nscreenshot " + L + "1.png\n"
                            "click button.isolate\nframes 3\nlayout " + L + "2.json\nscreenshot " + L + "2.png\n"
                            "click button.highlight\nframes 3\nlayout " + L + "3.json\n"
                            "click side.find.first\nframes 3\nlayout " + L + "4.json\n",
                            {"--size", "900x600", "--paused"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto d1 = read_json(L + "1.json");
  EXPECT_EQ(std::string(d1["filter"].GetString()), "none");
  EXPECT_EQ(d1["bodies_shown"].GetInt(), 3);
  EXPECT_TRUE(d1["elements"].HasMember("button.isolate")) << "a search shows the filter buttons";
  const auto d2 = read_json(L + "2.json");
  EXPECT_EQ(std::string(d2["filter"].GetString()), "isolate");
  EXPECT_EQ(d2["bodies_shown"].GetInt(), 1) << "only green (host node1) remains";
  const auto d3 = read_json(L + "3.json");
  EXPECT_EQ(std::string(d3["filter"].GetString()), "highlight");
  EXPECT_EQ(d3["bodies_shown"].GetInt(), 3);
  const auto d4 = read_json(L + "4.json");
  ASSERT_TRUE(d4["selected_body"].IsString());
  EXPECT_EQ(std::string(d4["selected_body"].GetString()), "green");
  // Isolated: the red body's pixels are gone from the picture (the grid's x axis stays red).
  const auto red_pixels = [](const std::string& png) {
    osg::ref_ptr<osg::Image> image = osgDB::readImageFile(png);
    EXPECT_TRUE(image.valid()) << png;
    if (!image.valid()) return 0;
    return count_pixels(*image, 0, 0, image->s(), image->t(),
                        [](const unsigned char* px, int, int) { return px[0] > 140 && px[1] < 60 && px[2] < 60; });
  };
  const int before = red_pixels(L + "1.png");
  const int after = red_pixels(L + "2.png");
  EXPECT_GT(before, 300);
  EXPECT_LT(after, before / 3) << "the red body is still drawn";
}

TEST(ViewerUi, ASessionRestoresTimeSelectionRangeZoomAndToggles) {
  if (!display_variable_set()) GTEST_SKIP() << "needs an X display; run under xvfb-run";
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const std::string session = (dir / "s.json").string();
  const auto first = run_script(dir / "run.kntj", dir.path(),
                                "frames 3\nseek 3\nclick button.loop\nselect 2 4\nclick body 1\nkey l\n"
                                "scroll timeline.strip 2\nframes 3\n",
                                {"--paused", "--session", session});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_TRUE(std::filesystem::exists(session));
  const auto second = run_script(dir / "run.kntj", dir.path(), "frames 3\nlayout " + (dir / "l.json").string() + "\n",
                                 {"--session", session});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.err, "");
  const auto d = read_json(dir / "l.json");
  EXPECT_TRUE(d["paused"].GetBool());
  EXPECT_DOUBLE_EQ(d["time_s"].GetDouble(), 3.0);
  EXPECT_TRUE(d["loop"].GetBool());
  ASSERT_TRUE(d["timeline"]["selection"].IsArray());
  EXPECT_DOUBLE_EQ(d["timeline"]["selection"][0].GetDouble(), 2.0);
  EXPECT_DOUBLE_EQ(d["timeline"]["selection"][1].GetDouble(), 4.0);
  EXPECT_NEAR(d["timeline"]["view"][1].GetDouble() - d["timeline"]["view"][0].GetDouble(), 10.0 * 0.8 * 0.8, 1e-9);
  ASSERT_TRUE(d["selected_body"].IsString());
  EXPECT_EQ(std::string(d["selected_body"].GetString()), trajectory::Reader(dir / "run.kntj").meta().bodies[1].name);
  EXPECT_NE(test::read_text(session).find("\"labels\": false"), std::string::npos) << "key l turned labels off";
}

TEST(ViewerUi, ABadSessionIsReportedAndTheDefaultsOpen) {
  if (!display_variable_set()) GTEST_SKIP() << "needs an X display; run under xvfb-run";
  TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  const std::string session = (dir / "s.json").string();
  const std::string layout = "frames 2\nlayout " + (dir / "l.json").string() + "\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\n  \"kanoko_session\": 1,\n  \"run\": oops\n}\n", "s.json:3:10: error: not a session file"},
      {"{\"kanoko_session\": 7, \"run\": \"1\"}", "session version 7 is not one this Kanoko reads"},
      {"{\"kanoko_session\": 1, \"run\": \"00000000000000aa\", \"paused\": true}", "is the session of another run"},
      {"{\"kanoko_session\": 1, \"run\": \"1\", \"speed\": \"fast\"}", "expected a finite number"},
      {"\x01\x02garbage", "not a session file"},
  };
  for (const auto& [text, expected] : cases) {
    test::write_text(session, text);
    const auto r = run_script(dir / "run.kntj", dir.path(), layout, {"--session", session});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("opening with the default layout"), std::string::npos) << r.err;
    EXPECT_FALSE(read_json(dir / "l.json")["paused"].GetBool()) << "defaults: playing";
  }
  // The session never replaces the run.
  const auto refused = run_script(dir / "run.kntj", dir.path(), layout, {"--session", (dir / "run.kntj").string()});
  EXPECT_NE(refused.exit_code, 0);
}

}  // namespace
}  // namespace kanoko::scene
