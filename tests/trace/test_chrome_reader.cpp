// The Chrome/Perfetto trace-event JSON reader: the shared files read with counts derived
// independently (python3's json module, whole-document: see the comment on kSharedFiles); B/E
// nesting, X, counters, metadata names, flows v1 and v2 across unordered thread buffers, bytes
// from args; array and object forms; truncated files; malformed JSON with line:column and byte
// offset; a small reordering window; mutated input never crashes; detection through the registry.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/trace/chrome_reader.hpp"
#include "src/trace/readers.hpp"
#include "src/trace/timeline.hpp"
#include "tests/support/test_support.hpp"
#include "tests/trace/stream_recorder.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

using testing::StreamRecorder;

ChromeSummary read_text(const std::string& text, StreamRecorder& rec, const ChromeOptions& options = {}) {
  return read_chrome_trace_text(text, "t.json", rec, options);
}

std::string error_of(const std::string& text, const ChromeOptions& options = {}) {
  StreamRecorder rec;
  try {
    read_chrome_trace_text(text, "bad.json", rec, options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

::testing::AssertionResult has_warning(const ChromeSummary& s, const std::string& part) {
  std::string all;
  for (const ReaderWarning& w : s.warnings) {
    if (w.str().find(part) != std::string::npos) return ::testing::AssertionSuccess();
    all += "\n  " + w.str();
  }
  return ::testing::AssertionFailure() << "no warning contains '" << part << "'; warnings:" << all;
}

// Expected figures per shared file, computed once with python3 (json.load of the whole file):
// entities = distinct (pid, tid) of non-M events; states = X events + B/E pairs matched per
// (pid, tid) in file order + B left open (ended at the end); flow messages = flow points (v1
// s/t/f keyed by cat + id, v2 bind_id) sorted by ts, each t or f joined to the last open point of
// its key (the rules of docs/trace-formats.md, written again in python for the check).
struct SharedFile {
  const char* name;
  std::uint64_t events, entities, processes, states, messages, metadata;
};
constexpr SharedFile kSharedFiles[] = {
    {"bing-truncated.json", 3919, 9, 4, 3169 + 10 + 1, 0, 7},
    {"flow.json", 5017, 9, 3, 1622 + 3, 846, 18},
    {"multiple_input_latency.json", 18023, 8, 3, 8011, 3048, 17},
    {"stable-diffusion.json", 12, 2, 2, 12, 0, 0},
    {"tracecompassLog_small.json", 82, 9, 9, 27, 12, 0},
};

TEST(ChromeReader, SharedFilesMatchIndependentCounts) {
  for (const SharedFile& f : kSharedFiles) {
    SCOPED_TRACE(f.name);
    StreamRecorder rec;
    const ChromeSummary s = read_chrome_trace(test::shared_dir() / "traces/chrome-json" / f.name, rec);
    EXPECT_TRUE(rec.well_formed());
    EXPECT_EQ(s.events, f.events);
    EXPECT_EQ(rec.entities.size(), f.entities);
    EXPECT_EQ(s.processes, f.processes);
    EXPECT_EQ(rec.states.size(), f.states);
    EXPECT_EQ(rec.messages.size(), f.messages);
    EXPECT_EQ(s.flow_messages, f.messages);
    EXPECT_EQ(s.metadata, f.metadata);
    for (const Message& m : rec.messages) EXPECT_GE(m.recv_s, m.send_s);
  }
}

TEST(ChromeReader, SharedNamesComeFromMetadataEvenAtTheEnd) {
  // multiple_input_latency.json names its threads in M events at the very end of the file.
  StreamRecorder rec;
  read_chrome_trace(test::shared_dir() / "traces/chrome-json/multiple_input_latency.json", rec);
  std::vector<std::string> names;
  for (const Entity& e : rec.entities) names.push_back(e.name);
  EXPECT_NE(std::find(names.begin(), names.end(), "Browser/CrBrowserMain"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "Browser/Chrome_InProcGpuThread"), names.end());
}

TEST(ChromeReader, NestedBeginEndAndComplete) {
  StreamRecorder rec;
  const ChromeSummary s = read_text(R"([
    {"ph":"B","pid":1,"tid":2,"ts":1000,"name":"outer"},
    {"ph":"B","pid":1,"tid":2,"ts":1500,"name":"inner"},
    {"ph":"X","pid":1,"tid":3,"ts":1200,"dur":300,"name":"work"},
    {"ph":"E","pid":1,"tid":2,"ts":2500},
    {"ph":"E","pid":1,"tid":2,"ts":4000},
    {"ph":"E","pid":1,"tid":2,"ts":4500}
  ])", rec);
  ASSERT_TRUE(rec.well_formed());
  ASSERT_EQ(rec.entities.size(), 2U);
  EXPECT_EQ(rec.entities[0].name, "pid 1/tid 2");
  EXPECT_EQ(rec.entities[0].id, 2);
  ASSERT_EQ(rec.states.size(), 3U);
  // Time order of the first stamps: outer (0), work (0.2 ms), inner (0.5 ms).
  EXPECT_EQ(rec.states[0].name, "outer");
  EXPECT_DOUBLE_EQ(rec.states[0].begin_s, 0.0);
  EXPECT_DOUBLE_EQ(rec.states[0].end_s, 3e-3);
  EXPECT_EQ(rec.states[1].name, "work");
  EXPECT_EQ(rec.states[1].entity, 1U);
  EXPECT_NEAR(rec.states[1].begin_s, 0.2e-3, 1e-12);
  EXPECT_NEAR(rec.states[1].end_s, 0.5e-3, 1e-12);
  EXPECT_EQ(rec.states[2].name, "inner");
  EXPECT_NEAR(rec.states[2].begin_s, 0.5e-3, 1e-12);
  EXPECT_NEAR(rec.states[2].end_s, 1.5e-3, 1e-12);
  EXPECT_EQ(s.states, 3U);
  EXPECT_TRUE(has_warning(s, "t.json:7:5: warning: 1x E without a matching B"));
  EXPECT_NEAR(rec.end_s, 3.5e-3, 1e-12);
}

TEST(ChromeReader, ObjectFormStringNumbersAndMetadataNames) {
  StreamRecorder rec;
  const ChromeSummary s = read_text(R"({"displayTimeUnit":"ns","otherData":{"x":[1,2,{"ph":"X"}]},
    "traceEvents":[
      {"ph":"X","pid":"Spans","tid":"main","ts":"10.5","dur":"2","name":"a"},
      {"ph":"X","pid":7,"tid":8,"ts":11,"dur":1,"name":"b"},
      {"ph":"M","pid":7,"tid":8,"name":"thread_name","args":{"name":"worker"}},
      {"ph":"M","pid":7,"tid":99,"name":"thread_name","args":{"name":"idle"}},
      {"ph":"M","pid":7,"name":"process_name","args":{"name":"renderer"}}
    ],
    "deviceProperties":[{"id":0}]})", rec);
  ASSERT_TRUE(rec.well_formed());
  ASSERT_EQ(rec.entities.size(), 2U);  // the named-only thread 99 has no events: no entity
  EXPECT_EQ(rec.entities[0].name, "pid Spans/tid main");
  EXPECT_EQ(rec.entities[1].name, "renderer/worker");
  EXPECT_EQ(s.metadata, 3U);
  ASSERT_EQ(rec.states.size(), 2U);
  EXPECT_DOUBLE_EQ(rec.states[0].begin_s, 0.0);
  EXPECT_NEAR(rec.states[0].end_s, 2e-6, 1e-15);  // ts stays in µs whatever displayTimeUnit says
}

TEST(ChromeReader, FlowsV1AcrossUnorderedThreadBuffersWithBytes) {
  // Chrome writes buffer by buffer: thread 2's events come first although they are later.
  StreamRecorder rec;
  ChromeOptions o;
  o.bytes_key = "args.data.size";
  const ChromeSummary s = read_text(R"([
    {"ph":"t","pid":1,"tid":2,"ts":300,"cat":"ipc","name":"m","id":"0x5"},
    {"ph":"f","pid":1,"tid":3,"ts":400,"cat":"ipc","name":"m","id":"0x5","bp":"e"},
    {"ph":"s","pid":1,"tid":1,"ts":100,"cat":"ipc","name":"m","id":"0x5","args":{"data":{"size":4096}}},
    {"ph":"s","pid":1,"tid":1,"ts":150,"cat":"other","name":"m","id":"0x5"},
    {"ph":"f","pid":1,"tid":2,"ts":50,"cat":"ipc","name":"m","id":"0x9"}
  ])", rec, o);
  ASSERT_TRUE(rec.well_formed());
  ASSERT_EQ(rec.messages.size(), 2U);
  // Entities in order of first appearance: tid 2, tid 3, tid 1.
  EXPECT_EQ(rec.messages[0].src, 2U);
  EXPECT_EQ(rec.messages[0].dst, 0U);
  EXPECT_NEAR(rec.messages[0].send_s, 50e-6, 1e-12);  // origin: the earliest ts (50)
  EXPECT_NEAR(rec.messages[0].recv_s, 250e-6, 1e-12);
  EXPECT_EQ(rec.messages[0].bytes, 4096U);
  EXPECT_EQ(rec.messages[1].src, 0U);
  EXPECT_EQ(rec.messages[1].dst, 1U);
  EXPECT_NEAR(rec.messages[1].recv_s, 350e-6, 1e-12);
  EXPECT_EQ(rec.messages[1].bytes, 4096U);
  EXPECT_EQ(s.flow_messages, 2U);
  EXPECT_TRUE(has_warning(s, "1x flow start (or last step) without an end"));  // cat "other"
  EXPECT_TRUE(has_warning(s, "1x flow end without a start"));                  // id 0x9
}

TEST(ChromeReader, FlowsV2BindIdAndDefaultZeroBytes) {
  StreamRecorder rec;
  const ChromeSummary s = read_text(R"([
    {"ph":"X","pid":1,"tid":1,"ts":0,"dur":10,"name":"post","bind_id":"0xa","flow_out":true,"args":{"bytes":64}},
    {"ph":"X","pid":2,"tid":5,"ts":20,"dur":10,"name":"relay","bind_id":"0xa","flow_in":true,"flow_out":true},
    {"ph":"X","pid":3,"tid":9,"ts":40,"dur":10,"name":"run","bind_id":"0xa","flow_in":true}
  ])", rec);
  ASSERT_TRUE(rec.well_formed());
  ASSERT_EQ(rec.messages.size(), 2U);
  EXPECT_EQ(rec.messages[0].src, 0U);
  EXPECT_EQ(rec.messages[0].dst, 1U);
  EXPECT_EQ(rec.messages[0].bytes, 0U);  // no bytes_key: 0
  EXPECT_EQ(rec.messages[1].src, 1U);
  EXPECT_EQ(rec.messages[1].dst, 2U);
  EXPECT_NEAR(rec.messages[1].send_s, 20e-6, 1e-12);
  EXPECT_NEAR(rec.messages[1].recv_s, 40e-6, 1e-12);
  EXPECT_EQ(s.flow_messages, 2U);
  EXPECT_EQ(s.processes, 3U);

  StreamRecorder rec2;
  ChromeOptions o;
  o.bytes_key = "bytes";
  read_text(R"([{"ph":"X","pid":1,"tid":1,"ts":0,"dur":1,"bind_id":1,"flow_out":true,"args":{"bytes":64}},
               {"ph":"X","pid":1,"tid":2,"ts":5,"dur":1,"bind_id":1,"flow_in":true}])", rec2, o);
  ASSERT_EQ(rec2.messages.size(), 1U);
  EXPECT_EQ(rec2.messages[0].bytes, 64U);
}

TEST(ChromeReader, CountersBecomeLoad) {
  const std::string text = R"([
    {"ph":"C","pid":1,"tid":1,"ts":0,"name":"mem","args":{"heap":10,"stack":2}},
    {"ph":"C","pid":1,"tid":1,"ts":100,"name":"mem","args":{"heap":30,"stack":4}},
    {"ph":"C","pid":1,"tid":1,"ts":200,"name":"cpu","args":{"value":0.5}}
  ])";
  StreamRecorder rec;
  ChromeSummary s = read_text(text, rec);
  EXPECT_EQ(s.counter, "mem.heap");  // default: the first series of the first counter
  ASSERT_EQ(rec.loads.size(), 2U);
  EXPECT_DOUBLE_EQ(rec.loads[1].value, 30.0);
  EXPECT_NEAR(rec.loads[1].time_s, 100e-6, 1e-12);

  StreamRecorder rec2;
  ChromeOptions o;
  o.counter = "mem.stack";
  s = read_text(text, rec2, o);
  ASSERT_EQ(rec2.loads.size(), 2U);
  EXPECT_DOUBLE_EQ(rec2.loads[0].value, 2.0);

  StreamRecorder rec3;
  o.counter = "cpu";
  s = read_text(text, rec3, o);
  ASSERT_EQ(rec3.loads.size(), 1U);
  EXPECT_DOUBLE_EQ(rec3.loads[0].value, 0.5);
  EXPECT_EQ(s.counter_samples, 1U);

  StreamRecorder rec4;
  o.counter = "gpu";
  s = read_text(text, rec4, o);
  EXPECT_TRUE(rec4.loads.empty());
  EXPECT_TRUE(has_warning(s, "counter 'gpu' is not in the trace"));
}

TEST(ChromeReader, TruncatedFilesReadWithAWarning) {
  const std::string whole = R"({"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":0,"dur":5,"name":"a"},
{"ph":"X","pid":1,"tid":1,"ts":10,"dur":5,"name":"b"},
{"ph":"X","pid":1,"tid":1,"ts":20,"dur":5,"name":"c"}]})";
  // Cut after the second event's comma: Chrome's usual shape of an unfinished file.
  const std::size_t cut = whole.find("\n{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":20");
  StreamRecorder rec;
  ChromeSummary s = read_text(whole.substr(0, cut), rec);
  EXPECT_EQ(rec.states.size(), 2U);
  EXPECT_EQ(s.truncated_at, static_cast<std::int64_t>(cut));
  EXPECT_TRUE(has_warning(s, "t.json:2:55: warning: 1x the file is truncated at byte " + std::to_string(cut)));

  // Cut inside the third event: the partial event is dropped.
  StreamRecorder rec2;
  s = read_text(whole.substr(0, cut + 20), rec2);
  EXPECT_EQ(rec2.states.size(), 2U);
  EXPECT_TRUE(has_warning(s, "t.json:3:1: warning: 1x event cut off by the truncation"));

  // Only the final '}' missing.
  StreamRecorder rec3;
  s = read_text(whole.substr(0, whole.size() - 1), rec3);
  EXPECT_EQ(rec3.states.size(), 3U);
  EXPECT_EQ(s.truncated_at, static_cast<std::int64_t>(whole.size() - 1));
}

TEST(ChromeReader, MalformedJsonIsAnErrorWithLineColumnAndOffset) {
  EXPECT_EQ(error_of("[{\"ph\":\"X\",\"pid\":1,\n \"ts\":12,,\"dur\":1}]"),
            "bad.json:2:10: error: malformed JSON: Missing a name for object member. (byte 29)");
  EXPECT_EQ(error_of("[{\"ph\":\"X\"}] x"),
            "bad.json:1:14: error: malformed JSON: The document root must not be followed by other values. (byte 13)");
  EXPECT_EQ(error_of("[{\"ph\":\"X\",\"ts\":1e}]"),
            "bad.json:1:19: error: malformed JSON: Miss exponent in number. (byte 18)");
  EXPECT_EQ(error_of(std::string("[{\"name\":\"a\0b\"}]", 16)),
            "bad.json:1:12: error: malformed JSON: Missing a closing quotation mark in string. (byte 11)");
  EXPECT_EQ(error_of("42"), "bad.json:1:3: error: expected a JSON array of events or an object with a \"traceEvents\" array");
  EXPECT_EQ(error_of("{\"other\":[]}"), "bad.json:1:1: error: no trace events: expected a JSON array of events or an "
                                        "object with a \"traceEvents\" array");
  EXPECT_EQ(error_of(""), "bad.json:1:1: error: malformed JSON: The document is empty. (byte 0)");
  // Truncated before the event array is no trace at all.
  EXPECT_NE(error_of("{\"meta\":{\"a\":").find("malformed JSON"), std::string::npos);
  EXPECT_NE(error_of(std::string(5000, '[')).find("nested deeper than 1000"), std::string::npos);
}

TEST(ChromeReader, SkippedEventsAreWarningsWithTheirLocation) {
  StreamRecorder rec;
  const ChromeSummary s = read_text("[{\"ph\":\"X\",\"pid\":1,\"dur\":1},\n 7,\n {\"pid\":1,\"ts\":1},\n"
                                    " {\"ph\":\"b\",\"pid\":1,\"ts\":1},{\"ph\":\"X\",\"pid\":1,\"ts\":1}]",
                                    rec);
  EXPECT_TRUE(has_warning(s, "t.json:1:2: warning: 1x event without a numeric \"ts\""));
  EXPECT_TRUE(has_warning(s, "t.json:2:3: warning: 1x element of the event array that is not an object"));
  EXPECT_TRUE(has_warning(s, "t.json:3:2: warning: 1x event without \"ph\""));
  EXPECT_TRUE(has_warning(s, "warning: 1x X event without a valid \"dur\""));
  EXPECT_EQ(s.ignored, 1U);
  EXPECT_EQ(rec.states.size(), 1U);
}

TEST(ChromeReader, SmallWindowKeepsOrderAndCutsLongSlices) {
  std::string text = "[{\"ph\":\"B\",\"pid\":1,\"tid\":1,\"ts\":0,\"name\":\"main\"}";
  for (int i = 0; i < 200; ++i) {
    const int tid = 2 + i % 3;
    text += ",{\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(tid) + ",\"ts\":" + std::to_string(10 + i * 10) +
            ",\"dur\":5,\"name\":\"w\"}";
  }
  text += ",{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":5000}]";
  StreamRecorder small;
  ChromeOptions o;
  o.max_held = 8;
  const ChromeSummary s = read_text(text, small, o);
  EXPECT_TRUE(small.well_formed());
  EXPECT_TRUE(s.warnings.empty());
  EXPECT_GT(small.states.size(), 201U);  // "main" was emitted in pieces
  EXPECT_NEAR(small.state_seconds(0, "main"), 5e-3, 1e-12);
  StreamRecorder big;
  read_text(text, big);
  EXPECT_EQ(big.states.size(), 201U);
  EXPECT_NEAR(big.state_seconds(0, "main"), 5e-3, 1e-12);
}

TEST(ChromeReader, MutatedAndTruncatedInputNeverCrashes) {
  const std::string base = test::read_text(test::shared_dir() / "traces/chrome-json/tracecompassLog_small.json") +
                           R"([{"ph":"C","pid":1,"ts":1,"name":"c","args":{"v":1}},
                               {"ph":"X","pid":1,"tid":1,"ts":2,"dur":1,"bind_id":1,"flow_out":true},
                               {"ph":"M","pid":1,"name":"process_name","args":{"name":"p"}}])";
  std::mt19937 rng(7);
  int accepted = 0, refused = 0;
  const auto attempt = [&](const std::string& text) {
    StreamRecorder rec;
    ChromeOptions o;
    o.max_held = 16;
    o.bytes_key = "bytes";
    try {
      read_chrome_trace_text(text, "m.json", rec, o);
      EXPECT_TRUE(rec.well_formed());
      ++accepted;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("m.json", 0), 0U) << e.what();
      ++refused;
    }
  };
  for (std::size_t cut = 0; cut < base.size(); cut += 97) attempt(base.substr(0, cut));
  const std::string bytes = "[]{}\",:0-e.\\ \n\x01\xff";
  for (int i = 0; i < 300; ++i) {
    std::string m = base;
    for (int k = 0; k < 3; ++k) m[rng() % m.size()] = bytes[rng() % bytes.size()];
    attempt(m);
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(refused, 0);
}

TEST(ChromeReader, RegistryDetectsAndInfoReads) {
  EXPECT_EQ(detect_format_text("  [{\"ph\":\"X\"}]"), "chrome");
  EXPECT_EQ(detect_format_text("{\n \"traceEvents\": []}"), "chrome");
  EXPECT_EQ(detect_format_text("[1, 2, 3]"), "");
  const auto path = test::shared_dir() / "traces/chrome-json/flow.json";
  StreamRecorder rec;
  const ReadReport report = read_trace(path, rec);
  EXPECT_EQ(report.format, "chrome");
  EXPECT_EQ(rec.messages.size(), 846U);
  EXPECT_FALSE(report.warning_lines().empty());

  const test::CommandResult r = test::run_kanoko({"info", path.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"format\":\"chrome\""), std::string::npos);
  EXPECT_NE(r.out.find("\"messages\":846"), std::string::npos);

  test::TempDir dir;
  test::write_text(dir / "bad.json", "[{\"ph\":\"X\",\n\"ts\":]");
  const test::CommandResult bad = test::run_kanoko({"info", (dir / "bad.json").string()});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("bad.json:2:6: error: malformed JSON"), std::string::npos) << bad.err;
}

TEST(ChromeReader, FeedsATimeline) {
  TimelineOptions options;
  options.interval_s = 0.5;
  TimelineBuilder builder(options);
  read_chrome_trace(test::shared_dir() / "traces/chrome-json/flow.json", builder);
  const Timeline tl = builder.take();
  EXPECT_EQ(tl.message_count, 846U);
  EXPECT_EQ(tl.entity_count(), 9U);
}

}  // namespace
}  // namespace kanoko::trace

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

TEST(ChromeReader, SinkRefusalNamesTheFile) {
  TimelineOptions options;
  options.interval_s = 1e-9;  // 1000 s of trace in 1 ns bins: too many bins
  TimelineBuilder builder(options);
  try {
    read_chrome_trace_text(R"([{"ph":"X","pid":1,"tid":1,"ts":0,"dur":1},{"ph":"X","pid":1,"tid":1,"ts":1e9,"dur":1}])",
                           "far.json", builder);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("far.json:", 0), 0U) << e.what();
    EXPECT_NE(std::string(e.what()).find("the trace is too long"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kanoko::trace

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

TEST(ChromeReader, ByteOrderMarkAndId2Flows) {
  StreamRecorder rec;
  const ChromeSummary s = read_text("\xEF\xBB\xBF[{\"ph\":\"s\",\"pid\":1,\"tid\":1,\"ts\":0,\"cat\":\"c\",\"id2\":{\"local\":\"0x1\"}},\n"
                                    "{\"ph\":\"f\",\"pid\":1,\"tid\":2,\"ts\":4,\"cat\":\"c\",\"id2\":{\"local\":\"0x1\"}},\n"
                                    "{\"ph\":\"f\",\"pid\":1,\"tid\":2,\"ts\":5,\"cat\":\"c\",\"id2\":{\"global\":\"0x1\"}}]",
                                    rec);
  ASSERT_EQ(rec.messages.size(), 1U);  // id2.local and id2.global are different ids
  EXPECT_EQ(rec.messages[0].dst, 1U);
  EXPECT_TRUE(has_warning(s, "t.json:3: warning: 1x flow end without a start"));
}

TEST(ChromeReader, NamesTheEventThatSetsTheEnd) {
  // One slice whose duration is corrupted stretches the trace: the summary points at its line.
  StreamRecorder rec;
  const ChromeSummary s = read_text("[\n"
                                    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10,\"name\":\"a\"},\n"
                                    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":9000000000,\"name\":\"a\"},\n"
                                    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":40,\"dur\":10,\"name\":\"a\"}\n"
                                    "]\n",
                                    rec);
  EXPECT_EQ(s.end_at.file, "t.json");
  EXPECT_EQ(s.end_at.line, 3);
}

}  // namespace
}  // namespace kanoko::trace
