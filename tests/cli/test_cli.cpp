// The kanoko executable as a user meets it: help, errors, exit codes, files left behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "src/trajectory/trajectory.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::test {
namespace KANOKO_UNITY_ID {

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

// Rows of a CSV file, split at commas (no quoted fields in these files).
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream cells_in(line);
    std::string cell;
    while (std::getline(cells_in, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

// Zero configuration: six ranks on two hosts, exported per host. Each host row is its three
// ranks' centroid, their summed bytes and their mean busy fraction; a level the run does not
// have is a located error and no file.
TEST(Cli, ExportAggregatesRanksPerHost) {
  TempDir dir;
  std::string trace = "kntr 1\n";
  for (int i = 0; i < 6; ++i) {
    trace += "node 0 " + std::to_string(i) + " name=r" + std::to_string(i) + " host=h" + std::to_string(i / 3) + "\n";
  }
  for (int k = 0; k < 20; ++k) {
    const double t = 0.01 * k;
    for (int i = 0; i < 6; ++i) {
      trace += "state " + std::to_string(t) + " " + std::to_string(i) + " " + std::to_string(0.002 * (1 + i)) + " compute\n";
    }
    for (int i = 0; i < 6; ++i) {
      trace += "msg " + std::to_string(t + 0.004) + " " + std::to_string(i) + " " + std::to_string((i + 1) % 6) + " " +
               std::to_string(100 * (i + 1)) + "\n";
    }
  }
  trace += "end 0.2\n";
  write_text(dir / "t.kntr", trace);
  auto r = run_kanoko({"simulate", (dir / "t.kntr").string(), "-o", (dir / "r.kntj").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_kanoko({"export", (dir / "r.kntj").string(), "-o", (dir / "ranks.csv").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_kanoko({"export", (dir / "r.kntj").string(), "--level", "host", "-o", (dir / "hosts.csv").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "hosts of 6 bodies")) << r.err;
  const auto ranks = csv_rows(read_text(dir / "ranks.csv"));
  const auto hosts = csv_rows(read_text(dir / "hosts.csv"));
  ASSERT_GT(ranks.size(), 1U);
  const auto column = [](const std::vector<std::string>& header, const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<std::size_t>(it - header.begin());
  };
  ASSERT_EQ(hosts[0].back(), "members");
  ASSERT_EQ((ranks.size() - 1) / 6, (hosts.size() - 1) / 2) << "as many frames";
  const std::size_t x = column(ranks[0], "x");
  const std::size_t bytes = column(ranks[0], "bytes_sent_total_B");
  const std::size_t busy = column(ranks[0], "busy_fraction");
  ASSERT_EQ(column(hosts[0], "busy_fraction"), busy);
  double busy_seen = 0;
  for (std::size_t f = 0; f + 1 < hosts.size() / 2; ++f) {
    for (std::size_t h = 0; h < 2; ++h) {
      const auto& row = hosts[1 + 2 * f + h];
      EXPECT_EQ(row[2], "h" + std::to_string(h));
      EXPECT_EQ(row.back(), "3");
      double sx = 0, sb = 0, sbusy = 0;
      for (std::size_t i = 3 * h; i < 3 * h + 3; ++i) {
        const auto& rr = ranks[1 + 6 * f + i];
        ASSERT_EQ(rr[0], row[0]) << "same frame time";
        sx += std::stod(rr[x]);
        sb += std::stod(rr[bytes]);
        sbusy += std::stod(rr[busy]);
      }
      EXPECT_NEAR(std::stod(row[x]), sx / 3, 1e-9 * (1 + std::abs(sx)));
      EXPECT_NEAR(std::stod(row[bytes]), sb, 1e-9 * (1 + sb));
      EXPECT_NEAR(std::stod(row[busy]), sbusy / 3, 1e-12);
      busy_seen += sbusy;
    }
  }
  EXPECT_GT(busy_seen, 0.0) << "the trace's computing shows";
  // A level that does not exist, and --level with --gltf: errors, no file.
  r = run_kanoko({"export", (dir / "r.kntj").string(), "--level", "rack", "-o", (dir / "bad.csv").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "--level: error: no level 'rack' in this run (did you mean 'rank'?); its levels are: rank, host")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.csv"));
  r = run_kanoko({"export", (dir / "r.kntj").string(), "--level", "host", "--gltf", "-o", (dir / "bad.glb").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "--level applies to the CSV export")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.glb"));
}

// `kanoko info` on a run: what it holds, as text and JSON; an unfinished run (a writer's
// temporary file) says so; a damaged one is a located error.
TEST(Cli, InfoDescribesARun) {
  TempDir dir;
  trajectory::Metadata meta;
  for (int i = 0; i < 4; ++i) meta.bodies.push_back({"r" + std::to_string(i), "h" + std::to_string(i / 2), {}, i});
  meta.edges = {{0, 1}};
  meta.stat_names = {trajectory::stat::kMass};
  meta.interval_s = 0.5;
  meta.trace_end_s = 2;
  meta.dt_s = 0.25;
  meta.integrator = "rk4";
  meta.planned_frames = 300;
  const Eigen::Matrix3Xd zero = Eigen::Matrix3Xd::Zero(3, 4);
  const Eigen::MatrixXd mass = Eigen::MatrixXd::Ones(1, 4);
  {
    trajectory::Writer w(dir / "done.kntj", meta);
    for (int k = 0; k < 12; ++k) w.append_frame(0.25 * k, zero, zero, mass);
    w.commit();
  }
  auto r = run_kanoko({"info", (dir / "done.kntj").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "Kanoko trajectory, version 3, complete")) << r.out;
  EXPECT_TRUE(contains(r.out, "4 (levels: 4 ranks, 2 hosts")) << r.out;
  EXPECT_TRUE(contains(r.out, "frames:      12, 0 .. 2.75 s (the trace: 0 .. 2 s, then settling)")) << r.out;
  r = run_kanoko({"info", (dir / "done.kntj").string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "\"complete\":true,\"bodies\":4,\"levels\":{\"rank\":4,\"host\":2}")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"frames\":12,")) << r.out;
  // A run still being written: the whole blocks so far.
  trajectory::Writer growing(dir / "live.kntj", meta);
  for (int k = 0; k < 200; ++k) growing.append_frame(0.25 * k, zero, zero, mass);
  r = run_kanoko({"info", growing.temporary_path().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "unfinished (")) << r.out;
  EXPECT_TRUE(contains(r.out, " of 300 frames so far")) << r.out;
  // Damaged: a located error, exit 1.
  const std::string bytes = read_text(dir / "done.kntj");
  write_text(dir / "cut.kntj", bytes.substr(0, 100));
  r = run_kanoko({"info", (dir / "cut.kntj").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "cut.kntj")) << r.err;
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

// ------------------------------------------------------------------------------------------------
// Outputs never destroy (docs/outputs.md): every command that writes refuses to replace one of its
// inputs, a FIFO or a device, writes through a symbolic link, and on a full disk (`ulimit -f`)
// fails with one line naming the file and leaves nothing behind.
// ------------------------------------------------------------------------------------------------

// The lines of `text` that contain `needle`.
std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
  std::vector<std::string> found;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) found.push_back(line);
  }
  return found;
}

// The one stderr line that says `needle`, checked to name `file`; "" when there is none.
std::string error_line(const CommandResult& r, const std::string& needle, const std::filesystem::path& file) {
  const std::vector<std::string> lines = lines_with(r.err, needle);
  EXPECT_LE(lines.size(), 1U) << r.err;
  if (lines.empty()) return "";
  EXPECT_TRUE(contains(lines.front(), file.filename().string())) << lines.front();
  return lines.front();
}

// A folder with a trace, a mapping and a run simulated from them.
class Outputs : public ::testing::Test {
 protected:
  void SetUp() override {
    write_text(dir / "m.toml", kMapping);
    write_text(dir / "t.kntr", kTrace);
    const auto r = run_kanoko({"simulate", trace(), "-m", mapping(), "-o", run(), "-q"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    before = list_dir(dir.path());
  }
  [[nodiscard]] std::string trace() const { return (dir / "t.kntr").string(); }
  [[nodiscard]] std::string mapping() const { return (dir / "m.toml").string(); }
  [[nodiscard]] std::string run() const { return (dir / "r.kntj").string(); }

  // `args` must fail with one line refusing to write `output`, and change nothing in the folder.
  void expect_refused(const std::vector<std::string>& args, const std::filesystem::path& output, const std::string& why) {
    const std::string trace_text = read_text(dir / "t.kntr");
    const std::string mapping_text = read_text(dir / "m.toml");
    const std::string run_bytes = read_text(dir / "r.kntj");
    const auto r = run_kanoko(args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const std::string line = error_line(r, "refusing to write: " + why, output);
    EXPECT_FALSE(line.empty()) << args.front() << ": " << r.err;
    EXPECT_EQ(list_dir(dir.path()), before) << args.front();
    EXPECT_EQ(read_text(dir / "t.kntr"), trace_text);
    EXPECT_EQ(read_text(dir / "m.toml"), mapping_text);
    EXPECT_EQ(read_text(dir / "r.kntj"), run_bytes);
  }

  // `args`, unable to write past 1 KiB, must fail with one line naming `output` and the cause,
  // and leave the folder as it was.
  void expect_full_disk(const std::vector<std::string>& args, const std::filesystem::path& output) {
    const auto r = run_kanoko_with_file_limit(2, args);
    EXPECT_EQ(r.exit_code, 1) << args.front() << ": " << r.err;
    const std::string line = error_line(r, "File too large", output);
    EXPECT_FALSE(line.empty()) << args.front() << ": " << r.err;
    EXPECT_EQ(list_dir(dir.path()), before) << args.front() << ": " << r.err;
  }

  TempDir dir;
  std::vector<std::string> before;
};

TEST_F(Outputs, EachCommandRefusesToReplaceItsInputs) {
  expect_refused({"simulate", trace(), "-m", mapping(), "-o", trace(), "-q"}, trace(), "it is an input");
  expect_refused({"simulate", trace(), "-m", mapping(), "-o", mapping(), "-q"}, mapping(), "it is an input");
  expect_refused({"simulate", trace(), "-m", mapping(), "-o", run(), "--calibrate-like", run(), "-q"}, run(),
                 "it is an input");
  expect_refused({"export", run(), "-o", run()}, run(), "it is an input");
  expect_refused({"suggest", trace(), "-m", mapping(), "-o", mapping()}, mapping(), "it is an input");
  expect_refused({"init", trace(), "-o", trace()}, trace(), "it is an input");
  // A hard link is the same file under another name (and one with the extension plot wants).
  std::filesystem::create_hard_link(dir / "t.kntr", dir / "t.png");
  before = list_dir(dir.path());
  expect_refused({"plot", "spacetime", trace(), "-o", (dir / "t.png").string()}, dir / "t.png", "it is the input");
  expect_refused({"plot", "spacetime", run(), "--trace", trace(), "-o", (dir / "t.png").string()}, dir / "t.png",
                 "it is the input");
}

TEST_F(Outputs, FifosAndDevicesAreRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((dir / "pipe").c_str(), 0600), 0);
  before = list_dir(dir.path());
  // simulate would first read an existing output to see whether it can be reused: not a FIFO.
  expect_refused({"simulate", trace(), "-m", mapping(), "-o", (dir / "pipe").string(), "-q"}, dir / "pipe",
                 "it is a FIFO");
  expect_refused({"export", run(), "-o", (dir / "pipe").string()}, dir / "pipe", "it is a FIFO");
  expect_refused({"init", trace(), "-o", (dir / "pipe").string()}, dir / "pipe", "it is a FIFO");
  // Through a link in the test's folder: should the check ever go, the link is replaced, not /dev/null.
  std::filesystem::create_symlink("/dev/null", dir / "null");
  before = list_dir(dir.path());
  expect_refused({"export", run(), "-o", (dir / "null").string()}, dir / "null",
                 "it is a character device (through a symbolic link)");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  expect_refused({"export", run(), "-o", dir.path().string()}, dir.path(), "it is a folder");
}

TEST_F(Outputs, ASymbolicLinkIsWrittenThrough) {
  write_text(dir / "old.csv", "old");
  std::filesystem::create_symlink("old.csv", dir / "latest.csv");
  const auto r = run_kanoko({"export", run(), "-o", (dir / "latest.csv").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "latest.csv"));
  EXPECT_EQ(read_text(dir / "old.csv").rfind("time_s,", 0), 0U);
}

TEST_F(Outputs, AFullDiskFailsWithOneLineAndLeavesNothing) {
  expect_full_disk({"simulate", trace(), "-m", mapping(), "-o", (dir / "new.kntj").string(), "-q"}, dir / "new.kntj");
  expect_full_disk({"export", run(), "-o", (dir / "r.csv").string()}, dir / "r.csv");
  expect_full_disk({"plot", "spacetime", run(), "-o", (dir / "st.png").string()}, dir / "st.png");
  expect_full_disk({"plot", "matrix", run(), "-o", (dir / "m.svg").string()}, dir / "m.svg");
  expect_full_disk({"init", trace(), "-o", (dir / "inferred.toml").string()}, dir / "inferred.toml");
  // A previous output is kept whole.
  ASSERT_EQ(run_kanoko({"export", run(), "-o", (dir / "r.csv").string()}).exit_code, 0);
  const std::string csv = read_text(dir / "r.csv");
  before = list_dir(dir.path());
  expect_full_disk({"export", run(), "-o", (dir / "r.csv").string()}, dir / "r.csv");
  EXPECT_EQ(read_text(dir / "r.csv"), csv);
}

}  // namespace
}  // namespace kanoko::test
