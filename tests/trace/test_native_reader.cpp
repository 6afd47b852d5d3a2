// The native trace reader (.kntr): valid input in all its lexical forms, every class of error with
// its exact line and column, truncated and mutated input, and the file-path variant.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/trace/limits.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trace/native_writer.hpp"
#include "src/trace/timeline.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

std::string hex(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

/// Records every event as one canonical line; doubles in hexadecimal, so that equal logs mean
/// bit-identical events.
class Recorder final : public TraceSink {
 public:
  std::vector<std::string> log;
  std::vector<Entity> entities;
  std::vector<Link> links;
  std::vector<Message> messages;
  std::vector<LoadSample> loads;
  std::vector<std::pair<StateInterval, std::string>> states;
  std::vector<Collective> collectives;  ///< name and group views are dangling: use collective_strings
  std::vector<std::pair<std::string, std::string>> collective_strings;
  double end_s = -1;
  int end_calls = 0;

  void on_entity(const Entity& e) override {
    entities.push_back(e);
    log.push_back("node " + std::to_string(e.index) + " id=" + std::to_string(e.id) + " name=[" + e.name +
                  "] host=[" + e.host + "] rank=" + std::to_string(e.rank));
  }
  void on_link(const Link& l) override {
    links.push_back(l);
    log.push_back("link id=" + std::to_string(l.id) + " " + std::to_string(l.a) + "-" + std::to_string(l.b) +
                  " name=[" + l.name + "]");
  }
  void on_message(const Message& m) override {
    messages.push_back(m);
    log.push_back("msg " + hex(m.send_s) + " " + std::to_string(m.src) + "->" + std::to_string(m.dst) + " " +
                  std::to_string(m.bytes) + " tag=" + std::to_string(m.tag) + " recv=" + hex(m.recv_s));
  }
  void on_load(const LoadSample& s) override {
    loads.push_back(s);
    log.push_back("load " + hex(s.time_s) + " " + std::to_string(s.entity) + " " + hex(s.value));
  }
  void on_state(const StateInterval& s) override {
    states.emplace_back(s, std::string(s.name));
    log.push_back("state " + hex(s.begin_s) + ".." + hex(s.end_s) + " " + std::to_string(s.entity) + " [" +
                  std::string(s.name) + "]");
  }
  void on_collective(const Collective& c) override {
    collectives.push_back(c);
    collective_strings.emplace_back(std::string(c.name), std::string(c.group));
    log.push_back("coll " + hex(c.begin_s) + ".." + hex(c.end_s) + " " + std::to_string(c.entity) + " [" +
                  std::string(c.name) + "] " + std::to_string(c.bytes) + " root=" + std::to_string(c.root) +
                  " group=[" + std::string(c.group) + "]");
  }
  void on_end(double t) override {
    end_s = t;
    ++end_calls;
    log.push_back("end " + hex(t));
  }
};

const std::string kName = "t.kntr";

Recorder parse(const std::string& text) {
  Recorder r;
  read_native_trace_text(text, kName, r);
  return r;
}

/// Checks that `text` is refused with exactly one diagnostic at line:column whose message holds
/// `needle`, and that the whole error is one line.
::testing::AssertionResult fails_at(const std::string& text, std::int64_t line, std::int64_t column,
                                    const std::string& needle) {
  try {
    Recorder r;
    read_native_trace_text(text, kName, r);
    return ::testing::AssertionFailure() << "accepted";
  } catch (const InputError& e) {
    const auto& ds = e.diagnostics();
    if (ds.size() != 1) return ::testing::AssertionFailure() << ds.size() << " diagnostics: " << e.what();
    const Diagnostic& d = ds[0];
    const std::string what = e.what();
    if (d.loc.file != kName || d.loc.line != line || d.loc.column != column ||
        d.message.find(needle) == std::string::npos || what.find('\n') != std::string::npos) {
      return ::testing::AssertionFailure() << "got '" << what << "', expected " << kName << ":" << line << ":"
                                           << column << " with '" << needle << "'";
    }
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-InputError: " << e.what();
  }
}

// Two declared nodes on lines 1-3; the line under test is line 4.
const std::string kHead = "kntr 1\nnode 0 0\nnode 0 1\n";

// ------------------------------------------------------------------------------------------------
// Valid input
// ------------------------------------------------------------------------------------------------

TEST(NativeReader, EveryEntryKind) {
  const Recorder r = parse(
      "kntr 1\n"
      "# a comment\n"
      "node 0 10 name=pe0 host=cenju-0 rank=3\n"
      "node 0 20\n"
      "link 0 7 10 20 name=bus\n"
      "load 0 10 0.25\n"
      "msg 0.0012 10 20 64 tag=1 recv=0.0013\n"
      "msg 0.0012 20 10 0\n"
      "state 0.0013 20 0.0004 compute\n"
      "load 0.1 10 0.93\n"
      "end 3.2\n");
  ASSERT_EQ(r.entities.size(), 2U);
  EXPECT_EQ(r.entities[0].index, 0U);
  EXPECT_EQ(r.entities[0].id, 10);
  EXPECT_EQ(r.entities[0].name, "pe0");
  EXPECT_EQ(r.entities[0].host, "cenju-0");
  EXPECT_EQ(r.entities[0].rank, 3);
  EXPECT_EQ(r.entities[1].index, 1U);
  EXPECT_EQ(r.entities[1].name, "node20");  // default name
  EXPECT_EQ(r.entities[1].host, "");
  EXPECT_EQ(r.entities[1].rank, 1);  // default rank: declaration order
  ASSERT_EQ(r.links.size(), 1U);
  EXPECT_EQ(r.links[0].id, 7);
  EXPECT_EQ(r.links[0].a, 0U);
  EXPECT_EQ(r.links[0].b, 1U);
  EXPECT_EQ(r.links[0].name, "bus");
  ASSERT_EQ(r.messages.size(), 2U);
  EXPECT_EQ(r.messages[0].send_s, 0.0012);
  EXPECT_EQ(r.messages[0].recv_s, 0.0013);
  EXPECT_EQ(r.messages[0].src, 0U);
  EXPECT_EQ(r.messages[0].dst, 1U);
  EXPECT_EQ(r.messages[0].bytes, 64U);
  EXPECT_EQ(r.messages[0].tag, 1);
  EXPECT_LT(r.messages[1].recv_s, 0);  // unknown
  EXPECT_EQ(r.messages[1].tag, -1);
  EXPECT_EQ(r.messages[1].bytes, 0U);
  ASSERT_EQ(r.loads.size(), 2U);
  EXPECT_EQ(r.loads[1].time_s, 0.1);
  EXPECT_EQ(r.loads[1].value, 0.93);
  ASSERT_EQ(r.states.size(), 1U);
  EXPECT_EQ(r.states[0].first.begin_s, 0.0013);
  EXPECT_EQ(r.states[0].first.end_s, 0.0013 + 0.0004);
  EXPECT_EQ(r.states[0].second, "compute");
  EXPECT_EQ(r.end_calls, 1);
  EXPECT_EQ(r.end_s, 3.2);
  // Events arrive in file order.
  ASSERT_EQ(r.log.size(), 9U);
  EXPECT_EQ(r.log[0].substr(0, 4), "node");
  EXPECT_EQ(r.log[2].substr(0, 4), "link");
  EXPECT_EQ(r.log[6].substr(0, 5), "state");
  EXPECT_EQ(r.log[8].substr(0, 3), "end");
}

TEST(NativeReader, Collectives) {
  const Recorder r = parse(kHead +
                           "coll 0.5 1 0.25 allreduce 64 root=0 group=\"w 12\"\n"
                           "coll 0.5 0 0 barrier 0\n");
  ASSERT_EQ(r.collectives.size(), 2U);
  EXPECT_EQ(r.collectives[0].begin_s, 0.5);
  EXPECT_EQ(r.collectives[0].end_s, 0.75);
  EXPECT_EQ(r.collectives[0].entity, 1U);
  EXPECT_EQ(r.collectives[0].bytes, 64U);
  EXPECT_EQ(r.collectives[0].root, 0);
  EXPECT_EQ(r.collective_strings[0], (std::pair<std::string, std::string>{"allreduce", "w 12"}));
  EXPECT_EQ(r.collectives[1].root, -1);
  EXPECT_EQ(r.collective_strings[1], (std::pair<std::string, std::string>{"barrier", ""}));
  EXPECT_EQ(r.end_s, 0.75);  // the observed end includes a collective's end
}

TEST(NativeReaderErrors, Collectives) {
  EXPECT_TRUE(fails_at(kHead + "coll 0 0 1 barrier\n", 4, 19, "missing field: expected 'coll TIME NODE DURATION NAME BYTES"));
  EXPECT_TRUE(fails_at(kHead + "coll 0 0 -1 barrier 0\n", 4, 10, "duration must be >= 0"));
  EXPECT_TRUE(fails_at(kHead + "coll 0 0 1 \"\" 0\n", 4, 12, "collective name is empty"));
  EXPECT_TRUE(fails_at(kHead + "coll 0 0 1 bcast -8\n", 4, 18, "byte count must be >= 0"));
  EXPECT_TRUE(fails_at(kHead + "coll 0 0 1 bcast 8 root=9\n", 4, 25, "node 9 is not declared"));
  EXPECT_TRUE(fails_at(kHead + "coll 0 0 1 bcast 8 grop=a\n", 4, 20, "did you mean 'group'"));
  EXPECT_TRUE(fails_at(kHead + "coll 0 5 1 bcast 8\n", 4, 8, "node 5 is not declared"));
  EXPECT_TRUE(fails_at(kHead + "coll 1e308 0 1.7e308 bcast 8\n", 4, 14, "overflows"));
  EXPECT_TRUE(fails_at(kHead + "colll 0 0 1 bcast 8\n", 4, 1, "did you mean 'coll'"));
}

TEST(NativeReader, ObservedEndIsTheLatestTimeIncludingStateEndsAndReceives) {
  EXPECT_EQ(parse(kHead + "load 0.5 0 1\n").end_s, 0.5);
  EXPECT_EQ(parse(kHead + "msg 0.5 0 1 8 recv=2.5\nload 1 0 1\n").end_s, 2.5);
  EXPECT_EQ(parse(kHead + "state 0.5 0 3 compute\nload 1 0 1\n").end_s, 3.5);
  EXPECT_EQ(parse("kntr 1\n").end_s, 0.0);
  // A declared end wins even when a state runs past it.
  EXPECT_EQ(parse(kHead + "state 0.5 0 3 compute\nend 1\n").end_s, 1.0);
}

TEST(NativeReader, QuotedStringsWithSpacesQuotesAndBackslashes) {
  const Recorder r = parse(
      "kntr 1\n"
      "node 0 0 name=\"pe 0\" host=\"a \\\"b\\\" \\\\c\"\n"
      "node 0 1 name=\"\" host=\"#not a comment\"\n"
      "state 0 0 1 \"wait for \\\"x\\\"\"\n"
      "state 0 1 1 \"a=b\"\n"
      "state 0 1 1 \"back\\slash\"\n");
  ASSERT_EQ(r.entities.size(), 2U);
  EXPECT_EQ(r.entities[0].name, "pe 0");
  EXPECT_EQ(r.entities[0].host, "a \"b\" \\c");
  EXPECT_EQ(r.entities[1].name, "");
  EXPECT_EQ(r.entities[1].host, "#not a comment");
  ASSERT_EQ(r.states.size(), 3U);
  EXPECT_EQ(r.states[0].second, "wait for \"x\"");
  EXPECT_EQ(r.states[1].second, "a=b");
  EXPECT_EQ(r.states[2].second, "back\\slash");  // an unknown escape keeps its backslash
}

TEST(NativeReader, TabsCommentsBlankLinesCrlfAndNoFinalNewline) {
  const Recorder plain = parse(kHead + "msg 0.5 0 1 8 tag=2\nload 1 1 0.5\nend 2\n");
  const Recorder messy = parse(
      "# leading comment\n\n   \n\tkntr\t1   # header\r\n"
      "node 0 0\r\n"
      "\t\tnode  0\t1 \t# second node\n"
      "   # indented comment\n"
      "msg\t0.5\t0\t1\t8\ttag=2\r\n"
      "load 1 1 0.5#glued comment\n"
      "end 2");
  EXPECT_EQ(plain.log, messy.log);
}

TEST(NativeReader, ByteOrderMarkIsSkipped) {
  EXPECT_EQ(parse("\xEF\xBB\xBFkntr 1\nnode 0 0\n").log, parse("kntr 1\nnode 0 0\n").log);
  // Only at the very start: elsewhere it is an ordinary (and here unknown) word.
  EXPECT_TRUE(fails_at("kntr 1\n\xEF\xBB\xBFnode 0 0\n", 2, 1, "unknown entry type"));
}

TEST(NativeReader, NumbersInExponentFormAndLeadingZeros) {
  const Recorder r = parse("kntr 1\nnode 0 007\nload 1.5e-3 7 2E0\nmsg 2e0 7 7 00064\n");
  ASSERT_EQ(r.entities.size(), 1U);
  EXPECT_EQ(r.entities[0].id, 7);
  EXPECT_EQ(r.loads[0].time_s, 1.5e-3);
  EXPECT_EQ(r.loads[0].value, 2.0);
  EXPECT_EQ(r.messages[0].send_s, 2.0);
  EXPECT_EQ(r.messages[0].bytes, 64U);
}

TEST(NativeReader, LargestIdsAndCountsAreAccepted) {
  const Recorder r = parse(
      "kntr 1\nnode 0 9223372036854775807\nnode 0 0\n"
      "msg 0 9223372036854775807 0 9223372036854775807 tag=-5\n");
  EXPECT_EQ(r.entities[0].id, INT64_MAX);
  EXPECT_EQ(r.messages[0].bytes, static_cast<std::uint64_t>(INT64_MAX));
  EXPECT_EQ(r.messages[0].tag, -5);
}

TEST(NativeReader, EqualTimesAreInOrder) {
  EXPECT_NO_THROW(parse(kHead + "load 1 0 1\nload 1 1 1\nend 1\n"));
}

// ------------------------------------------------------------------------------------------------
// Errors, each with its exact position
// ------------------------------------------------------------------------------------------------

TEST(NativeReaderErrors, EmptyAndHeaderless) {
  EXPECT_TRUE(fails_at("", 1, 1, "empty trace"));
  EXPECT_TRUE(fails_at("\n\n", 2, 1, "empty trace"));
  EXPECT_TRUE(fails_at("# only a comment\n", 1, 1, "empty trace"));
  EXPECT_TRUE(fails_at("node 0 0\n", 1, 1, "expected 'kntr 1'"));
  EXPECT_TRUE(fails_at("\n  hello world\n", 2, 3, "expected 'kntr 1' as the first entry, found 'hello'"));
}

TEST(NativeReaderErrors, HeaderVersion) {
  EXPECT_TRUE(fails_at("kntr\n", 1, 5, "missing field"));
  EXPECT_TRUE(fails_at("kntr 2\n", 1, 6, "newer"));
  EXPECT_TRUE(fails_at("kntr 0\n", 1, 6, "format version must be >= 1"));
  EXPECT_TRUE(fails_at("kntr -1\n", 1, 6, "format version must be >= 1"));
  EXPECT_TRUE(fails_at("kntr 1.0\n", 1, 6, "integer"));
  EXPECT_TRUE(fails_at("kntr 1 2\n", 1, 8, "unexpected extra field '2'"));
  EXPECT_TRUE(fails_at("kntr 1 version=1\n", 1, 8, "unknown option 'version'"));
  EXPECT_TRUE(fails_at("kntr 99999999999999999999\n", 1, 6, "too large"));
}

TEST(NativeReaderErrors, DuplicateHeader) {
  EXPECT_TRUE(fails_at("kntr 1\nnode 0 0\n  kntr 1\n", 3, 3, "'kntr' header given twice"));
}

TEST(NativeReaderErrors, BinaryContentNamesTheNulByte) {
  EXPECT_TRUE(fails_at(std::string("\0\x01\x02", 3), 1, 1, "NUL"));
  EXPECT_TRUE(fails_at(std::string("kntr 1\nnode 0 0 na\0me\n", 21), 2, 12, "NUL"));
  EXPECT_TRUE(fails_at(std::string("kntr 1\nnode 0 0 name=\"a\0\"\n", 25), 2, 17, "NUL"));
  // Also inside a comment, and in the whitespace between fields.
  EXPECT_TRUE(fails_at(std::string("kntr 1\n# abc\0\n", 13), 2, 6, "NUL"));
  EXPECT_TRUE(fails_at(std::string("kntr 1\nnode 0\t\0\n", 15), 2, 8, "NUL"));
}

TEST(NativeReaderErrors, UnknownEntryTypeListsTheValidOnesAndSuggests) {
  EXPECT_TRUE(fails_at(kHead + "mesg 0 0 1 5\n", 4, 1, "unknown entry type 'mesg'"));
  EXPECT_TRUE(fails_at(kHead + "mesg 0 0 1 5\n", 4, 1, "valid: node, link, loc, msg, load, state, coll, end"));
  EXPECT_TRUE(fails_at(kHead + "mesg 0 0 1 5\n", 4, 1, "did you mean 'msg'"));
  EXPECT_TRUE(fails_at(kHead + "  \"msg\" 0 0 1 5\n", 4, 3, "unknown entry type"));
}

TEST(NativeReaderErrors, MalformedTimes) {
  EXPECT_TRUE(fails_at(kHead + "load abc 0 1\n", 4, 6, "expected a time in seconds, found 'abc'"));
  EXPECT_TRUE(fails_at(kHead + "load 1e999 0 1\n", 4, 6, "out of range"));
  EXPECT_TRUE(fails_at(kHead + "load nan 0 1\n", 4, 6, "finite"));
  EXPECT_TRUE(fails_at(kHead + "load inf 0 1\n", 4, 6, "finite"));
  EXPECT_TRUE(fails_at(kHead + "load -1 0 1\n", 4, 6, "time must be >= 0"));
  EXPECT_TRUE(fails_at(kHead + "load 1.5s 0 1\n", 4, 6, "expected a time"));
  EXPECT_TRUE(fails_at(kHead + "load +1 0 1\n", 4, 6, "expected a time"));
  EXPECT_TRUE(fails_at(kHead + "load 0x10 0 1\n", 4, 6, "expected a time"));
  EXPECT_TRUE(fails_at(kHead + "load \"1\" 0 1\n", 4, 6, "expected a time"));
  EXPECT_TRUE(fails_at(kHead + "msg 1 0 1 8 recv=nan\n", 4, 18, "finite"));
  EXPECT_TRUE(fails_at(kHead + "msg 1 0 1 8 recv=-2\n", 4, 18, ">= 0"));
  EXPECT_TRUE(fails_at(kHead + "end inf\n", 4, 5, "finite"));
}

TEST(NativeReaderErrors, TimeGoingBackwards) {
  EXPECT_TRUE(fails_at(kHead + "load 0.5 0 1\nload 0.4 0 1\n", 5, 6, "time goes backwards: 0.4 after 0.5"));
  EXPECT_TRUE(fails_at(kHead + "load 0.5 0 1\nnode 0.1 5\n", 5, 6, "backwards"));
  EXPECT_TRUE(fails_at(kHead + "load 0.5 0 1\nend 0.25\n", 5, 5, "backwards"));
  // A receive time does not advance the clock, a state's end neither.
  EXPECT_NO_THROW(parse(kHead + "msg 0.5 0 1 8 recv=9\nstate 0.6 0 9 compute\nload 0.7 0 1\n"));
}

TEST(NativeReaderErrors, MalformedIntegers) {
  EXPECT_TRUE(fails_at(kHead + "msg 0 0 1 -1\n", 4, 11, "byte count must be >= 0, found -1"));
  EXPECT_TRUE(fails_at(kHead + "msg 0 0 1 99999999999999999999\n", 4, 11, "too large"));
  EXPECT_TRUE(fails_at(kHead + "msg 0 0 1 1.5\n", 4, 11, "expected byte count (an integer), found '1.5'"));
  EXPECT_TRUE(fails_at(kHead + "msg 0 0 1 1e3\n", 4, 11, "an integer"));
  EXPECT_TRUE(fails_at(kHead + "msg 0 0 1 8 tag=x\n", 4, 17, "expected tag"));
  EXPECT_TRUE(fails_at(kHead + "node 0 -3\n", 4, 8, "node id must be >= 0"));
  EXPECT_TRUE(fails_at(kHead + "node 0 9223372036854775808\n", 4, 8, "too large"));
  EXPECT_TRUE(fails_at(kHead + "node 0 x\n", 4, 8, "expected node id"));
  EXPECT_TRUE(fails_at(kHead + "node 0 5 rank=-1\n", 4, 15, "rank must be >= 0"));
  EXPECT_TRUE(fails_at(kHead + "node 0 5 rank=\"1\"\n", 4, 15, "expected rank"));
  EXPECT_TRUE(fails_at(kHead + "link 0 -1 0 1\n", 4, 8, "link id must be >= 0"));
  // 18 bytes that are not digits: refused, without arithmetic overflow on the way (UBSan).
  EXPECT_TRUE(fails_at(kHead + "msg 0 0 1 " + std::string(18, '\xff') + "\n", 4, 11, "expected byte count (an integer)"));
}

TEST(NativeReaderErrors, MalformedLoadsAndStates) {
  EXPECT_TRUE(fails_at(kHead + "load 0 0 -1\n", 4, 10, "load must be >= 0"));
  EXPECT_TRUE(fails_at(kHead + "load 0 0 nan\n", 4, 10, "expected a load value"));
  EXPECT_TRUE(fails_at(kHead + "load 0 0 1e999\n", 4, 10, "expected a load value"));
  EXPECT_TRUE(fails_at(kHead + "load 0 0 -inf\n", 4, 10, "expected a load value"));
  EXPECT_TRUE(fails_at(kHead + "state 0 0 -1 compute\n", 4, 11, "duration must be >= 0"));
  EXPECT_TRUE(fails_at(kHead + "state 0 0 nan compute\n", 4, 11, "expected a duration"));
  EXPECT_TRUE(fails_at(kHead + "state 1e308 0 1.7e308 compute\n", 4, 15, "overflows"));
  EXPECT_TRUE(fails_at(kHead + "state 0 0 1 \"\"\n", 4, 13, "state name is empty"));
}

TEST(NativeReaderErrors, UndeclaredAndDuplicateIds) {
  EXPECT_TRUE(fails_at(kHead + "load 0 7 1\n", 4, 8, "node 7 is not declared"));
  EXPECT_TRUE(fails_at(kHead + "msg 0 0 7 1\n", 4, 9, "node 7 is not declared"));
  EXPECT_TRUE(fails_at(kHead + "state 0 9 1 compute\n", 4, 9, "node 9 is not declared"));
  EXPECT_TRUE(fails_at(kHead + "link 0 1 0 2\n", 4, 12, "node 2 is not declared"));
  EXPECT_TRUE(fails_at(kHead + "node 0 1\n", 4, 8, "node 1 is declared twice"));
  EXPECT_TRUE(fails_at(kHead + "link 0 5 0 1\nlink 0 5 1 0\n", 5, 8, "link 5 is declared twice"));
  EXPECT_TRUE(fails_at(kHead + "link 0 5 1 1\n", 4, 12, "two different nodes"));
  // Node and link ids live in separate spaces.
  EXPECT_NO_THROW(parse(kHead + "link 0 0 0 1\nlink 0 1 1 0\n"));
}

TEST(NativeReaderErrors, ReceiveBeforeSend) {
  EXPECT_TRUE(fails_at(kHead + "msg 1 0 1 8 recv=0.5\n", 4, 18, "receive time is before the send time"));
  EXPECT_NO_THROW(parse(kHead + "msg 1 0 1 8 recv=1\n"));
}

TEST(NativeReaderErrors, MissingAndExtraFields) {
  EXPECT_TRUE(fails_at(kHead + "msg 0 0 1\n", 4, 10, "missing field: expected 'msg TIME SRC DST BYTES"));
  EXPECT_TRUE(fails_at(kHead + "node\n", 4, 5, "missing field"));
  EXPECT_TRUE(fails_at(kHead + "end\n", 4, 4, "missing field"));
  EXPECT_TRUE(fails_at(kHead + "node 0 name=x\n", 4, 7, "missing field"));
  // The column after a quoted last field counts its quotes and escapes.
  EXPECT_TRUE(fails_at(kHead + "state 0 0 \"a\\\"b\"\n", 4, 17, "missing field"));
  EXPECT_TRUE(fails_at(kHead + "load 0 0 1 2\n", 4, 12, "unexpected extra field '2'"));
  EXPECT_TRUE(fails_at(kHead + "end 1 2\n", 4, 7, "unexpected extra field"));
  EXPECT_TRUE(fails_at(kHead + "state 0 0 1 compute now\n", 4, 21, "unexpected extra field 'now'"));
}

TEST(NativeReaderErrors, Options) {
  EXPECT_TRUE(fails_at(kHead + "node 0 5 nmae=x\n", 4, 10, "unknown option 'nmae'"));
  EXPECT_TRUE(fails_at(kHead + "node 0 5 nmae=x\n", 4, 10, "valid options: name, host, rank"));
  EXPECT_TRUE(fails_at(kHead + "node 0 5 nmae=x\n", 4, 10, "did you mean 'name'"));
  EXPECT_TRUE(fails_at(kHead + "node 0 5 name=a name=b\n", 4, 17, "option 'name' given twice"));
  EXPECT_TRUE(fails_at(kHead + "node 0 5 name=\n", 4, 10, "option 'name' has no value"));
  EXPECT_TRUE(fails_at(kHead + "node 0 5 name=a extra\n", 4, 17, "expected key=value after the fields"));
  EXPECT_TRUE(fails_at(kHead + "load 0 0 1 x=1\n", 4, 12, "unknown option 'x': this entry takes none"));
  EXPECT_TRUE(fails_at(kHead + "state 0 0 1 compute x=1\n", 4, 21, "unknown option 'x'; valid options: loc"));
  EXPECT_TRUE(fails_at(kHead + "state 0 0 1 compute loc=3\n", 4, 25, "location 3 is not declared"));
  EXPECT_TRUE(fails_at(kHead + "end 1 x=1\n", 4, 7, "unknown option 'x'"));
  EXPECT_TRUE(fails_at(kHead + "msg 0 0 1 8 recv=1 recv=2\n", 4, 20, "given twice"));
  EXPECT_TRUE(fails_at(kHead + "link 0 5 0 1 nam=x\n", 4, 14, "did you mean 'name'"));
}

TEST(NativeReaderErrors, Quotes) {
  EXPECT_TRUE(fails_at(kHead + "node 0 5 name=\"abc\n", 4, 15, "unterminated quoted string"));
  EXPECT_TRUE(fails_at(kHead + "state 0 0 1 \"abc\n", 4, 13, "unterminated quoted string"));
  EXPECT_TRUE(fails_at(kHead + "state 0 0 1 \"abc\\\"\n", 4, 13, "unterminated quoted string"));
  EXPECT_TRUE(fails_at(kHead + "node 0 5 na\"me=x\n", 4, 12, "unexpected '\"' inside a word"));
  EXPECT_TRUE(fails_at(kHead + "node 0 5 name=\"a\"b\n", 4, 18, "expected a space after the closing quote"));
}

TEST(NativeReaderErrors, EntriesAfterEnd) {
  EXPECT_TRUE(fails_at(kHead + "end 1\nload 2 0 1\n", 5, 1, "entry after 'end'"));
  EXPECT_TRUE(fails_at(kHead + "end 1\nend 1\n", 5, 1, "entry after 'end'"));
  EXPECT_NO_THROW(parse(kHead + "end 1\n# a comment is fine\n\n"));
}

TEST(NativeReaderErrors, EchoedTextIsShortAndPrintable) {
  // A 100 kB token must not come back as a 100 kB error line; control bytes are escaped.
  const std::string huge(100000, '7');
  try {
    parse(kHead + "node 0 " + huge + "\n");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_LT(std::string(e.what()).size(), 300U) << e.what();
    EXPECT_EQ(e.diagnostics()[0].loc.column, 8);
  }
  try {
    parse(kHead + "load \x1b[31mred 0 1\n");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).find('\x1b'), std::string::npos) << e.what();
  }
}

TEST(NativeReaderErrors, VeryLongLineIsABoundedError) {
  const std::size_t mib = 1U << 20U;
  // In memory, with and without a final newline.
  std::string text = "kntr 1\n# " + std::string(17 * mib, 'a');
  EXPECT_TRUE(fails_at(text, 2, 1, "longer than 16 MiB"));
  text += "\nnode 0 0\n";
  EXPECT_TRUE(fails_at(text, 2, 1, "longer than 16 MiB"));
  // A line of exactly 16 MiB is still fine.
  EXPECT_NO_THROW(parse("kntr 1\n#" + std::string(16 * mib - 1, 'b') + "\nnode 0 0\n"));
}

// ------------------------------------------------------------------------------------------------
// Truncation and mutation
// ------------------------------------------------------------------------------------------------

const std::string kSmallValid =
    "kntr 1\n"
    "# comment\n"
    "node 0 0 name=\"pe 0\" host=h0 rank=0\n"
    "node 0 1 name=pe1\n"
    "link 0 0 0 1 name=l\n"
    "load 0 0 0.5\n"
    "msg 0.05 0 1 64 tag=3 recv=0.07\n"
    "state 0.07 1 0.02 \"compute \\\"x\\\"\"\n"
    "load 0.1 0 1\n"
    "end 0.2\n";

/// Runs the reader into a timeline, as `kanoko simulate` does. Returns "" when accepted, the
/// error otherwise; fails the test on anything but InputError or on a malformed diagnostic.
std::string read_into_timeline(const std::string& text) {
  try {
    TimelineBuilder b(TimelineOptions{});
    read_native_trace_text(text, kName, b);
    (void)b.take();
    return {};
  } catch (const InputError& e) {
    const auto& ds = e.diagnostics();
    EXPECT_EQ(ds.size(), 1U) << e.what();
    if (!ds.empty()) {
      EXPECT_EQ(ds[0].loc.file, kName);
      EXPECT_GE(ds[0].loc.line, 1) << e.what();
      EXPECT_GE(ds[0].loc.column, 1) << e.what();
      EXPECT_LE(ds[0].loc.line, static_cast<std::int64_t>(std::count(text.begin(), text.end(), '\n')) + 1);
    }
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_LT(what.size(), 400U) << what;
    return what.empty() ? std::string("?") : what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "non-InputError: " << e.what() << "\ninput:\n" << text;
    return "?";
  }
}

TEST(NativeReaderHostile, TruncatedAtEveryByte) {
  ASSERT_EQ(read_into_timeline(kSmallValid), "");
  int accepted = 0;
  for (std::size_t cut = 0; cut <= kSmallValid.size(); ++cut) {
    const std::string prefix = kSmallValid.substr(0, cut);
    if (read_into_timeline(prefix).empty()) ++accepted;
    // Cutting at a line end always leaves a valid trace once the header is in.
    if (cut >= 7 && (cut == kSmallValid.size() || kSmallValid[cut - 1] == '\n')) {
      EXPECT_EQ(read_into_timeline(prefix), "") << "cut at " << cut;
    }
  }
  EXPECT_GT(accepted, 10);
}

const std::vector<std::string> kMutationTokens{" ", "\n", "\"", "\\", "#", "=", "\t", "\r", "-", "e", ".", "9",
                                               "nan", "inf", "1e999", "99999999999999999999", "kntr 1\n", "end 1\n",
                                               "node 0 2\n", "name=", "recv=", "tag=", "\"\"", std::string(1, '\0'),
                                               "\xff", "msg 1e300 0 1 1\n", "state 0 0 1e300 compute\n"};

/// One to four random edits of a random seed, as a fuzzer would make them.
std::string mutated(const std::vector<std::string>& seeds, std::mt19937_64& rng) {
  std::string s = seeds[rng() % seeds.size()];
  const int ops = 1 + static_cast<int>(rng() % 4);
  for (int op = 0; op < ops; ++op) {
    const std::size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 6) {
      case 0:  // flip a bit
        if (pos < s.size()) s[pos] = static_cast<char>(s[pos] ^ static_cast<char>(1U << (rng() % 8)));
        break;
      case 1:  // insert a random byte
        s.insert(pos, 1, static_cast<char>(rng() % 256));
        break;
      case 2:  // insert an interesting token
        s.insert(pos, kMutationTokens[rng() % kMutationTokens.size()]);
        break;
      case 3:  // delete a range
        if (pos < s.size()) s.erase(pos, 1 + rng() % 8);
        break;
      case 4:  // truncate
        s.resize(pos);
        break;
      default: {  // duplicate a slice somewhere else
        if (pos < s.size()) {
          const std::string slice = s.substr(pos, 1 + rng() % 40);
          s.insert(rng() % (s.size() + 1), slice);
        }
      }
    }
  }
  return s;
}

TEST(NativeReaderHostile, DeterministicMutationFuzz) {
  // Seeds: the small trace and one that a writer produced.
  const std::vector<std::string> seeds{kSmallValid, kHead + "msg 0 0 1 10 tag=0 recv=1e-3\nstate 0.5 1 0.25 idle\n"};
  std::mt19937_64 rng(20240601);
  int accepted = 0, refused = 0;
  for (int iter = 0; iter < 6000; ++iter) {
    const std::string s = mutated(seeds, rng);
    if (read_into_timeline(s).empty()) {
      ++accepted;
    } else {
      ++refused;
    }
    if (HasFailure()) {
      ADD_FAILURE() << "iteration " << iter << " input:\n" << s;
      return;
    }
  }
  // Both outcomes must occur, or the mutations are not doing their job.
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 1000);
}

TEST(NativeReaderHostile, HugeTimesAreRefusedByTheTimelineNotByACrash) {
  // The reader takes any finite time; binning 1e300 s into 0.1 s intervals is impossible and must
  // be a located input error, not an allocation failure.
  const std::string msg = read_into_timeline(kHead + "msg 1e300 0 1 1\n");
  EXPECT_NE(msg.find("t.kntr:4:"), std::string::npos) << msg;
  const std::string end = read_into_timeline(kHead + "end 1e300\n");
  EXPECT_NE(end.find("t.kntr:4:"), std::string::npos) << end;
  const std::string state = read_into_timeline(kHead + "state 0 0 1e300 compute\n");
  EXPECT_NE(state.find("t.kntr:4:"), std::string::npos) << state;
}

// ------------------------------------------------------------------------------------------------
// Files
// ------------------------------------------------------------------------------------------------

TEST(NativeReaderFile, ReadsTheSameAsTextAcrossChunkBoundaries) {
  // Over 3 MiB in lines of varying length, so lines straddle the reader's 1 MiB chunks.
  std::string text = "kntr 1\n";
  for (int i = 0; i < 16; ++i) text += "node 0 " + std::to_string(i) + " name=\"node " + std::to_string(i) + "\"\n";
  std::mt19937 rng(7);
  double t = 0;
  while (text.size() < 3U * (1U << 20U)) {
    t += 0.001;
    const auto a = rng() % 16, b = (a + 1 + rng() % 15) % 16;
    text += "msg " + std::to_string(t) + " " + std::to_string(a) + " " + std::to_string(b) + " " +
            std::to_string(rng() % 100000) + "\n";
    if (rng() % 7 == 0) text += "# " + std::string(rng() % 300, 'c') + "\n";
  }
  text += "end " + std::to_string(t + 1);  // no final newline
  test::TempDir dir;
  const auto path = dir / "big.kntr";
  test::write_text(path, text);
  Recorder from_file;
  read_native_trace(path, from_file);
  const Recorder from_text = parse(text);
  EXPECT_GT(from_file.messages.size(), 50000U);
  EXPECT_EQ(from_file.log, from_text.log);
}

/// What reading gives: the event log, or the error.
std::string outcome(const std::function<void(Recorder&)>& read) {
  Recorder r;
  try {
    read(r);
  } catch (const InputError& e) {
    return std::string("error: ") + e.what();
  }
  std::string all;
  for (const std::string& line : r.log) all += line + "\n";
  return all;
}

TEST(NativeReaderFile, WorkerThreadsReadExactlyAsTheLineParserOnMutatedInput) {
  // The file reader pre-parses the common entries on worker threads in batches of whole lines;
  // whatever the input, the events and the error must be those of the line-by-line parser. Tiny
  // batches put batch boundaries everywhere.
  const std::vector<std::string> seeds{
      kSmallValid,
      kHead + "msg 0 0 1 10 tag=0 recv=1e-3\nstate 0.5 1 0.25 idle\n",
      kHead + "msg 0.1 0 1 10 recv=0.2 tag=-7\r\nmsg  0.1   1 0 5\t\nload 0.25 1 2.5e-1\nstate 0.3 0 1e-2 compute # c\n"
              "msg 0.4 1 0 000123456789012345678 tag=1\nload 0.5 0 -0\nstate 0.8 0 0.1 \"quoted name\"\n"
              "msg 0.9 0 1 3 recv=0.95\nend 2\n"};
  // Lines the workers pre-parse but the parser must refuse, each after a valid start.
  std::vector<std::string> cases;
  for (const char* bad : {"state 0.6 1 0 x=y", "msg 0.7 0 1 1 tag=1 tag=2", "msg 0.9 0 1 3 recv=0.85", "msg 0.9 0 7 3",
                          "load 0.9 5 1", "state 0.05 0 1 late", "load 0.9 0 -1", "msg 0.9 0 1 -3", "end 0.95\nmsg 1 0 1 1",
                          "state 1e308 0 1e308 x", "msg 0.9 0 1 1 tag=99999999999999999999"}) {
    cases.push_back(kHead + "msg 0.5 0 1 1\n" + bad + "\n");
  }
  std::mt19937_64 rng(20261122);
  test::TempDir dir;
  const auto path = dir / "m.kntr";
  int refused = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    const auto i = static_cast<std::size_t>(iter);
    const std::string s = i < seeds.size() ? seeds[i] : i < seeds.size() + cases.size() ? cases[i - seeds.size()] : mutated(seeds, rng);
    test::write_text(path, s);
    const std::string expected = outcome([&](Recorder& r) { read_native_trace_text(s, path.string(), r); });
    refused += expected.rfind("error: ", 0) == 0 ? 1 : 0;
    for (const TextReadOptions o : {TextReadOptions{1, 7}, TextReadOptions{3, 64}, TextReadOptions{2, 1 << 20}}) {
      const std::string got = outcome([&](Recorder& r) { read_native_trace(path, r, o); });
      if (got != expected) {
        ADD_FAILURE() << "threads " << o.threads << ", batches of " << o.batch_bytes << " bytes, iteration " << iter
                      << "\ninput:\n" << s << "\nexpected:\n" << expected << "\ngot:\n" << got;
        return;
      }
    }
  }
  // Both outcomes must occur, or the comparison proves little.
  EXPECT_GT(refused, 200);
  EXPECT_GT(1500 - refused, 30);
}

TEST(NativeReaderFile, ErrorsNameTheFile) {
  test::TempDir dir;
  const auto path = dir / "bad trace.kntr";
  test::write_text(path, kHead + "load 0 9 1\n");
  try {
    Recorder r;
    read_native_trace(path, r);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().at(0).loc.file, path.string());
    EXPECT_NE(std::string(e.what()).find(path.string() + ":4:8: error: node 9 is not declared"), std::string::npos)
        << e.what();
  }
}

TEST(NativeReaderFile, LongLineInAFileIsABoundedErrorWithItsLine) {
  test::TempDir dir;
  const auto path = dir / "long.kntr";
  test::write_text(path, "kntr 1\nnode 0 0\n#" + std::string(20U << 20U, 'x') + "\nend 1\n");
  try {
    Recorder r;
    read_native_trace(path, r);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().at(0).loc.file, path.string());
    EXPECT_EQ(e.diagnostics().at(0).loc.line, 3);
    EXPECT_NE(std::string(e.what()).find("16 MiB"), std::string::npos) << e.what();
  }
}

TEST(NativeReaderFile, MissingFileAndDirectory) {
  test::TempDir dir;
  Recorder r;
  try {
    read_native_trace(dir / "nope.kntr", r);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().at(0).loc.file, (dir / "nope.kntr").string());
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
  try {
    read_native_trace(dir.path(), r);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("directory"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(r.log.empty());
}

TEST(NativeReaderFile, OtherTraceFormatsAreRefusedAtTheirFirstLine) {
  // Real traces of other formats from ../shared must be refused cleanly, never half-read.
  const auto shared = test::shared_dir() / "traces";
  int checked = 0;
  for (const char* rel : {"chrome-json/stable-diffusion.json", "paje/ms.trace", "SOURCES.md"}) {
    const auto path = shared / rel;
    if (!std::filesystem::exists(path)) continue;
    Recorder r;
    try {
      read_native_trace(path, r);
      ADD_FAILURE() << rel << " accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.diagnostics().at(0).loc.file, path.string());
      EXPECT_GE(e.diagnostics().at(0).loc.line, 1);
    }
    EXPECT_TRUE(r.log.empty()) << rel;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no shared traces at " << shared;
}

TEST(NativeReader, ReturnsTheEntryThatSetsTheEnd) {
  Recorder r;
  // Entries are sorted: the first to reach the latest time sets the end, not the later ones at it.
  const FileLoc observed = read_native_trace_text("kntr 1\nnode 0 0\nnode 0 1\nmsg 0.5 0 1 10\nmsg 9000 0 1 10\n"
                                                  "msg 9000 1 0 10\n",
                                                  kName, r);
  EXPECT_EQ(observed.str(), "t.kntr:5:5");
  Recorder declared;
  EXPECT_EQ(read_native_trace_text("kntr 1\nnode 0 0\nmsg 0.5 0 0 10\nend 2\n", kName, declared).str(), "t.kntr:4:5");
}

TEST(NativeReaderErrors, DeclaredNodesAreCapped) {
  // One node more than kMaxEntities: refused at its line, not after exhausting memory.
  class Count final : public TraceSink {
   public:
    void on_entity(const Entity&) override { ++entities; }
    void on_link(const Link&) override {}
    void on_message(const Message&) override {}
    void on_load(const LoadSample&) override {}
    void on_state(const StateInterval&) override {}
    void on_end(double) override {}
    std::size_t entities = 0;
  } count;
  std::string text = "kntr 1\n";
  text.reserve(16 * (kMaxEntities + 2));
  for (std::size_t i = 0; i <= kMaxEntities; ++i) text += "node 0 " + std::to_string(i) + "\n";
  try {
    read_native_trace_text(text, kName, count);
    FAIL() << "expected the cap";
  } catch (const InputError& e) {
    const std::string where = kName + ":" + std::to_string(kMaxEntities + 2) + ":8: error: more than 1048576 nodes";
    EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
  }
  EXPECT_EQ(count.entities, kMaxEntities);
}

}  // namespace
}  // namespace kanoko::trace
