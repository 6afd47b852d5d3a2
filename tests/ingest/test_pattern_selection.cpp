// [trace] select, exclude and rename on hostile names: patterns that crash (deep recursion) or
// hang (exponential backtracking) a backtracking engine answer at once with RE2.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/ingest/schema.hpp"
#include "src/mapping/mapping.hpp"
#include "tests/support/input_error.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::ingest {
namespace KANOKO_UNITY_ID {

using mapping::parse_mapping_text;

/// Entities named `names` with one message between the first two.
SelectionReport select(const std::vector<std::string>& names, const std::string& trace_section) {
  test::TempDir dir;
  std::string text = "kntr 1\n";
  for (std::size_t i = 0; i < names.size(); ++i) text += "node 0 " + std::to_string(i) + " name=" + names[i] + "\n";
  text += "msg 0.01 0 1 100\nend 0.1\n";
  test::write_text(dir / "t.kntr", text);
  const mapping::Mapping m = parse_mapping_text("[trace]\n" + trace_section + "[forces.friction]\nbeta = 1\n", "m.toml");
  SelectionReport r;
  (void)read_body_timeline(dir / "t.kntr", m, &r);
  return r;
}

TEST(PatternSelection, DotStarOnAThirtyThousandCharacterName) {
  const std::string long_name(30000, 'n');
  const SelectionReport r = select({long_name, "r1"}, "select = \"^.*$\"\nexclude = \"^(r|x)+\\\\d$\"\n");
  EXPECT_EQ(r.bodies, std::vector<std::string>{long_name});
  ASSERT_EQ(r.entities.size(), 2U);
  EXPECT_NE(r.entities[1].reason.find("matches [trace] exclude"), std::string::npos);
}

TEST(PatternSelection, NestedQuantifierAgainstANearMiss) {
  const std::string near_miss = std::string(33, 'a') + "b";
  const SelectionReport r = select({near_miss, "aaaa", std::string(40, 'a')}, "select = \"^(a+)+$\"\n");
  EXPECT_EQ(r.bodies, (std::vector<std::string>{"aaaa", std::string(40, 'a')}));
  ASSERT_EQ(r.entities.size(), 3U);
  EXPECT_NE(r.entities[0].reason.find("does not match [trace] select"), std::string::npos);
}

TEST(PatternSelection, RenameWithTheWholeMatchAndGroups) {
  const SelectionReport r =
      select({"job.rank12.x", "job.rank3.y", "io"}, "rename = [\"rank(\\\\d+)\\\\.(\\\\w)\", \"[$&] r$1$2 $$\"]\n");
  EXPECT_EQ(r.bodies, (std::vector<std::string>{"[rank12.x] r12x $", "[rank3.y] r3y $", "io"}));
}

TEST(PatternSelection, AMappingBuiltInCodeGetsALocatedError) {
  // parse_mapping_text refuses such a pattern; a Mapping filled in by code reaches the selector.
  mapping::Mapping m = parse_mapping_text("[trace]\nselect = \"^r\"\n[forces.friction]\nbeta = 1\n", "m.toml");
  m.trace.select = "r(?=1)";
  test::TempDir dir;
  test::write_text(dir / "t.kntr", "kntr 1\nnode 0 0 name=r1\nend 0.1\n");
  const std::string e = test::input_error_of([&] { (void)read_body_timeline(dir / "t.kntr", m); });
  EXPECT_NE(e.find("m.toml:2:10: error: 'trace.select' is not a valid regular expression: look-ahead"), std::string::npos) << e;
}

}  // namespace
}  // namespace kanoko::ingest
