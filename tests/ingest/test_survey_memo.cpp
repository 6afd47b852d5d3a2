// survey_trace keeps the process's last survey (src/ingest/survey.hpp): asked again for the same
// files, reader, options and window it answers without reading, and anything that makes a
// different survey (the file's content and time, the options, the window) reads again.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "src/ingest/survey.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::ingest {
namespace {

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

}  // namespace
}  // namespace kanoko::ingest
