// The SMPI test set (traces/smpi, traces/README.md "SMPI test set"): our own MPI programs run by
// SimGrid on simulated machines, so the truth of each trace is known. These tests check that the
// shipped traces read, that their counts equal pj_dump's, that the truth each one encodes holds in
// the raw events, that generated variants (long scale, heavy and light, without sizes or computing)
// differ as they should, and that the Pajé transform of tests/support/smpi_traces scales only the
// fields it must. Generation needs smpicc and smpirun; those tests skip without them. The big
// generation test runs only with KANOKO_TEST_SMPI_BIG=1.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "src/trace/paje_reader.hpp"
#include "tests/support/smpi_traces.hpp"
#include "tests/support/test_support.hpp"
#include "tests/trace/mutation.hpp"
#include "tests/trace/stream_recorder.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

using testing::StreamRecorder;

/// A shipped trace and what it must hold.
struct Shipped {
  std::string file;
  std::size_t ranks;
  std::size_t messages;  ///< matched point-to-point messages
  bool sizes;            ///< written with display-sizes
};

const std::vector<Shipped>& shipped() {
  static const std::vector<Shipped> all{
      {"pipeline8-flat.trace", 8, 20 * 7, true},
      {"pipeline8-resources.trace", 8, 20 * 7, false},
      {"farm8-fattree.trace", 8, 60 * 2 + 7, false},
      {"farm8-anytag.trace", 8, 60 + 60 + 7, true},  // the 60 results are paired in order (wildcard tag)
      {"halo2d-16-torus.trace", 16, 10 * 16 * 4, true},
      {"halo2d-16-slow5.trace", 16, 10 * 16 * 4, true},
      {"halo3d-27-torus-light.trace", 27, 10 * 27 * 6, true},
      {"halo3d-27-torus-heavy.trace", 27, 10 * 27 * 6, true},
      {"alltoall8-fattree.trace", 8, 0, false},  // collectives only (no internals)
      {"late4-locations.trace", 4, 3 * 3, true},  // Fname/Lnumber on PushState (and PopState)
  };
  return all;
}

struct Read {
  StreamRecorder events;
  PajeSummary summary;
};

Read read(const std::filesystem::path& p) {
  Read r;
  r.summary = read_paje_trace(p, r.events);
  return r;
}

/// The MPI rank of entity `e` (SMPI names its ranks' containers "rank-N").
int rank_of(const StreamRecorder& s, EntityIndex e) { return std::stoi(s.entities.at(e).name.substr(5)); }

/// Seconds in state `name` per MPI rank.
std::vector<double> seconds_by_rank(const StreamRecorder& s, const std::string& name) {
  std::vector<double> out(s.entities.size(), 0.0);
  for (EntityIndex e = 0; e < s.entities.size(); ++e) {
    out.at(static_cast<std::size_t>(rank_of(s, e))) = s.state_seconds(e, name);
  }
  return out;
}

/// Bytes sent between each unordered pair of MPI ranks.
std::map<std::pair<int, int>, std::uint64_t> pair_bytes(const StreamRecorder& s) {
  std::map<std::pair<int, int>, std::uint64_t> out;
  for (const Message& m : s.messages) out[std::minmax(rank_of(s, m.src), rank_of(s, m.dst))] += m.bytes;
  return out;
}

/// The axis along which ranks a and b of a grid with extents `dims` (x fastest) are neighbours.
int axis_of(int a, int b, const std::vector<int>& dims) {
  int stride = 1;
  int axis = -1;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    if ((a / stride) % dims[k] != (b / stride) % dims[k]) {
      EXPECT_EQ(axis, -1) << a << " and " << b << " differ in two coordinates";
      axis = static_cast<int>(k);
    }
    stride *= dims[k];
  }
  return axis;
}

/// Smallest and largest bytes per neighbour pair along each axis.
std::vector<std::pair<std::uint64_t, std::uint64_t>> bytes_by_axis(const StreamRecorder& s,
                                                                    const std::vector<int>& dims) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out(dims.size(), {UINT64_MAX, 0});
  for (const auto& [pair, bytes] : pair_bytes(s)) {
    auto& [lo, hi] = out.at(static_cast<std::size_t>(axis_of(pair.first, pair.second, dims)));
    lo = std::min(lo, bytes);
    hi = std::max(hi, bytes);
  }
  return out;
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (const double x : v) s += x;
  return s;
}

TEST(SmpiSet, EveryShippedTraceReads) {
  std::vector<std::string> files;
  for (const auto& name : test::list_dir(test::smpi_dir())) {
    if (name.ends_with(".trace")) files.push_back(name);
  }
  std::vector<std::string> listed;
  for (const Shipped& t : shipped()) listed.push_back(t.file);
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(files, listed) << "every shipped trace has its expectations here";
  for (const Shipped& t : shipped()) {
    SCOPED_TRACE(t.file);
    const auto path = test::smpi_dir() / t.file;
    EXPECT_LT(std::filesystem::file_size(path), 300U * 1024U);
    const Read r = read(path);
    EXPECT_TRUE(r.events.well_formed());
    EXPECT_EQ(r.summary.entity_type, "MPI");
    EXPECT_EQ(r.events.entities.size(), t.ranks);
    EXPECT_EQ(r.events.messages.size(), t.messages);
    std::uint64_t bytes = 0;
    for (const Message& m : r.events.messages) bytes += m.bytes;
    EXPECT_EQ(bytes > 0, t.sizes && t.messages > 0);
    // Every rank computes (tracing/smpi/computing:yes in all shipped traces).
    for (EntityIndex e = 0; e < r.events.entities.size(); ++e) EXPECT_GT(r.events.state_seconds(e, "computing"), 0.0);
  }
}

TEST(SmpiSet, CountsEqualPjDump) {
  int compared = 0;
  for (const Shipped& t : shipped()) {
    SCOPED_TRACE(t.file);
    const auto path = test::smpi_dir() / t.file;
    std::string why;
    const auto dump = test::pj_dump_counts(path, &why);
    if (!dump) {
      if (why.find("not installed") != std::string::npos) GTEST_SKIP() << why;
      // pj_dump refuses the result ends that SimGrid writes with the wildcard tag.
      EXPECT_EQ(t.file, "farm8-anytag.trace") << why;
      continue;
    }
    const Read r = read(path);
    EXPECT_EQ(r.summary.containers, dump->containers);
    EXPECT_EQ(r.summary.states, dump->states);
    EXPECT_EQ(r.summary.links, dump->links);
    EXPECT_EQ(r.summary.variable_events > 0, dump->variables > 0);
    ++compared;
  }
  EXPECT_EQ(compared, static_cast<int>(shipped().size()) - 1);
}

TEST(SmpiSet, AnyTagResultsArePairedInOrderAndCounted) {
  // SimGrid writes the 60 results' receiving ends under the wildcard tag: their keys never match,
  // so they are paired in order per (source, destination), and a warning counts them.
  const Read r = read(test::smpi_dir() / "farm8-anytag.trace");
  const auto w = std::find_if(r.summary.warnings.begin(), r.summary.warnings.end(),
                              [](const PajeWarning& x) { return x.count == 60; });
  ASSERT_NE(w, r.summary.warnings.end()) << "the 60 results paired in order are counted";
  std::size_t to_master = 0;
  for (const Message& m : r.events.messages) to_master += rank_of(r.events, m.dst) == 0 ? 1U : 0U;
  EXPECT_EQ(to_master, 60U);  // every result reaches the master
}

TEST(SmpiSet, PipelineSlowStageComputesMost) {
  const Read r = read(test::smpi_dir() / "pipeline8-flat.trace");
  const std::vector<double> computing = seconds_by_rank(r.events, "computing");
  const auto slowest = std::max_element(computing.begin(), computing.end()) - computing.begin();
  EXPECT_EQ(slowest, 4);  // P/2
  for (std::size_t k = 0; k < 8; ++k) {
    if (k == 4) continue;
    EXPECT_NEAR(computing[4] / computing[k], 3.0, 1e-6) << k;
  }
  // Stages after the slow one wait for it far longer than the stages before it.
  const std::vector<double> waiting = seconds_by_rank(r.events, "PMPI_Recv");
  EXPECT_GT(waiting[5], 2.0 * waiting[3]);
  // Every message goes from a stage to the next.
  for (const Message& m : r.events.messages) EXPECT_EQ(rank_of(r.events, m.dst), rank_of(r.events, m.src) + 1);
}

TEST(SmpiSet, FarmWorkersMostlyWait) {
  const Read r = read(test::smpi_dir() / "farm8-fattree.trace");
  const std::vector<double> computing = seconds_by_rank(r.events, "computing");
  const std::vector<double> receiving = seconds_by_rank(r.events, "PMPI_Recv");
  for (std::size_t k = 1; k < 8; ++k) {
    SCOPED_TRACE(k);
    EXPECT_GT(receiving[k], 0.5 * r.events.end_s);
    EXPECT_GT(receiving[k], 3.0 * computing[k]);
    EXPECT_GT(computing[0], computing[k]);  // the master is the bottleneck
  }
  // Work is handed out by rank 0 only, and every worker gets some.
  std::vector<int> tasks(8, 0);
  for (const Message& m : r.events.messages) {
    if (rank_of(r.events, m.src) == 0) {
      ++tasks.at(static_cast<std::size_t>(rank_of(r.events, m.dst)));
    } else {
      EXPECT_EQ(rank_of(r.events, m.dst), 0);
    }
  }
  for (std::size_t k = 1; k < 8; ++k) EXPECT_GE(tasks[k], 2) << k;
}

TEST(SmpiSet, HaloSkewedAxisCarriesMoreBytes) {
  for (const auto& [file, dims, expected_pairs] :
       {std::tuple<std::string, std::vector<int>, std::size_t>{"halo2d-16-torus.trace", {4, 4}, 16U * 4U / 2U},
        {"halo3d-27-torus-light.trace", {3, 3, 3}, 27U * 6U / 2U}}) {
    SCOPED_TRACE(file);
    const Read r = read(test::smpi_dir() / file);
    const auto axes = bytes_by_axis(r.events, dims);
    // Every neighbour pair along an axis carries the same bytes; x carries 8x the others.
    for (const auto& [lo, hi] : axes) EXPECT_EQ(lo, hi);
    for (std::size_t k = 1; k < axes.size(); ++k) EXPECT_EQ(axes[0].first, 8 * axes[k].first) << k;
    EXPECT_EQ(pair_bytes(r.events).size(), expected_pairs);  // every rank with its 2 * dims neighbours
  }
}

TEST(SmpiSet, HaloHeavyAndLightShareTheirMessages) {
  const Read light = read(test::smpi_dir() / "halo3d-27-torus-light.trace");
  const Read heavy = read(test::smpi_dir() / "halo3d-27-torus-heavy.trace");
  const auto key = [](const StreamRecorder& s) {
    std::vector<std::tuple<EntityIndex, EntityIndex, std::uint64_t, std::int64_t>> out;
    for (const Message& m : s.messages) out.emplace_back(m.src, m.dst, m.bytes, m.tag);
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(key(light.events), key(heavy.events));
  const double c_light = sum(seconds_by_rank(light.events, "computing"));
  const double c_heavy = sum(seconds_by_rank(heavy.events, "computing"));
  EXPECT_NEAR(c_heavy / c_light, 5.0, 1e-6);
  EXPECT_GT(heavy.events.end_s, 1.5 * light.events.end_s);
}

TEST(SmpiSet, AlltoallLoadedRankComputesMostOthersWait) {
  const Read r = read(test::smpi_dir() / "alltoall8-fattree.trace");
  const std::vector<double> computing = seconds_by_rank(r.events, "computing");
  const std::vector<double> waiting = seconds_by_rank(r.events, "PMPI_Alltoall");
  for (std::size_t k = 0; k < 8; ++k) {
    if (k == 5) continue;
    SCOPED_TRACE(k);
    EXPECT_NEAR(computing[5] / computing[k], 4.0, 1e-6);
    EXPECT_GT(waiting[k], 3.0 * waiting[5]);
  }
}

TEST(SmpiSet, SimgridPlatformMappingReadsSpeedUsed) {
  // The resources trace (tracing/platform, tracing/uncategorized) has SimGrid 3.32's speed_used
  // on its hosts: the shipped mapping's load variable must give samples.
  const test::CommandResult r = test::run_kanoko(
      {"check", (test::source_dir() / "mappings" / "simgrid-platform.toml").string(), "--trace",
       (test::smpi_dir() / "pipeline8-resources.trace").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // The one warning: the hosts exchange no messages (SMPI's messages are between ranks, which
  // this trace does not nest in their hosts).
  const std::string all = r.out + r.err;
  EXPECT_NE(all.find("communication force is zero"), std::string::npos) << all;
  EXPECT_EQ(all.find("warning", all.find("warning") + 1), std::string::npos) << all;
  EXPECT_EQ((r.out + r.err).find("gave no load samples"), std::string::npos) << r.out << r.err;
  // The 64 hosts of the 4 x 4 x 4 torus, joined by its 192 edges.
  EXPECT_NE(r.out.find("64 entities → 64 bodies"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the trace's links (192 edges"), std::string::npos) << r.out;
}

// ---- Generated traces ----

/// A run of PROGRAM on RANKS ranks of PLATFORM with generate.sh's defaults otherwise.
test::SmpiRun smpi_run(const std::string& program, int ranks, const std::string& platform) {
  test::SmpiRun run;
  run.program = program;
  run.ranks = ranks;
  run.platform = platform;
  return run;
}

TEST(SmpiGenerated, LongScaleIsLongerWithTheSameShape) {
  KANOKO_REQUIRE_SMPI();
  test::SmpiRun run = smpi_run("pipeline", 6, "torus");
  const Read short_run = read(test::smpi_trace(run));
  run.scale = "long";
  const Read long_run = read(test::smpi_trace(run));
  EXPECT_GT(short_run.events.end_s, 0.01);
  EXPECT_LT(short_run.events.end_s, 0.1);
  EXPECT_GT(long_run.events.end_s, 10.0);
  EXPECT_LT(long_run.events.end_s, 100.0);
  // 10x the items, 100x the work per item.
  EXPECT_EQ(long_run.events.messages.size(), 10 * short_run.events.messages.size());
  const std::vector<double> c_short = seconds_by_rank(short_run.events, "computing");
  const std::vector<double> c_long = seconds_by_rank(long_run.events, "computing");
  for (std::size_t k = 0; k < 6; ++k) EXPECT_NEAR(c_long[k] / c_short[k], 1000.0, 1e-6) << k;
  EXPECT_EQ(std::max_element(c_long.begin(), c_long.end()) - c_long.begin(), 3);  // P/2
}

TEST(SmpiGenerated, HeavyRunOnlyComputesMore) {
  KANOKO_REQUIRE_SMPI();
  test::SmpiRun run = smpi_run("halo2d", 9, "fattree");
  run.sizes = true;
  run.args = {"--open"};
  const Read light = read(test::smpi_trace(run));
  run.work_scale = 4;
  const Read heavy = read(test::smpi_trace(run));
  ASSERT_EQ(light.events.messages.size(), heavy.events.messages.size());
  // An open 3 x 3 grid: 12 neighbour pairs, 24 messages per iteration.
  EXPECT_EQ(light.events.messages.size(), 10U * 24U);
  EXPECT_EQ(pair_bytes(light.events), pair_bytes(heavy.events));
  const auto axes = bytes_by_axis(light.events, {3, 3});
  EXPECT_EQ(axes[0].first, 8 * axes[1].first);
  EXPECT_NEAR(sum(seconds_by_rank(heavy.events, "computing")) / sum(seconds_by_rank(light.events, "computing")), 4.0,
              1e-6);
  EXPECT_GT(heavy.events.end_s, light.events.end_s);
}

TEST(SmpiGenerated, OptionsReachTheTrace) {
  KANOKO_REQUIRE_SMPI();
  test::SmpiRun run = smpi_run("alltoall", 4, "flat");
  run.computing = false;
  const Read bare = read(test::smpi_trace(run));
  EXPECT_EQ(bare.events.messages.size(), 0U);
  for (EntityIndex e = 0; e < 4; ++e) EXPECT_EQ(bare.events.state_seconds(e, "computing"), 0.0);
  // Internals: the collectives' point-to-point messages appear (with their sizes).
  run.internals = true;
  run.sizes = true;
  const Read inside = read(test::smpi_trace(run));
  EXPECT_GT(inside.events.messages.size(), 10U * 4U * 3U - 1U);
  std::uint64_t bytes = 0;
  for (const Message& m : inside.events.messages) bytes += m.bytes;
  EXPECT_GE(bytes, 10U * 4U * 3U * 2048U);  // at least the all-to-all's data
}

TEST(SmpiGenerated, RunsAreCachedAndBadRunsFail) {
  KANOKO_REQUIRE_SMPI();
  const test::SmpiRun run = smpi_run("farm", 4, "flat");
  const auto first = test::smpi_trace(run);
  const auto stamp = std::filesystem::last_write_time(first);
  EXPECT_EQ(test::smpi_trace(run), first);
  EXPECT_EQ(std::filesystem::last_write_time(first), stamp);
  test::SmpiRun other = run;
  other.args = {"--tasks", "10"};
  EXPECT_NE(test::smpi_trace(other), first);

  test::SmpiRun bad = run;
  bad.program = "nosuch";
  EXPECT_THROW(test::smpi_trace(bad), std::runtime_error);
  bad = run;
  bad.ranks = 65;  // the platforms have 64 hosts
  EXPECT_THROW(test::smpi_trace(bad), std::runtime_error);
  bad = run;
  bad.args = {"--work", "lots"};
  EXPECT_THROW(test::smpi_trace(bad), std::runtime_error);
}

TEST(SmpiGenerated, BigLongRun) {
  // 64 ranks of the 3-D halo at the long scale on the fat tree: minutes of wall time on a busy
  // machine, so only with KANOKO_TEST_SMPI_BIG=1 (traces/README.md).
  if (std::getenv("KANOKO_TEST_SMPI_BIG") == nullptr) GTEST_SKIP() << "set KANOKO_TEST_SMPI_BIG=1 to run";
  KANOKO_REQUIRE_SMPI();
  test::SmpiRun run = smpi_run("halo3d", 64, "fattree");
  run.sizes = true;
  run.scale = "long";
  const Read r = read(test::smpi_trace(run));
  EXPECT_EQ(r.events.entities.size(), 64U);
  EXPECT_EQ(r.events.messages.size(), 100U * 64U * 6U);
  EXPECT_GT(r.events.end_s, 10.0);
  const auto axes = bytes_by_axis(r.events, {4, 4, 4});
  EXPECT_EQ(axes[0].first, 8 * axes[1].first);
  EXPECT_EQ(axes[0].first, 8 * axes[2].first);
}

TEST(SmpiGenerator, HelpHostfilesAndOneLineErrors) {
  // Needs no SMPI: these paths end before smpicc runs.
  const std::string script = (test::smpi_dir() / "generate.sh").string();
  const test::CommandResult help = test::run_program({"sh", script, "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("pipeline | farm | halo2d | halo3d | alltoall"), std::string::npos) << help.out;
  const auto error_of = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv{"sh", script};
    argv.insert(argv.end(), args.begin(), args.end());
    const test::CommandResult r = test::run_program(argv);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    return r.err;
  };
  EXPECT_EQ(error_of({"--bogus"}), "generate.sh: unknown option '--bogus' (see --help)\n");
  EXPECT_EQ(error_of({"-p", "farm"}), "generate.sh: no --output (see --help)\n");
  EXPECT_EQ(error_of({"-p", "farm", "-o", "x.trace", "--work-scale", "heavy"}),
            "generate.sh: --work-scale needs a number, not 'heavy'\n");
  EXPECT_EQ(error_of({"-p", "farm", "-o", "x.trace", "--platform", "/nonexistent.xml"}),
            "generate.sh: no platform file /nonexistent.xml\n");

  const std::string hostfile = (test::smpi_dir() / "platforms" / "hostfile.sh").string();
  const std::string torus = (test::smpi_dir() / "platforms" / "torus.xml").string();
  const test::CommandResult three = test::run_program({"sh", hostfile, torus, "3"});
  EXPECT_EQ(three.exit_code, 0);
  EXPECT_EQ(three.out, "t0\nt1\nt2\n");
  const test::CommandResult too_many = test::run_program({"sh", hostfile, torus, "65"});
  EXPECT_EQ(too_many.exit_code, 2);
  EXPECT_EQ(too_many.err, torus + ": 65 ranks do not fit on its 64 hosts\n");
  const test::CommandResult fat = test::run_program(
      {"sh", hostfile, (test::smpi_dir() / "platforms" / "fattree.xml").string(), "64"});
  EXPECT_EQ(fat.out.substr(fat.out.size() - 5), "ft63\n");
}

// ---- The Pajé transform ----

TEST(PajeTransform, ScalesTimesAndMessageSizesOnly) {
  test::TempDir dir;
  const auto in = test::smpi_dir() / "pipeline8-flat.trace";
  const auto out = dir / "slow.trace";
  test::transform_paje(in, out, {.time_factor = 100.0, .size_factor = 10});
  const Read a = read(in);
  const Read b = read(out);
  ASSERT_EQ(a.events.messages.size(), b.events.messages.size());
  for (std::size_t i = 0; i < a.events.messages.size(); ++i) {
    EXPECT_EQ(b.events.messages[i].bytes, 10 * a.events.messages[i].bytes);
    EXPECT_NEAR(b.events.messages[i].send_s, 100 * a.events.messages[i].send_s, 1e-9);
  }
  ASSERT_EQ(a.events.states.size(), b.events.states.size());
  for (std::size_t i = 0; i < a.events.states.size(); ++i) {
    EXPECT_NEAR(b.events.states[i].end_s - b.events.states[i].begin_s,
                100 * (a.events.states[i].end_s - a.events.states[i].begin_s), 1e-9);
  }
  EXPECT_NEAR(b.events.end_s, 100 * a.events.end_s, 1e-9);
  // pj_dump agrees on the counts of the copy, and the header and names are untouched.
  const auto dump = test::pj_dump_counts(out);
  if (dump) {
    EXPECT_EQ(dump->states, b.summary.states);
    EXPECT_EQ(dump->links, b.summary.links);
    EXPECT_EQ(dump->containers, b.summary.containers);
  }
  const std::string ta = test::read_text(in);
  const std::string tb = test::read_text(out);
  EXPECT_EQ(ta.substr(0, ta.find("\n0 ")), tb.substr(0, tb.find("\n0 ")));
  // The states' Size (flops of `computing`, bytes of MPI calls) is not a message size: it stays.
  const auto occurrences = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(occurrences(ta, " 1000000.000000\n"), occurrences(tb, " 1000000.000000\n"));
  EXPECT_EQ(occurrences(ta, " 4096\n"), occurrences(tb, " 4096\n") + a.events.messages.size());
  EXPECT_EQ(occurrences(tb, " 40960\n"), a.events.messages.size());
}

TEST(PajeTransform, IdentityKeepsEveryByteAndPlatformLinksWithoutSize) {
  test::TempDir dir;
  for (const char* file : {"halo2d-16-torus.trace", "pipeline8-resources.trace"}) {
    test::transform_paje(test::smpi_dir() / file, dir / file, {});
    const Read a = read(test::smpi_dir() / file);
    const Read b = read(dir / file);
    EXPECT_EQ(a.events.messages.size(), b.events.messages.size()) << file;
    EXPECT_EQ(a.events.end_s, b.events.end_s) << file;
  }
  // A size-less link start (SimGrid's platform links with display-sizes) stays as it was.
  test::write_text(dir / "t.trace", "%EventDef PajeStartLink 15\n% Time date\n% Type string\n% Container string\n"
                                    "% Value string\n% StartContainer string\n% Key string\n% Size int\n"
                                    "%EndEventDef\n15 0.5 L 0 topology a k1\n15 1.5 L 0 PTP a k2 7\n");
  test::transform_paje(dir / "t.trace", dir / "u.trace", {.time_factor = 2.0, .size_factor = 3});
  const std::string u = test::read_text(dir / "u.trace");
  EXPECT_NE(u.find("\n15 1 L 0 topology a k1\n15 3 L 0 PTP a k2 21\n"), std::string::npos) << u;
}

TEST(PajeTransform, BadInputNamesTheLine) {
  test::TempDir dir;
  const std::string header = "%EventDef PajeSetVariable 8\n% Time date\n% Type string\n% Container string\n"
                             "% Value double\n%EndEventDef\n";
  const auto error_of = [&](const std::string& body) {
    test::write_text(dir / "bad.trace", header + body);
    try {
      test::transform_paje(dir / "bad.trace", dir / "out.trace", {.time_factor = 2.0});
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of("8 0.5 V c 1\n8 x V c 1\n"), (dir / "bad.trace").string() + ":8:3: 'x' is not a number");
  EXPECT_EQ(error_of("9 0.5 V c 1\n"), (dir / "bad.trace").string() + ":7:1: event id 9 is not defined");
  EXPECT_EQ(error_of("8\n"), (dir / "bad.trace").string() + ":7:2: missing time field 1");
  EXPECT_EQ(error_of("8 1 \"V c 1\n"), (dir / "bad.trace").string() + ":7:1: unterminated quoted string");
  EXPECT_FALSE(std::filesystem::exists(dir / "out.trace"));  // nothing half-written
}

TEST(PajeTransform, MutatedInputsTransformOrFailCleanly) {
  const std::string original = test::read_text(test::smpi_dir() / "farm8-fattree.trace");
  test::TempDir dir;
  std::mt19937_64 rng(7);
  const std::vector<std::string> tokens{" ", "\n", "\"", "%EventDef", "%EndEventDef", "-1e400", "15", "99 "};
  int failed = 0;
  for (int round = 0; round < 60; ++round) {
    std::string s = original;
    for (int k = 0; k <= round % 3; ++k) testing::mutate_once(s, rng, tokens);
    test::write_text(dir / "in.trace", s);
    try {
      test::transform_paje(dir / "in.trace", dir / "out.trace", {.time_factor = 3.0, .size_factor = 2});
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("in.trace:"), std::string::npos) << e.what();
      ++failed;
    }
  }
  EXPECT_GT(failed, 0);
  EXPECT_LT(failed, 60);
}

}  // namespace
}  // namespace kanoko::trace
