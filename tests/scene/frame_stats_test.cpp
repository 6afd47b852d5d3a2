// What a viewer session's frames cost (src/scene/model/frame_stats): percentiles by nearest rank,
// frames split by whether the views' index was building, and --frame-stats from a real session.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cstdlib>

#include "src/scene/model/frame_stats.hpp"
#include "tests/scene/tiny_run.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::scene {
namespace KANOKO_UNITY_ID {

TEST(FrameStats, PercentilesByNearestRank) {
  EXPECT_EQ(percentile_s({}, 99), 0.0);
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i * 1e-3);  // 1..100 ms, unsorted
  EXPECT_DOUBLE_EQ(percentile_s(v, 50), 50e-3);
  EXPECT_DOUBLE_EQ(percentile_s(v, 99), 99e-3);
  EXPECT_DOUBLE_EQ(percentile_s(v, 100), 100e-3);
  EXPECT_DOUBLE_EQ(percentile_s(v, 0), 1e-3);
  EXPECT_DOUBLE_EQ(percentile_s({0.5}, 99), 0.5);
  EXPECT_DOUBLE_EQ(percentile_s({3, 1, 2}, 50), 2.0);  // rank ceil(1.5) = 2
  EXPECT_DOUBLE_EQ(percentile_s({3, 1, 2}, 99), 3.0);
}

TEST(FrameStats, SplitsFramesWhileIndexingAndCountsCappedOnes) {
  FrameStats s;
  s.first_frame(1.25);
  s.frame(0.02, true);
  s.frame(0.30, true);  // blocked: the clock moves by max_clock_step_s() only
  s.frame(0.01, false);
  s.frame(-1, false);  // not a duration: ignored
  s.views_ready(1.5);
  EXPECT_EQ(s.frames(), 3U);
  EXPECT_EQ(s.capped(), 1U);
  rapidjson::Document d;
  d.Parse(s.json().c_str());
  ASSERT_FALSE(d.HasParseError()) << s.json();
  EXPECT_DOUBLE_EQ(d["first_frame_s"].GetDouble(), 1.25);
  EXPECT_DOUBLE_EQ(d["views_ready_s"].GetDouble(), 1.5);
  EXPECT_EQ(d["while_indexing"]["frames"].GetInt(), 2);
  EXPECT_DOUBLE_EQ(d["while_indexing"]["max_ms"].GetDouble(), 300);
  EXPECT_EQ(d["after"]["frames"].GetInt(), 1);
  EXPECT_DOUBLE_EQ(d["all"]["p99_ms"].GetDouble(), 300);
  EXPECT_EQ(d["capped_frames"].GetInt(), 1);
}

TEST(FrameStats, TheViewerWritesThemOnClosing) {
  if (std::getenv("DISPLAY") == nullptr) GTEST_SKIP() << "needs an X display; run under xvfb-run";
  test::TempDir dir;
  test::write_tiny_run(dir / "run.kntj");
  test::write_text(dir / "s.txt", "frames 10\nquit\n");
  const auto r = test::run_kanoko({"view", (dir / "run.kntj").string(), "--no-sound", "--script",
                                   (dir / "s.txt").string(), "--frame-stats", (dir / "f.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rapidjson::Document d;
  d.Parse(test::read_text(dir / "f.json").c_str());
  ASSERT_FALSE(d.HasParseError());
  EXPECT_GT(d["first_frame_s"].GetDouble(), 0.0);
  EXPECT_GE(d["all"]["frames"].GetInt(), 9);
  EXPECT_GT(d["all"]["median_ms"].GetDouble(), 0.0);
  EXPECT_EQ(d["views_ready_s"].GetDouble(), -1.0) << "no views";
  // An output folder that does not exist is refused before the window opens.
  const auto bad = test::run_kanoko({"view", (dir / "run.kntj").string(), "--no-sound", "--script",
                                     (dir / "s.txt").string(), "--frame-stats", (dir / "no/such/f.json").string()});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("no/such"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace kanoko::scene
