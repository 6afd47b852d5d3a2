// The `coll` entry of the native trace (collectives, written by libkanoko-capture): parsing,
// round trip through the writer, errors with their positions, and sinks that ignore collectives.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trace/native_writer.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

/// Keeps collectives (with copies of their strings) and counts the other events.
class CollectiveRecorder final : public TraceSink {
 public:
  struct Entry {
    Collective c;
    std::string name;
    std::string group;
  };
  std::vector<Entry> collectives;
  int messages = 0;
  double end_s = -1;

  void on_entity(const Entity&) override {}
  void on_link(const Link&) override {}
  void on_message(const Message&) override { ++messages; }
  void on_load(const LoadSample&) override {}
  void on_state(const StateInterval&) override {}
  void on_collective(const Collective& c) override {
    collectives.push_back(Entry{c, std::string(c.name), std::string(c.group)});
  }
  void on_end(double end) override { end_s = end; }
};

/// A sink written before collectives existed: it does not override on_collective.
class OldSink final : public TraceSink {
 public:
  int events = 0;
  void on_entity(const Entity&) override { ++events; }
  void on_link(const Link&) override { ++events; }
  void on_message(const Message&) override { ++events; }
  void on_load(const LoadSample&) override { ++events; }
  void on_state(const StateInterval&) override { ++events; }
  void on_end(double) override { ++events; }
};

const char* kTrace =
    "kntr 1\n"
    "node 0 10 name=a\n"
    "node 0 11 name=b\n"
    "node 0 12 name=c\n"
    "msg 0.5 10 11 64 tag=1 recv=0.6\n"
    "coll 1 10 0.25 bcast 800 root=12 group=w.0\n"
    "coll 1.1 11 0.15 bcast 800 root=12 group=w.0\n"
    "coll 1.2 12 0.05 \"my op\" 0 group=\"sub comm.3\"\n"
    "coll 1.3 12 0 barrier 0\n"
    "end 2\n";

TEST(NativeCollective, ParsesEveryField) {
  CollectiveRecorder r;
  read_native_trace_text(kTrace, "c.kntr", r);
  ASSERT_EQ(r.collectives.size(), 4U);
  const auto& a = r.collectives[0];
  EXPECT_EQ(a.c.begin_s, 1.0);
  EXPECT_EQ(a.c.end_s, 1.25);
  EXPECT_EQ(a.c.entity, 0U);
  EXPECT_EQ(a.name, "bcast");
  EXPECT_EQ(a.c.bytes, 800U);
  EXPECT_EQ(a.c.root, 2);  // entity index of node 12
  EXPECT_EQ(a.group, "w.0");
  EXPECT_EQ(r.collectives[1].c.entity, 1U);
  EXPECT_EQ(r.collectives[2].name, "my op");
  EXPECT_EQ(r.collectives[2].group, "sub comm.3");
  EXPECT_EQ(r.collectives[3].c.root, -1);
  EXPECT_EQ(r.collectives[3].group, "");
  EXPECT_EQ(r.messages, 1);
  EXPECT_EQ(r.end_s, 2.0);
}

TEST(NativeCollective, SinksWithoutCollectivesStillReadTheTrace) {
  OldSink old;
  read_native_trace_text(kTrace, "c.kntr", old);
  EXPECT_EQ(old.events, 3 + 1 + 1);  // 3 nodes, 1 message, the end
  TimelineBuilder b(TimelineOptions{});
  read_native_trace_text(kTrace, "c.kntr", b);
  const Timeline t = b.take();
  (void)t;
}

TEST(NativeCollective, WriterRoundTripIsExact) {
  CollectiveRecorder first;
  std::ostringstream out;
  NativeWriter w(out);
  read_native_trace_text(kTrace, "c.kntr", w);
  read_native_trace_text(out.str(), "w.kntr", first);
  CollectiveRecorder original;
  read_native_trace_text(kTrace, "c.kntr", original);
  ASSERT_EQ(first.collectives.size(), original.collectives.size());
  for (std::size_t i = 0; i < first.collectives.size(); ++i) {
    const auto& x = first.collectives[i];
    const auto& y = original.collectives[i];
    EXPECT_EQ(x.c.begin_s, y.c.begin_s);
    EXPECT_EQ(x.c.end_s, y.c.end_s);
    EXPECT_EQ(x.c.entity, y.c.entity);
    EXPECT_EQ(x.c.bytes, y.c.bytes);
    EXPECT_EQ(x.c.root, y.c.root);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.group, y.group);
  }
}

/// The error for `line` (appended to a valid header) names this column and holds `needle`.
void expect_error(const std::string& line, std::int64_t column, const std::string& needle) {
  const std::string text = "kntr 1\nnode 0 1\nnode 0 2\n" + line + "\n";
  CollectiveRecorder r;
  try {
    read_native_trace_text(text, "e.kntr", r);
    ADD_FAILURE() << "accepted: " << line;
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1U) << e.what();
    const Diagnostic& d = e.diagnostics()[0];
    EXPECT_EQ(d.loc.line, 4) << e.what();
    EXPECT_EQ(d.loc.column, column) << line << " -> " << e.what();
    EXPECT_NE(d.message.find(needle), std::string::npos) << e.what();
  }
}

TEST(NativeCollective, MalformedEntriesAreRefusedWithTheirPosition) {
  expect_error("coll 1 3 0.1 bcast 8", 8, "3");                        // undeclared node
  expect_error("coll 1 1 -0.1 bcast 8", 10, "duration");               // negative duration
  expect_error("coll 1 1 0.1 bcast", 19, "coll TIME NODE DURATION");   // missing bytes: end of line
  expect_error("coll 1 1 0.1 bcast -8", 20, "byte count");             // negative bytes
  expect_error("coll 1 1 0.1 bcast 8 root=9", 27, "node 9");           // undeclared root: its value
  expect_error("coll 1 1 0.1 bcast 8 size=2", 22, "size");             // unknown option
  expect_error("coll -1 1 0.1 bcast 8", 6, "");                        // negative time
}

TEST(NativeCollective, TimeMustNotGoBackwards) {
  const std::string text = "kntr 1\nnode 0 1\nstate 2 1 0.1 compute\ncoll 1 1 0.1 barrier 0\n";
  CollectiveRecorder r;
  EXPECT_THROW(read_native_trace_text(text, "b.kntr", r), InputError);
}

}  // namespace
}  // namespace kanoko::trace
