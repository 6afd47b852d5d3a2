// Code locations in the viewer (issue 19, point 4), scripted under Xvfb on a run of
// traces/smpi/late4-locations.trace (SimGrid SMPI, a late sender on a known line of late.c, no
// mapping given: inferred): the late receiver's inspect text lists the receive first for waiting;
// choosing that location in the Code locations panel highlights the receivers, marks the times it
// dominates and shows its source line; a trace without locations says how to record them.
#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include <osg/Image>
#include <osgDB/ReadFile>
#include <algorithm>
#include <array>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/scene/model/session.hpp"
#include "src/scene/offscreen.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

using test::TempDir;

std::int64_t late_line(const std::string& marker) { return test::line_with(test::source_dir() / "traces/smpi/late.c", marker); }

rapidjson::Document read_json(const std::filesystem::path& p) {
  rapidjson::Document d;
  d.Parse(test::read_text(p).c_str());
  EXPECT_FALSE(d.HasParseError()) << p;
  return d;
}

std::string text_of(const rapidjson::Document& d, const char* name) {
  if (!d.HasMember("texts") || !d["texts"].HasMember(name)) return "";
  return d["texts"][name].GetString();
}

/// Pixels of the screenshot `png` that `keep` (r, g, b) accepts, inside the window rectangle
/// (x, y, w, h; origin top-left) when given, else in the whole image; -1 when it cannot be read.
template <typename Keep>
int count_pixels(const std::string& png, Keep keep, std::array<double, 4> window = {0, 0, 1e9, 1e9}) {
  osg::ref_ptr<osg::Image> image = osgDB::readImageFile(png);
  if (!image.valid()) return -1;
  const int h = image->t();
  int n = 0;
  // Window rows are top-down, image rows bottom-up.
  for (int y = std::max(0, h - static_cast<int>(window[1] + window[3])); y < std::min(h, h - static_cast<int>(window[1])); ++y) {
    for (int x = std::max(0, static_cast<int>(window[0])); x < std::min(image->s(), static_cast<int>(window[0] + window[2])); ++x) {
      const unsigned char* px = image->data(static_cast<unsigned>(x), static_cast<unsigned>(y));
      if (keep(px[0], px[1], px[2])) ++n;
    }
  }
  return n;
}

/// `kanoko view TRACE --script` on an X server of its own (1600x1400, so the side panel holds the
/// sections), the cache in `dir`.
test::CommandResult view_trace(const std::filesystem::path& trace, const TempDir& dir, const std::string& script,
                               const std::vector<std::string>& extra) {
  test::write_text(dir / "script.txt", script);
  std::vector<std::string> argv = {"xvfb-run", "-a", "-s", "-screen 0 1600x1400x24 -noreset", "env",
                                   "XDG_CACHE_HOME=" + (dir / "cache").string(), test::kanoko_binary(), "view",
                                   trace.string(), "--no-sound", "--paused", "--size", "1600x1400", "--script",
                                   (dir / "script.txt").string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return test::run_program(argv);
}

/// The scripted sessions: under X only, a temporary folder, layouts and screenshots named L + ...
class ViewerLocations : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!display_variable_set()) GTEST_SKIP() << "needs an X display; run under xvfb-run";
  }
  TempDir dir;
  const std::string L = (dir / "l").string();
  const std::filesystem::path late4 = test::source_dir() / "traces/smpi/late4-locations.trace";
};

TEST_F(ViewerLocations, TheLateReceiveIsFirstChosenItHighlightsTheReceiversAndShowsItsLine) {
  const auto r = view_trace(late4, dir,
                            "frames 3\nwait 0.5\nframes 3\nclick side.legend\nframes 3\nlayout " + L + "1.json\n"
                            "click locations.row.0\nframes 3\nwait 0.5\nframes 5\nlayout " + L + "2.json\n"
                            "screenshot " + L + "2.png\n",
                            {"--select", "rank-3", "--source-path", (test::source_dir() / "traces/smpi").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string site = "late.c:" + std::to_string(late_line("/* RECEIVE */"));
  // The late receiver's own top locations, whole run: the receive first.
  const auto d1 = read_json(L + "1.json");
  const std::string mine = text_of(d1, "selection.locations");
  const std::size_t run_at = mine.find("whole run\n");
  ASSERT_NE(run_at, std::string::npos) << mine;
  const std::string first_row = mine.substr(run_at + 10, mine.find('\n', run_at + 10) - run_at - 10);
  EXPECT_NE(first_row.find(site), std::string::npos) << mine;
  EXPECT_NE(mine.find("this interval"), std::string::npos) << mine;
  // The run's table: the receive first too, by waiting.
  const std::string table = text_of(d1, "locations");
  ASSERT_NE(table.find("sorted by waiting"), std::string::npos) << table;
  const std::size_t row0 = table.find('\n', table.find("imbalance")) + 1;
  EXPECT_NE(table.substr(row0, table.find('\n', row0) - row0).find(site), std::string::npos) << table;
  // Chosen: the receivers (ranks 1-3) highlighted, never the late sender; times marked.
  const auto d2 = read_json(L + "2.json");
  std::set<std::string> lit;
  for (const auto& v : d2["highlighted"].GetArray()) lit.insert(v.GetString());
  EXPECT_EQ(lit, (std::set<std::string>{"rank-1", "rank-2", "rank-3"}));
  EXPECT_EQ(std::string(d2["filter"].GetString()), "highlight");
  ASSERT_TRUE(d2["marks"].IsArray());
  EXPECT_GE(d2["marks"].Size(), 1U);
  EXPECT_NE(text_of(d2, "locations.chosen").find("dominates 3 of 4 bodies"), std::string::npos)
      << text_of(d2, "locations.chosen");
  ASSERT_TRUE(d2["selected_body"].IsString());
  // The source panel: the receive's line, marked.
  const std::string source = text_of(d2, "source");
  EXPECT_NE(source.find("late.c:" + std::to_string(late_line("/* RECEIVE */"))), std::string::npos) << source;
  EXPECT_NE(source.find(">   " + std::to_string(late_line("/* RECEIVE */")) + "  "), std::string::npos) << source;
  EXPECT_NE(source.find("MPI_Recv"), std::string::npos) << source;
  // ... and on the screen: the chosen line's pink text inside its rectangle.
  ASSERT_TRUE(d2["elements"].HasMember("source.line"));
  const auto& e = d2["elements"]["source.line"];
  const int pink = count_pixels(
      L + "2.png", [](int red, int green, int blue) { return red > 180 && green > 90 && green < 170 && blue > 160; },
      {e["x"].GetDouble(), e["y"].GetDouble(), e["w"].GetDouble(), e["h"].GetDouble()});
  EXPECT_GT(pink, 20) << "the chosen line is not drawn in its colour";
}

TEST_F(ViewerLocations, TheSpaceTimePanelColoursStatesByLocation) {
  const auto r = view_trace(late4, dir,
                            "frames 3\nwait 0.5\nframes 3\nscreenshot " + L + "1.png\nclick locations.colour-views\n"
                            "frames 3\nwait 0.3\nframes 3\nscreenshot " + L + "2.png\n"
                            "click locations.row.0\nframes 3\nwait 0.5\nframes 3\nlayout " + L + "3.json\n",
                            {"--views", "spacetime"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Choosing the receive shares the body where it waits most (rank 1: late - 1 units per
  // iteration) with the views, which select it in the scene.
  const auto d3 = read_json(L + "3.json");
  ASSERT_TRUE(d3["selected_body"].IsString());
  EXPECT_EQ(std::string(d3["selected_body"].GetString()), "rank-1");
  // The first location's colour (views::location_colour(1), 31 120 181) fills the receivers' rows.
  const auto first_colour = [](const std::string& png) {
    return count_pixels(png, [](int red, int green, int blue) {
      return std::abs(red - 31) < 8 && std::abs(green - 120) < 8 && std::abs(blue - 181) < 8;
    });
  };
  const int before = first_colour(L + "1.png");
  const int after = first_colour(L + "2.png");
  EXPECT_GT(after, before + 2000) << before << " -> " << after;
}

TEST_F(ViewerLocations, ATraceWithoutLocationsSaysHowToRecordThem) {
  const auto r = view_trace(test::source_dir() / "traces/smpi/pipeline8-flat.trace", dir,
                            "frames 3\nwait 0.5\nframes 3\nlayout " + L + "1.json\n", {"--select", "rank-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto d = read_json(L + "1.json");
  for (const char* name : {"locations", "selection.locations"}) {
    const std::string t = text_of(d, name);
    EXPECT_NE(t.find("no code locations in this paje trace"), std::string::npos) << name << ": " << t;
    EXPECT_NE(t.find("smpicc -trace-call-location"), std::string::npos) << name << ": " << t;
    EXPECT_EQ(t.find('\n'), std::string::npos) << name << ": one line";
  }
  EXPECT_FALSE(d["elements"].HasMember("locations.row.0")) << "never an empty table";
}

TEST(ViewerLocationFiles, TheSessionKeepsTheSourcePaths) {
  Session s;
  s.run_hash = 0xabc;
  s.source_paths = {"/src/app", "rel/dir", "odd \"name\""};
  EXPECT_EQ(parse_session(session_json(s), "s.json").source_paths, s.source_paths);
  s.source_paths.clear();
  EXPECT_TRUE(parse_session(session_json(s), "s.json").source_paths.empty());
  for (const char* bad : {"3", "[1]", "[\"\"]", "\"x\""}) {
    const std::string text = "{\"kanoko_session\": 1, \"run\": \"abc\", \"source_paths\": " + std::string(bad) + "}";
    try {
      (void)parse_session(text, "s.json");
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("source_paths"), std::string::npos) << e.what();
    }
  }
}

TEST(ViewerLocationFiles, ASourcePathThatIsNoFolderIsRefusedBeforeAnythingRuns) {
  TempDir dir;
  const auto r = test::run_kanoko({"view", (test::source_dir() / "traces/smpi/late4-locations.trace").string(),
                                   "--source-path", (dir / "nowhere").string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--source-path"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is not a folder"), std::string::npos) << r.err;
  const auto help = test::run_kanoko({"view", "--help"});
  EXPECT_NE(help.out.find("--source-path"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace kanoko::scene
