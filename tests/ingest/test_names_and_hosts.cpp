// [trace] rename and host_from_name: how names and hosts are read, applied before selection and
// grouping, on a native trace whose entities have names but no hosts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/mapping/mapping.hpp"
#include "src/ingest/schema.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::mapping {
namespace KANOKO_UNITY_ID {
using namespace ::kanoko::ingest;  // NOLINT

const std::string kForce = "\n[forces.friction]\nbeta = 1\n";

/// Four ranks on two machines, named as some launchers name them, without host fields.
std::string trace_text() {
  return "kntr 1\n"
         "node 0 0 name=node7.rank0\nnode 0 1 name=node7.rank1\nnode 0 2 name=node9.rank0\nnode 0 3 name=node9.rank1\n"
         "msg 0.01 0 2 100\nmsg 0.02 1 3 50\nmsg 0.03 0 1 7\nend 0.1\n";
}

SelectionReport select(const std::string& trace_section) {
  test::TempDir dir;
  test::write_text(dir / "t.kntr", trace_text());
  const Mapping m = parse_mapping_text("[trace]\n" + trace_section + kForce, "m.toml");
  SelectionReport r;
  (void)read_body_timeline(dir / "t.kntr", m, &r);
  return r;
}

std::string errors(const std::string& text) {
  try {
    (void)parse_mapping_text(text + kForce, "m.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(NamesAndHosts, HostsFromNamesMakeGroupingByHostPossible) {
  // Without a host rule the trace gives no hosts, so grouping by host leaves every entity out.
  EXPECT_THROW((void)select("group_by = \"host\"\n"), InputError);
  const SelectionReport r = select("host_from_name = [\"^(node\\\\d+)\\\\.\", \"$1\"]\ngroup_by = \"host\"\n");
  EXPECT_EQ(r.bodies, (std::vector<std::string>{"node7", "node9"}));
  EXPECT_EQ(r.members, (std::vector<std::size_t>{2, 2}));
  EXPECT_EQ(r.internal_messages, 1U);  // 0 -> 1 stays inside node7
  ASSERT_EQ(r.entities.size(), 4U);
  EXPECT_EQ(r.entities[3].entity, "node9.rank1");  // the report keeps the trace's names
  EXPECT_EQ(r.entities[3].body, "node9");
}

TEST(NamesAndHosts, RenameRewritesNamesBeforeSelection) {
  const SelectionReport r = select("rename = [\"^node(\\\\d+)\\\\.rank(\\\\d+)$\", \"n$1-$2\"]\nexclude = \"^n9-1$\"\n");
  EXPECT_EQ(r.bodies, (std::vector<std::string>{"n7-0", "n7-1", "n9-0"}));
  ASSERT_EQ(r.entities.size(), 4U);
  EXPECT_EQ(r.entities[3].entity, "node9.rank1");
  EXPECT_EQ(r.entities[3].body, "");
  EXPECT_NE(r.entities[3].reason.find("exclude"), std::string::npos);
  // A name the pattern does not find is kept.
  const SelectionReport kept = select("rename = [\"^rank\", \"r\"]\n");
  EXPECT_EQ(kept.bodies.front(), "node7.rank0");
}

TEST(NamesAndHosts, BadRulesAreLocatedErrors) {
  EXPECT_NE(errors("[trace]\nrename = [\"(\", \"x\"]\n").find("m.toml:2:11: error: 'rename': the pattern is not a valid regular expression"),
            std::string::npos)
      << errors("[trace]\nrename = [\"(\", \"x\"]\n");
  EXPECT_NE(errors("[trace]\nhost_from_name = [\"a\"]\n").find("'host_from_name' must be [pattern, replacement]"),
            std::string::npos);
  EXPECT_NE(errors("[trace]\nrename = \"a\"\n").find("'rename' must be an array of strings"), std::string::npos);
  EXPECT_NE(errors("[trace]\nrenam = [\"a\", \"b\"]\n").find("did you mean 'rename'"), std::string::npos);
}

}  // namespace
}  // namespace kanoko::mapping
