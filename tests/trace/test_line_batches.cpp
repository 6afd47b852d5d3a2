// Reading a text file in batches of whole lines on worker threads (src/trace/line_batches.hpp):
// the batches come back in file order, hold every byte once, split only at line ends, and carry
// errors to the caller at their place.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/trace/line_batches.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

struct Lines {
  std::vector<std::string> lines;
};

/// Reads `path` with `workers` threads and batches of `bytes`; returns the concatenated batches
/// and checks that each batch's lines are its own (split by the worker) and counted.
std::string read_back(const std::filesystem::path& path, int workers, std::size_t bytes, std::int64_t* lines = nullptr) {
  ParallelLineReader<Lines> reader(
      path, workers,
      [](const LineBatch& b, Lines& out) {
        out.lines.clear();
        for_each_line(b, [&](std::string_view l) { out.lines.emplace_back(l); });
      },
      bytes, 1000);
  std::string all;
  std::int64_t count = 0;
  const LineBatch* b = nullptr;
  Lines* prepared = nullptr;
  while (reader.next(b, prepared)) {
    EXPECT_FALSE(b->overlong);
    // Every batch but the file's last ends at a line end.
    std::string joined;
    for (const auto& l : prepared->lines) joined += l + "\n";
    if (!b->text.empty() && b->text.back() != '\n') joined.pop_back();
    EXPECT_EQ(joined, b->text);
    all += b->text;
    count += static_cast<std::int64_t>(prepared->lines.size());
  }
  if (lines != nullptr) *lines = count;
  return all;
}

TEST(LineBatches, EveryByteOnceInOrderForAnyBatchSizeAndThreadCount) {
  std::mt19937 rng(3);
  std::string text;
  std::int64_t expected_lines = 0;
  for (int i = 0; i < 3000; ++i) {
    text += std::string(rng() % 90, static_cast<char>('a' + i % 26)) + "\n";
    ++expected_lines;
  }
  text += "last line without a newline";
  ++expected_lines;
  test::TempDir dir;
  const auto path = dir / "lines.txt";
  test::write_text(path, text);
  for (const int workers : {0, 1, 3}) {
    for (const std::size_t bytes : {1UL, 7UL, 100UL, 4096UL, 1UL << 20U}) {
      std::int64_t lines = 0;
      EXPECT_EQ(read_back(path, workers, bytes, &lines), text) << workers << " workers, " << bytes << " bytes";
      EXPECT_EQ(lines, expected_lines) << workers << " workers, " << bytes << " bytes";
    }
  }
}

TEST(LineBatches, EmptyFileAndBlankLines) {
  test::TempDir dir;
  test::write_text(dir / "empty", "");
  test::write_text(dir / "blank", "\n\n\n");
  for (const int workers : {0, 2}) {
    std::int64_t lines = -1;
    EXPECT_EQ(read_back(dir / "empty", workers, 16, &lines), "");
    EXPECT_EQ(lines, 0);
    EXPECT_EQ(read_back(dir / "blank", workers, 1, &lines), "\n\n\n");
    EXPECT_EQ(lines, 3);
  }
}

TEST(LineBatches, AnOverlongLineEndsTheReadingWithAMarkedBatch) {
  test::TempDir dir;
  const auto path = dir / "long.txt";
  test::write_text(path, "short\n" + std::string(5000, 'x') + "\nnever read\n");
  for (const int workers : {0, 2}) {
    ParallelLineReader<Lines> reader(path, workers, [](const LineBatch&, Lines&) {}, 64, 1000);
    const LineBatch* b = nullptr;
    Lines* p = nullptr;
    std::string before;
    bool overlong = false;
    while (reader.next(b, p)) {
      if (b->overlong) {
        overlong = true;
        EXPECT_LE(b->text.size(), 1000U + 64U);
        EXPECT_EQ(b->text.find('\n'), std::string::npos);
      } else {
        EXPECT_FALSE(overlong) << "a batch after the overlong one";
        before += b->text;
      }
    }
    EXPECT_TRUE(overlong);
    EXPECT_EQ(before, "short\n");
  }
}

TEST(LineBatches, ErrorsOfPreparingComeBackInFileOrder) {
  test::TempDir dir;
  const auto path = dir / "lines.txt";
  std::string text;
  for (int i = 0; i < 200; ++i) text += "line " + std::to_string(i) + "\n";
  test::write_text(path, text);
  for (const int workers : {0, 1, 4}) {
    ParallelLineReader<Lines> reader(
        path, workers,
        [](const LineBatch& b, Lines&) {
          if (b.text.find("line 150\n") != std::string::npos) throw std::runtime_error("bad batch");
        },
        32, 1000);
    const LineBatch* b = nullptr;
    Lines* p = nullptr;
    std::string seen;
    try {
      while (reader.next(b, p)) seen += b->text;
      FAIL() << "no error";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "bad batch");
    }
    // Everything before the failing batch arrived, nothing from it or after it.
    EXPECT_EQ(seen, text.substr(0, seen.size()));
    EXPECT_NE(seen.find("line 140\n"), std::string::npos) << workers;
    EXPECT_EQ(seen.find("line 150\n"), std::string::npos) << workers;
  }
}

TEST(LineBatches, StoppingEarlyJoinsTheWorkers) {
  test::TempDir dir;
  const auto path = dir / "lines.txt";
  test::write_text(path, std::string(100000, 'y') + "\n" + std::string(100000, 'z'));
  for (int round = 0; round < 20; ++round) {
    ParallelLineReader<Lines> reader(path, 3, [](const LineBatch&, Lines&) {}, 10, 1 << 20);
    const LineBatch* b = nullptr;
    Lines* p = nullptr;
    ASSERT_TRUE(reader.next(b, p));
  }  // destroyed with workers busy: must not hang or crash
}

TEST(LineBatches, MissingFileAndDirectoryAreInputErrors) {
  test::TempDir dir;
  EXPECT_THROW(LineBatchSource(dir / "nope", 16, 100), InputError);
  for (const int workers : {0, 2}) {
    try {
      ParallelLineReader<Lines> reader(dir.path(), workers, [](const LineBatch&, Lines&) {}, 16, 100);
      const LineBatch* b = nullptr;
      Lines* p = nullptr;
      reader.next(b, p);
      FAIL() << "a directory was read";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("directory"), std::string::npos) << e.what();
    }
  }
}

TEST(LineBatches, ReaderWorkersForARequest) {
  EXPECT_EQ(reader_workers(1), 0);
  EXPECT_EQ(reader_workers(2), 1);
  EXPECT_EQ(reader_workers(5), 4);
  EXPECT_GE(reader_workers(0), 0);
  EXPECT_LE(reader_workers(0), 3);
}

}  // namespace
}  // namespace kanoko::trace
