// The OTF2 reader: the shared Score-P archives read with the counts otf2-print reports; an
// archive written here with the OTF2 library checks non-blocking messages, communicator rank →
// location translation, collectives, thread naming, absolute metrics and the clock; corrupted and
// truncated archives give errors naming the file, never a crash; detection through the registry.
#include <gtest/gtest.h>
#include <otf2/otf2.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/trace/otf2_reader.hpp"
#include "src/trace/readers.hpp"
#include "src/trace/timeline.hpp"
#include "tests/support/test_support.hpp"
#include "tests/trace/otf2_writing.hpp"
#include "tests/trace/stream_recorder.hpp"

// Debian's libopen-trace-format2 (3.0.2) does not free everything on some of its error paths (a
// failed archive open, an unreadable event chunk, a corrupt local id map): a few KiB per failed
// read, reported by LeakSanitizer in the sanitizer build. Only leaks inside that library are
// suppressed; the reader closes everything it opens.
extern "C" const char* __lsan_default_suppressions();
extern "C" const char* __lsan_default_suppressions() { return "leak:libopen-trace-format2.so\n"; }

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

namespace fs = std::filesystem;
using testing::StreamRecorder;

fs::path shared_archive(const char* name) { return test::shared_dir() / "traces/otf2" / name; }

/// Event counts as otf2-print (Debian otf2-tools) reports them: the first word of its event lines.
struct PrintCounts {
  std::uint64_t enter = 0, leave = 0, send = 0, recv = 0, metric = 0, collective_end = 0;
};

bool have_otf2_print() { return test::run_program({"sh", "-c", "command -v otf2-print"}).exit_code == 0; }

PrintCounts otf2_print_counts(const fs::path& anchor) {
  const test::CommandResult r = test::run_program({"otf2-print", anchor.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  PrintCounts c;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    const std::string word = line.substr(0, line.find(' '));
    if (word == "ENTER") ++c.enter;
    if (word == "LEAVE") ++c.leave;
    if (word == "MPI_SEND" || word == "MPI_ISEND") ++c.send;
    if (word == "MPI_RECV" || word == "MPI_IRECV") ++c.recv;
    if (word == "METRIC") ++c.metric;
    if (word == "MPI_COLLECTIVE_END") ++c.collective_end;
  }
  return c;
}

TEST(Otf2Reader, SharedArchivesMatchOtf2Print) {
  struct Known {
    const char* name;
    std::uint64_t enter, send, metric, loads;
  };
  // The figures otf2-print gave when the test was written (SOURCES.md agrees: 42 enter/leave,
  // 16 + 16 MPI events, 84 metrics); the test also recounts them with otf2-print when installed.
  for (const Known& k : {Known{"ping-pong-otf2", 42, 16, 0, 0}, Known{"ping-pong-otf2-papi", 42, 16, 84, 82}}) {
    SCOPED_TRACE(k.name);
    StreamRecorder rec;
    const Otf2Summary s = read_otf2_trace(shared_archive(k.name), rec);
    ASSERT_TRUE(rec.well_formed());
    EXPECT_EQ(s.enters, k.enter);
    EXPECT_EQ(s.leaves, k.enter);
    EXPECT_EQ(s.sends, k.send);
    EXPECT_EQ(s.receives, k.send);
    EXPECT_EQ(s.messages, k.send);
    EXPECT_EQ(rec.messages.size(), k.send);
    EXPECT_EQ(rec.states.size(), k.enter);
    EXPECT_EQ(s.metric_events, k.metric);
    // PAPI_TOT_CYC accumulates: a rate per interval, one fewer than the samples per location.
    EXPECT_EQ(rec.loads.size(), k.loads);
    EXPECT_TRUE(s.warnings.empty());
    if (have_otf2_print()) {
      const PrintCounts c = otf2_print_counts(shared_archive(k.name) / "traces.otf2");
      EXPECT_EQ(s.enters, c.enter);
      EXPECT_EQ(s.leaves, c.leave);
      EXPECT_EQ(s.sends, c.send);
      EXPECT_EQ(s.receives, c.recv);
      EXPECT_EQ(rec.messages.size(), std::min(c.send, c.recv));
      EXPECT_EQ(s.metric_events, c.metric);
    }
  }
}

TEST(Otf2Reader, PingPongMessagesClockAndNames) {
  StreamRecorder rec;
  const Otf2Summary s = read_otf2_trace(shared_archive("ping-pong-otf2"), rec);
  ASSERT_EQ(rec.entities.size(), 2U);
  EXPECT_EQ(rec.entities[0].name, "MPI Rank 0");
  EXPECT_EQ(rec.entities[1].name, "MPI Rank 1");
  EXPECT_EQ(rec.entities[1].rank, 1);
  EXPECT_EQ(rec.entities[0].host, "quartz10");
  EXPECT_EQ(s.timer_resolution, 2095197216U);  // per otf2-print -G of this archive
  ASSERT_EQ(rec.messages.size(), 16U);
  // The first message: rank 0 → rank 1, tag 10, 16 KiB (otf2-print: MPI_SEND ... Tag: 10, Length: 16384).
  const Message& m = rec.messages[0];
  EXPECT_EQ(m.src, 0U);
  EXPECT_EQ(m.dst, 1U);
  EXPECT_EQ(m.tag, 10);
  EXPECT_EQ(m.bytes, 16384U);
  EXPECT_GT(m.recv_s, m.send_s);
  std::uint64_t bytes = 0;
  for (const Message& x : rec.messages) bytes += x.bytes;
  EXPECT_EQ(bytes, 8355840U);  // 2 × (16 + 32 + ... + 2048 KiB): the sum of otf2-print's lengths
  EXPECT_GT(rec.state_seconds(0, "MPI_Init"), 0.1);
}

TEST(Otf2Reader, MetricOption) {
  StreamRecorder rec;
  Otf2Options o;
  o.metric = "PAPI_L2_TCM";
  const Otf2Summary s = read_otf2_trace(shared_archive("ping-pong-otf2-papi"), rec, o);
  EXPECT_EQ(s.metric, "PAPI_L2_TCM");
  EXPECT_EQ(rec.loads.size(), 82U);
  o.metric = "PAPI_L2_TCN";
  StreamRecorder rec2;
  try {
    read_otf2_trace(shared_archive("ping-pong-otf2-papi"), rec2, o);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("metric 'PAPI_L2_TCN' is not defined in this trace (did you mean 'PAPI_L2_TCM'?)"),
              std::string::npos)
        << e.what();
  }
}

// ---- an archive written with the library ----

/// Three MPI ranks on node0 (rank 2 with a second thread), a sub-communicator listing ranks 2 and 0
/// (so its rank 0 is location 2), an Isend/Irecv pair, a blocking pair on the sub-communicator,
/// an allreduce on everyone and a bcast on the sub-communicator, an absolute metric on rank 2.
/// Clock: 1000 ticks/s, offset 1000.
void write_archive(const fs::path& dir) {
  OTF2_Archive* a = testing::open_otf2_for_writing(dir);
  ASSERT_NE(a, nullptr);
  enum : OTF2_CommRef { kWorld = 0, kSub = 1 };
  enum : OTF2_RegionRef { kMain = 0, kWork = 1 };
  OTF2_EvtWriter* w0 = OTF2_Archive_GetEvtWriter(a, 0);
  OTF2_EvtWriter_Enter(w0, nullptr, 1000, kMain);
  OTF2_EvtWriter_MpiIsend(w0, nullptr, 1100, 1, kWorld, 5, 100, 1);
  OTF2_EvtWriter_MpiIsendComplete(w0, nullptr, 1200, 1);
  OTF2_EvtWriter_MpiSend(w0, nullptr, 1300, 0, kSub, 7, 300);
  OTF2_EvtWriter_MpiCollectiveBegin(w0, nullptr, 1400);
  OTF2_EvtWriter_MpiCollectiveEnd(w0, nullptr, 1500, OTF2_COLLECTIVE_OP_ALLREDUCE, kWorld, OTF2_COLLECTIVE_ROOT_NONE, 8, 8);
  OTF2_EvtWriter_MpiCollectiveBegin(w0, nullptr, 1600);
  OTF2_EvtWriter_MpiCollectiveEnd(w0, nullptr, 1700, OTF2_COLLECTIVE_OP_BCAST, kSub, 1, 64, 0);
  OTF2_EvtWriter_Leave(w0, nullptr, 2000, kMain);
  OTF2_EvtWriter* w1 = OTF2_Archive_GetEvtWriter(a, 1);
  OTF2_EvtWriter_Enter(w1, nullptr, 1000, kMain);
  OTF2_EvtWriter_MpiIrecvRequest(w1, nullptr, 1050, 9);
  OTF2_EvtWriter_MpiIrecv(w1, nullptr, 1250, 0, kWorld, 5, 100, 9);
  OTF2_EvtWriter_MpiCollectiveBegin(w1, nullptr, 1400);
  OTF2_EvtWriter_MpiCollectiveEnd(w1, nullptr, 1500, OTF2_COLLECTIVE_OP_ALLREDUCE, kWorld, OTF2_COLLECTIVE_ROOT_NONE, 8, 8);
  OTF2_EvtWriter_Leave(w1, nullptr, 2000, kMain);
  OTF2_EvtWriter* w2 = OTF2_Archive_GetEvtWriter(a, 2);
  OTF2_Type type = OTF2_TYPE_DOUBLE;
  OTF2_MetricValue v{};
  v.floating_point = 1.5;
  OTF2_EvtWriter_Enter(w2, nullptr, 1000, kMain);
  OTF2_EvtWriter_Metric(w2, nullptr, 1000, 0, 1, &type, &v);
  OTF2_EvtWriter_MpiRecv(w2, nullptr, 1350, 1, kSub, 7, 300);
  OTF2_EvtWriter_MpiCollectiveBegin(w2, nullptr, 1400);
  OTF2_EvtWriter_MpiCollectiveEnd(w2, nullptr, 1500, OTF2_COLLECTIVE_OP_ALLREDUCE, kWorld, OTF2_COLLECTIVE_ROOT_NONE, 8, 8);
  v.floating_point = 2.5;
  OTF2_EvtWriter_Metric(w2, nullptr, 1500, 0, 1, &type, &v);
  OTF2_EvtWriter_MpiCollectiveBegin(w2, nullptr, 1600);
  OTF2_EvtWriter_MpiCollectiveEnd(w2, nullptr, 1700, OTF2_COLLECTIVE_OP_BCAST, kSub, 1, 0, 64);
  OTF2_EvtWriter_Leave(w2, nullptr, 2000, kMain);
  OTF2_EvtWriter* w3 = OTF2_Archive_GetEvtWriter(a, 3);
  OTF2_EvtWriter_Enter(w3, nullptr, 1100, kWork);
  OTF2_EvtWriter_Leave(w3, nullptr, 1900, kWork);
  const std::vector<std::uint64_t> counts = testing::close_otf2_events(a, {w0, w1, w2, w3});

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
  OTF2_GlobalDefWriter_WriteClockProperties(g, 1000, 1000, 1000, OTF2_UNDEFINED_TIMESTAMP);
  const char* strings[] = {"", "main", "work", "node0", "node", "MPI Rank 0", "MPI Rank 1", "MPI Rank 2", "Master thread",
                           "worker", "MPI_COMM_WORLD", "sub", "load", "rack0", "rack", "cluster", "machine"};
  for (OTF2_StringRef i = 0; i < std::size(strings); ++i) OTF2_GlobalDefWriter_WriteString(g, i, strings[i]);
  for (OTF2_RegionRef r : {kMain, kWork}) {
    OTF2_GlobalDefWriter_WriteRegion(g, r, 1 + r, 1 + r, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE,
                                     0, 0, 0);
  }
  // The system tree: machine "cluster" (the root) > rack "rack0" > node "node0".
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 2, 15, 16, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1, 13, 14, 2);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 3, 4, 1);
  for (OTF2_LocationGroupRef r = 0; r < 3; ++r) {
    OTF2_GlobalDefWriter_WriteLocationGroup(g, r, 5 + r, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
  }
  for (OTF2_LocationRef l = 0; l < 4; ++l) {
    OTF2_GlobalDefWriter_WriteLocation(g, l, l == 3 ? 9 : 8, OTF2_LOCATION_TYPE_CPU_THREAD, counts[l],
                                       static_cast<OTF2_LocationGroupRef>(l == 3 ? 2 : l));
  }
  const std::uint64_t all[] = {0, 1, 2};
  const std::uint64_t sub[] = {2, 0};
  OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 3, all);
  OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 3, all);
  OTF2_GlobalDefWriter_WriteGroup(g, 2, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 2, sub);
  OTF2_GlobalDefWriter_WriteComm(g, kWorld, 10, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  OTF2_GlobalDefWriter_WriteComm(g, kSub, 11, 2, kWorld, OTF2_COMM_FLAG_NONE);
  OTF2_GlobalDefWriter_WriteMetricMember(g, 0, 12, 0, OTF2_METRIC_TYPE_OTHER, OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_DOUBLE,
                                         OTF2_BASE_DECIMAL, 0, 0);
  const OTF2_MetricMemberRef members[] = {0};
  OTF2_GlobalDefWriter_WriteMetricClass(g, 0, 1, members, OTF2_METRIC_SYNCHRONOUS_STRICT, OTF2_RECORDER_KIND_CPU);
  OTF2_Archive_CloseGlobalDefWriter(a, g);
  ASSERT_EQ(OTF2_Archive_Close(a), OTF2_SUCCESS);
}

TEST(Otf2Reader, WrittenArchiveNonBlockingCommunicatorsCollectivesMetrics) {
  test::TempDir dir;
  write_archive(dir / "a");
  StreamRecorder rec;
  const Otf2Summary s = read_otf2_trace(dir / "a", rec);
  ASSERT_TRUE(rec.well_formed());
  ASSERT_EQ(rec.entities.size(), 4U);
  EXPECT_EQ(rec.entities[0].name, "MPI Rank 0");
  EXPECT_EQ(rec.entities[2].name, "MPI Rank 2/Master thread");
  EXPECT_EQ(rec.entities[3].name, "MPI Rank 2/worker");
  EXPECT_EQ(rec.entities[2].rank, 2);
  EXPECT_EQ(rec.entities[3].rank, -1);
  EXPECT_EQ(rec.entities[3].host, "node0");
  // Above the host, the system tree's rack (the root machine left out).
  EXPECT_EQ(rec.entities[3].above_host, (std::vector<Enclosing>{{"rack", "rack0"}}));

  ASSERT_EQ(rec.messages.size(), 2U);
  // Isend at 0.1 s, Irecv completes at 0.25 s.
  EXPECT_EQ(rec.messages[0].src, 0U);
  EXPECT_EQ(rec.messages[0].dst, 1U);
  EXPECT_DOUBLE_EQ(rec.messages[0].send_s, 0.1);
  EXPECT_DOUBLE_EQ(rec.messages[0].recv_s, 0.25);
  EXPECT_EQ(rec.messages[0].bytes, 100U);
  EXPECT_EQ(rec.messages[0].tag, 5);
  // Rank 0 of "sub" is location 2; rank 1 is location 0.
  EXPECT_EQ(rec.messages[1].src, 0U);
  EXPECT_EQ(rec.messages[1].dst, 2U);
  EXPECT_DOUBLE_EQ(rec.messages[1].recv_s, 0.35);
  EXPECT_EQ(rec.messages[1].bytes, 300U);

  ASSERT_EQ(rec.collectives.size(), 5U);
  int allreduce = 0, bcast = 0;
  for (const auto& c : rec.collectives) {
    if (c.name == "allreduce") {
      ++allreduce;
      EXPECT_EQ(c.group, "MPI_COMM_WORLD#0");
      EXPECT_EQ(c.root, -1);
      EXPECT_DOUBLE_EQ(c.begin_s, 0.4);
      EXPECT_DOUBLE_EQ(c.end_s, 0.5);
    } else if (c.name == "bcast") {
      ++bcast;
      EXPECT_EQ(c.group, "sub#0");
      EXPECT_EQ(c.root, 0);  // rank 1 of "sub" is location 0
    }
  }
  EXPECT_EQ(allreduce, 3);
  EXPECT_EQ(bcast, 2);

  // An absolute metric: its values as they are.
  ASSERT_EQ(rec.loads.size(), 2U);
  EXPECT_EQ(rec.loads[0].entity, 2U);
  EXPECT_DOUBLE_EQ(rec.loads[0].value, 1.5);
  EXPECT_DOUBLE_EQ(rec.loads[1].time_s, 0.5);
  EXPECT_EQ(s.metric, "load");

  EXPECT_DOUBLE_EQ(rec.state_seconds(3, "work"), 0.8);
  EXPECT_DOUBLE_EQ(rec.state_seconds(0, "main"), 1.0);
  EXPECT_DOUBLE_EQ(rec.end_s, 1.0);
  EXPECT_TRUE(s.warnings.empty());

  if (have_otf2_print()) {
    const PrintCounts c = otf2_print_counts(dir / "a/traces.otf2");
    EXPECT_EQ(c.send, s.sends);
    EXPECT_EQ(c.recv, s.receives);
    EXPECT_EQ(c.collective_end, s.collectives);
    EXPECT_EQ(c.enter, s.enters);
  }

  // A window far smaller than the trace still gives an ordered stream with the same time in "main".
  StreamRecorder small;
  Otf2Options o;
  o.max_held = 2;
  read_otf2_trace(dir / "a/traces.otf2", small, o);
  EXPECT_TRUE(small.well_formed());
  EXPECT_DOUBLE_EQ(small.state_seconds(0, "main"), 1.0);
  EXPECT_EQ(small.messages.size(), 2U);
}

TEST(Otf2Reader, CorruptedAndTruncatedArchivesGiveErrorsNotCrashes) {
  test::TempDir dir;
  const fs::path src = shared_archive("ping-pong-otf2-papi");
  std::mt19937 rng(11);
  int refused = 0, accepted = 0;
  for (const char* file : {"traces.otf2", "traces.def", "traces/0.def", "traces/0.evt", "traces/1.evt"}) {
    const auto size = static_cast<std::size_t>(fs::file_size(src / file));
    std::vector<std::pair<bool, std::size_t>> cases;  // (truncate, position)
    for (std::size_t cut : {std::size_t{0}, std::size_t{3}, std::size_t{8}, size / 4, size / 2, size - 1}) cases.emplace_back(true, cut);
    // Bit flips in the data files only: a flipped property count in the anchor file makes
    // libotf2 itself spin for about 20 s before it fails (otf2-print does the same), too slow here.
    const bool anchor = std::string(file) == "traces.otf2";
    for (int i = 0; i < (anchor ? 0 : 12); ++i) cases.emplace_back(false, rng() % size);
    for (const auto& [truncate, pos] : cases) {
      const fs::path copy = dir / "copy";
      fs::remove_all(copy);
      fs::copy(src, copy, fs::copy_options::recursive);
      for (const auto& entry : fs::recursive_directory_iterator(copy)) {
        fs::permissions(entry.path(), fs::perms::owner_write, fs::perm_options::add);
      }
      std::string bytes = test::read_text(src / file);
      if (truncate) {
        bytes.resize(pos);
      } else {
        bytes[pos] = static_cast<char>(bytes[pos] ^ static_cast<char>(1U << (rng() % 8U)));
      }
      std::ofstream(copy / file, std::ios::binary | std::ios::trunc) << bytes;
      StreamRecorder rec;
      try {
        read_otf2_trace(copy, rec);
        EXPECT_TRUE(rec.well_formed());
        ++accepted;
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find((copy / "traces.otf2").string()), std::string::npos) << e.what();
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 10);
  EXPECT_GT(accepted, 0);
}

TEST(Otf2Reader, MissingPiecesAreErrorsNamingTheFile) {
  test::TempDir dir;
  StreamRecorder rec;
  const auto error_of = [&](const fs::path& p) -> std::string {
    try {
      read_otf2_trace(p, rec);
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  };
  fs::create_directories(dir / "empty");
  EXPECT_EQ(error_of(dir / "empty"), (dir / "empty").string() +
                                           ": error: directory holds no OTF2 anchor file (expected one *.otf2 file "
                                           "directly in it)");
  fs::copy(shared_archive("ping-pong-otf2"), dir / "nodefs", fs::copy_options::recursive);
  fs::permissions(dir / "nodefs", fs::perms::owner_all, fs::perm_options::add);
  fs::remove(dir / "nodefs/traces.def");
  EXPECT_NE(error_of(dir / "nodefs").find((dir / "nodefs/traces.otf2").string() +
                                           " (global definitions): error: cannot read the OTF2 archive"),
            std::string::npos)
      << error_of(dir / "nodefs");
  test::write_text(dir / "junk.otf2", "not an archive");
  EXPECT_EQ(error_of(dir / "junk.otf2"),
            (dir / "junk.otf2").string() +
                " (header, byte 0): error: not an OTF2 anchor file (it does not start with OTF2's magic bytes)");
}

TEST(Otf2Reader, RegistryDetectsAnchorAndDirectoryAndInfoReads) {
  const fs::path archive = shared_archive("ping-pong-otf2");
  EXPECT_EQ(detect_format(archive), "otf2");
  EXPECT_EQ(detect_format(archive / "traces.otf2"), "otf2");
  EXPECT_EQ(detect_format(archive / "traces.def"), "");
  StreamRecorder rec;
  const ReadReport report = read_trace(archive, rec);
  EXPECT_EQ(report.format, "otf2");
  EXPECT_EQ(rec.messages.size(), 16U);

  const test::CommandResult r = test::run_kanoko({"info", archive.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"format\":\"otf2\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"messages\":16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"bytes\":8355840"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kanoko::trace

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

TEST(Otf2Reader, SinkRefusalNamesTheFile) {
  TimelineOptions options;
  options.interval_s = 1e-9;  // 0.2 s of trace in 1 ns bins: too many bins
  TimelineBuilder builder(options);
  const fs::path anchor = shared_archive("ping-pong-otf2") / "traces.otf2";
  try {
    read_otf2_trace(anchor, builder);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(anchor.string() + " (events): error: the trace is too long", 0), 0U) << e.what();
  }
}

TEST(Otf2Reader, NamesTheEventThatSetsTheEnd) {
  // write_archive's events that reach the reader (Isend completions and Irecv requests do not):
  // 24, of which 21 come before the first Leave at the latest time, 2000 ticks.
  test::TempDir dir;
  write_archive(dir / "a");
  StreamRecorder rec;
  const Otf2Summary s = read_otf2_trace(dir / "a", rec);
  EXPECT_NE(s.end_at.file.find("(event 22 in time order"), std::string::npos) << s.end_at.file;
}

}  // namespace
}  // namespace kanoko::trace
