// Issue 14, point 5: one set of statistics. A hand-written trace with known, non-zero computing,
// communicating and waiting time per rank (and a stretch in no state), simulated with a mapping
// whose interval is 1 s, must show the same numbers in every place that reports the split
// (docs/statistics.md): `kanoko export`'s CSV, `kanoko plot summary --json` (the summary's and
// the current interval's numbers the views draw), the viewer's inspect text (`kanoko view
// --script` with `inspect FILE`), `kanoko profile --json` and the range statistics.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "src/trajectory/range_stats.hpp"
#include "src/trajectory/trajectory.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko {
namespace KANOKO_UNITY_ID {

using test::TempDir;

// Native states: compute → computing, send/recv → communicating, idle → waiting (the format's
// defaults, which the mapping keeps). The run is [0, 2) s, two intervals of 1 s.
//
// pe0: compute [0, 0.6)  send [0.6, 0.8)  idle [0.8, 1.0)  | compute [1.0, 1.5)  recv [1.5, 1.6)
//      idle [1.6, 1.8)  nothing [1.8, 2.0)
// pe1: compute [0, 0.3)  idle [0.3, 0.7)  recv [0.7, 0.8)  compute [0.8, 1.0) | compute [1.0, 1.3)
//      send [1.3, 1.45)  idle [1.45, 2.0)
//
// By hand, as fractions of the span (computing, communicating, waiting, no state):
//   interval [0, 1):  pe0 0.6 0.2 0.2 0      pe1 0.5 0.1 0.4 0
//   interval [1, 2):  pe0 0.5 0.1 0.2 0.2    pe1 0.3 0.15 0.55 0
//   whole run [0, 2): pe0 0.55 0.15 0.2 0.1  pe1 0.4 0.125 0.475 0
//   (pe0: computing 0.6 + 0.5 = 1.1 s, communicating 0.2 + 0.1 = 0.3 s, waiting 0.2 + 0.2 = 0.4 s,
//    no state 0.2 s; pe1: 0.3 + 0.2 + 0.3 = 0.8 s, 0.1 + 0.15 = 0.25 s, 0.4 + 0.55 = 0.95 s.)
// Computing states are at split.c:10, communicating ones at split.c:20, waiting ones at no location.
// Messages: pe0 → pe1 2048 B sent at 0.6 s (interval 0); pe1 → pe0 3072 B sent at 1.3 s (interval 1).
const char* const kTrace =
    "kntr 1\n"
    "loc 0 1 file=split.c line=10 function=work\n"
    "loc 0 2 file=split.c line=20 function=exchange\n"
    "node 0 0 name=pe0\n"
    "node 0 1 name=pe1\n"
    "link 0 0 0 1\n"
    "state 0 0 0.6 compute loc=1\n"
    "state 0 1 0.3 compute loc=1\n"
    "state 0.3 1 0.4 idle\n"
    "state 0.6 0 0.2 send loc=2\n"
    "msg 0.6 0 1 2048 recv=0.75\n"
    "state 0.7 1 0.1 recv loc=2\n"
    "state 0.8 0 0.2 idle\n"
    "state 0.8 1 0.2 compute loc=1\n"
    "state 1 0 0.5 compute loc=1\n"
    "state 1 1 0.3 compute loc=1\n"
    "state 1.3 1 0.15 send loc=2\n"
    "msg 1.3 1 0 3072 recv=1.55\n"
    "state 1.45 1 0.55 idle\n"
    "state 1.5 0 0.1 recv loc=2\n"
    "state 1.6 0 0.2 idle\n"
    "end 2\n";

const char* const kMapping =
    "[simulation]\ninterval = 1.0\ndt = 0.05\nframe_every = 2\nsettle = 0.2\n"
    "[bodies]\nplacement = \"line\"\norder = \"rank\"\nsize = 1.0\nradius = 0.1\n"
    "[mass]\nload = \"busy\"\nexpression = \"1 + load\"\n"
    "[springs]\ntopology = \"complete\"\nk = 1.0\nlength = \"initial\"\n"
    "[forces.communication]\nmode = \"symmetric\"\ngain = 0.1\n"
    "[forces.friction]\nbeta = 2.0\n";

/// Computing, communicating, waiting, no state.
using Split = std::array<double, 4>;
constexpr const char* kParts[] = {"computing", "communicating", "waiting", "no state"};

const Split kInterval0[2] = {{0.6, 0.2, 0.2, 0.0}, {0.5, 0.1, 0.4, 0.0}};
const Split kInterval1[2] = {{0.5, 0.1, 0.2, 0.2}, {0.3, 0.15, 0.55, 0.0}};
const Split kWhole[2] = {{0.55, 0.15, 0.2, 0.1}, {0.4, 0.125, 0.475, 0.0}};
const char* const kNames[2] = {"pe0", "pe1"};
constexpr double kTol = 1e-9;

void expect_split(const Split& got, const Split& want, const std::string& where) {
  for (std::size_t k = 0; k < 4; ++k) EXPECT_NEAR(got[k], want[k], kTol) << where << ": " << kParts[k];
}

/// The number after `"key":` in `text` from `from` on (NaN when absent).
double json_number(const std::string& text, const std::string& key, std::size_t from) {
  const std::size_t at = text.find("\"" + key + "\":", from);
  if (at == std::string::npos) return std::nan("");
  return std::strtod(text.c_str() + at + key.size() + 3, nullptr);
}

/// The split of entity `name` in section `section` ("summary" or "interval") of plot --json.
Split plot_split(const std::string& json, const std::string& section, const std::string& name) {
  const std::size_t s = json.find("\"" + section + "\":");
  EXPECT_NE(s, std::string::npos) << section;
  const std::size_t e = json.find("{\"name\":\"" + name + "\"", s);
  EXPECT_NE(e, std::string::npos) << section << " " << name;
  return {json_number(json, "computing", e), json_number(json, "communicating", e), json_number(json, "waiting", e),
          json_number(json, "no_state", e)};
}

struct Fixture {
  TempDir dir;
  std::string run;
  Fixture() {
    test::write_text(dir / "split.kntr", kTrace);
    test::write_text(dir / "split.toml", kMapping);
    run = (dir / "split.kntj").string();
    const auto r = test::run_kanoko({"simulate", (dir / "split.kntr").string(), "--mapping",
                                     (dir / "split.toml").string(), "-o", run});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
};

TEST(OneSplit, ExportCsvHasTheIntervalsSplitWithUnits) {
  Fixture f;
  const auto r = test::run_kanoko({"export", f.run, "-o", (f.dir / "split.csv").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(test::read_text(f.dir / "split.csv"));
  std::string line;
  std::getline(in, line);
  std::map<std::string, std::size_t> column;
  {
    std::istringstream h(line);
    std::string name;
    for (std::size_t c = 0; std::getline(h, name, ','); ++c) column[name] = c;
  }
  for (const char* c : {"time_s", "name", "busy_fraction", "communicating_fraction", "idle_fraction",
                        "no_state_fraction", "bytes_sent_B", "bytes_recv_total_B"}) {
    ASSERT_EQ(column.count(c), 1U) << "column " << c << " in " << line;
  }
  std::size_t checked = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> v;
    std::istringstream row(line);
    for (std::string x; std::getline(row, x, ',');) v.push_back(x);
    const double t = std::stod(v[column["time_s"]]);
    const int body = v[column["name"]] == "pe0" ? 0 : 1;
    const Split got{std::stod(v[column["busy_fraction"]]), std::stod(v[column["communicating_fraction"]]),
                    std::stod(v[column["idle_fraction"]]), std::stod(v[column["no_state_fraction"]])};
    // Frames well inside an interval (away from its edges, where rounding picks either side).
    if (t > 0.05 && t < 0.95) {
      expect_split(got, kInterval0[body], "export t=" + std::to_string(t) + " " + kNames[body]);
      ++checked;
    } else if (t > 1.05 && t < 1.95) {
      expect_split(got, kInterval1[body], "export t=" + std::to_string(t) + " " + kNames[body]);
      ++checked;
    }
  }
  EXPECT_GT(checked, 20U);
}

TEST(OneSplit, PlotSummaryJsonHasTheSameNumbers) {
  Fixture f;
  const std::string json_path = (f.dir / "summary.json").string();
  auto r = test::run_kanoko({"plot", "summary", f.run, "--json", json_path, "--time", "0.5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string json = test::read_text(json_path);
  // The current interval is the run's (its mapping's 1 s interval holding the cursor), as in the
  // inspect panel and the export, not a twentieth of the run.
  EXPECT_NEAR(json_number(json, "t0_s", json.find("\"interval\":")), 0.0, kTol);
  EXPECT_NEAR(json_number(json, "t1_s", json.find("\"interval\":")), 1.0, kTol);
  for (int e = 0; e < 2; ++e) expect_split(plot_split(json, "interval", kNames[e]), kInterval0[e], "plot interval 0");
  // Traffic of the interval: sent and received apart, in bytes.
  const std::size_t traffic = json.find("\"traffic\":");
  ASSERT_NE(json.find("{\"from\":\"pe0\",\"to\":\"pe1\",\"messages\":1,\"bytes\":2048}", traffic), std::string::npos) << json;
  EXPECT_EQ(json.find("\"from\":\"pe1\"", traffic), std::string::npos) << "pe1 sends in interval 1 only";

  r = test::run_kanoko({"plot", "summary", f.run, "--json", json_path});  // cursor at the end
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json = test::read_text(json_path);
  for (int e = 0; e < 2; ++e) {
    expect_split(plot_split(json, "summary", kNames[e]), kWhole[e], std::string("plot summary ") + kNames[e]);
    expect_split(plot_split(json, "interval", kNames[e]), kInterval1[e], std::string("plot interval 1 ") + kNames[e]);
  }
  const std::size_t pe0 = json.find("{\"name\":\"pe0\"", json.find("\"summary\":"));
  EXPECT_NEAR(json_number(json, "computing_s", pe0), 1.1, kTol);
  EXPECT_NEAR(json_number(json, "waiting_s", pe0), 0.4, kTol);
  EXPECT_EQ(json_number(json, "bytes_sent", pe0), 2048);
  EXPECT_EQ(json_number(json, "bytes_received", pe0), 3072);
}

TEST(OneSplit, ProfileAndRangeStatisticsHaveTheSameNumbers) {
  Fixture f;
  // The profile's rows split the same classified time; one rank's rows add up to its split.
  for (int e = 0; e < 2; ++e) {
    const auto r = test::run_kanoko({"profile", (f.dir / "split.kntr").string(), "--json", "--ranks", std::to_string(e)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    double sum[3] = {0, 0, 0};
    const char* keys[3] = {"computing_s", "communicating_s", "waiting_s"};
    for (std::size_t at = r.out.find("{\"label\":"); at != std::string::npos; at = r.out.find("{\"label\":", at + 1)) {
      for (int k = 0; k < 3; ++k) sum[k] += json_number(r.out, keys[k], at);
    }
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(sum[k], 2.0 * kWhole[e][static_cast<std::size_t>(k)], kTol) << "profile " << kNames[e] << " " << keys[k];
  }
  // The viewer's range statistics, over the whole trace and over each interval.
  const trajectory::Reader reader(f.run);
  const auto range = [&](double t0, double t1, const Split* want, const char* what) {
    const trajectory::RangeStats s = trajectory::range_statistics(reader, t0, t1);
    for (std::size_t e = 0; e < 2; ++e) {
      const auto& b = s.bodies[e];
      expect_split({b.busy, b.communicating, b.idle, b.no_state}, want[e], std::string("range ") + what + " " + kNames[e]);
    }
  };
  range(0.0, 2.0, kWhole, "[0, 2)");
  range(0.0, 1.0, kInterval0, "[0, 1)");
  range(1.0, 2.0, kInterval1, "[1, 2)");
}

TEST(OneSplit, InspectTextHasTheSameNumbers) {
  if (std::getenv("DISPLAY") == nullptr) GTEST_SKIP() << "needs an X display; run under xvfb-run";
  Fixture f;
  const std::string a = (f.dir / "a.txt").string();
  const std::string b = (f.dir / "b.txt").string();
  test::write_text(f.dir / "script.txt", "frames 2\nclick body pe0\nseek 0.5\nframes 3\ninspect " + a +
                                             "\nseek 1.5\nframes 3\ninspect " + b + "\nquit\n");
  const auto r = test::run_kanoko({"view", f.run, "--no-sound", "--paused", "--size", "900x600", "--script",
                                   (f.dir / "script.txt").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto value = [](const std::string& text, const std::string& label) {
    const std::size_t at = text.find("\n" + label + " ");
    EXPECT_NE(at, std::string::npos) << label << " in\n" << text;
    if (at == std::string::npos) return std::string();
    const std::size_t v = text.find_first_not_of(' ', at + 1 + label.size());
    return text.substr(v, text.find('\n', v) - v);
  };
  const auto check = [&](const std::string& text, const Split& want, const std::string& interval) {
    EXPECT_EQ(value(text, "interval"), interval);
    const char* labels[4] = {"busy (interval)", "communicating (interval)", "waiting (interval)", "no state (interval)"};
    for (std::size_t k = 0; k < 4; ++k) {
      char expected[32];
      std::snprintf(expected, sizeof expected, "%.1f %%", 100 * want[k]);
      EXPECT_EQ(value(text, labels[k]), expected) << labels[k];
    }
  };
  const std::string first = test::read_text(a);
  const std::string second = test::read_text(b);
  check(first, kInterval0[0], "[0, 1) s");
  check(second, kInterval1[0], "[1, 2) s");
  // Bytes carry their unit, below 1 KiB too.
  EXPECT_EQ(value(second, "bytes sent (interval)"), "0 B");
  EXPECT_EQ(value(second, "bytes recv (interval)"), "3 KiB");
  // Partners: sent and received apart, with units.
  EXPECT_NE(second.find("pe1: 5 KiB (sent 2 KiB, recv 3 KiB)"), std::string::npos) << second;
  EXPECT_NE(value(first, "speed").find(" units/s"), std::string::npos);
}

TEST(OneSplit, BadRequestsAreClearErrors) {
  Fixture f;
  // plot with nothing to write.
  auto r = test::run_kanoko({"plot", "summary", f.run});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("nothing to write"), std::string::npos) << r.err;
  if (std::getenv("DISPLAY") == nullptr) return;
  // inspect with nothing selected: the script's line, no file.
  const auto out = f.dir / "none.txt";
  test::write_text(f.dir / "script.txt", "frames 2\ninspect " + out.string() + "\n");
  r = test::run_kanoko({"view", f.run, "--no-sound", "--paused", "--size", "900x600", "--script",
                        (f.dir / "script.txt").string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("script.txt:2: inspect: nothing is selected"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace kanoko
