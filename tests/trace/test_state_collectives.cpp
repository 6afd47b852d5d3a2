// Collectives recorded only as states become the same collectives in every format: one program
// (four ranks: a bcast, two allreduces, the second without rank 3, a barrier and a receive)
// written as SMPI Pajé, Chrome JSON, Paraver and an OTF2 archive (libotf2's writer) gives the
// same pair traffic; an OTF2 archive that also records MpiCollectiveBegin/End counts each
// collective once; native traces (coll lines) never make collectives from states.
#include <gtest/gtest.h>
#include <otf2/otf2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "src/trace/readers.hpp"
#include "src/trace/state_collectives.hpp"
#include "src/trace/timeline.hpp"
#include "tests/support/test_support.hpp"
#include "tests/trace/otf2_writing.hpp"
#include "tests/trace/stream_recorder.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

namespace fs = std::filesystem;
using testing::StreamRecorder;

/// One MPI call of the program: rank, [begin, end) in seconds, call name without prefix.
struct Call {
  int rank;
  double begin_s;
  double end_s;
  std::string name;
};

constexpr int kRanks = 4;

/// The program, in time order.
std::vector<Call> program() {
  std::vector<Call> calls;
  auto step = [&](double t, double end, const char* name, int ranks) {
    for (int r = 0; r < ranks; ++r) calls.push_back({r, t + 0.01 * r, end, name});
  };
  step(1.0, 1.5, "Bcast", kRanks);
  step(2.0, 2.5, "Allreduce", kRanks);
  step(2.6, 2.7, "Recv", kRanks);  // not a collective
  step(3.0, 3.2, "Allreduce", kRanks - 1);
  step(4.0, 4.1, "Barrier", kRanks);
  return calls;
}

std::vector<std::string> call_names() { return {"Bcast", "Allreduce", "Recv", "Barrier"}; }

std::string fixed(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6f", v);
  return b;
}

std::string whole(double v) { return std::to_string(std::llround(v)); }

/// SimGrid SMPI's Pajé: the header of the shared farm trace, PMPI_ states pushed and popped.
std::string paje_text() {
  std::istringstream head(test::read_text(test::source_dir() / "tests" / "trace" / "data" / "smpi-farm.trace"));
  std::string out;
  std::string line;
  while (std::getline(head, line)) {
    if (!line.empty() && (line[0] == '%' || line[0] == '#')) out += line + "\n";
  }
  out += "0 1 0 MPI\n2 2 1 MPI_STATE\n";
  for (int r = 0; r < kRanks; ++r) out += "6 0.000000 " + std::to_string(r + 1) + " 1 0 \"rank-" + std::to_string(r) + "\"\n";
  const auto names = call_names();
  for (std::size_t i = 0; i < names.size(); ++i) out += "5 " + std::to_string(10 + i) + " 2 PMPI_" + names[i] + " \"0 0 1\"\n";
  std::vector<std::pair<double, std::string>> events;
  for (const Call& c : program()) {
    const auto value = std::find(names.begin(), names.end(), c.name) - names.begin();
    const std::string container = std::to_string(c.rank + 1);
    events.emplace_back(c.begin_s, "12 " + fixed(c.begin_s) + " 2 " + container + " " + std::to_string(10 + value) + "\n");
    events.emplace_back(c.end_s, "13 " + fixed(c.end_s) + " 2 " + container + "\n");
  }
  std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& e : events) out += e.second;
  return out;
}

/// Chrome JSON: one complete slice ("X") per call, a process per rank.
std::string chrome_text() {
  std::string out = "{\"traceEvents\": [\n";
  bool first = true;
  for (const Call& c : program()) {
    out += std::string(first ? "" : ",\n") + "{\"name\": \"MPI_" + c.name + "\", \"ph\": \"X\", \"pid\": " +
           std::to_string(c.rank) + ", \"tid\": 0, \"ts\": " + whole(c.begin_s * 1e6) +
           ", \"dur\": " + whole((c.end_s - c.begin_s) * 1e6) + "}";
    first = false;
  }
  return out + "\n]}\n";
}

/// Paraver: a state record per call, the states named after the calls in the .pcf.
void write_paraver(const fs::path& prv) {
  const auto names = call_names();
  std::string pcf = "DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\n\n\nSTATES\n0    Idle\n";
  for (std::size_t i = 0; i < names.size(); ++i) pcf += std::to_string(i + 1) + "    MPI_" + names[i] + "\n";
  test::write_text(fs::path(prv).replace_extension(".pcf"), pcf + "\n\n");
  test::write_text(fs::path(prv).replace_extension(".row"),
                   "LEVEL TASK SIZE 4\nrank0\nrank1\nrank2\nrank3\n\nLEVEL THREAD SIZE 4\nt0\nt1\nt2\nt3\n");
  std::string text = "#Paraver (01/02/2024 at 10:00):5000000000_ns:1(4):1:4(1:1,1:1,1:1,1:1)\n";
  for (const Call& c : program()) {
    const auto state = std::find(names.begin(), names.end(), c.name) - names.begin() + 1;
    text += "1:" + std::to_string(c.rank + 1) + ":1:" + std::to_string(c.rank + 1) + ":1:" +
            whole(c.begin_s * 1e9) + ":" + whole(c.end_s * 1e9) + ":" + std::to_string(state) + "\n";
  }
  test::write_text(prv, text);
}

/// OTF2 (libotf2's writer): a region per call, entered and left; with `records`, every collective
/// region also holds MpiCollectiveBegin/End on MPI_COMM_WORLD, as Score-P writes them.
void write_otf2(const fs::path& dir, bool records) {
  OTF2_Archive* a = testing::open_otf2_for_writing(dir);
  ASSERT_NE(a, nullptr);
  const auto names = call_names();
  constexpr double kTicks = 1e6;
  std::vector<OTF2_EvtWriter*> writers;
  for (int r = 0; r < kRanks; ++r) writers.push_back(OTF2_Archive_GetEvtWriter(a, static_cast<OTF2_LocationRef>(r)));
  for (const Call& c : program()) {
    OTF2_EvtWriter* w = writers[static_cast<std::size_t>(c.rank)];
    const auto region = static_cast<OTF2_RegionRef>(std::find(names.begin(), names.end(), c.name) - names.begin());
    const auto b = static_cast<OTF2_TimeStamp>(c.begin_s * kTicks + 0.5);
    const auto e = static_cast<OTF2_TimeStamp>(c.end_s * kTicks + 0.5);
    OTF2_EvtWriter_Enter(w, nullptr, b, region);
    if (records && c.name != "Recv") {
      const OTF2_CollectiveOp op = c.name == "Bcast"       ? OTF2_COLLECTIVE_OP_BCAST
                                   : c.name == "Barrier"   ? OTF2_COLLECTIVE_OP_BARRIER
                                                           : OTF2_COLLECTIVE_OP_ALLREDUCE;
      OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, b + 1);
      OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, e - 1, op, 0, OTF2_COLLECTIVE_ROOT_NONE, 8, 8);
    }
    OTF2_EvtWriter_Leave(w, nullptr, e, region);
  }
  const std::vector<std::uint64_t> counts = testing::close_otf2_events(a, writers);
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
  OTF2_GlobalDefWriter_WriteClockProperties(g, static_cast<std::uint64_t>(kTicks), 0, 10 * static_cast<std::uint64_t>(kTicks),
                                            OTF2_UNDEFINED_TIMESTAMP);
  std::vector<std::string> strings{"", "node0", "node", "Master thread", "MPI_COMM_WORLD"};
  for (int r = 0; r < kRanks; ++r) strings.push_back("MPI Rank " + std::to_string(r));
  for (const std::string& n : names) strings.push_back("MPI_" + n);
  for (std::size_t i = 0; i < strings.size(); ++i) {
    OTF2_GlobalDefWriter_WriteString(g, static_cast<OTF2_StringRef>(i), strings[i].c_str());
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto name = static_cast<OTF2_StringRef>(5 + kRanks + i);
    OTF2_GlobalDefWriter_WriteRegion(g, static_cast<OTF2_RegionRef>(i), name, name, 0,
                                     names[i] == "Recv" ? OTF2_REGION_ROLE_POINT2POINT : OTF2_REGION_ROLE_COLL_ALL2ALL,
                                     OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, 0, 0, 0);
  }
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 1, 2, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  for (int r = 0; r < kRanks; ++r) {
    OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<OTF2_LocationGroupRef>(r), static_cast<OTF2_StringRef>(5 + r),
                                            OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
    OTF2_GlobalDefWriter_WriteLocation(g, static_cast<OTF2_LocationRef>(r), 3, OTF2_LOCATION_TYPE_CPU_THREAD,
                                       counts[static_cast<std::size_t>(r)], static_cast<OTF2_LocationGroupRef>(r));
  }
  if (records) {
    const std::uint64_t all[] = {0, 1, 2, 3};
    OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 4, all);
    OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 4, all);
    OTF2_GlobalDefWriter_WriteComm(g, 0, 4, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  }
  OTF2_Archive_CloseGlobalDefWriter(a, g);
  ASSERT_EQ(OTF2_Archive_Close(a), OTF2_SUCCESS);
}

using Pairs = std::map<std::pair<EntityIndex, EntityIndex>, std::uint32_t>;

/// Pair traffic over the whole run (messages per ordered pair) and the read's report.
Pairs traffic(const fs::path& path, ReadReport* report = nullptr) {
  TimelineOptions o;
  o.interval_s = 0.5;
  TimelineBuilder b(o);
  const ReadReport r = read_trace(path, b);
  if (report != nullptr) *report = r;
  const Timeline t = b.take();
  Pairs out;
  for (const PairTraffic& p : t.pairs) out[{p.src, p.dst}] += p.messages;
  return out;
}

/// Groups → their members, as read.
std::map<std::string, std::vector<EntityIndex>> groups(const fs::path& path) {
  StreamRecorder rec;
  read_trace(path, rec);
  EXPECT_TRUE(rec.well_formed()) << path;
  std::map<std::string, std::vector<EntityIndex>> out;
  for (const auto& c : rec.collectives) out[c.group].push_back(c.entity);
  for (auto& [g, members] : out) std::sort(members.begin(), members.end());
  return out;
}

TEST(StateCollectives, EveryFormatGivesThePajeTraffic) {
  test::TempDir dir;
  test::write_text(dir / "p.trace", paje_text());
  test::write_text(dir / "c.json", chrome_text());
  write_paraver(dir / "v.prv");
  write_otf2(dir / "o", false);

  // Rings in rank order (states name no root): bcast, allreduce #0 and barrier on 0..3,
  // allreduce #1 on 0..2 only. The receives make nothing.
  const Pairs expected{{{0, 1}, 4}, {{1, 2}, 4}, {{2, 3}, 3}, {{3, 0}, 3}, {{2, 0}, 1}};
  ReadReport paje_report;
  EXPECT_EQ(traffic(dir / "p.trace", &paje_report), expected);
  EXPECT_EQ(paje_report.format, "paje");
  EXPECT_EQ(paje_report.collectives_from_states, 15U);
  const std::map<std::string, std::vector<EntityIndex>> paje_groups = groups(dir / "p.trace");
  EXPECT_EQ(paje_groups.at("allreduce#1"), (std::vector<EntityIndex>{0, 1, 2}));
  for (const char* other : {"c.json", "v.prv", "o/traces.otf2"}) {
    SCOPED_TRACE(other);
    ReadReport report;
    EXPECT_EQ(traffic(dir / other, &report), expected);
    EXPECT_EQ(report.collectives_from_states, 15U);
    EXPECT_EQ(groups(dir / other), paje_groups);
  }
}

TEST(StateCollectives, RecordedCollectivesAreNotCountedTwice) {
  test::TempDir dir;
  write_otf2(dir / "o", true);
  ReadReport report;
  const Pairs pairs = traffic(dir / "o" / "traces.otf2", &report);
  EXPECT_EQ(report.collectives_from_states, 0U);
  // The recorded collectives alone: the k-th on MPI_COMM_WORLD is one instance of the operation.
  const auto g = groups(dir / "o" / "traces.otf2");
  ASSERT_EQ(g.size(), 4U);
  for (const auto& [group, members] : g) EXPECT_EQ(group.rfind("MPI_COMM_WORLD#", 0), 0U) << group;
  std::uint32_t total = 0;
  for (const auto& kv : pairs) total += kv.second;
  EXPECT_EQ(total, 15U);  // three rings of 4 and one of 3, once each
}

TEST(StateCollectives, OnlyPrefixedCollectiveCallsAndStopsAtRecords) {
  StreamRecorder rec;
  CollectivesFromStates adapter(rec);
  adapter.on_entity(Entity{0, 0, "a", "", 0, {}});
  for (const char* name : {"barrier", "MPI_Send", "PMPI_Allreduce", "MPI_ALLREDUCE", "computing"}) {
    adapter.on_state(StateInterval{1, 2, 0, name});
  }
  ASSERT_EQ(rec.collectives.size(), 2U);  // a runtime's own "barrier" state stays a state
  EXPECT_EQ(rec.collectives[0].group, "allreduce#0");
  EXPECT_EQ(rec.collectives[1].group, "allreduce#1");
  EXPECT_EQ(rec.states.size(), 5U);
  adapter.on_collective_records();
  adapter.on_state(StateInterval{3, 4, 0, "MPI_Bcast"});
  EXPECT_EQ(rec.collectives.size(), 2U);
  EXPECT_FALSE(adapter.active());
  EXPECT_EQ(adapter.added(), 2U);
}

TEST(StateCollectives, NativeTracesKeepTheirOwnCollectives) {
  test::TempDir dir;
  test::write_text(dir / "n.kntr", "kntr 1\nnode 0 0\nnode 0 1\nstate 0.1 0 0.1 MPI_Allreduce\n"
                                   "state 0.1 1 0.1 MPI_Allreduce\nend 1\n");
  ReadReport report;
  EXPECT_TRUE(traffic(dir / "n.kntr", &report).empty());
  EXPECT_EQ(report.collectives_from_states, 0U);
  EXPECT_FALSE(format_facts("native").collectives_from_states);
  EXPECT_FALSE(format_facts("simgrid-ti").collectives_from_states);
}

}  // namespace
}  // namespace kanoko::trace
