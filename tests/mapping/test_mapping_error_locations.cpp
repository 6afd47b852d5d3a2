// Issue 17, "every error located", for the mapping parser: every error on mutated mappings (the
// shipped examples and the fuzz seeds) names the file, line and column, and is one capped line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/mapping/mapping.hpp"
#include "tests/support/located_errors.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::mapping {
namespace KANOKO_UNITY_ID {

TEST(MappingErrorLocations, EveryErrorOnMutatedMappingsIsLocated) {
  std::vector<std::pair<std::string, std::string>> seeds;
  for (const char* folder : {"mappings", "tests/fuzz/seeds/mapping"}) {
    const auto dir = test::source_dir() / folder;
    for (const std::string& name : test::list_dir(dir)) seeds.emplace_back((dir / name).string(), test::read_text(dir / name));
  }
  // Small mappings whose one force a mutation easily removes (the whole-file "defines no force").
  seeds.emplace_back("springs", "[simulation]\ndt = 0.1\n[springs]\ntopology = \"ring\"\n");
  seeds.emplace_back("friction", "[forces.friction]\nbeta = 1\n");
  seeds.emplace_back("centre", "[simulation]\n[forces.centre]\n");
  ASSERT_GT(seeds.size(), 10U);
  const std::vector<std::string> tokens = {"[",  "]",    "=",      "\"",  "[forces.communication]", "[springs]", "gain",
                                           "\n", "1e400", "-1",    "#",   "{",                      ",",         "'''",
                                           "nan", "true", "[[a]]", "\\u0000"};
  int errors = 0;
  const auto problems = test::mutation_location_problems(
      seeds, 150, tokens, test::InputKind::text, {}, [](const std::string& s) { (void)parse_mapping_text(s, "m.toml"); },
      &errors);
  for (const auto& [problem, example] : problems) ADD_FAILURE() << example << ": " << problem;
  EXPECT_GT(errors, 100);
}

// A key that echoes a huge or multi-line token keeps the message one line within the cap.
TEST(MappingErrorLocations, AnEchoedHugeKeyIsEscapedAndCapped) {
  const std::string key(5000, 'k');
  try {
    (void)parse_mapping_text("[springs]\ntopology = \"ring\"\n\"" + key + "\\nx\" = 1\n", "m.toml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(test::location_problem(e, test::InputKind::text, {}), "") << e.what();
    EXPECT_NE(std::string(e.what()).find("m.toml:3:"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kanoko::mapping
