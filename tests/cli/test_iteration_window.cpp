// Iteration windows on the command line: --from iter:K / --to iter:K pick the window from the
// trace's iteration markers and the run follows it exactly as it follows the same window in
// seconds; info lists the markers; a trace without markers is a one-line error.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/iteration_traces.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko {
namespace KANOKO_UNITY_ID {

TEST(IterationWindow, InitAndSimulateFollowTheMarkers) {
  test::TempDir dir;
  const std::string trace = (dir / "it.json").string();
  test::write_text(trace, test::chrome_iterations_json(true));
  // Iterations 2 and 3: from the start of iteration 2 (2 s) to that of iteration 4 (4 s).
  const auto iter = test::run_kanoko({"init", trace, "--from", "iter:2", "--to", "iter:3"});
  ASSERT_EQ(iter.exit_code, 0) << iter.err;
  const auto secs = test::run_kanoko({"init", trace, "--from", "2", "--to", "4"});
  ASSERT_EQ(secs.exit_code, 0) << secs.err;
  EXPECT_NE(iter.out.find("from = 2.0\n"), std::string::npos) << iter.out;
  EXPECT_NE(iter.out.find("to = 4.0\n"), std::string::npos) << iter.out;
  EXPECT_EQ(iter.out, secs.out);  // the interval and calibration follow the window alike

  const auto run = test::run_kanoko({"simulate", trace, "-o", (dir / "i.kntj").string(), "--from", "iter:2", "--to", "iter:3"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto plain = test::run_kanoko({"simulate", trace, "-o", (dir / "s.kntj").string(), "--from", "2", "--to", "4"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(run.err.find("over 2 s of trace time"), std::string::npos) << run.err;
  // The inferred mapping, the interval and every calibrated constant: all before "wrote".
  const auto summary = [](const std::string& err) { return err.substr(0, err.find("kanoko simulate: wrote")); };
  EXPECT_NE(summary(run.err).find("the 2 s window makes 200 intervals"), std::string::npos) << run.err;
  EXPECT_EQ(summary(run.err), summary(plain.err));
}

TEST(IterationWindow, InfoListsTheMarkers) {
  test::TempDir dir;
  const std::string trace = (dir / "it.json").string();
  test::write_text(trace, test::chrome_iterations_json(true));
  const auto r = test::run_kanoko({"info", trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  iteration: 15 on 3 entities, 5 iterations, mean period 1 s; iter:K counts these\n"),
            std::string::npos)
      << r.out;
  const auto j = test::run_kanoko({"info", trace, "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_NE(j.out.find("\"markers\":[{\"name\":\"iteration\",\"from_states\":false,\"count\":15,\"entities\":3,"
                       "\"iterations\":5,\"mean_period_s\":1,\"detected\":true}]"),
            std::string::npos)
      << j.out;
}

TEST(IterationWindow, NoMarkersIsOneLineNamingTheTrace) {
  test::TempDir dir;
  const std::string trace = (dir / "plain.json").string();
  test::write_text(trace, test::chrome_iterations_json(false));
  const std::string out = (dir / "x.kntj").string();
  const auto r = test::run_kanoko({"simulate", trace, "-o", out, "--from", "iter:1"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(trace + ": error: iter:K needs iteration markers"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  const auto bad = test::run_kanoko({"init", trace, "--to", "iter:two"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--to: error: expected iter:K"), std::string::npos) << bad.err;
  const auto marker = test::run_kanoko({"init", trace, "--marker", "compute"});
  EXPECT_EQ(marker.exit_code, 1);
  EXPECT_NE(marker.err.find("--marker"), std::string::npos) << marker.err;
  // A repeated slice name, named with --marker, marks iterations too.
  const auto slices = test::run_kanoko({"init", trace, "--marker", "compute", "--from", "iter:5"});
  ASSERT_EQ(slices.exit_code, 0) << slices.err;
  EXPECT_NE(slices.out.find("from = 5.0\n"), std::string::npos) << slices.out;
}

}  // namespace
}  // namespace kanoko
