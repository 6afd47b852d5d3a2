// The kanoko executable as a user meets it: help, errors, exit codes, files left behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "src/trajectory/trajectory.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::test {
namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

const char* kMapping = R"([simulation]
interval = 0.1
dt = 0.01
[bodies]
placement = "ring"
[forces.repulsion]
strength = 0.01
[forces.communication]
gain = 1
[forces.friction]
beta = 1
)";

const char* kTrace = R"(kntr 1
node 0 0 name=a
node 0 1 name=b
node 0 2 name="c, the third"
msg 0.05 0 1 100
msg 0.15 1 2 100
load 0.2 2 0.5
end 0.3
)";

TEST(Cli, TopLevelHelpListsCommands) {
  const auto r = run_kanoko({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* c : {"simulate", "check", "export", "render", "view", "generate"}) EXPECT_TRUE(contains(r.out, c)) << c;
  EXPECT_EQ(run_kanoko({}).exit_code, 2);
  const auto unknown = run_kanoko({"simulat"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(contains(unknown.err, "unknown command 'simulat'"));
}

TEST(Cli, EverySubcommandHasHelp) {
  std::vector<std::string> commands{"simulate", "check", "export", "generate"};
#ifdef KANOKO_TEST_HAVE_SCENE
  commands.insert(commands.end(), {"render", "view"});
#else
  // Built without the scene: render and view say so and fail.
  EXPECT_EQ(run_kanoko({"render", "--help"}).exit_code, 2);
#endif
  for (const auto& c : commands) {
    const auto r = run_kanoko({c, "--help"});
    EXPECT_EQ(r.exit_code, 0) << c << ": " << r.err;
    EXPECT_TRUE(contains(r.out, "Usage: kanoko " + c)) << c << ": " << r.out;
  }
  EXPECT_TRUE(contains(run_kanoko({"simulate", "--help"}).out, "rk4"));
}

TEST(Cli, BadOptionsAreOneLineErrors) {
  auto r = run_kanoko({"simulate", "x.kntr", "--mapping", "m.toml", "-o", "y", "--frobnicate"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "frobnicate")) << r.err;
  EXPECT_TRUE(contains(r.err, "kanoko simulate --help")) << r.err;
  r = run_kanoko({"simulate", "x.kntr"});  // the mapping may be inferred, the output may not
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "--output")) << r.err;
  r = run_kanoko({"simulate", "missing.kntr", "--mapping", "missing.toml", "-o", "out.kntj"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "missing.toml")) << r.err;
}

TEST(Cli, CheckReportsEveryProblemWithLocations) {
  TempDir dir;
  write_text(dir / "bad.toml", "[simulation]\ndt = \"fast\"\nintervall = 0.1\n[bodies]\nplacement = \"cubes\"\n");
  const auto r = run_kanoko({"check", (dir / "bad.toml").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "bad.toml:2:6: error: 'dt' must be a number")) << r.err;
  EXPECT_TRUE(contains(r.err, "bad.toml:3:13: error: unknown key 'intervall' in [simulation] (did you mean 'interval'?)")) << r.err;
  EXPECT_TRUE(contains(r.err, "bad.toml:5:13: error: 'placement' = \"cubes\" is not valid (did you mean 'cube'?)")) << r.err;
  write_text(dir / "good.toml", kMapping);
  write_text(dir / "t.kntr", kTrace);
  const auto ok = run_kanoko({"check", (dir / "good.toml").string(), "--trace", (dir / "t.kntr").string()});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(contains(ok.out, "3 bodies")) << ok.out;
}

// Issue 17: a numerical blow-up prints one located line naming the run, the mapping's dt, the
// body, the time and the step, and what was being simulated.
TEST(Cli, NumericalBlowUpIsOneLocatedLine) {
  TempDir dir;
  write_text(dir / "t.kntr", kTrace);
  write_text(dir / "m.toml",
             "[simulation]\ninterval = 0.1\ndt = 0.1\n[bodies]\nplacement = \"ring\"\nsize = 0.01\n"
             "[forces.repulsion]\nstrength = 1e6\n");
  const auto r = run_kanoko({"simulate", (dir / "t.kntr").string(), "-m", (dir / "m.toml").string(), "-o",
                             (dir / "r.kntj").string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;  // one line
  EXPECT_TRUE(contains(r.err, "kanoko simulate: error: numerical blow-up at step 1 (t = 0.1 s): body 0")) << r.err;
  EXPECT_TRUE(contains(r.err, "lower 'dt' in [simulation] (" + (dir / "m.toml").string() + ":3:6)")) << r.err;
  EXPECT_TRUE(contains(r.err, "(while simulating " + (dir / "t.kntr").string() + " with mapping " +
                                  (dir / "m.toml").string() + " into " + (dir / "r.kntj").string() + ")"))
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "r.kntj"));
}

TEST(Cli, SimulateThenExportCsv) {
  TempDir dir;
  write_text(dir / "m.toml", kMapping);
  write_text(dir / "t.kntr", kTrace);
  auto r = run_kanoko({"simulate", (dir / "t.kntr").string(), "-m", (dir / "m.toml").string(), "-o", (dir / "r.kntj").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "wrote")) << r.err;
  r = run_kanoko({"simulate", (dir / "t.kntr").string(), "-m", (dir / "m.toml").string(), "-o", (dir / "r.kntj").string()});
  EXPECT_TRUE(contains(r.err, "up to date")) << r.err;
  r = run_kanoko({"export", (dir / "r.kntj").string(), "-o", (dir / "r.csv").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = read_text(dir / "r.csv");
  EXPECT_EQ(csv.rfind("time_s,body,name,x,y,z,vx,vy,vz,load,mass,", 0), 0U) << csv.substr(0, 200);
  const trajectory::Reader reader(dir / "r.kntj");
  const auto rows = static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n'));
  EXPECT_EQ(rows, 1 + reader.frame_count() * 3);
  EXPECT_TRUE(contains(csv, ",2,\"c, the third\",")) << "names with commas are quoted";
}

TEST(Cli, TruncatedTrajectoryIsRefused) {
  TempDir dir;
  write_text(dir / "m.toml", kMapping);
  write_text(dir / "t.kntr", kTrace);
  ASSERT_EQ(run_kanoko({"simulate", (dir / "t.kntr").string(), "-m", (dir / "m.toml").string(), "-o", (dir / "r.kntj").string(), "-q"}).exit_code, 0);
  const std::string bytes = read_text(dir / "r.kntj");
  write_text(dir / "half.kntj", bytes.substr(0, bytes.size() / 2));
  const auto r = run_kanoko({"export", (dir / "half.kntj").string(), "-o", (dir / "out.csv").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "half.kntj")) << r.err;
  EXPECT_TRUE(contains(r.err, "truncated")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out.csv"));
}

TEST(Cli, InterruptLeavesNoOutput) {
  // A long simulation (a million steps), interrupted after it started: exit 130, no file.
  TempDir dir;
  std::string mapping = kMapping;
  mapping.replace(mapping.find("dt = 0.01"), 9, "dt = 1e-5");
  write_text(dir / "m.toml", mapping);
  std::string trace = kTrace;
  trace.replace(trace.find("end 0.3"), 7, "end 30");
  write_text(dir / "t.kntr", trace);
  const std::string binary = kanoko_binary();
  const char* bin = binary.c_str();
  const std::string out = (dir / "r.kntj").string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl(bin, bin, "simulate", (dir / "t.kntr").c_str(), "-m", (dir / "m.toml").c_str(), "-o", out.c_str(), "-q",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait until the temporary output exists, so the signal arrives mid-simulation.
  bool started = false;
  for (int i = 0; i < 200 && !started; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    for (const auto& name : list_dir(dir.path())) started = started || name.find(".tmp-") != std::string::npos;
  }
  EXPECT_TRUE(started);
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_EQ(list_dir(dir.path()), (std::vector<std::string>{"m.toml", "t.kntr"}));
}

}  // namespace
}  // namespace kanoko::test
