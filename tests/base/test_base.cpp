// base: suggestions, locations and diagnostics, atomic output files, FNV-1a, durations, signals.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <limits>
#include <new>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "src/base/atomic_file.hpp"
#include "src/base/error.hpp"
#include "src/base/hash.hpp"
#include "src/base/interrupt.hpp"
#include "src/base/progress.hpp"
#include "src/base/suggest.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko {
namespace KANOKO_UNITY_ID {

// ------------------------------------------------------------------------------------------------
// Suggestions
// ------------------------------------------------------------------------------------------------

TEST(Suggest, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0U);
  EXPECT_EQ(edit_distance("abc", ""), 3U);
  EXPECT_EQ(edit_distance("", "abc"), 3U);
  EXPECT_EQ(edit_distance("same", "same"), 0U);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3U);
  EXPECT_EQ(edit_distance("sitting", "kitten"), 3U);
  EXPECT_EQ(edit_distance("flaw", "lawn"), 2U);
  EXPECT_EQ(edit_distance("frictoin", "friction"), 2U);  // a transposition is two edits
  EXPECT_EQ(edit_distance("msg", "mesg"), 1U);
  EXPECT_EQ(edit_distance("abc", "xyz"), 3U);
}

TEST(Suggest, ClosestMatchScalesWithTheWordLength) {
  const std::vector<std::string> keys{"interval", "dt", "frame_every", "integrator", "settle"};
  EXPECT_EQ(closest_match("intervall", keys), "interval");
  EXPECT_EQ(closest_match("frame_evry", keys), "frame_every");
  EXPECT_EQ(closest_match("integrater", keys), "integrator");
  EXPECT_EQ(closest_match("dx", keys), "dt");  // short words: one edit
  EXPECT_EQ(closest_match("xy", keys), "");
  EXPECT_EQ(closest_match("seattle", keys), "settle");
  EXPECT_EQ(closest_match("completely_different", keys), "");
  EXPECT_EQ(closest_match("interval", {}), "");
  // The first of equally close candidates wins.
  EXPECT_EQ(closest_match("cat", {"bat", "hat"}), "bat");
  const std::vector<std::string> forces{"repulsion", "communication", "friction", "centre"};
  EXPECT_EQ(closest_match("frictoin", forces), "friction");
  EXPECT_EQ(closest_match("center", forces), "centre");
}

TEST(Suggest, DidYouMean) {
  EXPECT_EQ(did_you_mean("frictoin", {"friction", "beta"}), " (did you mean 'friction'?)");
  EXPECT_EQ(did_you_mean("zzzzzz", {"friction", "beta"}), "");
  EXPECT_EQ(did_you_mean("", {"a"}), " (did you mean 'a'?)");
}

// ------------------------------------------------------------------------------------------------
// Locations and diagnostics
// ------------------------------------------------------------------------------------------------

TEST(Errors, FileLocFormats) {
  EXPECT_EQ((FileLoc{"t.kntr", 3, 7}).str(), "t.kntr:3:7");
  EXPECT_EQ((FileLoc{"t.kntr", 3, 0}).str(), "t.kntr:3");
  EXPECT_EQ((FileLoc{"t.kntr", 0, 0}).str(), "t.kntr");
  EXPECT_EQ((FileLoc{"t.kntr", 0, 5}).str(), "t.kntr");  // a column without a line means nothing
  EXPECT_EQ((FileLoc{"", 2, 1}).str(), "<input>:2:1");
  EXPECT_EQ(FileLoc{}.str(), "<input>");
  EXPECT_EQ((FileLoc{"dir with space/a.toml", 10, 20}).str(), "dir with space/a.toml:10:20");
}

TEST(Errors, BinaryLocationsNameTheRecordAndByte) {
  FileLoc loc{"r.kntj"};
  EXPECT_FALSE(loc.located());
  loc.record = "header";
  EXPECT_EQ(loc.str(), "r.kntj (header)");
  EXPECT_TRUE(loc.located());
  loc.byte = 96;
  EXPECT_EQ(loc.str(), "r.kntj (header, byte 96)");
  loc.record.clear();
  EXPECT_EQ(loc.str(), "r.kntj (byte 96)");
  EXPECT_TRUE((FileLoc{"t.kntr", 2}).located());
}

TEST(Errors, ExcerptsAreEscapedAndCapped) {
  EXPECT_EQ(escaped_excerpt("a\nb\tc\x7f"), "a\\x0ab\\x09c\\x7f");
  EXPECT_EQ(escaped_excerpt(std::string(250, 'x')), std::string(200, 'x') + "...(50 more bytes)");
  EXPECT_EQ(escaped_excerpt("abc", 2), "ab...(1 more bytes)");
  // A UTF-8 character is never cut: "é" is two bytes.
  EXPECT_EQ(escaped_excerpt("a\xC3\xA9", 2), "a...(2 more bytes)");
}

TEST(Errors, EveryMessageIsOneLineWithinTheCap) {
  const Diagnostic multi{FileLoc{"m.toml", 2, 6}, "bad 'a\nb'\r"};
  EXPECT_EQ(multi.str(), "m.toml:2:6: error: bad 'a\\x0ab'\\x0d");
  const Diagnostic huge{FileLoc{"t.txt", 1, 1}, "unknown action '" + std::string(180 * 1024, 'a') + "'"};
  const std::string line = huge.str();
  EXPECT_LE(line.size(), kMaxMessageLine);
  EXPECT_EQ(line.rfind("t.txt:1:1: error: unknown action 'aaa", 0), 0U) << line.substr(0, 80);
  EXPECT_NE(line.find("more bytes)"), std::string::npos);
  const InputError e(std::vector<Diagnostic>{multi, huge});
  EXPECT_EQ(std::string(e.what()), multi.str() + "\n" + line);
}

TEST(Errors, CurrentInputNamesTheInnermostScope) {
  EXPECT_EQ(CurrentInput::describe(), "");
  {
    const CurrentInput outer("reading the trace", "t.kntr");
    EXPECT_EQ(CurrentInput::describe(), "while reading the trace t.kntr");
    {
      const CurrentInput inner("simulating", "t.kntr with mapping m.toml");
      EXPECT_EQ(CurrentInput::describe(), "while simulating t.kntr with mapping m.toml");
    }
    EXPECT_EQ(CurrentInput::describe(), "while reading the trace t.kntr");
  }
  EXPECT_EQ(CurrentInput::describe(), "");
  // A handler outside every scope still learns which one the exception left (the innermost).
  try {
    const CurrentInput outer("simulating", "a.kntr");
    const CurrentInput inner("reading the trace", "a.kntr");
    throw std::bad_alloc();
  } catch (const std::bad_alloc&) {
    EXPECT_EQ(CurrentInput::describe(), "while reading the trace a.kntr");
  }
  // ... until the next scope opens.
  { const CurrentInput next("reading the mapping", "m.toml"); }
  EXPECT_EQ(CurrentInput::describe(), "");
}

TEST(Errors, DiagnosticAndInputError) {
  const Diagnostic d{FileLoc{"m.toml", 2, 6}, "'dt' must be finite"};
  EXPECT_EQ(d.str(), "m.toml:2:6: error: 'dt' must be finite");
  const InputError one(FileLoc{"a", 1, 2}, "bad");
  EXPECT_STREQ(one.what(), "a:1:2: error: bad");
  ASSERT_EQ(one.diagnostics().size(), 1U);
  EXPECT_EQ(one.diagnostics()[0].message, "bad");
  const InputError two(std::vector<Diagnostic>{d, Diagnostic{FileLoc{"b"}, "worse"}});
  EXPECT_STREQ(two.what(), "m.toml:2:6: error: 'dt' must be finite\nb: error: worse");
  EXPECT_EQ(two.diagnostics().size(), 2U);
  // InputError is a runtime_error: main can catch both the same way.
  const std::runtime_error& base = two;
  EXPECT_NE(std::string(base.what()).find("worse"), std::string::npos);
}

TEST(Errors, DiagnosticListCollectsAndThrowsTogether) {
  DiagnosticList list;
  EXPECT_TRUE(list.empty());
  EXPECT_NO_THROW(list.throw_if_any());
  list.add(FileLoc{"f", 1, 1}, "first");
  list.add(FileLoc{"f", 5, 3}, "second");
  list.add(FileLoc{"g"}, "third");
  EXPECT_FALSE(list.empty());
  EXPECT_EQ(list.size(), 3U);
  try {
    list.throw_if_any();
    FAIL() << "did not throw";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 3U);
    EXPECT_EQ(e.diagnostics()[1].loc.line, 5);
    EXPECT_EQ(e.diagnostics()[2].message, "third");
    EXPECT_STREQ(e.what(), "f:1:1: error: first\nf:5:3: error: second\ng: error: third");
  }
  // Throwing does not empty the list.
  EXPECT_EQ(list.size(), 3U);
}

// ------------------------------------------------------------------------------------------------
// Atomic output files
// ------------------------------------------------------------------------------------------------

TEST(AtomicOutputFile, CommitMovesIntoPlaceAndLeavesNoTemporary) {
  test::TempDir dir;
  const auto target = dir / "out.bin";
  {
    AtomicOutputFile f(target);
    EXPECT_EQ(f.target(), target);
    EXPECT_NE(f.temporary(), target);
    EXPECT_EQ(f.temporary().parent_path(), dir.path());  // same folder: rename is atomic
    EXPECT_TRUE(std::filesystem::exists(f.temporary()));
    EXPECT_FALSE(std::filesystem::exists(target));
    f.write("hello ");
    f.write(std::string_view("world"));
    const std::uint32_t patch = 0x4f4c4c45;  // "ELLO"
    f.write_at(1, &patch, sizeof patch);
    f.write("!");
    EXPECT_EQ(f.size(), 12U);
    f.commit();
    EXPECT_FALSE(std::filesystem::exists(f.temporary()));
  }
  EXPECT_EQ(test::read_text(target), "hELLO world!");
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"out.bin"}));
}

TEST(AtomicOutputFile, DestructionWithoutCommitRemovesTheTemporary) {
  test::TempDir dir;
  {
    AtomicOutputFile f(dir / "out.bin");
    f.write("partial");
    EXPECT_EQ(test::list_dir(dir.path()).size(), 1U);
  }
  EXPECT_TRUE(test::list_dir(dir.path()).empty());
}

TEST(AtomicOutputFile, DiscardRemovesNowAndCommitThenFails) {
  test::TempDir dir;
  AtomicOutputFile f(dir / "out.bin");
  f.write("x");
  f.discard();
  EXPECT_TRUE(test::list_dir(dir.path()).empty());
  f.discard();  // twice is harmless
  EXPECT_THROW(f.commit(), RunError);
  EXPECT_TRUE(test::list_dir(dir.path()).empty());
}

TEST(AtomicOutputFile, AFailedRewriteKeepsThePreviousFile) {
  test::TempDir dir;
  const auto target = dir / "out.txt";
  write_file_atomically(target, "old");
  {
    AtomicOutputFile f(target);
    f.write("new but unfinished");
  }
  EXPECT_EQ(test::read_text(target), "old");
  write_file_atomically(target, "new");
  EXPECT_EQ(test::read_text(target), "new");
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"out.txt"}));
}

TEST(AtomicOutputFile, TwoWritersToOneTargetDoNotShareATemporary) {
  test::TempDir dir;
  const auto target = dir / "out.txt";
  AtomicOutputFile a(target);
  AtomicOutputFile b(target);
  EXPECT_NE(a.temporary(), b.temporary());
  a.write("from a");
  b.write("from b");
  a.commit();
  EXPECT_EQ(test::read_text(target), "from a");
  b.commit();
  EXPECT_EQ(test::read_text(target), "from b");
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"out.txt"}));
}

TEST(AtomicOutputFile, UnwritableFolderIsAnInputErrorNamingTheTarget) {
  test::TempDir dir;
  const auto target = dir / "no-such-folder" / "out.bin";
  try {
    AtomicOutputFile f(target);
    FAIL() << "opened";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().at(0).loc.file, target.string());
    EXPECT_NE(std::string(e.what()).find("cannot write output"), std::string::npos) << e.what();
  }
  // A target that is a folder is refused before anything is written (test_output_target.cpp).
}

TEST(ReadFile, ContentsMissingAndDirectory) {
  test::TempDir dir;
  const std::string binary("a\0b\r\n\xff", 6);
  test::write_text(dir / "f", binary);
  EXPECT_EQ(read_file(dir / "f"), binary);
  test::write_text(dir / "empty", "");
  EXPECT_EQ(read_file(dir / "empty"), "");
  try {
    read_file(dir / "missing");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().at(0).loc.file, (dir / "missing").string());
    EXPECT_NE(std::string(e.what()).find("cannot open: No such file or directory"), std::string::npos) << e.what();
  }
  try {
    read_file(dir.path());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
}

// ------------------------------------------------------------------------------------------------
// FNV-1a
// ------------------------------------------------------------------------------------------------

TEST(Fnv1a64, KnownVectors) {
  auto digest = [](std::string_view s) {
    Fnv1a64 h;
    h.update(s);
    return h.digest();
  };
  EXPECT_EQ(Fnv1a64{}.digest(), 0xcbf29ce484222325ULL);
  EXPECT_EQ(digest(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(digest("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(digest("foobar"), 0x85944171f73967e8ULL);
}

TEST(Fnv1a64, IncrementalEqualsOneShotAndBytesMatter) {
  Fnv1a64 whole, parts;
  whole.update("hello world");
  parts.update("hello");
  parts.update(" ");
  parts.update("world", 5);
  parts.update("ignored", 0);
  EXPECT_EQ(whole.digest(), parts.digest());
  Fnv1a64 a, b;
  a.update("ab");
  b.update("ba");
  EXPECT_NE(a.digest(), b.digest());
  // update_value hashes the object representation.
  Fnv1a64 v, raw;
  const std::uint32_t x = 0x01020304;
  v.update_value(x);
  const unsigned char little[] = {4, 3, 2, 1};
  raw.update(little, 4);
  EXPECT_EQ(v.digest(), raw.digest());
}

// ------------------------------------------------------------------------------------------------
// Durations, progress, signals
// ------------------------------------------------------------------------------------------------

TEST(FormatDuration, Units) {
  EXPECT_EQ(format_duration(0), "0.0 s");
  EXPECT_EQ(format_duration(1.24), "1.2 s");
  EXPECT_EQ(format_duration(59.9), "59.9 s");
  EXPECT_EQ(format_duration(64), "1 min 04 s");
  EXPECT_EQ(format_duration(3599), "59 min 59 s");
  EXPECT_EQ(format_duration(7500), "2 h 05 min");
  EXPECT_EQ(format_duration(-1), "?");
  EXPECT_EQ(format_duration(std::nan("")), "?");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "?");
}

TEST(ProgressBar, QuietWhenDisabledOrQuick) {
  testing::internal::CaptureStderr();
  {
    ProgressBar off("simulate", 100, "steps", false);
    for (std::uint64_t i = 0; i <= 100; ++i) off.update(i);
    off.finish();
    ProgressBar quick("simulate", 100, "steps", true);
    for (std::uint64_t i = 0; i <= 100; ++i) quick.update(i);
    quick.finish();
    ProgressBar empty("simulate", 0, "steps", true);
    empty.update(0);
    empty.finish();
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(ProgressBar, LogLinesKeepComingOnASlowRun) {
  // Not a terminal (stderr is captured): a line every 10 % and, on a run too slow for that, at
  // least every `log_every` (a slow run under a sanitizer would otherwise print once in half an hour).
  testing::internal::CaptureStderr();
  {
    ProgressBar slow("simulate", 1000, "steps", true, std::chrono::milliseconds(100));
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    slow.update(1);  // the first line, after half a second
    slow.update(2);  // same tenth, too soon: nothing
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    slow.update(3);  // same tenth, but log_every has passed
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 2) << err;
}

TEST(Interrupt, NothingRequestedByDefault) {
  EXPECT_FALSE(interrupt_requested());
  EXPECT_NO_THROW(check_interrupt());
}

TEST(InterruptDeathTest, FirstSignalAsksSecondExitsAndRemovesTemporaries) {
  test::TempDir dir;
  const auto temp = dir / "partial.tmp";
  test::write_text(temp, "x");
  // In a child process: the first SIGINT makes check_interrupt throw, the second exits with
  // 128 + SIGINT after removing the registered temporary file.
  EXPECT_EXIT(
      {
        install_interrupt_handlers();
        register_temporary_file(temp);
        std::raise(SIGINT);
        if (!interrupt_requested()) std::_Exit(3);
        try {
          check_interrupt();
          std::_Exit(4);
        } catch (const Interrupted&) {
        }
        std::raise(SIGINT);
        std::_Exit(5);
      },
      ::testing::ExitedWithCode(128 + SIGINT), "");
  EXPECT_FALSE(std::filesystem::exists(temp));
}

TEST(InterruptDeathTest, InterruptedCarriesTheSignalAndRepeatedSigpipesCountOnce) {
  // Every write to a closed pipe raises SIGPIPE: the second must not exit; a SIGTERM after it
  // does, with its own code.
  EXPECT_EXIT(
      {
        install_interrupt_handlers();
        std::raise(SIGPIPE);
        std::raise(SIGPIPE);
        if (interrupt_signal() != SIGPIPE) std::_Exit(3);
        try {
          check_interrupt();
          std::_Exit(4);
        } catch (const Interrupted& e) {
          if (e.signal() != SIGPIPE || e.exit_code() != 141) std::_Exit(5);
        }
        std::raise(SIGTERM);
        std::_Exit(6);
      },
      ::testing::ExitedWithCode(128 + SIGTERM), "");
}

TEST(InterruptDeathTest, UnregisteredTemporariesAreNotTouched) {
  test::TempDir dir;
  const auto keep = dir / "keep.tmp";
  test::write_text(keep, "x");
  EXPECT_EXIT(
      {
        install_interrupt_handlers();
        register_temporary_file(keep);
        unregister_temporary_file(keep);
        std::raise(SIGTERM);
        std::raise(SIGTERM);
        std::_Exit(5);
      },
      ::testing::ExitedWithCode(128 + SIGTERM), "");
  EXPECT_TRUE(std::filesystem::exists(keep));
}

TEST(InterruptDeathTest, WatchdogEndsWorkThatDoesNotCheck) {
  // Work without a check (writing a huge frame, unwinding gigabytes): the watchdog exits within
  // its grace after the first signal, removes the temporaries and says so on stderr.
  test::TempDir dir;
  const auto temp = dir / "partial.tmp";
  test::write_text(temp, "x");
  EXPECT_EXIT(
      {
        install_interrupt_handlers("simulate", true);
        register_temporary_file(temp);
        std::raise(SIGTERM);
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (std::chrono::steady_clock::now() < until) {
        }
        std::_Exit(3);
      },
      ::testing::ExitedWithCode(128 + SIGTERM),
      "^kanoko simulate: interrupted \\(SIGTERM\\); no output was written\n$");
  EXPECT_FALSE(std::filesystem::exists(temp));
}

TEST(InterruptDeathTest, WatchdogLeavesAReportedInterruptionToTheCommand) {
  // The command unwound in time and reports: its own exit code and message stand.
  EXPECT_EXIT(
      {
        install_interrupt_handlers("simulate", true);
        std::raise(SIGINT);
        interrupt_reported();
        std::this_thread::sleep_for(std::chrono::milliseconds(3 * kInterruptGraceMs));
        std::_Exit(7);
      },
      ::testing::ExitedWithCode(7), "^$");
}

}  // namespace
}  // namespace kanoko
