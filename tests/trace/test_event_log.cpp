// trace::EventLog: a recorded stream replays as the reader delivered it, call for call, on every
// format we read; past its budget it holds nothing and refuses to replay.
#include "src/trace/event_log.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "src/trace/readers.hpp"
#include "src/trace/tee.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::trace {
namespace {

/// Every call and every field as text (times as hexadecimal floats: exact).
class Transcript final : public TraceSink {
 public:
  std::string text;
  std::size_t calls = 0;

  void on_entity(const Entity& e) override {
    line("entity", std::to_string(e.index) + ' ' + std::to_string(e.id) + ' ' + e.name + '|' + e.host + ' ' + std::to_string(e.rank));
    for (const Enclosing& x : e.above_host) text += " above " + x.type + '|' + x.name + '\n';
  }
  void on_link(const Link& l) override {
    line("link", std::to_string(l.id) + ' ' + std::to_string(l.a) + ' ' + std::to_string(l.b) + ' ' + l.name);
  }
  void on_message(const Message& m) override {
    line("message", hex(m.send_s) + ' ' + hex(m.recv_s) + ' ' + std::to_string(m.src) + ' ' + std::to_string(m.dst) + ' ' +
                        std::to_string(m.bytes) + ' ' + std::to_string(m.tag) + ' ' + std::to_string(m.location));
  }
  void on_load(const LoadSample& s) override { line("load", hex(s.time_s) + ' ' + std::to_string(s.entity) + ' ' + hex(s.value)); }
  void on_state(const StateInterval& s) override {
    line("state", hex(s.begin_s) + ' ' + hex(s.end_s) + ' ' + std::to_string(s.entity) + ' ' + std::string(s.name) + ' ' +
                      std::to_string(s.location));
  }
  void on_location(LocationIndex index, const CodeLocation& l) override {
    line("location", std::to_string(index) + ' ' + std::string(l.file) + ':' + std::to_string(l.line) + ' ' +
                         std::string(l.function) + ' ' + std::to_string(l.caller));
  }
  void on_collective(const Collective& c) override {
    line("collective", hex(c.begin_s) + ' ' + hex(c.end_s) + ' ' + std::to_string(c.entity) + ' ' + std::string(c.name) + ' ' +
                           std::to_string(c.bytes) + ' ' + std::to_string(c.root) + ' ' + std::string(c.group));
  }
  void on_collective_records() override { line("collective_records", ""); }
  void on_marker(const Marker& m) override {
    line("marker", hex(m.time_s) + ' ' + std::to_string(m.entity) + ' ' + std::string(m.name));
  }
  void on_end(double end_s) override { line("end", hex(end_s)); }

 private:
  static std::string hex(double v) {
    char b[40];
    std::snprintf(b, sizeof b, "%a", v);
    return b;
  }
  void line(const char* kind, const std::string& rest) {
    ++calls;
    text += kind;
    text += ' ';
    text += rest;
    text += '\n';
  }
};

/// Reads `path` twice through the log: the transcript of the read and of its replay.
struct Both {
  Transcript read;
  Transcript replayed;
  std::size_t log_bytes = 0;
};

Both read_and_replay(const std::filesystem::path& path, std::size_t budget = EventLog::default_budget()) {
  Both b;
  EventLog log(budget);
  TeeSink tee(b.read, log);
  read_trace(path, tee);
  EXPECT_TRUE(log.complete()) << path;
  b.log_bytes = log.bytes();
  if (log.complete()) log.replay(b.replayed);
  return b;
}

std::vector<std::filesystem::path> every_format() {
  const auto shared = test::shared_dir() / "traces";
  const auto ours = test::source_dir() / "traces";
  return {shared / "chrome-json/flow.json",
          shared / "chrome-json/tracecompassLog_small.json",
          shared / "otf2/ping-pong-otf2/traces.otf2",
          shared / "paje/g5k.trace",
          shared / "paje/native_sample.trace",
          shared / "paraver/lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv",
          shared / "simgrid-ti/smpi_replay.txt",
          ours / "fib22-ring.kntr",
          ours / "smpi/late4-locations.trace",
          ours / "smpi/alltoall8-fattree.trace",
          ours / "simgrid/torus8.trace"};
}

TEST(EventLog, ReplayIsTheReadCallForCallOnEveryFormat) {
  for (const auto& path : every_format()) {
    SCOPED_TRACE(path.string());
    const Both b = read_and_replay(path);
    EXPECT_GT(b.read.calls, 10U);
    EXPECT_EQ(b.replayed.calls, b.read.calls);
    EXPECT_TRUE(b.replayed.text == b.read.text) << "the replay differs from the read";
    EXPECT_GT(b.log_bytes, 0U);
  }
}

TEST(EventLog, TheLogCarriesEveryKindOfCall) {
  // Locations, collectives and their records, loads, links, markers: each format brings some.
  std::string all;
  for (const auto& path : every_format()) all += read_and_replay(path).replayed.text;
  for (const char* kind : {"entity ", "link ", "message ", "state ", "location ", "collective ", "collective_records ", "marker ", "end ",
                           " above "}) {
    EXPECT_NE(all.find(std::string("\n") + kind), std::string::npos) << kind;
  }
}

TEST(EventLog, PastItsBudgetItHoldsNothingAndRefusesToReplay) {
  const auto path = test::source_dir() / "traces/fib22-ring.kntr";
  const Both whole = read_and_replay(path);
  ASSERT_GT(whole.log_bytes, 1U << 20);
  EventLog log(whole.log_bytes / 2);  // runs out half-way through
  read_trace(path, log);
  EXPECT_FALSE(log.complete());
  EXPECT_TRUE(log.over_budget());
  EXPECT_EQ(log.bytes(), 0U);
  Transcript t;
  EXPECT_THROW(log.replay(t), std::logic_error);
  EXPECT_EQ(t.calls, 0U);
}

TEST(EventLog, AStreamWithoutItsEndDoesNotReplay) {
  EventLog log(EventLog::default_budget());
  log.on_entity(Entity{});
  EXPECT_FALSE(log.complete());
  Transcript t;
  EXPECT_THROW(log.replay(t), std::logic_error);
  log.on_end(1.0);
  EXPECT_TRUE(log.complete());
  log.replay(t);
  EXPECT_EQ(t.calls, 2U);
}

TEST(PipeSink, DeliversTheStreamInOrderOnItsThread) {
  for (const auto& path : every_format()) {
    SCOPED_TRACE(path.string());
    Transcript direct;
    read_trace(path, direct);
    Transcript piped;
    PipeSink pipe(piped);
    read_trace(path, pipe.input());
    pipe.finish();
    EXPECT_EQ(piped.calls, direct.calls);
    EXPECT_TRUE(piped.text == direct.text) << "the piped stream differs from the read";
  }
}

/// Counts messages, slowly enough that the feeding side waits for room; throws at `fail_at`.
class SlowCounter final : public TraceSink {
 public:
  explicit SlowCounter(std::size_t fail_at = 0) : fail_at_(fail_at) {}
  std::size_t messages = 0;
  bool ended = false;
  void on_entity(const Entity&) override {}
  void on_link(const Link&) override {}
  void on_message(const Message& m) override {
    if (++messages == fail_at_) throw std::runtime_error("sink failed at message " + std::to_string(messages));
    if (messages % 20000 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    last_ = m.send_s;
  }
  void on_load(const LoadSample&) override {}
  void on_state(const StateInterval&) override {}
  void on_end(double) override { ended = true; }

 private:
  std::size_t fail_at_;
  double last_ = 0;
};

/// 400,000 messages (about 18 MB of batches: more than wait at once).
void many_messages(TraceSink& sink) {
  Entity e;
  sink.on_entity(e);
  e.index = 1;
  sink.on_entity(e);
  Message m;
  m.dst = 1;
  for (int i = 0; i < 400000; ++i) {
    m.send_s = 1e-6 * i;
    sink.on_message(m);
  }
  sink.on_end(1.0);
}

TEST(PipeSink, AFeederFasterThanItsSinkWaitsAndLosesNothing) {
  SlowCounter counter;
  PipeSink pipe(counter);
  many_messages(pipe.input());
  pipe.finish();
  EXPECT_EQ(counter.messages, 400000U);
  EXPECT_TRUE(counter.ended);
}

TEST(PipeSink, WhatTheSinkThrowsComesOutOfFinish) {
  SlowCounter counter(1000);
  PipeSink pipe(counter);
  many_messages(pipe.input());  // the feeding side never blocks for good on a failed sink
  try {
    pipe.finish();
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "sink failed at message 1000");
  }
  EXPECT_EQ(counter.messages, 1000U) << "the rest of the stream is dropped";
  EXPECT_FALSE(counter.ended);
}

TEST(PipeSink, DestroyedWithoutFinishItStopsItsThread) {
  SlowCounter counter;
  {
    PipeSink pipe(counter);
    many_messages(pipe.input());
  }  // as when the feeding side throws: no hang, no delivery after this
  EXPECT_LE(counter.messages, 400000U);
}

}  // namespace
}  // namespace kanoko::trace
