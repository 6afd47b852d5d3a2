// trace::EventLog: a recorded stream replays as the reader delivered it, call for call, on every
// format we read; past its budget it holds nothing and refuses to replay.
#include "src/trace/event_log.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
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
namespace KANOKO_UNITY_ID {

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

/// A million messages (about 12 MB of batches: more than wait at once).
void many_messages(TraceSink& sink) {
  Entity e;
  sink.on_entity(e);
  e.index = 1;
  sink.on_entity(e);
  Message m;
  m.dst = 1;
  for (int i = 0; i < 1000000; ++i) {
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
  EXPECT_EQ(counter.messages, 1000000U);
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
  EXPECT_LE(counter.messages, 1000000U);
}

/// Messages and states with the values the compact records treat apart: times equal to the last
/// record's (bit for bit: 0 and -0 differ), no receive time against -0 and other negatives, tags
/// and locations at their defaults and extremes, integers at the LEB128 byte boundaries, and
/// state names that come back after more than sixteen others (out of the log's memory) or
/// within it, the empty name among them. `rounds` repeats it with other times.
void awkward_stream(TraceSink& sink, int rounds) {
  Entity e;
  sink.on_entity(e);
  const double times[] = {0.0, 0.0, -0.0, -0.0, 1e-300, 1e-300, 0.5, std::numeric_limits<double>::max(),
                          std::numeric_limits<double>::infinity()};
  const double receives[] = {-1.0, -0.0, 0.0, 2.5, -2.0, -1.0};
  const std::int64_t tags[] = {-1, 0, 1, -2, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()};
  const std::uint32_t indices[] = {0, 1, 127, 128, 16383, 16384, std::numeric_limits<std::uint32_t>::max()};
  const std::uint64_t sizes[] = {0, 127, 128, std::uint64_t{1} << 35U, std::numeric_limits<std::uint64_t>::max()};
  std::vector<std::string> names;
  for (int k = 0; k < 40; ++k) names.push_back(k == 7 ? std::string() : "state-" + std::string(static_cast<std::size_t>(k % 5), 'x') + std::to_string(k));
  std::size_t n = 0;
  for (int round = 0; round < rounds; ++round) {
    for (const double t : times) {
      for (int k = 0; k < 7; ++k, ++n) {
        Message m;
        m.send_s = t + static_cast<double>(round);
        m.recv_s = receives[n % std::size(receives)];
        m.src = indices[n % std::size(indices)];
        m.dst = indices[(n / 3) % std::size(indices)];
        m.bytes = sizes[n % std::size(sizes)];
        m.tag = tags[(n / 2) % std::size(tags)];
        m.location = indices[(n / 5) % std::size(indices)];
        sink.on_message(m);
        StateInterval st;
        st.begin_s = k % 2 == 0 ? m.send_s : t;
        st.end_s = st.begin_s + 1;
        st.entity = indices[(n / 2) % std::size(indices)];
        st.location = indices[(n / 7) % std::size(indices)];
        // Mostly a few names (kept), now and then one of the forty (past the log's memory).
        st.name = n % 9 == 0 ? names[(n / 9) % names.size()] : names[n % 3];
        sink.on_state(st);
      }
      sink.on_load(LoadSample{t, 0, 0.25});  // another kind between them keeps the last time
    }
  }
  sink.on_end(2.0 * rounds);
}

TEST(EventLog, CompactRecordsKeepEveryValueBitForBit) {
  Transcript direct;
  EventLog log(EventLog::default_budget());
  TeeSink tee(direct, log);
  awkward_stream(tee, 3);
  ASSERT_TRUE(log.complete());
  Transcript replayed;
  log.replay(replayed);
  EXPECT_EQ(replayed.calls, direct.calls);
  EXPECT_EQ(replayed.text, direct.text);
  // Replayed twice: the replay starts from the log's own first record.
  Transcript again;
  log.replay(again);
  EXPECT_EQ(again.text, direct.text);
}

TEST(PipeSink, BatchesStandAloneWhereTheyCutTheStream) {
  // Many megabytes of the awkward stream: batches cut it between records whose times and names
  // refer back to earlier ones.
  Transcript direct;
  awkward_stream(direct, 4000);
  Transcript piped;
  PipeSink pipe(piped);
  awkward_stream(pipe.input(), 4000);
  pipe.finish();
  EXPECT_EQ(piped.calls, direct.calls);
  EXPECT_TRUE(piped.text == direct.text) << "the piped stream differs from the direct one";
}

TEST(EventLog, AMessageOrAStateTakesAFewBytesMoreThanItsNumbers) {
  // A halo exchange's shape: each rank sends four messages at once, with receive times and sizes
  // but no tags or code locations, between states of two names.
  constexpr int kRanks = 10000;
  EventLog log(EventLog::default_budget());
  Entity e;
  for (int r = 0; r < kRanks; ++r) {
    e.index = static_cast<EntityIndex>(r);
    log.on_entity(e);
  }
  const std::size_t before = log.bytes();
  std::size_t messages = 0;
  std::size_t states = 0;
  for (int r = 0; r < kRanks; ++r) {
    const double t = 1e-4 * r;
    for (int k = 0; k < 4; ++k, ++messages) {
      Message m;
      m.send_s = t;
      m.recv_s = t + 7.4e-4;
      m.src = static_cast<EntityIndex>(r);
      m.dst = static_cast<EntityIndex>((r + 1 + 99 * k) % kRanks);
      m.bytes = 8192;
      log.on_message(m);
    }
    for (const char* name : {"compute", "idle"}) {
      StateInterval st;
      st.begin_s = t;
      st.end_s = t + 1e-3;
      st.entity = static_cast<EntityIndex>(r);
      st.name = name;
      log.on_state(st);
      ++states;
    }
  }
  const double per_event = static_cast<double>(log.bytes() - before) / static_cast<double>(messages + states);
  // Whole, a message took 45 bytes and such a state 33-36.
  EXPECT_LT(per_event, 20.0);
}

}  // namespace
}  // namespace kanoko::trace
