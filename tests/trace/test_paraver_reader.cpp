// The Paraver reader: every shared .prv reads with counts derived here from the files themselves;
// a small hand-written trace with known answers (units, names from .pcf/.row, messages,
// collectives, loads, thread level); missing .pcf/.row warnings; located errors; records out of
// order; truncated and mutated input never crash.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/trace/paraver_reader.hpp"
#include "src/trace/readers.hpp"
#include "src/trace/text_input.hpp"
#include "src/trace/timeline.hpp"
#include "tests/support/test_support.hpp"
#include "tests/trace/mutation.hpp"
#include "tests/trace/stream_recorder.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

using Capture = testing::StreamRecorder;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string f;
  while (std::getline(in, f, sep)) out.push_back(f);
  return out;
}

// ------------------------------------------------------------------------------------------------
// The shared real traces, against counts taken from the files here with plain string splitting
// ------------------------------------------------------------------------------------------------

struct Expected {
  std::uint64_t records[5] = {0, 0, 0, 0, 0};  ///< by record type 1..4
  std::uint64_t comm_bytes = 0;
  std::uint64_t states_appl1 = 0;    ///< state records of application 1
  std::uint64_t messages_appl1 = 0;  ///< communications with both ends in application 1
  std::uint64_t collective_calls = 0;  ///< non-zero values of event type 50000002 in application 1
  std::uint64_t comm_lines = 0;
};

Expected count_records(const std::filesystem::path& prv) {
  Expected x;
  std::stringstream in(test::read_text(prv));
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (header) {
      header = false;
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == 'c') {
      ++x.comm_lines;
      continue;
    }
    const auto f = split(line, ':');
    const int type = std::stoi(f[0]);
    if (type >= 1 && type <= 4) ++x.records[type];
    if (type == 1 && f[2] == "1") ++x.states_appl1;
    if (type == 3) {
      x.comm_bytes += std::stoull(f[13]);
      if (f[2] == "1" && f[8] == "1") ++x.messages_appl1;
    }
    if (type == 2 && f[2] == "1") {
      for (std::size_t i = 6; i + 1 < f.size(); i += 2) {
        if (f[i] == "50000002" && f[i + 1] != "0") ++x.collective_calls;
      }
    }
  }
  return x;
}

TEST(ParaverShared, EveryFileReadsWithItsRecordCounts) {
  const auto dir = test::shared_dir() / "traces" / "paraver";
  int files = 0;
  for (const auto& name : test::list_dir(dir)) {
    if (std::filesystem::path(name).extension() != ".prv") continue;
    ++files;
    const auto prv = dir / name;
    SCOPED_TRACE(name);
    ASSERT_EQ(detect_format(prv), "paraver");
    const Expected x = count_records(prv);
    Capture c;
    const ParaverSummary s = read_paraver_trace(prv, c);
    EXPECT_EQ(s.state_records, x.records[1]);
    EXPECT_EQ(s.event_records, x.records[2]);
    EXPECT_EQ(s.comm_records, x.records[3]);
    EXPECT_EQ(s.global_op_records, x.records[4]);
    EXPECT_EQ(s.comm_bytes, x.comm_bytes);
    EXPECT_EQ(s.communicators, x.comm_lines);
    EXPECT_EQ(s.communicators, s.communicators_declared);
    EXPECT_EQ(s.collectives, x.collective_calls);
    // By default the entities are the tasks of application 1.
    EXPECT_EQ(c.states.size(), x.states_appl1);
    EXPECT_EQ(c.messages.size(), x.messages_appl1);
    EXPECT_EQ(c.collectives.size(), x.collective_calls);
    EXPECT_EQ(c.order_violations, 0);
    EXPECT_EQ(c.unknown_entities, 0);
    EXPECT_EQ(c.end_s, s.declared_end_s);
    EXPECT_TRUE(s.have_pcf);
  }
  EXPECT_EQ(files, 2);
}

TEST(ParaverShared, QsortHeaderOf2004) {
  // "#Paraver (26/01/04 at 16:35):260199:4:1:4(1:1,1:2,1:3,1:4),8": no unit (µs), 4 nodes, one
  // application of 4 single-thread tasks on nodes 1-4, 8 communicators; no .row next to it.
  Capture c;
  const ParaverSummary s = read_paraver_trace(test::shared_dir() / "traces" / "paraver" / "qsort_beo3.prv", c);
  EXPECT_DOUBLE_EQ(s.time_unit_s, 1e-6);
  EXPECT_DOUBLE_EQ(s.declared_end_s, 0.260199);
  EXPECT_EQ(s.nodes, 4U);
  EXPECT_EQ(s.tasks, 4U);
  EXPECT_EQ(s.communicators_declared, 8U);
  ASSERT_EQ(c.entities.size(), 4U);
  EXPECT_EQ(c.entities[2].name, "task 1.3");
  EXPECT_EQ(c.entities[2].host, "node 3");
  EXPECT_EQ(c.entities[2].rank, 2);
  EXPECT_FALSE(s.have_row);
  ASSERT_FALSE(s.warnings.empty());
  EXPECT_NE(s.warnings[0].str().find("qsort_beo3.row"), std::string::npos) << s.warnings[0].str();
  // State names come from the .pcf ("1 Running", "15" is not there, "13 Group Communication").
  bool running = false;
  for (const auto& st : c.states) running = running || st.name == "Running";
  EXPECT_TRUE(running);
  // The first communication record: 3:2:1:2:1:73135:73236:1:1:1:1:73520:73639:32:11.
  ASSERT_FALSE(c.messages.empty());
  const Message& m = c.messages.front();
  EXPECT_EQ(m.src, 1U);
  EXPECT_EQ(m.dst, 0U);
  EXPECT_DOUBLE_EQ(m.send_s, 73135e-6);
  EXPECT_DOUBLE_EQ(m.recv_s, 73639e-6);
  EXPECT_EQ(m.bytes, 32U);
  EXPECT_EQ(m.tag, 11);
}

TEST(ParaverShared, LuleshApplicationsRowNamesAndThreads) {
  // Header ...:1616378951_ns:1(20):2:8(1:1,...),12(1:1,...),14 — ns, one node of 20 cpus, 8 MPI
  // tasks and 12 uncore pseudo-tasks; the .row names the node epeec04 and the 20 threads.
  const auto prv = test::shared_dir() / "traces" / "paraver" / "lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv";
  Capture c;
  const ParaverSummary s = read_paraver_trace(prv, c);
  EXPECT_DOUBLE_EQ(s.time_unit_s, 1e-9);
  EXPECT_DOUBLE_EQ(s.declared_end_s, 1.616378951);
  EXPECT_EQ(s.applications, 2U);
  EXPECT_EQ(s.tasks, 20U);
  EXPECT_EQ(s.communicators_declared, 14U);
  EXPECT_TRUE(s.have_row);
  ASSERT_EQ(c.entities.size(), 8U);
  EXPECT_EQ(c.entities[0].host, "epeec04");
  // Every message of LULESH carries tag 1024, 2048 or 3072 and joins two of the 8 ranks.
  for (const Message& m : c.messages) {
    EXPECT_TRUE(m.tag == 1024 || m.tag == 2048 || m.tag == 3072) << m.tag;
    EXPECT_LT(m.src, 8U);
    EXPECT_LT(m.dst, 8U);
  }
  // The MPI collectives are named from the .pcf (MPI_Allreduce) and grouped per communicator.
  ASSERT_FALSE(c.collectives.empty());
  EXPECT_EQ(c.collectives.front().name, "allreduce");
  EXPECT_EQ(c.collectives.front().group.substr(0, 7), "comm14.");

  ParaverOptions all;
  all.application = 0;
  Capture c2;
  read_paraver_trace(prv, c2, all);
  EXPECT_EQ(c2.entities.size(), 20U);

  ParaverOptions threads;
  threads.entity_level = "thread";
  Capture c3;
  read_paraver_trace(prv, c3, threads);
  ASSERT_EQ(c3.entities.size(), 8U);
  EXPECT_EQ(c3.entities[7].name, "THREAD 1.8.1");  // the .row's THREAD label
}

// ------------------------------------------------------------------------------------------------
// A hand-written trace with known answers
// ------------------------------------------------------------------------------------------------

// Two applications: appl 1 has task 1 (2 threads, node 1) and task 2 (1 thread, node 2); appl 2
// has one task. Times in ms. Records are deliberately out of order (the message at line 6 starts
// before the state at line 5), as Extrae writes them.
const std::string kPrv =
    "#Paraver (01/02/2024 at 10:00):1000_ms:2(2,1):2:2(2:1,1:2):1(1:1),1\n"
    "c:1:1:2:1:2\n"
    "# a comment record\n"
    "1:1:1:1:1:0:100:1\n"
    "1:2:1:2:1:50:300:3\n"
    "3:1:1:1:2:40:45:2:1:2:1:60:120:4096:7\n"
    "2:1:1:1:1:200:50000002:10:50100001:16:50100004:1:42000050:1234\n"
    "2:2:1:2:1:210:50000002:10:50100001:16:50100004:1\n"
    "1:1:1:1:2:220:230:99\n"
    "4:1:1:1:1:240:91:32:0:10:0\n"
    "2:1:1:1:1:250:50000002:0:42000050:2000\n"
    "2:2:1:2:1:260:50000002:0\n"
    "1:3:2:1:1:0:900:1\n"
    "3:2:1:2:1:400:410:1:1:1:1:380:500:8:3\n";

const std::string kPcf =
    "DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               MILLISEC\n\n\n"
    "STATES\n0    Idle\n1    Running\n3    Waiting a message\n\n\n"
    "STATES_COLOR\n0    {117,195,255}\n1    {0,0,255}\n\n\n"
    "EVENT_TYPE\n9   50000002    MPI Collective Comm\nVALUES\n10   MPI_Allreduce\n0   Outside MPI\n\n\n"
    "EVENT_TYPE\n7  42000050 Instructions completed\n";

const std::string kRow =
    "LEVEL NODE SIZE 2\nhostA\nhostB\n\nLEVEL TASK SIZE 3\nrank0\nrank1\nuncore\n\n"
    "LEVEL THREAD SIZE 4\nT1.1.1\nT1.1.2\nT1.2.1\nT2.1.1\n";

TEST(ParaverReader, HandWrittenTraceGivesKnownEvents) {
  Capture c;
  ParaverOptions o;
  o.load_event_type = 42000050;
  const ParaverSummary s = read_paraver_trace_text(kPrv, kPcf, kRow, "h.prv", c, o);
  EXPECT_DOUBLE_EQ(s.time_unit_s, 1e-3);
  EXPECT_EQ(s.nodes, 2U);
  EXPECT_EQ(s.applications, 2U);
  EXPECT_EQ(s.tasks, 3U);
  EXPECT_EQ(s.threads, 4U);
  EXPECT_EQ(s.communicators, 1U);
  EXPECT_EQ(s.state_records, 4U);
  EXPECT_EQ(s.event_records, 4U);
  EXPECT_EQ(s.comm_records, 2U);
  EXPECT_EQ(s.global_op_records, 1U);
  EXPECT_EQ(s.comm_bytes, 4104U);
  EXPECT_EQ(c.order_violations, 0);

  ASSERT_EQ(c.entities.size(), 2U);  // application 1 only
  EXPECT_EQ(c.entities[0].name, "rank0");
  EXPECT_EQ(c.entities[0].host, "hostA");
  EXPECT_EQ(c.entities[1].name, "rank1");
  EXPECT_EQ(c.entities[1].host, "hostB");

  // States: three of application 1 (the uncore task's is not read), named from the .pcf; an
  // unnamed state id is "state N".
  ASSERT_EQ(c.states.size(), 3U);
  EXPECT_EQ(c.states[0].name, "Running");
  EXPECT_DOUBLE_EQ(c.states[0].end_s, 0.1);
  EXPECT_EQ(c.states[1].name, "Waiting a message");
  EXPECT_EQ(c.states[1].entity, 1U);
  EXPECT_DOUBLE_EQ(c.states[1].begin_s, 0.05);
  EXPECT_EQ(c.states[2].name, "state 99");
  EXPECT_EQ(c.states[2].entity, 0U);  // thread 2 of task 1 belongs to task 1

  // Messages: logical send → physical receive, in send order although written later.
  ASSERT_EQ(c.messages.size(), 2U);
  EXPECT_DOUBLE_EQ(c.messages[0].send_s, 0.04);
  EXPECT_DOUBLE_EQ(c.messages[0].recv_s, 0.12);
  EXPECT_EQ(c.messages[0].src, 0U);
  EXPECT_EQ(c.messages[0].dst, 1U);
  EXPECT_EQ(c.messages[0].bytes, 4096U);
  EXPECT_EQ(c.messages[0].tag, 7);
  EXPECT_DOUBLE_EQ(c.messages[1].send_s, 0.4);
  EXPECT_EQ(c.messages[1].src, 1U);
  EXPECT_EQ(c.messages[1].tag, 3);

  // One allreduce on communicator 1, entered by both tasks; 16 bytes each.
  ASSERT_EQ(c.collectives.size(), 2U);
  for (const auto& coll : c.collectives) {
    EXPECT_EQ(coll.name, "allreduce");
    EXPECT_EQ(coll.group, "comm1.0");
    EXPECT_EQ(coll.bytes, 16U);
  }
  EXPECT_DOUBLE_EQ(c.collectives[0].begin_s, 0.2);
  EXPECT_DOUBLE_EQ(c.collectives[0].end_s, 0.25);
  EXPECT_DOUBLE_EQ(c.collectives[1].end_s, 0.26);

  // Loads: the two values of event type 42000050 on task 1.
  ASSERT_EQ(c.loads.size(), 2U);
  EXPECT_DOUBLE_EQ(c.loads[0].value, 1234);
  EXPECT_DOUBLE_EQ(c.loads[1].time_s, 0.25);
  // The end is the header's (1000 ms), later than every record.
  EXPECT_DOUBLE_EQ(c.end_s, 1.0);
  EXPECT_TRUE(s.warnings.empty()) << s.warnings[0].str();
}

TEST(ParaverReader, ThreadLevelAndEveryApplication) {
  Capture c;
  ParaverOptions o;
  o.entity_level = "thread";
  o.application = 0;
  read_paraver_trace_text(kPrv, kPcf, kRow, "h.prv", c, o);
  ASSERT_EQ(c.entities.size(), 4U);
  EXPECT_EQ(c.entities[1].name, "T1.1.2");
  EXPECT_EQ(c.entities[3].name, "T2.1.1");
  EXPECT_EQ(c.states.size(), 4U);
  // The message from thread 1.1.2 starts at entity 1.
  ASSERT_EQ(c.messages.size(), 2U);
  EXPECT_EQ(c.messages[0].src, 1U);
  EXPECT_EQ(c.messages[0].dst, 2U);

  ParaverOptions bad;
  bad.application = 3;
  Capture c2;
  EXPECT_THROW(read_paraver_trace_text(kPrv, kPcf, kRow, "h.prv", c2, bad), InputError);
  bad.application = 1;
  bad.entity_level = "process";
  EXPECT_THROW(read_paraver_trace_text(kPrv, kPcf, kRow, "h.prv", c2, bad), InputError);
}

TEST(ParaverReader, BusyTimeFromRunningStatesThroughTheMapping) {
  // The timeline counts the states the mapping names busy; for Paraver that is "Running".
  TimelineOptions to;
  to.interval_s = 0.5;
  to.busy_states = {"Running"};
  TimelineBuilder b(to);
  read_paraver_trace_text(kPrv, kPcf, kRow, "h.prv", b);
  const Timeline tl = b.take();
  ASSERT_EQ(tl.bin_count, 2U);
  EXPECT_NEAR(tl.busy_fraction(0, 0), 0.1 / 0.5, 1e-12);  // task 1 runs 0-100 ms
  EXPECT_NEAR(tl.busy_fraction(0, 1), 0.0, 1e-12);
  EXPECT_EQ(tl.message_count, 2U);
}

TEST(ParaverReader, MissingPcfAndRowAreWarningsWithGenericNames) {
  Capture c;
  const ParaverSummary s = read_paraver_trace_text(kPrv, "", "", "dir/h.prv", c);
  ASSERT_EQ(s.warnings.size(), 2U);
  EXPECT_NE(s.warnings[0].str().find("dir/h.pcf"), std::string::npos) << s.warnings[0].str();
  EXPECT_NE(s.warnings[1].str().find("dir/h.row"), std::string::npos) << s.warnings[1].str();
  ASSERT_EQ(c.entities.size(), 2U);
  EXPECT_EQ(c.entities[1].name, "task 1.2");
  EXPECT_EQ(c.entities[1].host, "node 2");
  EXPECT_EQ(c.states[0].name, "state 1");

  // On disk: the .pcf and .row are found next to the .prv, or reported missing.
  test::TempDir dir;
  test::write_text(dir / "a.prv", kPrv);
  Capture c2;
  const ParaverSummary s2 = read_paraver_trace(dir / "a.prv", c2);
  ASSERT_EQ(s2.warnings.size(), 2U);
  EXPECT_EQ(s2.warnings[0].first.file, (dir / "a.pcf").string());
  test::write_text(dir / "a.pcf", kPcf);
  test::write_text(dir / "a.row", kRow);
  Capture c3;
  const ParaverSummary s3 = read_paraver_trace(dir / "a.prv", c3);
  EXPECT_TRUE(s3.warnings.empty());
  EXPECT_EQ(c3.entities[0].name, "rank0");
}

TEST(ParaverReader, MalformedPcfAndRowLinesAreWarnings) {
  Capture c;
  const ParaverSummary s = read_paraver_trace_text(kPrv, "STATES\nx Running\n1 Running\n", "LEVEL TASK SIZE x\nfoo\n",
                                                   "h.prv", c);
  std::string all;
  for (const auto& w : s.warnings) all += w.str() + "\n";
  EXPECT_NE(all.find("h.pcf:2:1: warning: 1x malformed STATES line"), std::string::npos) << all;
  EXPECT_NE(all.find("h.row:1:1: warning: 1x malformed LEVEL line"), std::string::npos) << all;
  EXPECT_NE(all.find("h.row:2:1: warning: 1x label outside a LEVEL block"), std::string::npos) << all;
  EXPECT_EQ(c.states[0].name, "Running");
}

// ------------------------------------------------------------------------------------------------
// Errors and warnings with their location
// ------------------------------------------------------------------------------------------------

/// The error text of reading `prv` (with the hand-written .pcf/.row), "" if accepted.
std::string error_of(const std::string& prv, const ParaverOptions& o = {}) {
  try {
    Capture c;
    read_paraver_trace_text(prv, kPcf, kRow, "e.prv", c, o);
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

const std::string kHead = "#Paraver (01/02/2024 at 10:00):1000_ms:2(2,1):2:2(2:1,1:2):1(1:1),1\n";

TEST(ParaverReaderErrors, LocatedAtTheField) {
  const auto has = [](const std::string& err, const std::string& what) {
    return err.find(what) != std::string::npos ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << err;
  };
  EXPECT_TRUE(has(error_of(""), "e.prv:1:1: error: empty trace"));
  EXPECT_TRUE(has(error_of("hello\n"), "e.prv:1:1: error: not a Paraver trace"));
  EXPECT_TRUE(has(error_of("#Paraver (x:12\n"), "e.prv:1:11: error: expected '(date):'"));
  EXPECT_TRUE(has(error_of("#Paraver (d):10:1:2:1(1:1)\n"), "declares 2 applications but lists 1"));
  EXPECT_TRUE(has(error_of("#Paraver (d):1x0:1:1:1(1:1)\n"), "e.prv:1:14: error: expected the end time"));
  EXPECT_TRUE(has(error_of("#Paraver (d):10:1:1:2(1:1)\n"), "the number of tasks says 2 but the list holds 1"));
  EXPECT_TRUE(has(error_of("#Paraver (d):10:1:1:1(0:1)\n"), "at least one thread"));
  EXPECT_TRUE(has(error_of("#Paraver (d):10:1:1:1(99999999999:1)\n"), "more than 16 M threads"));
  EXPECT_TRUE(has(error_of(kHead + "1:1:3:1:1:0:10:1\n"), "e.prv:2:5: error: application 3 is not in the header"));
  EXPECT_TRUE(has(error_of(kHead + "1:1:1:5:1:0:10:1\n"), "e.prv:2:7: error: task 5 is not in application 1 (1..2)"));
  EXPECT_TRUE(has(error_of(kHead + "1:1:1:2:2:0:10:1\n"), "e.prv:2:9: error: thread 2 is not in task 1.2 (1..1)"));
  EXPECT_TRUE(has(error_of(kHead + "1:1:1:1:1:0:1.5:1\n"), "e.prv:2:13: error: expected a time"));
  EXPECT_TRUE(has(error_of(kHead + "1:1:1:1:1:20:10:1\n"), "e.prv:2:14: error: state ends before it begins"));
  EXPECT_TRUE(has(error_of(kHead + "1:1:1:1:1:0:10\n"), "e.prv:2:15: error: too few fields for a state record"));
  EXPECT_TRUE(has(error_of(kHead + "1:1:1:1:1:0:10:1:9\n"), "e.prv:2:18: error: too many fields for a state record"));
  EXPECT_TRUE(has(error_of(kHead + "2:1:1:1:1:0:5\n"), "e.prv:2:13: error: an event record is"));
  EXPECT_TRUE(has(error_of(kHead + "2:1:1:1:1:0:5:x\n"), "e.prv:2:15: error: expected an event value"));
  EXPECT_TRUE(has(error_of(kHead + "3:1:1:1:1:0:0:1:1:2:1:5:5:-8:1\n"), "e.prv:2:27: error: expected a size in bytes"));
  EXPECT_TRUE(has(error_of(kHead + "x:1\n"), "e.prv:2:1: error: expected a record type"));
  EXPECT_TRUE(has(error_of(kHead + std::string("1:1:1:1:1:0:10:1\n1:1:1:1\0:1:0:10:1\n", 35)), "e.prv:3:8: error: binary content"));
  // A time too large for the timeline's bins is refused at the record that brought it.
  try {
    TimelineBuilder b(TimelineOptions{});
    read_paraver_trace_text(kHead + "1:1:1:1:1:0:18446744073709551615:1\n", kPcf, kRow, "e.prv", b);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("e.prv:"), std::string::npos) << e.what();
  }
}

TEST(ParaverReaderErrors, RecoverableProblemsAreWarnings) {
  Capture c;
  const ParaverSummary s = read_paraver_trace_text(kHead + "1:1:1:1:1:0:10:1\n7:1:2:3\n7:1\n1:9:1:1:1:10:20:1\n"
                                                           "3:1:1:1:1:50:50:2:1:2:1:40:40:8:1\n",
                                                   kPcf, kRow, "w.prv", c);
  std::string all;
  for (const auto& w : s.warnings) all += w.str() + "\n";
  EXPECT_NE(all.find("w.prv:3: warning: 2x record of unknown type"), std::string::npos) << all;
  EXPECT_NE(all.find("w.prv:5: warning: 1x cpu number beyond"), std::string::npos) << all;
  EXPECT_NE(all.find("w.prv:6: warning: 1x communication received before it was sent"), std::string::npos) << all;
  EXPECT_EQ(c.states.size(), 2U);
}

TEST(ParaverReader, RecordsOutOfOrderBeyondTheWindowAreMovedAndCounted) {
  // Ten states in reverse time order with a window of 4: the stream stays ordered, the late ones
  // are moved to the last time passed on and counted as one warning kind.
  std::string prv = kHead;
  for (int i = 9; i >= 0; --i) prv += "1:1:1:1:1:" + std::to_string(i * 10) + ":" + std::to_string(i * 10 + 5) + ":1\n";
  Capture c;
  ParaverOptions o;
  o.max_held = 4;
  const ParaverSummary s = read_paraver_trace_text(prv, kPcf, kRow, "o.prv", c, o);
  EXPECT_EQ(c.order_violations, 0);
  EXPECT_EQ(c.states.size(), 10U);
  ASSERT_EQ(s.warnings.size(), 1U);
  EXPECT_NE(s.warnings[0].what.find("out of time order"), std::string::npos);
  EXPECT_GT(s.warnings[0].count, 0U);
  EXPECT_EQ(s.warnings[0].first.line, 7);  // the first record that came too late
  // With the default window nothing is late.
  Capture c2;
  EXPECT_TRUE(read_paraver_trace_text(prv, kPcf, kRow, "o.prv", c2).warnings.empty());
  EXPECT_DOUBLE_EQ(c2.states.front().begin_s, 0.0);
}

// ------------------------------------------------------------------------------------------------
// Registry and command line
// ------------------------------------------------------------------------------------------------

TEST(ParaverReader, DetectedAndReadThroughTheRegistry) {
  EXPECT_TRUE(looks_like_paraver(kPrv));
  EXPECT_TRUE(looks_like_paraver("new format\n" + kPrv));
  EXPECT_FALSE(looks_like_paraver("#Paraver"));
  EXPECT_EQ(detect_format_text(kPrv), "paraver");
  test::TempDir dir;
  test::write_text(dir / "x.prv", kPrv);
  test::write_text(dir / "x.pcf", kPcf);
  Capture c;
  const ReadReport r = read_trace(dir / "x.prv", c);
  EXPECT_EQ(r.format, "paraver");
  ASSERT_EQ(r.warning_lines().size(), 1U);  // no .row
  EXPECT_NE(r.warning_lines()[0].find("x.row"), std::string::npos);
  EXPECT_FALSE(r.details.empty());
}

TEST(ParaverCli, InfoReadsTheSharedTraces) {
  const auto prv = test::shared_dir() / "traces" / "paraver" / "qsort_beo3.prv";
  const test::CommandResult r = test::run_kanoko({"info", prv.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"format\":\"paraver\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"entities\":4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"messages\":33"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("qsort_beo3.row"), std::string::npos) << r.out;  // the missing .row warning
  const test::CommandResult forced = test::run_kanoko({"info", prv.string(), "--format", "paraver"});
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(forced.out.find("paraver records: 292 state, 422 event, 33 communication"), std::string::npos) << forced.out;
  // Every application's threads of the LULESH trace: 8 ranks + 12 uncore pseudo-tasks.
  const auto lulesh = test::shared_dir() / "traces" / "paraver" / "lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv";
  const test::CommandResult threads =
      test::run_kanoko({"info", lulesh.string(), "--entity-type", "thread", "--application", "0", "--json"});
  ASSERT_EQ(threads.exit_code, 0) << threads.err;
  EXPECT_NE(threads.out.find("\"entities\":20"), std::string::npos) << threads.out;
  const test::CommandResult bad = test::run_kanoko({"info", lulesh.string(), "--entity-type", "rank"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("valid levels: task, thread"), std::string::npos) << bad.err;
}

// ------------------------------------------------------------------------------------------------
// Truncation and mutation: only InputError, never a crash
// ------------------------------------------------------------------------------------------------

std::string read_hostile(const std::string& prv, const std::string& pcf, const std::string& row) {
  try {
    TimelineOptions to;
    to.busy_states = {"Running"};
    TimelineBuilder b(to);
    ParaverOptions o;
    o.max_held = 4;
    o.load_event_type = 42000050;
    o.application = 0;
    read_paraver_trace_text(prv, pcf, row, "m.prv", b, o);
    (void)b.take();
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

TEST(ParaverReaderHostile, TruncatedAtEveryByte) {
  ASSERT_EQ(read_hostile(kPrv, kPcf, kRow), "");
  int accepted = 0;
  for (std::size_t cut = 0; cut <= kPrv.size(); ++cut) {
    const std::string prefix = kPrv.substr(0, cut);
    const std::string err = read_hostile(prefix, kPcf, kRow);
    if (err.empty()) ++accepted;
    // A cut at a line end past the header leaves a valid trace.
    if (cut > kPrv.find('\n') && kPrv[cut - 1] == '\n') {
      EXPECT_EQ(err, "") << "cut at " << cut;
    }
  }
  EXPECT_GT(accepted, 20);
  for (std::size_t cut = 0; cut <= kPcf.size(); cut += 3) EXPECT_EQ(read_hostile(kPrv, kPcf.substr(0, cut), kRow), "");
  for (std::size_t cut = 0; cut <= kRow.size(); ++cut) EXPECT_EQ(read_hostile(kPrv, kPcf, kRow.substr(0, cut)), "");
}

TEST(ParaverReaderHostile, DeterministicMutationOfTheSharedTraces) {
  const auto dir = test::shared_dir() / "traces" / "paraver";
  const std::string qsort = test::read_text(dir / "qsort_beo3.prv").substr(0, 6000);
  const std::string pcf = test::read_text(dir / "qsort_beo3.pcf");
  const std::vector<std::string> tokens{":", "\n", "#", "(", ")", ",", "0", "9", "-1", "99999999999999999999",
                                        "3:1:1:1:1:5:5:1:1:1:1:1:1:1:1\n", "2:1:1:1:1:1:50000002:7\n", std::string(1, '\0'),
                                        "c:1:1\n", "_ns", "\xff"};
  std::mt19937_64 rng(20261122);
  int accepted = 0, refused = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    std::string s = iter % 2 == 0 ? qsort : kPrv;
    std::string p = iter % 3 == 0 ? pcf : kPcf;
    std::string& target = iter % 5 == 0 ? p : s;
    const int ops = 1 + static_cast<int>(rng() % 4);
    for (int op = 0; op < ops; ++op) testing::mutate_once(target, rng, tokens);
    (read_hostile(s, p, kRow).empty() ? accepted : refused) += 1;
  }
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 100);
}

TEST(ParaverReaderHostile, FuzzSeedsRead) {
  // The libFuzzer seeds (.prv, form feed, .pcf, form feed, .row) are valid traces.
  const auto dir = test::source_dir() / "tests" / "fuzz" / "seeds" / "paraver";
  const auto names = test::list_dir(dir);
  ASSERT_GE(names.size(), 2U);
  for (const std::string& n : names) {
    const std::string all = test::read_text(dir / n);
    const auto parts = split(all, '\f');
    ASSERT_GE(parts.size(), 2U) << n;
    EXPECT_EQ(read_hostile(parts[0], parts[1], parts.size() > 2 ? parts[2] : ""), "") << n;
  }
}

TEST(ParaverReader, NamesTheRecordThatSetsTheEnd) {
  // The header declares 1000 ms, past every record: the header sets the end.
  Capture c;
  EXPECT_EQ(read_paraver_trace_text(kPrv, kPcf, kRow, "h.prv", c).end_at.line, 1);
  // Declared 100 ms: the state record ending at 900 ms (line 13, its end field) sets it.
  std::string short_end = kPrv;
  short_end.replace(short_end.find("1000_ms"), 7, "100_ms");
  Capture c2;
  const FileLoc at = read_paraver_trace_text(short_end, kPcf, kRow, "h.prv", c2).end_at;
  EXPECT_EQ(at.line, 13);
  EXPECT_EQ(at.column, 13);
}

TEST(ParaverReaderErrors, DeclaredSizesAreCappedBeforeAllocating) {
  // A header declaring two million tasks (listing one) fails at its count, before any list.
  const std::string err = error_of("#Paraver (d):100_ms:1(1):1:2000000(1:1)\n");
  EXPECT_NE(err.find("e.prv:1:"), std::string::npos) << err;
  EXPECT_NE(err.find("the number of tasks is 2000000, more than the 1048576 entities"), std::string::npos) << err;
  // At the limit's edge the count is read, and the list then disagrees with it.
  const std::string at_limit = error_of("#Paraver (d):100_ms:1(1):1:1048576(1:1)\n");
  EXPECT_NE(at_limit.find("but the list holds 1"), std::string::npos) << at_limit;
}

}  // namespace
}  // namespace kanoko::trace
