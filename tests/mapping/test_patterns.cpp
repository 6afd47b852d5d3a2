// The mapping's patterns (src/mapping/pattern.hpp): RE2 syntax with search semantics, the
// documented replacements, and located errors for what RE2 refuses (look-around,
// back-references, patterns too large to search long names quickly).
#include <gtest/gtest.h>

#include <string>

#include "src/base/error.hpp"
#include "src/mapping/mapping.hpp"
#include "src/mapping/pattern.hpp"
#include "tests/support/input_error.hpp"

namespace kanoko::mapping {
namespace KANOKO_UNITY_ID {

const std::string kForce = "\n[forces.friction]\nbeta = 1\n";

std::string errors(const std::string& text) {
  return test::input_error_of([&] { (void)parse_mapping_text(text + kForce, "m.toml"); });
}

std::string refusal(const std::string& pattern) {
  try {
    (void)Pattern(pattern);
  } catch (const PatternError& e) {
    return e.what();
  }
  return "";
}

TEST(Patterns, SearchAnywhereAndGroups) {
  const Pattern rank("rank");
  EXPECT_TRUE(rank.found_in("myrank3"));  // searched anywhere, not a full match
  EXPECT_FALSE(rank.found_in("pe3"));
  EXPECT_TRUE(Pattern("^pe\\d+$").found_in("pe12"));
  EXPECT_FALSE(Pattern("^pe\\d+$").found_in("pe12x"));
  EXPECT_FALSE(Pattern("^pe\\d+$").found_in("pe12\n"));  // '$' is the end of the name only
  const Pattern pe("pe(\\d+)(x)?");
  EXPECT_EQ(pe.groups(), 2);
  EXPECT_EQ(pe.group_in("node.pe42", 1), "42");
  EXPECT_EQ(pe.group_in("node.pe42", 2), std::nullopt);  // took no part in the match
  EXPECT_EQ(pe.group_in("node", 1), std::nullopt);
  EXPECT_EQ(Pattern("(?P<n>\\w+)").group_in("ab", 1), "ab");  // RE2's named groups
}

TEST(Patterns, ReplacementsDollarOneAmpersandAndDollar) {
  EXPECT_EQ(re2_rewrite("n$1-$2", 2), "n\\1-\\2");
  EXPECT_EQ(re2_rewrite("[$&]", 0), "[\\0]");
  EXPECT_EQ(re2_rewrite("$$1 a\\b $x $", 1), "$1 a\\\\b $x $");
  EXPECT_EQ(Rewrite("^node(\\d+)\\.rank(\\d+)$", "n$1-$2").apply("node7.rank3"), "n7-3");
  EXPECT_EQ(Rewrite("rank\\d+", "[$&]").apply("job.rank12.x"), "[rank12]");  // the name becomes the replacement
  EXPECT_EQ(Rewrite("(\\d+)", "$$$1\\").apply("a5"), "$5\\");
  EXPECT_EQ(Rewrite("^rank", "r").apply("node7.rank0"), std::nullopt);  // not found: the caller keeps the name
  EXPECT_THROW((void)re2_rewrite("$2", 1), PatternError);
  EXPECT_THROW((void)re2_rewrite("$12", 9), PatternError);
  EXPECT_THROW((void)re2_rewrite("$`", 1), PatternError);
}

TEST(Patterns, LookAroundAndBackReferencesAreLocatedErrors) {
  EXPECT_NE(errors("[trace]\nselect = \"^rank(?=\\\\d)\"\n")
                .find("m.toml:2:10: error: 'select' is not a valid regular expression: look-ahead is not supported "
                      "(\"(?=\"): Kanoko's patterns are RE2 syntax, see https://github.com/google/re2/wiki/Syntax"),
            std::string::npos)
      << errors("[trace]\nselect = \"^rank(?=\\\\d)\"\n");
  EXPECT_NE(errors("[trace]\nexclude = \"x(?!y)\"\n").find("m.toml:2:11: error: 'exclude' is not a valid regular expression: look-ahead"),
            std::string::npos);
  EXPECT_NE(errors("[trace]\nselect = \"[(?<]*(?<!a)b\"\n").find("look-behind is not supported (\"(?<!\")"), std::string::npos);
  // A back-reference in the pattern of a [pattern, replacement] is located at the pattern.
  EXPECT_NE(errors("[trace]\nrename = [\"(a)\\\\1\", \"x\"]\n")
                .find("m.toml:2:11: error: 'rename': the pattern is not a valid regular expression: back-references are "
                      "not supported (\"\\1\")"),
            std::string::npos)
      << errors("[trace]\nrename = [\"(a)\\\\1\", \"x\"]\n");
  EXPECT_NE(errors("[bodies]\norder = \"pattern\"\npattern = \"(?<n>\\\\d+)\"\n").find("m.toml:3:11: error: 'pattern' is not a "
                                                                                     "valid regular expression: a named group is written (?P<name>...)"),
            std::string::npos);
  // A replacement naming a group the pattern lacks is located at the replacement.
  EXPECT_NE(errors("[trace]\nhost_from_name = [\"^(node\\\\d+)\", \"$2\"]\n")
                .find("m.toml:2:34: error: 'host_from_name': the replacement is not valid: '$2' refers to group 2, but the "
                      "pattern has 1 group"),
            std::string::npos)
      << errors("[trace]\nhost_from_name = [\"^(node\\\\d+)\", \"$2\"]\n");
  EXPECT_NE(errors("[trace]\nselect = \"(\"\n").find("m.toml:2:10: error: 'select' is not a valid regular expression: missing ): ("),
            std::string::npos)
      << errors("[trace]\nselect = \"(\"\n");
}

TEST(Patterns, HugePatternsAreRefused) {
  std::string big;
  for (int i = 0; i < 5; ++i) big += "[a-z]{1000}";
  EXPECT_NE(refusal(big).find("too large: it compiles to "), std::string::npos) << refusal(big);
  EXPECT_NE(refusal("\\pL{1000}").find("too large: RE2 compiles it to more than 8 MiB"), std::string::npos) << refusal("\\pL{1000}");
  EXPECT_NE(refusal(std::string(200000, '(')), "");  // deep nesting: an error, no crash
  EXPECT_EQ(refusal("[a-z]{1000}"), "");
}

TEST(Patterns, PathologicalPatternsAnswerAtOnce) {
  // Exponential for a backtracking engine (about two minutes of CPU with std::regex); linear here.
  const std::string name = std::string(33, 'a') + "b";
  EXPECT_FALSE(Pattern("^(a+)+$").found_in(name));
  EXPECT_TRUE(Pattern("^(a+)+$").found_in(std::string(33, 'a')));
  // Deep recursion for std::regex (a crash); one pass here.
  const std::string long_name(30000, 'x');
  EXPECT_TRUE(Pattern("^.*$").found_in(long_name));
  EXPECT_EQ(Rewrite("^(x*)$", "<$1>").apply(long_name), "<" + long_name + ">");
}

}  // namespace
}  // namespace kanoko::mapping
