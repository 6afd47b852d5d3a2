// The zero-configuration commands as a user runs them: init, simulate and suggest without a
// mapping, the purposes, the window and the shared calibration, and their bad input.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/support/test_support.hpp"

namespace kanoko {
namespace KANOKO_UNITY_ID {

std::string smpi(const std::string& name) { return (test::source_dir() / "traces" / "smpi" / (name + ".trace")).string(); }

TEST(ZeroConfigCli, InitWritesACommentedMappingThatChecks) {
  test::TempDir dir;
  const std::string out = (dir / "halo.toml").string();
  const auto r = test::run_kanoko({"init", smpi("halo2d-16-torus"), "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("inferred mapping (purpose balance): 16 bodies"), std::string::npos) << r.err;
  const std::string text = test::read_text(out);
  EXPECT_NE(text.find("interval = \"auto\""), std::string::npos);
  EXPECT_NE(text.find("calibrate = \"auto\""), std::string::npos);
  EXPECT_NE(text.find("# The trace records message sizes"), std::string::npos);
  const auto check = test::run_kanoko({"check", out, "--trace", smpi("halo2d-16-torus")});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_EQ(check.out.find("warning"), std::string::npos) << check.out;
  // Without -o it prints the mapping.
  const auto printed = test::run_kanoko({"init", smpi("farm8-fattree"), "--purpose", "waiting"});
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_NE(printed.out.find("mode = \"sender\""), std::string::npos);
  EXPECT_NE(printed.out.find("quantity = \"messages\""), std::string::npos);
}

TEST(ZeroConfigCli, SimulateWithoutAMappingSaysWhatItInferred) {
  test::TempDir dir;
  const std::string run = (dir / "p.kntj").string();
  const auto r = test::run_kanoko({"simulate", smpi("pipeline8-flat"), "-o", run});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("kanoko simulate: inferred mapping (purpose balance)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("interval: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(calibrated)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  // A window: the interval and calibration follow it.
  const auto w = test::run_kanoko({"simulate", smpi("pipeline8-flat"), "-o", (dir / "w.kntj").string(), "--from",
                                   "0.02", "--to", "0.06"});
  ASSERT_EQ(w.exit_code, 0) << w.err;
  EXPECT_NE(w.err.find("over 0.04 s of trace time"), std::string::npos) << w.err;
  EXPECT_NE(w.err.find("the 40 ms window makes 200 intervals"), std::string::npos) << w.err;
  // A shared calibration: nothing is calibrated, everything comes from the reference.
  const auto like = test::run_kanoko({"simulate", smpi("pipeline8-flat"), "-o", (dir / "l.kntj").string(),
                                      "--calibrate-like", run, "--force"});
  ASSERT_EQ(like.exit_code, 0) << like.err;
  EXPECT_EQ(like.err.find("(calibrated)"), std::string::npos) << like.err;
  EXPECT_EQ(like.err.find("warning"), std::string::npos) << like.err;
}

TEST(ZeroConfigCli, SuggestWithoutAMappingProposesTheInterval) {
  const auto r = test::run_kanoko({"suggest", smpi("halo2d-16-torus"), "--mapping",
                                   (test::source_dir() / "mappings" / "from-trace.toml").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("the run has only 1 intervals"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("intervals of 100 ms now; 200 intervals"), std::string::npos) << r.out;
  const auto inferred = test::run_kanoko({"suggest", smpi("halo2d-16-torus")});
  ASSERT_EQ(inferred.exit_code, 0) << inferred.err;
  EXPECT_NE(inferred.out.find("[forces.friction] beta = "), std::string::npos) << inferred.out;
}

TEST(ZeroConfigCli, ACueSetThatNeverFiresIsSaid) {
  test::TempDir dir;
  const std::string mapping = (dir / "m.toml").string();
  ASSERT_EQ(test::run_kanoko({"init", smpi("halo2d-16-torus"), "-o", mapping}).exit_code, 0);
  const std::string base = test::read_text(mapping);
  test::write_text(mapping, base + "\n[[audio.cue]]\nquantity = \"load\"\nrate = [1e30, inf]\n");
  const auto silent = test::run_kanoko({"simulate", smpi("halo2d-16-torus"), "-m", mapping, "-o", (dir / "s.kntj").string()});
  ASSERT_EQ(silent.exit_code, 0) << silent.err;
  EXPECT_NE(silent.err.find("warning: the [audio] cues fire no cue over this run"), std::string::npos) << silent.err;
  test::write_text(mapping, base + "\n[[audio.cue]]\nquantity = \"bytes_sent\"\nrate = [\"mean_rate + 3 * sd_rate\", inf]\n");
  const auto sounding = test::run_kanoko({"simulate", smpi("halo2d-16-torus"), "-m", mapping, "-o", (dir / "t.kntj").string()});
  ASSERT_EQ(sounding.exit_code, 0) << sounding.err;
  EXPECT_EQ(sounding.err.find("fire no cue"), std::string::npos) << sounding.err;
}

TEST(ZeroConfigCli, RealTracesOfEveryFormatSimulateWithNoMapping) {
  // Traces from public projects (../shared/traces), with no mapping: each simulates, and the run
  // reads back (its statistics are in range even where states overlap, as in simu-mardi).
  test::TempDir dir;
  const auto shared = test::shared_dir() / "traces";
  for (const std::string t : {"paje/simu-mardi.trace", "paraver/lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv",
                              "otf2/ping-pong-otf2/traces.otf2", "chrome-json/flow.json", "simgrid-ti/smpi_replay.txt"}) {
    SCOPED_TRACE(t);
    const std::string run = (dir / "r.kntj").string();
    const auto r = test::run_kanoko({"simulate", (shared / t).string(), "-o", run, "--force"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("inferred mapping (purpose balance)"), std::string::npos) << r.err;
    const auto csv = test::run_kanoko({"export", run, "-o", (dir / "r.csv").string()});
    EXPECT_EQ(csv.exit_code, 0) << csv.err;
  }
}

TEST(ZeroConfigCli, InfoSaysWhetherMessagesCarrySizes) {
  const auto none = test::run_kanoko({"info", smpi("farm8-fattree")});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find("(0 of 127 messages carry a size; forces pull by message counts)"), std::string::npos) << none.out;
  const auto sizes = test::run_kanoko({"info", smpi("pipeline8-flat"), "--json"});
  ASSERT_EQ(sizes.exit_code, 0) << sizes.err;
  EXPECT_NE(sizes.out.find("\"messages\":140,\"bytes\":573440,\"messages_with_bytes\":140"), std::string::npos) << sizes.out;
}

TEST(ZeroConfigCli, BadInputIsOneLocatedLine) {
  test::TempDir dir;
  const auto purpose = test::run_kanoko({"simulate", smpi("farm8-fattree"), "-o", (dir / "x.kntj").string(),
                                         "--purpose", "balanse"});
  EXPECT_EQ(purpose.exit_code, 1) << purpose.err;
  EXPECT_NE(purpose.err.find("unknown purpose 'balanse' (did you mean 'balance'?)"), std::string::npos) << purpose.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "x.kntj"));
  const auto window = test::run_kanoko({"simulate", smpi("farm8-fattree"), "-o", (dir / "x.kntj").string(),
                                        "--from", "0.5", "--to", "0.2"});
  EXPECT_NE(window.exit_code, 0);
  EXPECT_NE(window.err.find("--to"), std::string::npos) << window.err;
  test::write_text(dir / "empty.kntr", "kntr 1\nend 1\n");
  const auto empty = test::run_kanoko({"init", (dir / "empty.kntr").string()});
  EXPECT_NE(empty.exit_code, 0);
  EXPECT_NE(empty.err.find("declares no entity"), std::string::npos) << empty.err;
  const auto late = test::run_kanoko({"simulate", smpi("farm8-fattree"), "-o", (dir / "y.kntj").string(),
                                      "--from", "5", "--to", "6"});
  EXPECT_NE(late.exit_code, 0);
  EXPECT_NE(late.err.find("window"), std::string::npos) << late.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "y.kntj"));
  const auto both = test::run_kanoko({"simulate", smpi("farm8-fattree"), "-o", (dir / "z.kntj").string(), "--mapping",
                                      (test::source_dir() / "mappings" / "from-trace.toml").string(), "--purpose", "waiting"});
  EXPECT_NE(both.exit_code, 0);
  EXPECT_NE(both.err.find("--purpose"), std::string::npos) << both.err;
}

}  // namespace
}  // namespace kanoko
