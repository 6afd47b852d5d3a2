// simulate's cache reuses an existing run only when it is complete and verifies: damaged frames,
// header bytes, an erased completion record or a cut file are recomputed, and the reason says why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "src/sim/simulate.hpp"
#include "src/trajectory/trajectory.hpp"
#include "tests/support/model_fixtures.hpp"
#include "tests/support/ring_mapping.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::sim {
namespace KANOKO_UNITY_ID {

/// A ring of 4 ranks, 0.5 s traced and 8 s of settling: 171 frames, blocks of 64, 64 and 43.
struct LongRun {
  test::TempDir dir;
  SimulateOptions options;
  std::string good;
  LongRun() {
    std::string trace = test::node_lines(4);
    for (int step = 0; step < 10; ++step) {
      trace += "msg " + std::to_string(step * 0.05) + " " + std::to_string(step % 4) + " " +
               std::to_string((step + 1) % 4) + " 100\n";
    }
    test::write_text(dir / "t.kntr", trace + "end 0.5\n");
    test::write_text(dir / "m.toml", test::ring_mapping({"0.025", 8.0}));
    options.trace = dir / "t.kntr";
    options.mapping = dir / "m.toml";
    options.output = dir / "run.kntj";
    options.progress = false;
    const SimulateSummary s = simulate(options);
    EXPECT_EQ(s.frames, 171U);
    good = test::read_text(options.output);
  }
  /// Replaces the run by `bytes`, simulates again and returns why it was not reused ("" if it was).
  std::string resimulate_over(const std::string& bytes) {
    std::ofstream(options.output, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    const SimulateSummary s = simulate(options);
    EXPECT_NE(s.reused, !s.recompute_reason.empty());
    EXPECT_EQ(test::read_text(options.output), good) << "recomputed to the same bytes";
    return s.recompute_reason;
  }
};

std::uint64_t u64_at(const std::string& bytes, std::size_t offset) {
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

TEST(SimulateReuse, AGoodRunIsReusedAndItsPlanIsRecorded) {
  LongRun run;
  EXPECT_EQ(run.resimulate_over(run.good), "");
  EXPECT_EQ(trajectory::Reader(run.options.output).meta().planned_frames, 171U);
}

TEST(SimulateReuse, DamagedFramesAreRecomputedNamingTheBlock) {
  LongRun run;
  const std::size_t frames_offset = u64_at(run.good, 32), stride = u64_at(run.good, 40);
  std::string bad = run.good;
  const std::size_t block1 = frames_offset + 64 * stride + 48;
  bad[block1 + 10 * stride + 20] ^= 0x01;  // frame 74
  const std::string why = run.resimulate_over(bad);
  EXPECT_EQ(why, "fails its checksum in block 1, frames 64–127, bytes " + std::to_string(block1) + "–" +
                     std::to_string(block1 + 64 * stride - 1));
}

TEST(SimulateReuse, DamagedHeaderBytesAreRecomputed) {
  LongRun run;
  for (std::size_t offset : {20U, 72U, 90U}) {  // stat count, planned frames, header hash (bytes 88–95)
    std::string bad = run.good;
    bad[offset] ^= 0x08;
    const std::string why = run.resimulate_over(bad);
    EXPECT_NE(why.find("cannot be read (header is corrupt"), std::string::npos) << offset << ": " << why;
  }
}

TEST(SimulateReuse, AnIncompleteOrCutRunIsRecomputed) {
  LongRun run;
  std::string bad = run.good;
  std::memset(bad.data() + 96, 0, 48);  // the completion record, as before the writer finished
  EXPECT_EQ(run.resimulate_over(bad), "is incomplete (still being written, or killed at frame 171 of 171)");
  bad = run.good;
  bad[100] ^= 0x40;
  EXPECT_NE(run.resimulate_over(bad).find("completion record is corrupt"), std::string::npos);
  const std::size_t frames_offset = u64_at(run.good, 32), stride = u64_at(run.good, 40);
  bad = run.good.substr(0, frames_offset + 64 * stride + 48 + 30 * stride);  // killed in block 1
  std::memset(bad.data() + 96, 0, 48);
  EXPECT_EQ(run.resimulate_over(bad), "is incomplete (still being written, or killed at frame 94 of 171)");
  bad = run.good.substr(0, run.good.size() - 100);  // cut after completion (an interrupted copy)
  EXPECT_NE(run.resimulate_over(bad).find("cannot be read (truncated"), std::string::npos);
}

TEST(SimulateReuse, TheCommandsSayWhatIsWrongAndLeaveNoOutput) {
  LongRun run;
  const std::size_t frames_offset = u64_at(run.good, 32), stride = u64_at(run.good, 40);
  std::string bad = run.good;
  bad[frames_offset + 2 * (64 * stride + 48) + 5 * stride + 9] ^= 0x20;  // frame 133, in block 2
  std::ofstream(run.options.output, std::ios::binary | std::ios::trunc).write(bad.data(), static_cast<std::streamsize>(bad.size()));
  const std::string csv = (run.dir / "out.csv").string();
  const test::CommandResult exported = test::run_kanoko({"export", run.options.output.string(), "-o", csv});
  EXPECT_NE(exported.exit_code, 0);
  EXPECT_NE(exported.err.find(run.options.output.string() + " (block 2, frames 128–170, bytes "), std::string::npos)
      << exported.err;
  EXPECT_NE(exported.err.find("fails its checksum"), std::string::npos) << exported.err;
  EXPECT_EQ(std::count(exported.err.begin(), exported.err.end(), '\n'), 1) << exported.err;
  EXPECT_FALSE(std::filesystem::exists(csv)) << "no half-written output";
  const test::CommandResult simulated = test::run_kanoko(
      {"simulate", run.options.trace.string(), "-m", run.options.mapping.string(), "-o", run.options.output.string()});
  EXPECT_EQ(simulated.exit_code, 0) << simulated.err;
  EXPECT_NE(simulated.err.find(run.options.output.string() + " fails its checksum in block 2, frames 128–170"),
            std::string::npos)
      << simulated.err;
  EXPECT_NE(simulated.err.find("; recomputing"), std::string::npos) << simulated.err;
  EXPECT_EQ(test::read_text(run.options.output), run.good);
}

}  // namespace
}  // namespace kanoko::sim
