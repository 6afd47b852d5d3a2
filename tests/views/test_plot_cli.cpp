// kanoko plot: from a trace and from a simulated run (finding the trace it records), and its
// errors: unknown view (with a suggestion), missing trace, bad size, unknown entity. Failed runs
// write nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/test_support.hpp"
#include "tests/views/view_test_traces.hpp"

namespace kanoko::views {
namespace KANOKO_UNITY_ID {

using test::run_kanoko;

unsigned png_width(const std::string& png) {
  return (static_cast<unsigned>(static_cast<unsigned char>(png[16])) << 24U) |
         (static_cast<unsigned>(static_cast<unsigned char>(png[17])) << 16U) |
         (static_cast<unsigned>(static_cast<unsigned char>(png[18])) << 8U) |
         static_cast<unsigned>(static_cast<unsigned char>(png[19]));
}

TEST(PlotCommand, EveryViewFromATrace) {
  test::TempDir dir;
  test::write_text(dir / "ring.kntr", ring_trace(3, true));
  for (const char* view : {"spacetime", "matrix", "kiviat", "utilisation", "summary"}) {
    const auto out = dir / (std::string(view) + ".png");
    const auto r = run_kanoko({"plot", view, (dir / "ring.kntr").string(), "-o", out.string(), "--size", "320x200",
                               "--time", "3", "--select", "r2"});
    ASSERT_EQ(r.exit_code, 0) << view << ": " << r.err;
    EXPECT_NE(r.out.find("wrote"), std::string::npos);
    EXPECT_EQ(png_width(test::read_text(out)), 320U) << view;
  }
  const auto svg = dir / "m.svg";
  const auto r = run_kanoko({"plot", "matrix", (dir / "ring.kntr").string(), "-o", svg.string(), "--cumulative", "--bytes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(test::read_text(svg).find("<svg"), std::string::npos);
}

TEST(PlotCommand, FromARunFindsItsTrace) {
  test::TempDir dir;
  test::write_text(dir / "ring.kntr", ring_trace(2, true));
  const auto run = dir / "ring.kntj";
  const auto sim = run_kanoko({"simulate", (dir / "ring.kntr").string(), "--mapping",
                               (test::source_dir() / "mappings/from-trace.toml").string(), "-o", run.string()});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const auto out = dir / "st.png";
  auto r = run_kanoko({"plot", "spacetime", run.string(), "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ring.kntr"), std::string::npos) << r.out;

  // The trace moved away: a clear error that names the recorded path and --trace.
  std::filesystem::rename(dir / "ring.kntr", dir / "moved.kntr");
  std::filesystem::remove(out);
  r = run_kanoko({"plot", "spacetime", run.string(), "-o", out.string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("ring.kntr"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--trace"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  r = run_kanoko({"plot", "spacetime", run.string(), "-o", out.string(), "--trace", (dir / "moved.kntr").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(out));
}

TEST(PlotCommand, ClearErrorsAndNoOutput) {
  test::TempDir dir;
  test::write_text(dir / "ring.kntr", ring_trace(1, true));
  const std::string trace = (dir / "ring.kntr").string();
  const std::string out = (dir / "out.png").string();
  auto r = run_kanoko({"plot", "spacetim", trace, "-o", out});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("did you mean 'spacetime'"), std::string::npos) << r.err;
  r = run_kanoko({"plot", "matrix", trace, "-o", out, "--size", "100by100"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--size"), std::string::npos) << r.err;
  r = run_kanoko({"plot", "matrix", trace, "-o", out, "--size", "4x4"});
  EXPECT_NE(r.exit_code, 0);
  r = run_kanoko({"plot", "matrix", trace, "-o", out, "--select", "r7"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("did you mean 'r"), std::string::npos) << r.err;
  r = run_kanoko({"plot", "matrix", trace, "-o", (dir / "out.gif").string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(".png or .svg"), std::string::npos) << r.err;
  r = run_kanoko({"plot", "kiviat", trace, "-o", out, "--time", "99"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("outside the run"), std::string::npos) << r.err;
  r = run_kanoko({"plot", "spacetime", trace, "-o", out, "--window", "2:1"});
  EXPECT_NE(r.exit_code, 0);
  r = run_kanoko({"plot", "spacetime", (dir / "none.kntr").string(), "-o", out});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("none.kntr"), std::string::npos) << r.err;
  test::write_text(dir / "bad.kntr", "kntr 1\nnode 0 0\nstate x 0 1 compute\n");
  r = run_kanoko({"plot", "summary", (dir / "bad.kntr").string(), "-o", out});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("bad.kntr:3:"), std::string::npos) << r.err;
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"bad.kntr", "ring.kntr"}));
  r = run_kanoko({"plot", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("kiviat"), std::string::npos);
}

}  // namespace
}  // namespace kanoko::views
