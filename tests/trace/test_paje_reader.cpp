// The Pajé reader: every shared Pajé file reads and matches pj_dump's counts; the header in any
// field order, tabs, quotes, deprecated names; nested states, links matched by key, sizes; errors
// with their location and warnings with counts; truncated and mutated input; the reorder window;
// and the same run written natively and as Pajé giving the same timeline.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "src/base/error.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trace/paje_reader.hpp"
#include "src/trace/readers.hpp"
#include "src/trace/timeline.hpp"
#include "tests/support/smpi_traces.hpp"
#include "tests/support/test_support.hpp"
#include "tests/trace/mutation.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

std::string hex(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

/// Records every event as one canonical line and checks the stream's contract: entities before
/// use, first time stamps non-decreasing, one end.
class Recorder final : public TraceSink {
 public:
  std::vector<std::string> log;
  std::vector<Entity> entities;
  std::vector<Message> messages;
  std::vector<LoadSample> loads;
  std::vector<std::pair<StateInterval, std::string>> states;
  double end_s = -1;
  double last_first_s = 0;
  int order_violations = 0;
  int unknown_entities = 0;
  int end_calls = 0;

  void on_entity(const Entity& e) override {
    entities.push_back(e);
    log.push_back("entity " + std::to_string(e.index) + " [" + e.name + "] host=[" + e.host + "] rank=" +
                  std::to_string(e.rank));
  }
  void on_link(const Link& l) override { log.push_back("link " + std::to_string(l.a) + "-" + std::to_string(l.b)); }
  void on_message(const Message& m) override {
    seen(m.send_s, {m.src, m.dst});
    messages.push_back(m);
    log.push_back("msg " + hex(m.send_s) + " " + std::to_string(m.src) + "->" + std::to_string(m.dst) + " " +
                  std::to_string(m.bytes) + " recv=" + hex(m.recv_s));
  }
  void on_load(const LoadSample& s) override {
    seen(s.time_s, {s.entity});
    loads.push_back(s);
    log.push_back("load " + hex(s.time_s) + " " + std::to_string(s.entity) + " " + hex(s.value));
  }
  void on_state(const StateInterval& s) override {
    seen(s.begin_s, {s.entity});
    states.emplace_back(s, std::string(s.name));
    log.push_back("state " + hex(s.begin_s) + ".." + hex(s.end_s) + " " + std::to_string(s.entity) + " [" +
                  std::string(s.name) + "]");
  }
  void on_end(double t) override {
    end_s = t;
    ++end_calls;
    log.push_back("end " + hex(t));
  }

 private:
  void seen(double t, std::initializer_list<EntityIndex> used) {
    if (t < last_first_s) ++order_violations;
    last_first_s = std::max(last_first_s, t);
    for (const EntityIndex e : used) {
      if (e >= entities.size()) ++unknown_entities;
    }
  }
};

const std::string kName = "t.paje";


PajeSummary parse(const std::string& text, Recorder& r, const PajeOptions& o = {}) {
  return read_paje_trace_text(text, kName, r, o);
}

/// The header in PajeNG's documented field order, ids 0-17, spaces.
const std::string kHeader = R"(%EventDef PajeDefineContainerType 0
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineStateType 1
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineVariableType 2
% Alias string
% Type string
% Name string
% Color color
%EndEventDef
%EventDef PajeDefineLinkType 3
% Alias string
% Type string
% StartContainerType string
% EndContainerType string
% Name string
%EndEventDef
%EventDef PajeDefineEntityValue 4
% Alias string
% Type string
% Name string
% Color color
%EndEventDef
%EventDef PajeCreateContainer 5
% Time date
% Alias string
% Type string
% Container string
% Name string
%EndEventDef
%EventDef PajeDestroyContainer 6
% Time date
% Type string
% Name string
%EndEventDef
%EventDef PajeSetState 7
% Time date
% Type string
% Container string
% Value string
%EndEventDef
%EventDef PajePushState 8
% Time date
% Type string
% Container string
% Value string
%EndEventDef
%EventDef PajePopState 9
% Time date
% Type string
% Container string
%EndEventDef
%EventDef PajeResetState 10
% Time date
% Type string
% Container string
%EndEventDef
%EventDef PajeSetVariable 11
% Time date
% Type string
% Container string
% Value double
%EndEventDef
%EventDef PajeAddVariable 12
% Time date
% Type string
% Container string
% Value double
%EndEventDef
%EventDef PajeSubVariable 13
% Time date
% Type string
% Container string
% Value double
%EndEventDef
%EventDef PajeStartLink 14
% Time date
% Type string
% Container string
% Value string
% StartContainer string
% Key string
% Size int
%EndEventDef
%EventDef PajeEndLink 15
% Time date
% Type string
% Container string
% Value string
% EndContainer string
% Key string
%EndEventDef
%EventDef PajeNewEvent 16
% Time date
% Type string
% Container string
% Value string
%EndEventDef
)";

const std::int64_t kHeaderLines = std::count(kHeader.begin(), kHeader.end(), '\n');

/// An SMPI-like body: two ranks of type MPI, nested states, two links of different keys whose
/// ends come in reverse order, a load variable.
const std::string kBody = R"(0 MPI 0 MPI
1 STATE MPI "MPI_STATE"
2 load MPI "load" "1 0 0"
3 LINK 0 MPI MPI MPI_LINK
5 0 rank-0 MPI 0 "rank-0"
5 0 rank-1 MPI 0 "rank-1"
11 0 load rank-0 0.5
8 0.1 STATE rank-0 computing
8 0.2 STATE rank-0 PMPI_Send
14 0.25 LINK 0 PTP rank-0 k1 100
14 0.26 LINK 0 PTP rank-0 k2 200
8 0.3 STATE rank-1 PMPI_Recv
15 0.35 LINK 0 PTP rank-1 k2
12 0.4 load rank-0 0.25
15 0.45 LINK 0 PTP rank-1 k1
9 0.5 STATE rank-0
9 0.6 STATE rank-0
9 0.7 STATE rank-1
16 0.7 MPI rank-1 marker
6 1 MPI rank-1
6 1 MPI rank-0
)";

TEST(PajeReader, SmpiLikeTrace) {
  Recorder r;
  PajeOptions o;
  o.load_variable = "load";
  const PajeSummary s = parse(kHeader + kBody, r, o);
  ASSERT_EQ(r.entities.size(), 2U);
  EXPECT_EQ(r.entities[0].name, "rank-0");
  EXPECT_EQ(r.entities[1].rank, 1);
  EXPECT_EQ(s.entity_type, "MPI");
  EXPECT_EQ(s.containers, 3U);
  EXPECT_EQ(s.states, 3U);
  EXPECT_EQ(s.links, 2U);
  EXPECT_EQ(s.variable_events, 2U);
  EXPECT_EQ(s.point_events, 1U);
  EXPECT_TRUE(s.warnings.empty());
  const std::vector<std::string> expected{
      "entity 0 [rank-0] host=[] rank=0",
      "entity 1 [rank-1] host=[] rank=1",
      "load " + hex(0.0) + " 0 " + hex(0.5),
      "state " + hex(0.1) + ".." + hex(0.6) + " 0 [computing]",
      "state " + hex(0.2) + ".." + hex(0.5) + " 0 [PMPI_Send]",
      "msg " + hex(0.25) + " 0->1 100 recv=" + hex(0.45),
      "msg " + hex(0.26) + " 0->1 200 recv=" + hex(0.35),
      "state " + hex(0.3) + ".." + hex(0.7) + " 1 [PMPI_Recv]",
      "load " + hex(0.4) + " 0 " + hex(0.75),
      "end " + hex(1.0),
  };
  EXPECT_EQ(r.log, expected);
  EXPECT_EQ(r.order_violations, 0);
}

/// Rewrites kHeader with each block's fields in reverse order, other ids, tabs, and body lines to
/// match: the events must not change.
TEST(PajeReader, FieldOrderIdsAndTabsDoNotMatter) {
  // Parse kHeader into blocks.
  struct Block {
    std::string name;
    std::vector<std::string> fields;
  };
  std::vector<Block> blocks;
  std::istringstream in(kHeader);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("%EventDef", 0) == 0) {
      std::istringstream ls(line.substr(10));
      Block b;
      ls >> b.name;
      blocks.push_back(b);
    } else if (line.rfind("% ", 0) == 0) {
      blocks.back().fields.push_back(line.substr(2));
    }
  }
  std::string header;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    header += "%EventDef\t" + blocks[i].name + "\t" + std::to_string(100 + i * 7) + "\n";
    for (auto it = blocks[i].fields.rbegin(); it != blocks[i].fields.rend(); ++it) {
      std::string f = *it;
      f[f.find(' ')] = '\t';
      header += "%\t" + f + "\n";
    }
    header += "%EndEventDef\n";
  }
  std::string body;
  std::istringstream bin(kBody);
  while (std::getline(bin, line)) {
    // Split respecting quotes, then reverse the fields after the id.
    std::vector<std::string> tok;
    for (std::size_t i = 0; i < line.size();) {
      if (line[i] == ' ') {
        ++i;
      } else if (line[i] == '"') {
        const std::size_t close = line.find('"', i + 1);
        tok.push_back(line.substr(i, close - i + 1));
        i = close + 1;
      } else {
        const std::size_t end = std::min(line.find(' ', i), line.size());
        tok.push_back(line.substr(i, end - i));
        i = end;
      }
    }
    const int id = std::stoi(tok[0]);
    std::string out = std::to_string(100 + id * 7);
    for (std::size_t k = tok.size(); k-- > 1;) out += "\t " + tok[k];
    body += out + "\t# trailing comment\n\n";
  }
  PajeOptions o;
  o.load_variable = "load";
  Recorder a, b;
  parse(kHeader + kBody, a, o);
  parse("# generated\n" + header + body, b, o);
  EXPECT_EQ(a.log, b.log);
  EXPECT_EQ(a.log.size(), 10U);
}

TEST(PajeReader, DeprecatedNamesQuotedStringsAndCrLf) {
  const std::string text =
      "%EventDef PajeDefineContainerType 1\r\n% Alias string\r\n% ContainerType string\r\n% Name string\r\n%EndEventDef\r\n"
      "%EventDef PajeDefineLinkType 2\n% Alias string\n% ContainerType string\n% SourceContainerType string\n"
      "% DestContainerType string\n% Name string\n%EndEventDef\n"
      "%EventDef PajeCreateContainer 3\n% Time date\n% Alias string\n% ContainerType string\n% Container string\n"
      "% Name string\n%EndEventDef\n"
      "%EventDef PajeStartLink 4\n% Time date\n% EntityType string\n% Container string\n% Value string\n"
      "% SourceContainer string\n% Key string\n%EndEventDef\n"
      "%EventDef PajeEndLink 5\n% Time date\n% EntityType string\n% Container string\n% Value string\n"
      "% DestContainer string\n% Key string\n%EndEventDef\n"
      "1 H 0 HOST\n"
      "2 L 0 H H \"a link type\"\n"
      "3 0 h1 H 0 \"host one\"\n"
      "3 0 h2 H 0 \"\"\n"
      "4 1 L 0 \"v 1\" \"host one\" \"key with spaces\"\r\n"
      "5 2 L 0 \"v 1\" h2 \"key with spaces\"\n";
  Recorder r;
  const PajeSummary s = parse(text, r);
  ASSERT_EQ(r.entities.size(), 2U);  // HOST by the default rule
  EXPECT_EQ(r.entities[0].name, "host one");
  EXPECT_EQ(r.entities[1].name, "");
  EXPECT_EQ(s.links, 1U);
  ASSERT_EQ(r.messages.size(), 1U);
  EXPECT_EQ(r.messages[0].src, 0U);
  EXPECT_EQ(r.messages[0].dst, 1U);
  EXPECT_EQ(r.messages[0].bytes, 0U);  // no Size field
  EXPECT_EQ(r.messages[0].recv_s, 2.0);
}

TEST(PajeReader, LinksBetweenDescendantsGoToTheirEntities) {
  const std::string body =
      "0 HOST 0 HOST\n0 PROC HOST PROC\n0 THR PROC THR\n1 S THR S\n3 L 0 THR THR L\n"
      "5 0 h0 HOST 0 h0\n5 0 h1 HOST 0 h1\n5 0 p0 PROC h0 p0\n5 0 p1 PROC h1 p1\n"
      "5 0 t0 THR p0 t0\n5 0 t1 THR p1 t1\n5 0 t2 THR p1 t2\n"
      "14 1 L 0 x t0 a 5\n15 2 L 0 x t2 a\n14 3 L 0 x t1 b 7\n15 4 L 0 x t0 b\n";
  Recorder r;
  PajeOptions o;
  o.entity_type = "PROC";
  const PajeSummary s = parse(kHeader + body, r, o);
  ASSERT_EQ(r.entities.size(), 2U);
  EXPECT_EQ(r.entities[0].name, "p0");
  EXPECT_EQ(r.entities[0].host, "h0");
  ASSERT_EQ(r.messages.size(), 2U);
  EXPECT_EQ(r.messages[0].src, 0U);
  EXPECT_EQ(r.messages[0].dst, 1U);
  EXPECT_EQ(r.messages[0].bytes, 5U);
  EXPECT_EQ(r.messages[1].src, 1U);
  EXPECT_EQ(r.messages[1].dst, 0U);
  EXPECT_EQ(s.entity_type, "PROC");
  // The default rule picks the leaf type with states: THR.
  Recorder d;
  EXPECT_EQ(parse(kHeader + body, d).entity_type, "THR");
  EXPECT_EQ(d.entities.size(), 3U);
}

TEST(PajeReader, RanksDeclaredAfterThePlatformAreStillChosen) {
  // SimGrid with both views: hosts, their variables and topology links at time 0, the MPI type and
  // ranks after them. Events before the choice are held, then attributed.
  const std::string body =
      "0 HOST 0 HOST\n2 speed HOST speed \"1 1 1\"\n3 TOPO 0 HOST HOST TOPO\n"
      "5 0 h0 HOST 0 h0\n5 0 h1 HOST 0 h1\n11 0 speed h0 1e9\n14 0 TOPO 0 topology h0 t1 0\n"
      "15 0 TOPO 0 topology h1 t1\n"
      "0 MPI 0 MPI\n1 S MPI S\n3 L 0 MPI MPI L\n2 load MPI load \"1 1 1\"\n"
      "5 0 r0 MPI 0 rank-0\n5 0 r1 MPI 0 rank-1\n11 0 load r0 0.5\n14 0 L 0 p r0 k 8\n"
      "8 0.5 S r1 computing\n15 1 L 0 p r1 k\n9 2 S r1\n";
  Recorder r;
  PajeOptions o;
  o.load_variable = "load";
  const PajeSummary s = parse(kHeader + body, r, o);
  EXPECT_EQ(s.entity_type, "MPI");
  ASSERT_EQ(r.entities.size(), 2U);
  EXPECT_EQ(r.entities[0].name, "rank-0");
  ASSERT_EQ(r.messages.size(), 1U);  // the topology link joins hosts, not entities
  EXPECT_EQ(r.messages[0].bytes, 8U);
  ASSERT_EQ(r.loads.size(), 1U);
  EXPECT_EQ(r.loads[0].value, 0.5);
  EXPECT_EQ(s.links, 2U);
  EXPECT_EQ(r.order_violations, 0);
}

TEST(PajeReader, EndBeforeStartAndSetAndResetState) {
  const std::string body =
      "0 MPI 0 MPI\n1 S MPI S\n3 L 0 MPI MPI L\n5 0 r0 MPI 0 rank-0\n5 0 r1 MPI 0 rank-1\n"
      "15 1 L 0 p r1 k\n14 1 L 0 p r0 k 3.0e2\n"
      "7 1 S r0 a\n7 2 S r0 b\n8 2.5 S r0 c\n10 3 S r0\n8 3 S r1 x\n";
  Recorder r;
  const PajeSummary s = parse(kHeader + body, r);
  ASSERT_EQ(r.messages.size(), 1U);
  EXPECT_EQ(r.messages[0].bytes, 300U);
  EXPECT_EQ(s.states, 4U);
  ASSERT_EQ(r.states.size(), 4U);
  EXPECT_EQ(r.states[0].second, "a");
  EXPECT_EQ(r.states[0].first.end_s, 2.0);
  EXPECT_EQ(r.states[1].second, "b");
  EXPECT_EQ(r.states[1].first.end_s, 3.0);  // reset ends b and c
  EXPECT_EQ(r.states[2].second, "c");
  EXPECT_EQ(r.states[3].second, "x");       // open at the end of the trace: ends there
  EXPECT_EQ(r.states[3].first.end_s, 3.0);
  EXPECT_EQ(r.order_violations, 0);
}

TEST(PajeReader, RecoverableProblemsAreCountedWarnings) {
  const std::string body =
      "0 MPI 0 MPI\n1 S MPI S\n3 L 0 MPI MPI L\n5 0 r0 MPI 0 rank-0\n5 0 r1 MPI 0 rank-1\n"
      "9 1 S r0\n9 1 S r0\n"                 // pops without pushes (lines 6, 7)
      "15 1 L 0 p r1 nostart\n"              // an end without start (line 8)
      "14 1 L 0 p r0 noend 1\n"              // a start without end
      "8 2 S nobody x\n8 2 NOTYPE r0 x\n"    // undeclared container and type
      "77 2 x\n"                             // undefined event id
      "9 3 S r0\n";
  Recorder r;
  const PajeSummary s = parse(kHeader + body, r);
  EXPECT_EQ(s.warning_count(), 8U);
  ASSERT_EQ(s.warnings.size(), 6U);
  EXPECT_EQ(s.warnings[0].what, "link end without a matching start");
  EXPECT_EQ(s.warnings[0].first.line, kHeaderLines + 8);
  EXPECT_EQ(s.warnings[2].what, "pop of an empty state stack");
  EXPECT_EQ(s.warnings[2].count, 3U);
  EXPECT_EQ(s.warnings[2].first.line, kHeaderLines + 6);
  EXPECT_TRUE(r.messages.empty());
  EXPECT_EQ(r.end_calls, 1);
}

::testing::AssertionResult fails_at(const std::string& text, std::int64_t line, std::int64_t column,
                                    const std::string& needle) {
  try {
    Recorder r;
    parse(text, r);
    return ::testing::AssertionFailure() << "accepted";
  } catch (const InputError& e) {
    const auto& ds = e.diagnostics();
    if (ds.size() != 1) return ::testing::AssertionFailure() << ds.size() << " diagnostics: " << e.what();
    const Diagnostic& d = ds[0];
    if (d.loc.file != kName || d.loc.line != line || d.loc.column != column ||
        d.message.find(needle) == std::string::npos) {
      return ::testing::AssertionFailure() << "got '" << e.what() << "', expected " << kName << ":" << line << ":"
                                           << column << " with '" << needle << "'";
    }
    return ::testing::AssertionSuccess();
  }
}

TEST(PajeReaderErrors, LocatedAtTheField) {
  const std::string head = kHeader + "0 MPI 0 MPI\n1 S MPI S\n5 0 r0 MPI 0 rank-0\n";
  const std::int64_t l = kHeaderLines + 4;  // the line under test
  EXPECT_TRUE(fails_at(head + "8 x1 S r0 a\n", l, 3, "expected a time"));
  EXPECT_TRUE(fails_at(head + "8 2 S r0 a\n8  1 S r0 b\n", l + 1, 4, "time goes backwards"));
  EXPECT_TRUE(fails_at(head + "8 -1 S r0 a\n", l, 3, "time must be >= 0"));
  EXPECT_TRUE(fails_at(head + "8 1 S r0\n", l, 9, "missing field"));
  EXPECT_TRUE(fails_at(head + "8 1 S r0 a extra\n", l, 12, "unexpected extra field 'extra'"));
  EXPECT_TRUE(fails_at(head + "8 1 S r0 \"a\n", l, 10, "unterminated quoted string"));
  EXPECT_TRUE(fails_at(head + "11 1 S r0 1.5x\n", l, 11, "expected a number"));
  EXPECT_TRUE(fails_at(head + std::string("8 1 S r0 a\x01\0b\n", 14), l, 12, "NUL byte"));
  EXPECT_TRUE(fails_at("%EventDef PajeSetState 1\n% Time date\n% Value strin\n", 3, 9, "unknown field type 'strin'"));
  EXPECT_TRUE(fails_at("%EventDef PajeSetState 1\n% Time date\n%EndEventDef\n", 3, 2, "lacks the field 'Type'"));
  EXPECT_TRUE(fails_at("%EventDef Foo 1\n%EndEventDef\n%EventDef Bar 1\n", 3, 15, "defined twice"));
  EXPECT_TRUE(fails_at("%EventDef PajeSetState 1\n", 1, 1, "missing %EndEventDef"));
  EXPECT_TRUE(fails_at("# nothing\n", 1, 1, "no %EventDef header"));
}

TEST(PajeReaderErrors, UnknownEntityTypeListsTheTypes) {
  Recorder r;
  PajeOptions o;
  o.entity_type = "MPII";
  try {
    parse(kHeader + kBody, r, o);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'MPI'"), std::string::npos) << e.what();
  }
}

// ------------------------------------------------------------------------------------------------
// The shared traces, against pj_dump
// ------------------------------------------------------------------------------------------------

std::vector<std::filesystem::path> shared_paje_files() {
  std::vector<std::filesystem::path> files;
  const auto dir = test::shared_dir() / "traces" / "paje";
  for (const std::string& n : test::list_dir(dir)) {
    if (n.size() > 6 && n.substr(n.size() - 6) == ".trace") files.push_back(dir / n);
  }
  return files;
}

TEST(PajeShared, EveryFileReads) {
  const auto files = shared_paje_files();
  ASSERT_EQ(files.size(), 4U) << test::shared_dir();
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    EXPECT_EQ(detect_format(f), "paje");
    Recorder r;
    PajeSummary s;
    ASSERT_NO_THROW(s = read_paje_trace(f, r));
    EXPECT_EQ(r.order_violations, 0);
    EXPECT_EQ(r.unknown_entities, 0);
    EXPECT_EQ(r.end_calls, 1);
    EXPECT_FALSE(r.entities.empty());
    // Through the registry into a timeline, as `kanoko simulate` does.
    TimelineBuilder b(TimelineOptions{});
    ASSERT_NO_THROW(read_trace(f, b));
    EXPECT_EQ(b.take().entity_count(), r.entities.size());
  }
}

TEST(PajeShared, CountsEqualPjDump) {
  if (test::run_program({"pj_dump", "--version"}).exit_code == 127) {
    GTEST_SKIP() << "pj_dump not installed (apt-get install pajeng): counts not compared";
  }
  for (const auto& f : shared_paje_files()) {
    SCOPED_TRACE(f.string());
    const test::CommandResult d = test::run_program({"pj_dump", f.string()});
    ASSERT_EQ(d.exit_code, 0) << d.err;
    std::uint64_t containers = 0, states = 0, links = 0;
    std::istringstream in(d.out);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("Container,", 0) == 0) ++containers;
      if (line.rfind("State,", 0) == 0) ++states;
      if (line.rfind("Link,", 0) == 0) ++links;
    }
    Recorder r;
    const PajeSummary s = read_paje_trace(f, r);
    EXPECT_EQ(s.containers, containers);
    EXPECT_EQ(s.states, states);
    EXPECT_EQ(s.links, links);
    EXPECT_GT(containers + states + links, 10U);
  }
}

// ------------------------------------------------------------------------------------------------
// The reorder window
// ------------------------------------------------------------------------------------------------

TEST(PajeReader, BoundedWindowSplitsLongStatesWithoutChangingTheTimeline) {
  // rank-0 stays in "compute" the whole run while rank-1 produces many short states.
  std::string body = "0 MPI 0 MPI\n1 S MPI S\n5 0 r0 MPI 0 rank-0\n5 0 r1 MPI 0 rank-1\n8 0 S r0 compute\n";
  for (int i = 0; i < 400; ++i) {
    const double t = 0.01 * i;
    body += "8 " + std::to_string(t) + " S r1 compute\n9 " + std::to_string(t + 0.005) + " S r1\n";
  }
  body += "9 4.5 S r0\n";
  TimelineBuilder wide(TimelineOptions{}), narrow(TimelineOptions{});
  PajeOptions o;
  read_paje_trace_text(kHeader + body, kName, wide, o);
  Recorder r;
  o.max_held = 16;
  read_paje_trace_text(kHeader + body, kName, r, o);
  EXPECT_EQ(r.order_violations, 0);
  EXPECT_GT(r.states.size(), 401U);  // the long state came in pieces
  read_paje_trace_text(kHeader + body, kName, narrow, o);
  const Timeline a = wide.take(), b = narrow.take();
  ASSERT_EQ(a.bin_count, b.bin_count);
  for (std::size_t i = 0; i < a.busy_s.size(); ++i) EXPECT_NEAR(a.busy_s[i], b.busy_s[i], 1e-12) << i;
}

// ------------------------------------------------------------------------------------------------
// Native and Pajé for the same run
// ------------------------------------------------------------------------------------------------

struct RunEvent {
  double t;
  int kind;  // 0 message, 1 state, 2 load
  int a, b;
  double d;
  std::uint64_t bytes;
};

/// Two binned timelines are equal: counts, every per-bin array and the traffic, exactly.
void expect_same_timeline(const Timeline& a, const Timeline& b) {
  const auto counts = [](const Timeline& t) {
    return std::tuple(t.end_s, t.bin_count, t.entity_count(), t.message_count, t.state_count, t.load_sample_count);
  };
  EXPECT_EQ(counts(a), counts(b));
  for (const auto array : {&Timeline::load, &Timeline::busy_s, &Timeline::comm_s, &Timeline::idle_s}) {
    EXPECT_EQ(a.*array, b.*array);
  }
  EXPECT_EQ(a.pair_begin, b.pair_begin);
  const auto traffic = [](const Timeline& t) {
    std::vector<std::tuple<EntityIndex, EntityIndex, double, std::uint32_t>> v;
    for (const PairTraffic& p : t.pairs) v.emplace_back(p.src, p.dst, p.bytes, p.messages);
    return v;
  };
  EXPECT_EQ(traffic(a), traffic(b));
}

TEST(PajeReader, SameRunNativeAndPajeGiveTheSameTimeline) {
  std::mt19937_64 rng(42);
  const int n = 5;
  std::vector<RunEvent> ev;
  double t = 0;
  for (int i = 0; i < 600; ++i) {
    t += 0.001 * static_cast<double>(1 + rng() % 7);
    const int a = static_cast<int>(rng() % n);
    const int b = (a + 1 + static_cast<int>(rng() % (n - 1))) % n;
    ev.push_back(RunEvent{t, static_cast<int>(rng() % 3), a, b, 0.001 * static_cast<double>(rng() % 50), rng() % 100000});
  }
  const double end = t + 0.1;
  std::string native = "kntr 1\n";
  std::string paje = kHeader + "0 MPI 0 MPI\n1 S MPI S\n2 V MPI V \"0 0 1\"\n3 L 0 MPI MPI L\n";
  for (int i = 0; i < n; ++i) {
    native += "node 0 " + std::to_string(i) + " name=rank-" + std::to_string(i) + "\n";
    paje += "5 0 r" + std::to_string(i) + " MPI 0 rank-" + std::to_string(i) + "\n";
  }
  // Pajé lines must be in time order: collect (time, line) and sort stably.
  std::vector<std::pair<double, std::string>> lines;
  char buf[256];
  int key = 0;
  for (const RunEvent& e : ev) {
    if (e.kind == 0) {
      std::snprintf(buf, sizeof buf, "msg %.17g %d %d %llu recv=%.17g\n", e.t, e.a, e.b,
                    static_cast<unsigned long long>(e.bytes), e.t + e.d);
      native += buf;
      std::snprintf(buf, sizeof buf, "14 %.17g L 0 PTP r%d %d_%d_%d %llu\n", e.t, e.a, e.a, e.b, key,
                    static_cast<unsigned long long>(e.bytes));
      lines.emplace_back(e.t, buf);
      std::snprintf(buf, sizeof buf, "15 %.17g L 0 PTP r%d %d_%d_%d\n", e.t + e.d, e.b, e.a, e.b, key);
      lines.emplace_back(e.t + e.d, buf);
      ++key;
    } else if (e.kind == 1) {
      std::snprintf(buf, sizeof buf, "state %.17g %d %.17g compute\n", e.t, e.a, e.d);
      native += buf;
      std::snprintf(buf, sizeof buf, "8 %.17g S r%d compute\n", e.t, e.a);
      lines.emplace_back(e.t, buf);
      std::snprintf(buf, sizeof buf, "9 %.17g S r%d\n", e.t + e.d, e.a);
      lines.emplace_back(e.t + e.d, buf);
    } else {
      const double v = static_cast<double>(e.bytes % 100) / 100.0;
      std::snprintf(buf, sizeof buf, "load %.17g %d %.17g\n", e.t, e.a, v);
      native += buf;
      std::snprintf(buf, sizeof buf, "11 %.17g V r%d %.17g\n", e.t, e.a, v);
      lines.emplace_back(e.t, buf);
    }
  }
  std::snprintf(buf, sizeof buf, "end %.17g\n", end);
  native += buf;
  std::stable_sort(lines.begin(), lines.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (const auto& [time, line] : lines) paje += line;
  std::snprintf(buf, sizeof buf, "6 %.17g MPI r0\n", end);
  paje += buf;

  TimelineOptions to;
  to.interval_s = 0.05;
  TimelineBuilder nb(to), pb(to);
  read_native_trace_text(native, "run.kntr", nb);
  PajeOptions o;
  o.load_variable = "V";
  read_paje_trace_text(paje, "run.paje", pb, o);
  const Timeline a = nb.take(), b = pb.take();
  ASSERT_EQ(a.entity_count(), b.entity_count());
  for (std::size_t i = 0; i < a.entity_count(); ++i) EXPECT_EQ(a.entities[i].name, b.entities[i].name);
  expect_same_timeline(a, b);
  EXPECT_GT(a.message_count, 100U);
}

// ------------------------------------------------------------------------------------------------
// Registry
// ------------------------------------------------------------------------------------------------

TEST(Readers, DetectAndOverride) {
  EXPECT_EQ(detect_format_text("\xEF\xBB\xBF# c\nkntr 1\n"), "native");
  EXPECT_EQ(detect_format_text("#This file was generated using SimGrid\n%EventDef PajeDefineContainerType 0\n"), "paje");
  EXPECT_EQ(detect_format_text("%\tEventDef PajeSetState 3\n"), "paje");
  EXPECT_EQ(detect_format_text("kntrx 1\n"), "");
  EXPECT_EQ(detect_format_text("{\"traceEvents\":[]}"), "chrome");
  test::TempDir dir;
  test::write_text(dir / "a.txt", kHeader + kBody);
  Recorder r;
  EXPECT_EQ(read_trace(dir / "a.txt", r).format, "paje");
  Recorder r2;
  try {
    read_trace(dir / "a.txt", r2, "native");
    FAIL() << "a Pajé trace read as native";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a.txt:1:1"), std::string::npos) << e.what();
  }
  try {
    read_trace(dir / "a.txt", r2, "pajee");
    FAIL() << "unknown format accepted";
  } catch (const InputError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("a.txt"), std::string::npos) << w;
    EXPECT_NE(w.find("valid formats: auto, native, paje"), std::string::npos) << w;
  }
  test::write_text(dir / "b.json", "[]\n");
  try {
    read_trace(dir / "b.json", r2);
    FAIL() << "undetectable format accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("native, paje"), std::string::npos) << e.what();
  }
  const std::vector<std::string> names = reader_names();  // more formats follow these two
  ASSERT_GE(names.size(), 2U);
  EXPECT_EQ(names[0], "native");
  EXPECT_EQ(names[1], "paje");
}

// ------------------------------------------------------------------------------------------------
// Truncation and mutation
// ------------------------------------------------------------------------------------------------

/// "" if accepted into a timeline, the error text if refused with InputError; anything else
/// propagates and fails the test.
std::string read_into_timeline(const std::string& text) {
  try {
    TimelineBuilder b(TimelineOptions{});
    PajeOptions o;
    o.load_variable = "load";
    o.max_held = 8;
    read_paje_trace_text(text, kName, b, o);
    (void)b.take();
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

TEST(PajeReaderHostile, TruncatedAtEveryByte) {
  const std::string small = kHeader + kBody;
  ASSERT_EQ(read_into_timeline(small), "");
  int accepted = 0;
  for (std::size_t cut = 0; cut <= small.size(); ++cut) {
    const std::string prefix = small.substr(0, cut);
    const std::string err = read_into_timeline(prefix);
    if (err.empty()) ++accepted;
    // Cutting at a line end past the header always leaves a valid trace.
    if (cut >= kHeader.size() && small[cut - 1] == '\n') {
      EXPECT_EQ(err, "") << "cut at " << cut;
    }
  }
  EXPECT_GT(accepted, 100);
}

const std::vector<std::string> kMutationTokens{
    " ", "\n", "\"", "#", "\t", "\r", "%", "-", "e", ".", "9", "nan", "inf", "1e999", "%EventDef PajePopState 9\n",
    "%EndEventDef\n", "9 1 STATE rank-0\n", "8 1 STATE rank-0 x\n", "15 1 LINK 0 PTP rank-1 k1\n", std::string(1, '\0'),
    "\xff", "0 X rank-0 X\n", "5 0 rank-0 MPI rank-0 dup\n", "\xEF\xBB\xBF", "\"a b\""};

/// One to four random edits of kHeader + kBody, as a fuzzer would make them.
std::string mutated(std::mt19937_64& rng) {
  std::string s = kHeader + kBody;
  const int ops = 1 + static_cast<int>(rng() % 4);
  for (int op = 0; op < ops; ++op) {
    if (rng() % 5 != 0) {
      testing::mutate_once(s, rng, kMutationTokens);
      continue;
    }
    // Move a whole body line elsewhere (breaks time order and nesting).
    const std::size_t a = s.find('\n', kHeader.size() + rng() % (s.size() - kHeader.size() + 1));
    if (a == std::string::npos) continue;
    const std::size_t b = s.find('\n', a + 1);
    if (b == std::string::npos) continue;
    const std::string line = s.substr(a + 1, b - a);
    s.erase(a + 1, b - a);
    s.insert(std::min(s.size(), kHeader.size() + rng() % (s.size() - kHeader.size() + 1)), line);
  }
  return s;
}

TEST(PajeReaderHostile, DeterministicMutationFuzz) {
  std::mt19937_64 rng(20261121);
  int accepted = 0, refused = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    if (read_into_timeline(mutated(rng)).empty()) {
      ++accepted;
    } else {
      ++refused;
    }
  }
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 100);
}

/// What reading gives: the event log and the summary's counts and warnings, or the error.
std::string outcome(const std::function<PajeSummary(Recorder&)>& read) {
  Recorder r;
  PajeSummary s;
  try {
    s = read(r);
  } catch (const InputError& e) {
    return std::string("error: ") + e.what();
  }
  std::string all;
  for (const std::string& line : r.log) all += line + "\n";
  all += "containers " + std::to_string(s.containers) + " states " + std::to_string(s.states) + " links " +
         std::to_string(s.links) + " variables " + std::to_string(s.variable_events) + " events " +
         std::to_string(s.point_events) + " entity type " + s.entity_type + "\n";
  for (const PajeWarning& w : s.warnings) {
    all += "warning " + std::to_string(w.count) + "x " + w.what + " first line " + std::to_string(w.first.line) + "\n";
  }
  return all;
}

TEST(PajeReaderFile, WorkerThreadsReadExactlyAsTheLineParser) {
  // The file reader splits body lines into fields on worker threads, in batches of whole lines;
  // whatever the input, the events, counts, warnings and errors must be those of the
  // line-by-line parser. Tiny batches put batch boundaries everywhere.
  std::mt19937_64 rng(20261122);
  test::TempDir dir;
  const auto path = dir / "m.trace";
  PajeOptions base;
  base.load_variable = "load";
  base.max_held = 8;
  std::string many_fields = "9";  // more fields than a worker splits (the parser refuses the extra ones)
  for (int f = 0; f < 5000; ++f) many_fields += " 1";
  std::vector<std::string> inputs{kHeader + kBody, "\xEF\xBB\xBF" + kHeader + kBody,
                                  kHeader + "%EventDef PajePushState 99\n% Time date\n%EndEventDef\n" + kBody,
                                  kHeader + kBody + many_fields + "\n"};
  for (int iter = 0; iter < 1200; ++iter) inputs.push_back(mutated(rng));
  int refused = 0;
  for (std::size_t iter = 0; iter < inputs.size(); ++iter) {
    const std::string& s = inputs[iter];
    test::write_text(path, s);
    const std::string expected = outcome([&](Recorder& r) { return read_paje_trace_text(s, path.string(), r, base); });
    refused += expected.rfind("error: ", 0) == 0 ? 1 : 0;
    for (const TextReadOptions read : {TextReadOptions{1, 5}, TextReadOptions{3, 64}, TextReadOptions{2, 1 << 20}}) {
      PajeOptions o = base;
      o.read = read;
      const std::string got = outcome([&](Recorder& r) { return read_paje_trace(path, r, o); });
      if (got != expected) {
        ADD_FAILURE() << "threads " << read.threads << ", batches of " << read.batch_bytes << " bytes, input " << iter
                      << ":\n" << s << "\nexpected:\n" << expected << "\ngot:\n" << got;
        return;
      }
    }
  }
  EXPECT_GT(refused, 100);
  EXPECT_GT(static_cast<int>(inputs.size()) - refused, 50);
}

TEST(PajeReaderFile, PlainLinesOfEveryLengthReadAsTheLineParser) {
  // Workers split a body line of under 64 bytes from bit masks of its bytes (16 at a time), and
  // leave other lines to the word-by-word split: lines padded across the 16-, 32- and 64-byte
  // marks, with tabs, CRs, leading blanks, numbers with leading zeros, of up to 19 digits and
  // more, comments, quotes and errors at every place must read as the line parser reads them.
  test::TempDir dir;
  const auto path = dir / "plain.trace";
  PajeOptions base;
  base.load_variable = "load";
  const std::vector<std::string> extra{"8 0.8 STATE rank-0 007",
                                       "11 0.8 load rank-0 1000000000.000000",
                                       "11 0.8 load rank-1 0.10000000000000000001",
                                       "11 0.8 load rank-1 12345678901234567890",
                                       "12 0.80 load rank-0 00000000000000000000000.5",
                                       "8 0.9 STATE rank-1 1048575",
                                       "8 0.9 STATE rank-1 1048576",
                                       "9 0.95 STATE rank-1",
                                       "9 0.95 STATE rank-1 # a comment",
                                       "8 0.95 STATE rank-1 \"quoted value\""};
  std::vector<std::string> lines;
  {
    std::istringstream in(kBody);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    const std::string tail = lines.back();  // the last containers are destroyed at the end
    const std::string before = lines[lines.size() - 2];
    lines.resize(lines.size() - 2);
    lines.insert(lines.end(), extra.begin(), extra.end());
    lines.push_back(before);
    lines.push_back(tail);
  }
  const std::vector<std::string> pads{" ", "\t", " \t", "\r "};
  const std::vector<std::string> bad{"x", "\"", std::string(1, '\0'), "-1", "%"};
  int refused = 0;
  for (std::size_t width = 0; width <= 72; ++width) {
    for (std::size_t variant = 0; variant < 4; ++variant) {
      // Every line padded after its first field to about `width` bytes; some start with blanks
      // or end with CR.
      std::string body;
      for (std::size_t i = 0; i < lines.size(); ++i) {
        std::string l = lines[i];
        const std::size_t sp = l.find(' ');
        const std::string& pad = pads[(i + variant) % pads.size()];
        while (l.size() < width) l.insert(sp, pad);
        if ((i + variant) % 5 == 1) l = " " + l;
        if ((i + variant) % 7 == 2) l += "\r";
        body += l + "\n";
      }
      // An error in one line, at a place that moves with the width (past the line's end: none).
      if (variant == 3) {
        const std::size_t line_start = body.find('\n', body.size() / 3) + 1;
        body.insert(std::min(body.size(), line_start + width % 40), bad[width % bad.size()]);
      }
      const std::string s = kHeader + body;
      test::write_text(path, s);
      const std::string expected = outcome([&](Recorder& r) { return read_paje_trace_text(s, path.string(), r, base); });
      refused += expected.rfind("error: ", 0) == 0 ? 1 : 0;
      for (const TextReadOptions read : {TextReadOptions{1, 1 << 20}, TextReadOptions{2, 300}}) {
        PajeOptions o = base;
        o.read = read;
        const std::string got = outcome([&](Recorder& r) { return read_paje_trace(path, r, o); });
        if (got != expected) {
          ADD_FAILURE() << "width " << width << ", variant " << variant << ", threads " << read.threads << ":\n" << s
                        << "\nexpected:\n" << expected << "\ngot:\n" << got;
          return;
        }
      }
    }
  }
  EXPECT_GT(refused, 10);
  EXPECT_LT(refused, 73);
}

TEST(PajeReaderFile, SharedTracesReadTheSameOnWorkerThreads) {
  const auto files = shared_paje_files();
  ASSERT_EQ(files.size(), 4U) << test::shared_dir();
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    const std::string text = test::read_text(f);
    const std::string expected = outcome([&](Recorder& r) { return read_paje_trace_text(text, f.string(), r); });
    ASSERT_EQ(expected.rfind("error: ", 0), std::string::npos) << expected;
    for (const TextReadOptions read : {TextReadOptions{1, 4096}, TextReadOptions{3, 100000}}) {
      PajeOptions o;
      o.read = read;
      EXPECT_EQ(outcome([&](Recorder& r) { return read_paje_trace(f, r, o); }), expected) << read.threads;
    }
  }
}

TEST(PajeReaderFile, RealSmpiTracesReadOnTheFastPathAsLineByLine) {
  // Real SimGrid SMPI traces (traces/smpi's programs, generated on demand): nested computing and
  // MPI states, resource variables and the platform's topology links, MPI_ANY_TAG receives whose
  // link keys never match, call locations on every state. The file reader (lines split on
  // worker threads and on the caller, which prepares batches while it waits) must give the
  // event stream, counts, warnings and binned timeline of the line-by-line parser, whatever the
  // threads and batch sizes.
  KANOKO_REQUIRE_SMPI();
  std::vector<test::SmpiRun> runs(3);
  runs[0].program = "halo3d";
  runs[0].ranks = 27;
  runs[0].platform = "torus";
  runs[0].resources = true;
  runs[1].program = "farm";
  runs[1].ranks = 8;
  runs[1].platform = "fattree";
  runs[1].sizes = true;
  runs[1].args = {"--any-tag"};
  runs[2].program = "late";
  runs[2].ranks = 8;
  runs[2].args = {"--iters", "40"};
  runs[2].sizes = true;
  runs[2].locations = true;
  for (const test::SmpiRun& run : runs) {
    SCOPED_TRACE(run.program);
    const auto path = test::smpi_trace(run);
    const std::string text = test::read_text(path);
    const std::string expected = outcome([&](Recorder& r) { return read_paje_trace_text(text, path.string(), r); });
    ASSERT_EQ(expected.rfind("error: ", 0), std::string::npos) << expected;
    EXPECT_GT(std::count(expected.begin(), expected.end(), '\n'), 500);
    TimelineOptions to;
    to.interval_s = 1e-3;
    to.busy_states = {"computing"};
    to.communicating_states = {"MPI_*", "PMPI_*"};
    TimelineBuilder reference(to);
    read_paje_trace_text(text, path.string(), reference);
    const Timeline want = reference.take();
    for (const TextReadOptions read : {TextReadOptions{1, 4096}, TextReadOptions{2, 4096}, TextReadOptions{2, 1 << 18},
                                       TextReadOptions{3, 777}}) {
      SCOPED_TRACE(std::to_string(read.threads) + " threads, batches of " + std::to_string(read.batch_bytes));
      PajeOptions o;
      o.read = read;
      EXPECT_EQ(outcome([&](Recorder& r) { return read_paje_trace(path, r, o); }), expected);
      TimelineBuilder fast(to);
      read_paje_trace(path, fast, o);
      expect_same_timeline(fast.take(), want);
    }
  }
}

}  // namespace
}  // namespace kanoko::trace

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

TEST(PajeReaderHostile, FuzzSeedsRead) {
  const auto dir = test::source_dir() / "tests" / "fuzz" / "seeds" / "paje";
  const auto names = test::list_dir(dir);
  ASSERT_GE(names.size(), 2U);
  for (const std::string& n : names) {
    Recorder r;
    PajeOptions o;
    o.load_variable = "load";
    EXPECT_NO_THROW(read_paje_trace(dir / n, r, o)) << n;
    EXPECT_GE(r.entities.size(), 2U) << n;
    EXPECT_FALSE(r.messages.empty()) << n;
  }
}

TEST(PajeReader, NamesTheLineThatSetsTheEnd) {
  // kBody's latest time, 1, is first reached by its line 20, "6 1 MPI rank-1".
  Recorder r;
  const PajeSummary s = parse(kHeader + kBody, r);
  EXPECT_EQ(s.end_at.file, kName);
  EXPECT_EQ(s.end_at.line, kHeaderLines + 20);
  EXPECT_EQ(s.end_at.column, 3);
}

}  // namespace
}  // namespace kanoko::trace
