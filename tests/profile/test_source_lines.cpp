// The source panel's file reading (src/profile/source_lines): lines around a location found under
// the search paths, and every bad case of issue 19 as a status with a note: nothing read outside
// the search paths, no exception, no hang. Ends with a fuzz-like run over random names and lines.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <random>
#include <string>

#include "src/base/error.hpp"
#include "src/profile/source_lines.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::profile {
namespace KANOKO_UNITY_ID {

namespace fs = std::filesystem;
using Status = SourceExcerpt::Status;

std::string numbered_lines(int n) {
  std::string s;
  for (int k = 1; k <= n; ++k) s += "line " + std::to_string(k) + "\n";
  return s;
}

struct Tree {
  test::TempDir dir;
  std::vector<fs::path> roots;
  Tree() {
    test::write_text(dir / "src/app/late.c", numbered_lines(40));
    test::write_text(dir / "secret/passwd", numbered_lines(40));
    roots = checked_source_roots({(dir / "src").string()}, "--source-path");
  }
};

TEST(SourceLines, LinesAroundTheLineOfAFileFoundUnderASearchPath) {
  Tree t;
  const SourceExcerpt e = source_excerpt(t.roots, "app/late.c", 31);
  ASSERT_EQ(e.status, Status::ok) << e.note;
  EXPECT_EQ(e.path, fs::canonical(t.dir / "src/app/late.c"));
  EXPECT_EQ(e.first_line, 24);
  ASSERT_EQ(e.lines.size(), 15U);
  EXPECT_EQ(e.lines[7], "line 31");
  EXPECT_EQ(e.file_lines, 40);
  const std::string text = excerpt_text(e);
  EXPECT_NE(text.find(">   31  line 31\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    30  line 30\n"), std::string::npos) << text;
  // Only the file's name, or an absolute name from the machine that ran the program: by its ends.
  EXPECT_EQ(source_excerpt(t.roots, "late.c", 31).status, Status::not_found) << "late.c is in src/app, not src";
  const SourceExcerpt far = source_excerpt(t.roots, "/home/someone/build/app/late.c", 2);
  ASSERT_EQ(far.status, Status::ok) << far.note;
  EXPECT_EQ(far.first_line, 1);
  EXPECT_EQ(far.lines.size(), 9U);
}

TEST(SourceLines, BadCasesAreNotesNeverReadsOutside) {
  Tree t;
  EXPECT_EQ(source_excerpt({}, "app/late.c", 3).status, Status::no_search_path);
  EXPECT_NE(source_excerpt({}, "app/late.c", 3).note.find("--source-path"), std::string::npos);
  EXPECT_EQ(source_excerpt(t.roots, "", 3).status, Status::no_file);
  EXPECT_EQ(source_excerpt(t.roots, "app/missing.c", 3).status, Status::not_found);
  // Line past the end: the last lines, with a note.
  const SourceExcerpt past = source_excerpt(t.roots, "app/late.c", 400);
  EXPECT_EQ(past.status, Status::line_past_end);
  EXPECT_NE(past.note.find("has 40 lines, not line 400"), std::string::npos) << past.note;
  ASSERT_FALSE(past.lines.empty());
  EXPECT_EQ(past.lines.back(), "line 40");
  EXPECT_EQ(source_excerpt(t.roots, "app/late.c", 0).status, Status::line_past_end);
  // Out of the search path: by .., by an absolute name, by a link.
  EXPECT_EQ(source_excerpt(t.roots, "../secret/passwd", 3).status, Status::outside);
  EXPECT_TRUE(source_excerpt(t.roots, "../secret/passwd", 3).lines.empty());
  EXPECT_EQ(source_excerpt(t.roots, (t.dir / "secret/passwd").string(), 3).status, Status::not_found);
  fs::create_symlink(t.dir / "secret", t.dir / "src/escape");
  const SourceExcerpt link = source_excerpt(t.roots, "escape/passwd", 3);
  EXPECT_EQ(link.status, Status::outside) << link.note;
  EXPECT_TRUE(link.lines.empty());
  // A link inside the search path is fine.
  fs::create_symlink(t.dir / "src/app/late.c", t.dir / "src/alias.c");
  EXPECT_EQ(source_excerpt(t.roots, "alias.c", 3).status, Status::ok);
  // Binary and huge files.
  test::write_text(t.dir / "src/app/blob.o", std::string("ELF\0\0\1\2", 7) + numbered_lines(3));
  EXPECT_EQ(source_excerpt(t.roots, "app/blob.o", 1).status, Status::binary);
  SourceLimits small;
  small.max_bytes = 100;
  const SourceExcerpt huge = source_excerpt(t.roots, "app/late.c", 3, small);
  EXPECT_EQ(huge.status, Status::too_large);
  EXPECT_TRUE(huge.lines.empty());
  // Names with control characters or invalid UTF-8 are not looked for; the note shows them escaped.
  const SourceExcerpt ctl = source_excerpt(t.roots, std::string("app/late.c\n\x1b[2J", 15), 3);
  EXPECT_EQ(ctl.status, Status::bad_name);
  EXPECT_EQ(ctl.note.find('\n'), std::string::npos);
  EXPECT_NE(ctl.note.find("\\x0A\\x1B"), std::string::npos) << ctl.note;
  EXPECT_EQ(source_excerpt(t.roots, "app/\xff\xfe.c", 3).status, Status::bad_name);
  EXPECT_EQ(source_excerpt(t.roots, std::string("app/late.c\0x", 12), 3).status, Status::bad_name);
  // A FIFO is not a regular file: not opened (opening it would block).
  ASSERT_EQ(::mkfifo((t.dir / "src/app/pipe.c").c_str(), 0600), 0);
  EXPECT_EQ(source_excerpt(t.roots, "app/pipe.c", 1).status, Status::not_found);
  // A name thousands of components deep: a few candidates per root, quickly.
  std::string deep;
  for (int k = 0; k < 5000; ++k) deep += "d/";
  EXPECT_EQ(source_excerpt(t.roots, deep + "app/late.c", 3).status, Status::ok);
  // Control characters and long lines in the file itself are shown escaped and cut.
  test::write_text(t.dir / "src/app/odd.c", "a\tb\x1b[31m\n" + std::string(1000, 'x') + "\n\xff\n");
  const SourceExcerpt odd = source_excerpt(t.roots, "app/odd.c", 2);
  ASSERT_EQ(odd.status, Status::ok);
  ASSERT_EQ(odd.lines.size(), 3U);
  EXPECT_EQ(odd.lines[0], "a   b\\x1B[31m");
  EXPECT_LT(odd.lines[1].size(), 260U);
  EXPECT_EQ(odd.lines[2], "\\xFF");
}

TEST(SourceLines, SearchPathsMustBeFolders) {
  Tree t;
  EXPECT_THROW((void)checked_source_roots({(t.dir / "nowhere").string()}, "--source-path"), InputError);
  EXPECT_THROW((void)checked_source_roots({(t.dir / "src/app/late.c").string()}, "--source-path"), InputError);
  EXPECT_TRUE(path_inside("/a/b/c", "/a/b"));
  EXPECT_TRUE(path_inside("/a/b", "/a/b"));
  EXPECT_FALSE(path_inside("/a/bc", "/a/b"));
  EXPECT_FALSE(path_inside("/a", "/a/b"));
}

TEST(SourceLines, FuzzLikeNamesAndLinesNeverThrowOrLeaveTheSearchPaths) {
  Tree t;
  fs::create_symlink(t.dir / "secret", t.dir / "src/escape");
  std::mt19937 rng(19);
  const std::vector<std::string> parts = {"app", "late.c", "..", ".", "escape", "passwd", "", "/", "\xc3\xa9",
                                          "\xff", "\n", "secret", "src", "//", "\x7f", "app/late.c"};
  for (int k = 0; k < 3000; ++k) {
    std::string name;
    const int n = static_cast<int>(rng() % 7);
    for (int i = 0; i < n; ++i) name += parts[rng() % parts.size()] + (rng() % 2 ? "/" : "");
    if (rng() % 5 == 0) name += static_cast<char>(rng() % 256);
    const auto line = static_cast<std::int64_t>(rng() % 60) - 5;
    SourceExcerpt e;
    ASSERT_NO_THROW(e = source_excerpt(t.roots, name, line)) << name;
    if (!e.path.empty()) {
      EXPECT_TRUE(path_inside(e.path, t.roots[0])) << name << " read " << e.path;
    }
    if (e.status != Status::ok) {
      EXPECT_FALSE(e.note.empty()) << name;
      EXPECT_EQ(e.note.find('\n'), std::string::npos) << name;
    }
    EXPECT_LE(e.lines.size(), 15U);
  }
}

}  // namespace
}  // namespace kanoko::profile
