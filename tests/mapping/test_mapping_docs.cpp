// docs/mapping-language.md and the parser must describe the same language.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "src/mapping/mapping.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::mapping {
namespace KANOKO_UNITY_ID {

/// Keys documented in the reference: rows "| `key` |" under headings "## [section]".
std::set<std::string> documented_keys() {
  const std::string doc = test::read_text(test::source_dir() / "docs" / "mapping-language.md");
  std::set<std::string> keys;
  std::string section;
  const std::regex heading(R"(^## \[([a-z.]+)\]\s*$)");
  const std::regex row(R"(^\| `([a-z_]+)` \|)");
  std::size_t pos = 0;
  while (pos < doc.size()) {
    std::size_t end = doc.find('\n', pos);
    if (end == std::string::npos) end = doc.size();
    const std::string line = doc.substr(pos, end - pos);
    std::smatch m;
    if (std::regex_match(line, m, heading)) {
      section = m[1];
    } else if (line.rfind("## ", 0) == 0) {
      section.clear();
    } else if (!section.empty() && std::regex_search(line, m, row)) {
      keys.insert(section + "." + std::string(m[1]));
    }
    pos = end + 1;
  }
  return keys;
}

/// Keys the parser asks for, with every optional table present so that all are visited.
std::set<std::string> parser_keys() {
  const Mapping m = parse_mapping_text(
      "[simulation]\n[bodies]\n[mass]\n[springs]\n[forces.repulsion]\n[forces.communication]\n"
      "[forces.friction]\n[forces.centre]\n[trace]\n[visual]\n",
      "all.toml");
  std::set<std::string> keys;
  for (const auto& k : m.known_keys) {
    // Section names themselves ("bodies", "forces", "forces.friction") are tables, not keys.
    if (k.find('.') != std::string::npos && k != "forces.repulsion" && k != "forces.communication" &&
        k != "forces.friction" && k != "forces.centre") {
      keys.insert(k);
    }
  }
  return keys;
}

TEST(MappingDocs, ReferenceListsExactlyTheParsersKeys) {
  const auto doc = documented_keys();
  const auto parser = parser_keys();
  EXPECT_GT(doc.size(), 20U);
  for (const auto& k : parser) EXPECT_TRUE(doc.count(k) != 0U) << "not documented: " << k;
  for (const auto& k : doc) EXPECT_TRUE(parser.count(k) != 0U) << "documented but unknown to the parser: " << k;
}

TEST(MappingDocs, ShippedMappingsAreValid) {
  for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() / "mappings")) {
    if (entry.path().extension() != ".toml") continue;
    EXPECT_NO_THROW(parse_mapping_file(entry.path())) << entry.path();
  }
}

}  // namespace
}  // namespace kanoko::mapping
