// survey_trace keeps the process's last survey (src/ingest/survey.hpp): asked again for the same
// files, reader, options and window it answers without reading, and anything that makes a
// different survey (the file's content and time, the options, the window) reads again.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "src/ingest/infer.hpp"
#include "src/ingest/schema.hpp"
#include "src/ingest/survey.hpp"
#include "src/mapping/mapping.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::ingest {
namespace KANOKO_UNITY_ID {

/// A native trace of two nodes and `messages` messages from 0 to 1, one every 0.1 s.
std::string two_nodes(int messages) {
  std::string text = "kntr 1\nnode 0 0 name=a\nnode 0 1 name=b\n";
  for (int k = 0; k < messages; ++k) {
    text += "msg " + std::to_string(0.1 * k) + " 0 1 40 recv=" + std::to_string(0.1 * k + 0.05) + "\n";
  }
  return text;
}

TEST(SurveyMemo, TheSameSurveyIsAnsweredWithoutReadingAndAChangeReadsAgain) {
  test::TempDir dir;
  const auto path = dir / "t.kntr";
  test::write_text(path, two_nodes(3));
  const auto written = std::filesystem::last_write_time(path);
  const TraceSurvey first = survey_trace(path, "auto", trace::ReaderOptions{});
  EXPECT_EQ(first.messages, 3U);

  // Same size and modification time, other content: answered from the memo, so not read (what
  // the memo relies on is the file's size and time, as make does).
  std::string other = two_nodes(3);
  other.replace(other.find("name=a"), 6, "name=c");
  test::write_text(path, other);
  std::filesystem::last_write_time(path, written);
  EXPECT_EQ(survey_trace(path, "native", trace::ReaderOptions{}).entities.at(0).name, "a") << "read again";
  trace::ReaderOptions one_thread;
  one_thread.threads = 1;  // threads change the speed, not the events
  EXPECT_EQ(survey_trace(path, "auto", one_thread).entities.at(0).name, "a") << "read again";

  // A window, other reader options, a newer file: read again.
  TimeWindow window;
  window.to_s = 0.15;
  EXPECT_EQ(survey_trace(path, "auto", trace::ReaderOptions{}, window).entities.at(0).name, "c");
  trace::ReaderOptions other_options;
  other_options.paje.entity_type = "MPI";
  EXPECT_EQ(survey_trace(path, "auto", other_options).entities.at(0).name, "c");
  test::write_text(path, two_nodes(4));
  std::filesystem::last_write_time(path, written + std::chrono::seconds(1));
  EXPECT_EQ(survey_trace(path, "auto", trace::ReaderOptions{}).messages, 4U);
}

/// The timeline of `path` with the mapping inferred for it, read once from the file and once
/// replayed from the inference's kept stream: equal bit for bit, and the replay was taken.
void expect_replay_is_the_read(const std::filesystem::path& path, const TimeWindow& window = {}) {
  SCOPED_TRACE(path.string() + (window.whole() ? "" : " (a window)"));
  InferOptions io;
  io.keep_events_bytes = trace::EventLog::default_budget();
  io.window = window;  // written into the mapping as [trace] from / to
  const mapping::Mapping m = mapping::parse_mapping_text(infer_mapping(path, io).text, "inferred");
  SelectionReport replayed_report;
  const trace::Timeline replayed = read_body_timeline(path, m, &replayed_report);
  EXPECT_FALSE(take_survey_events(path, "auto", trace::ReaderOptions{}, window)) << "the kept stream is handed over once";
  SelectionReport read_report;
  const trace::Timeline read = read_body_timeline(path, m, &read_report);  // nothing kept: the file
  ASSERT_EQ(replayed.bin_count, read.bin_count);
  EXPECT_EQ(replayed.interval_s, read.interval_s);
  EXPECT_EQ(replayed.end_s, read.end_s);
  EXPECT_TRUE(replayed.busy_s == read.busy_s);
  EXPECT_TRUE(replayed.comm_s == read.comm_s);
  EXPECT_TRUE(replayed.idle_s == read.idle_s);
  EXPECT_TRUE(replayed.load == read.load);
  EXPECT_EQ(replayed.pair_begin, read.pair_begin);
  ASSERT_EQ(replayed.pairs.size(), read.pairs.size());
  for (std::size_t i = 0; i < read.pairs.size(); ++i) {
    EXPECT_EQ(replayed.pairs[i].bytes, read.pairs[i].bytes);
    EXPECT_EQ(replayed.pairs[i].src, read.pairs[i].src);
  }
  EXPECT_EQ(replayed.message_count, read.message_count);
  EXPECT_EQ(replayed_report.states, read_report.states);
  EXPECT_EQ(replayed_report.format, read_report.format);
  EXPECT_EQ(replayed_report.survey.read.messages_with_bytes, read_report.survey.read.messages_with_bytes);
  EXPECT_EQ(replayed_report.survey.messages, read_report.survey.messages);
  EXPECT_EQ(replayed_report.survey.end_s, read_report.survey.end_s);
  EXPECT_GT(read.message_count + read.state_count, 0U);
}

TEST(SurveyMemo, TheInferencesKeptStreamReplaysAsTheTimelineRead) {
  for (const char* name : {"smpi/halo2d-16-slow5.trace", "smpi/late4-locations.trace", "fib22-torus.kntr"}) {
    expect_replay_is_the_read(test::source_dir() / "traces" / name);
  }
  expect_replay_is_the_read(test::shared_dir() / "traces/paraver/lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv");
  expect_replay_is_the_read(test::shared_dir() / "traces/chrome-json/flow.json");
  // A window: the stream is kept before it, and replayed through it.
  const auto halo = test::source_dir() / "traces/smpi/halo2d-16-slow5.trace";
  const double end = survey_trace(halo, "auto", trace::ReaderOptions{}).end_s;
  TimeWindow window;
  window.from_s = 0.2 * end;
  window.to_s = 0.7 * end;
  expect_replay_is_the_read(halo, window);
}

TEST(SurveyMemo, AKeptStreamIsForgottenWhenTheFileChangesOrNothingNeedsIt) {
  test::TempDir dir;
  const auto path = dir / "t.kntr";
  test::write_text(path, two_nodes(5));
  (void)survey_trace(path, "auto", trace::ReaderOptions{}, {}, trace::EventLog::default_budget());
  const std::optional<RecordedRead> kept = take_survey_events(path, "auto", trace::ReaderOptions{});
  ASSERT_TRUE(kept);
  EXPECT_TRUE(kept->events->complete());
  EXPECT_EQ(kept->report.format, "native");
  EXPECT_FALSE(take_survey_events(path, "auto", trace::ReaderOptions{})) << "handed over once";

  // A survey without keeping drops the stream; another window or a newer file is not replayed.
  (void)survey_trace(path, "auto", trace::ReaderOptions{}, {}, trace::EventLog::default_budget());
  TimeWindow window;
  window.to_s = 0.25;
  EXPECT_FALSE(take_survey_events(path, "auto", trace::ReaderOptions{}, window));
  test::write_text(path, two_nodes(6));
  std::filesystem::last_write_time(path, std::filesystem::last_write_time(path) + std::chrono::seconds(2));
  EXPECT_FALSE(take_survey_events(path, "auto", trace::ReaderOptions{})) << "the file changed";
  (void)survey_trace(path, "auto", trace::ReaderOptions{}, {}, trace::EventLog::default_budget());
  forget_survey_events();
  EXPECT_FALSE(take_survey_events(path, "auto", trace::ReaderOptions{})) << "forgotten";

  // A stream larger than its budget is not kept (the read after it parses the file).
  test::write_text(path, two_nodes(20000));
  std::filesystem::last_write_time(path, std::filesystem::last_write_time(path) + std::chrono::seconds(4));
  EXPECT_EQ(survey_trace(path, "auto", trace::ReaderOptions{}, {}, std::size_t{256} << 10).messages, 20000U);
  EXPECT_FALSE(take_survey_events(path, "auto", trace::ReaderOptions{})) << "20,000 messages in 256 KiB";
  (void)survey_trace(path, "auto", trace::ReaderOptions{}, {}, std::size_t{4} << 20);
  EXPECT_FALSE(take_survey_events(path, "auto", trace::ReaderOptions{})) << "the memo answered: nothing recorded";
}

}  // namespace
}  // namespace kanoko::ingest
