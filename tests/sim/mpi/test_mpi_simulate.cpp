// `mpirun -np P kanoko simulate` (src/sim/mpi_run.hpp): the ranks share the force evaluations and
// rank 0 writes the same bytes as one process, for 1, 2 and 4 ranks (oversubscribed on this
// machine, loopback only). Bad runs end every rank with a clear message from rank 0, a non-zero
// exit and no output: ranks that disagree about the trace or the mapping, more ranks than bodies,
// a rank that dies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/support/test_support.hpp"

namespace kanoko::test {
namespace KANOKO_UNITY_ID {

/// mpirun for `ranks` ranks: as root and more ranks than cores (CI runs as root on 2 cores),
/// shared memory and loopback only (no network in tests). Under the sanitizers the ranks run
/// without LeakSanitizer: Open MPI keeps allocations of its plugins past MPI_Finalize and unloads
/// them, so their leaks show as "<unknown module>" that tests/lsan.supp cannot name; every other
/// sanitizer check stays on, and the same code without MPI is leak-checked by the other tests.
/// (Without the sanitizers ASAN_OPTIONS means nothing.)
std::vector<std::string> mpirun(int ranks) {
  return {KANOKO_MPIRUN, "--oversubscribe", "--allow-run-as-root", "--mca", "btl", "self,vader",
          "--mca", "oob_tcp_if_include", "lo", "-x", "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:intercept_tls_get_addr=0",
          "-np", std::to_string(ranks)};
}

/// mpirun's multiple-program form: rank 0 runs `first`, rank 1 runs `second`.
CommandResult run_two(const std::vector<std::string>& first, const std::vector<std::string>& second) {
  std::vector<std::string> cmd = mpirun(1);
  cmd.insert(cmd.end(), first.begin(), first.end());
  cmd.insert(cmd.end(), {":", "-np", "1"});
  cmd.insert(cmd.end(), second.begin(), second.end());
  return run_program(cmd);
}

/// A native trace of `n` ranks over `intervals` intervals of 0.1 s: loads and messages to ring
/// neighbours and across the ring, deterministic.
std::string ring_trace(int n, int intervals) {
  std::string t = "kntr 1\n";
  for (int i = 0; i < n; ++i) t += "node 0 " + std::to_string(i) + "\n";
  unsigned state = 12345;
  auto next = [&state] { return state = state * 1103515245U + 12345U; };
  for (int b = 0; b < intervals; ++b) {
    const std::string at = std::to_string(b / 10.0 + 0.01);
    for (int i = 0; i < n; i += 3) t += "load " + at + " " + std::to_string(i) + " 0." + std::to_string(next() % 9 + 1) + "\n";
    for (int i = 0; i < n; i += 2) {
      const int to = (i + 1 + static_cast<int>(next() % 2) * n / 2) % n;
      t += "msg " + at + " " + std::to_string(i) + " " + std::to_string(to) + " " + std::to_string(next() % 1000 + 1) + "\n";
    }
  }
  return t + "end " + std::to_string(intervals / 10.0) + "\n";
}

/// Springs, repulsion (Barnes–Hut above 2 048 bodies), pulls, centre pull and friction.
const char* const kMapping = R"([bodies]
placement = "ring"
[mass]
load_gain = 1
[springs]
topology = "ring"
[forces.repulsion]
strength = 1e-6
[forces.communication]
mode = "symmetric"
[forces.friction]
beta = 1
[forces.centre]
strength = 0.1
)";

std::vector<std::string> simulate_args(const TempDir& dir, const std::string& trace, const std::string& output) {
  return {kanoko_binary(), "simulate", (dir / trace).string(), "--mapping", (dir / "m.toml").string(), "-o",
          (dir / output).string(), "-q"};
}

CommandResult run_mpi(int ranks, const std::vector<std::string>& args) {
  std::vector<std::string> cmd = mpirun(ranks);
  cmd.insert(cmd.end(), args.begin(), args.end());
  return run_program(cmd);
}

/// Files of `dir` other than its inputs (trace*, m*.toml) and `expected`.
std::vector<std::string> other_files(const TempDir& dir, const std::vector<std::string>& expected) {
  std::vector<std::string> others;
  for (const std::string& f : list_dir(dir.path())) {
    if (f.starts_with("trace") || f.ends_with(".toml")) continue;
    if (std::find(expected.begin(), expected.end(), f) == expected.end()) others.push_back(f);
  }
  return others;
}

void expect_ranks_write_the_bytes_of_one_process(int bodies, int intervals) {
  TempDir dir;
  write_text(dir / "trace.kntr", ring_trace(bodies, intervals));
  write_text(dir / "m.toml", kMapping);
  const CommandResult one = run_program(simulate_args(dir, "trace.kntr", "one.kntj"));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const std::string expected = read_text(dir / "one.kntj");
  ASSERT_GT(expected.size(), 1000U);
  for (int ranks : {1, 2, 4}) {
    const std::string name = "mpi" + std::to_string(ranks) + ".kntj";
    const CommandResult r = run_mpi(ranks, simulate_args(dir, "trace.kntr", name));
    ASSERT_EQ(r.exit_code, 0) << ranks << " ranks: " << r.err;
    EXPECT_TRUE(read_text(dir / name) == expected) << bodies << " bodies, " << ranks << " ranks: the bytes differ";
  }
  // Rank 0 wrote each file; no other rank wrote anything.
  EXPECT_EQ(other_files(dir, {"one.kntj", "mpi1.kntj", "mpi2.kntj", "mpi4.kntj"}), std::vector<std::string>{});
}

TEST(MpiSimulate, RanksWriteTheBytesOfOneProcessWithBarnesHut) { expect_ranks_write_the_bytes_of_one_process(2200, 3); }

TEST(MpiSimulate, RanksWriteTheBytesOfOneProcessWithDirectSums) { expect_ranks_write_the_bytes_of_one_process(60, 20); }

TEST(MpiSimulate, RanksThatDisagreeAboutTheInputsStop) {
  TempDir dir;
  write_text(dir / "trace.kntr", ring_trace(40, 5));
  write_text(dir / "trace-other.kntr", ring_trace(40, 6));
  write_text(dir / "m.toml", kMapping);
  write_text(dir / "m2.toml", std::string(kMapping) + "[simulation]\nframe_every = 2\n");
  struct Case {
    std::vector<std::string> second;  ///< rank 1's command line
    std::string says;
  };
  std::vector<std::string> other_mapping = simulate_args(dir, "trace.kntr", "out.kntj");
  other_mapping[4] = (dir / "m2.toml").string();
  for (const Case& c : {Case{simulate_args(dir, "trace-other.kntr", "out.kntj"), "rank 1 has a different trace"},
                        Case{other_mapping, "rank 1 has a different mapping or options"}}) {
    const CommandResult r = run_two(simulate_args(dir, "trace.kntr", "out.kntj"), c.second);
    EXPECT_NE(r.exit_code, 0) << c.says;
    EXPECT_NE(r.err.find("the ranks of the MPI run disagree about their inputs: " + c.says), std::string::npos) << r.err;
    EXPECT_EQ(other_files(dir, {}), std::vector<std::string>{}) << c.says;
  }
}

TEST(MpiSimulate, MoreRanksThanBodiesStop) {
  TempDir dir;
  write_text(dir / "trace.kntr", ring_trace(3, 5));
  write_text(dir / "m.toml", kMapping);
  const CommandResult r = run_mpi(4, simulate_args(dir, "trace.kntr", "out.kntj"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("4 MPI ranks for 3 bodies: each rank needs at least one body; run with mpirun -np 3 or fewer"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("rank 1 of the MPI run failed"), std::string::npos) << r.err;  // rank 0's own message, once
  EXPECT_EQ(other_files(dir, {}), std::vector<std::string>{});
}

TEST(MpiSimulate, AFailureOnOneRankEndsEveryRank) {
  // Rank 1 cannot read its trace (a file that is not there): rank 0 names it, nobody waits.
  TempDir dir;
  write_text(dir / "trace.kntr", ring_trace(40, 5));
  write_text(dir / "m.toml", kMapping);
  const CommandResult r =
      run_two(simulate_args(dir, "trace.kntr", "out.kntj"), simulate_args(dir, "trace-missing.kntr", "out.kntj"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("rank 1 of the MPI run failed: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("trace-missing.kntr"), std::string::npos) << r.err;
  EXPECT_EQ(other_files(dir, {}), std::vector<std::string>{});
}

TEST(MpiSimulate, ARankThatDiesLeavesNoOutput) {
  // Rank 1 is killed a second into a long run; mpirun ends rank 0, which leaves no file behind.
  TempDir dir;
  write_text(dir / "trace.kntr", ring_trace(4000, 200));
  write_text(dir / "m.toml", kMapping);
  std::vector<std::string> dying = {"sh", "-c", "\"$@\" & p=$!; sleep 2; kill -KILL $p; wait $p; exit 9", "sh"};
  for (const auto& a : simulate_args(dir, "trace.kntr", "out.kntj")) dying.push_back(a);
  const CommandResult r = run_two(simulate_args(dir, "trace.kntr", "out.kntj"), dying);
  EXPECT_NE(r.exit_code, 0) << r.err;
  // Rank 0 was stopped by mpirun (SIGTERM) or lost its peer in an exchange, and said so.
  EXPECT_TRUE(r.err.find("kanoko simulate: interrupted (SIGTERM); no output was written") != std::string::npos ||
              r.err.find("another rank of the run has probably ended") != std::string::npos)
      << r.err;
  EXPECT_EQ(other_files(dir, {}), std::vector<std::string>{}) << r.err;
}

}  // namespace
}  // namespace kanoko::test
