// Mapping text edits (set_value, used by `kanoko suggest -o` and the viewer's save) on hostile
// text: very long lines and comments, headers written with blanks, strings with escaped quotes,
// and a deterministic mutation fuzz.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/mapping/edit.hpp"
#include "src/mapping/mapping.hpp"
#include "tests/support/test_support.hpp"
#include "tests/trace/mutation.hpp"

namespace kanoko::mapping {
namespace KANOKO_UNITY_ID {

Mapping parse(const std::string& text) { return parse_mapping_text(text, "m.toml"); }

const std::string kLongComment = "# " + std::string(40000, 'c');
const std::string kLongBlank(30000, ' ');

TEST(MappingEditHostile, LongBlankLinesAndCommentsBeforeAndAfterTheHeader) {
  const std::string text = kLongComment + "\n" + kLongBlank + "\n[forces.friction]\nbeta = 1\n" + kLongBlank +
                           "\n[springs]  " + kLongComment + "\ntopology = \"ring\"\n";
  std::string t = set_value(text, parse(text), "springs", "k", "4.0");
  EXPECT_NE(t.find("[springs]  " + kLongComment + "\nk = 4.0  # added by kanoko suggest\n"), std::string::npos);
  t = set_value(t, parse(t), "forces.repulsion", "strength", "0.1");  // a new section at the end
  EXPECT_NE(t.find("\n[forces.repulsion]  # added by kanoko suggest\nstrength = 0.1\n"), std::string::npos);
  t = set_value(t, parse(t), "forces.friction", "beta", "2.5");
  const Mapping after = parse(t);
  EXPECT_DOUBLE_EQ(after.springs.k, 4.0);
  EXPECT_DOUBLE_EQ(after.repulsion->strength, 0.1);
  EXPECT_DOUBLE_EQ(after.friction->beta, 2.5);
  EXPECT_EQ(t.substr(0, kLongComment.size() + 1), kLongComment + "\n");
}

TEST(MappingEditHostile, HeadersWithBlanksAndLookalikes) {
  const std::string text =
      "# [forces.friction]\n[forces.repulsion] # [forces.friction]\nstrength = 1\n\t[ forces . friction ]\t# damping\r\nbeta = 1\n";
  const std::string t = set_value(text, parse(text), "forces.friction", "alpha", "0.5");
  EXPECT_NE(t.find("[ forces . friction ]\t# damping\r\nalpha = 0.5  # added"), std::string::npos) << t;
}

TEST(MappingEditHostile, StringValuesWithEscapedQuotes) {
  const std::string text = "[trace]\nselect = \"a\\\"b\"  # picks \"a\"\n[forces.friction]\nbeta = 1\n";
  const std::string t = set_value(text, parse(text), "trace", "select", "\"^r\"");
  EXPECT_NE(t.find("select = \"^r\"  # picks \"a\"\n"), std::string::npos) << t;
  EXPECT_EQ(parse(t).trace.select, "^r");
  const std::string multi = "[trace]\nselect = \"\"\"^r\"\"\"\n[forces.friction]\nbeta = 1\n";
  EXPECT_THROW((void)set_value(multi, parse(multi), "trace", "select", "\"x\""), InputError);
}

TEST(MappingEditHostile, SuggestWritesACopyOfAMappingWithHugeLines) {
  test::TempDir dir;
  // paper-mesh.toml without its spring constant (suggest adds it under the header) and with a
  // 40,000-character comment and a 30,000-blank line, which `check` accepts.
  std::string text = test::read_text(test::source_dir() / "mappings" / "paper-mesh.toml");
  const std::size_t k = text.find("k = 4.0\n");
  ASSERT_NE(k, std::string::npos);
  text.erase(k, 8);
  text = kLongComment + "\n" + kLongBlank + "\n" + text;
  const std::size_t springs = text.find("[springs]");
  text.insert(springs + 9, "  " + kLongComment);
  const auto map = (dir / "m.toml").string();
  const auto out = (dir / "tuned.toml").string();
  test::write_text(map, text);
  const std::string trace = (test::source_dir() / "traces" / "mesh-skewed-light.kntr").string();
  ASSERT_EQ(test::run_kanoko({"check", map, "--trace", trace}).exit_code, 0);
  const auto r = test::run_kanoko({"suggest", trace, "--mapping", map, "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string tuned = test::read_text(out);
  EXPECT_NE(tuned.find("[springs]  " + kLongComment + "\nk = "), std::string::npos);
  EXPECT_EQ(tuned.substr(0, kLongComment.size() + kLongBlank.size() + 2), kLongComment + "\n" + kLongBlank + "\n");
  EXPECT_GT(parse_mapping_file(out).springs.k, 0.0);
}

/// Reads back what set_value wrote, for the fuzz's three targets.
bool reads_back(const Mapping& m, const std::string& key) {
  if (key == "beta") return m.friction && m.friction->beta == 3.5;
  if (key == "k") return m.springs.k == 4.0;
  return m.trace.select == "^r";
}

TEST(MappingEditHostile, DeterministicMutationFuzz) {
  const std::vector<std::string> seeds = {
      test::read_text(test::source_dir() / "mappings" / "paper-mesh.toml"),
      test::read_text(test::source_dir() / "mappings" / "hosts.toml"),
      "# c\n[trace]\nselect = 'x'  # \"q\"\nrename = [\"a(\\\\d)\", \"b$1\"]\n[ springs ]\nk = 2 # k\n"
      "[forces]\nfriction = { beta = 1.0 }\n"};
  const std::vector<std::string> tokens = {" ",   "\n",  "\"", "'",  "#",   "[",         "]",  "=",  ".",
                                           "\\",  "\r",  "\t", "{",  "}",   ",",         "\"\"\"", "'''",
                                           "\xff", "[springs]\n", "[forces.friction]\n", "k = 1\n", "beta = 0.5  # c\n",
                                           "[trace]\n", "select = \"a\\\"\"\n", std::string(3000, ' '), "# " + std::string(3000, 'c')};
  const std::vector<std::pair<std::string, std::string>> targets = {
      {"forces.friction", "beta"}, {"springs", "k"}, {"trace", "select"}};
  const std::vector<std::string> values = {"3.5", "4.0", "\"^r\""};
  std::mt19937_64 rng(20261125);
  int parsed = 0, edited = 0, refused = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    std::string text = seeds[rng() % seeds.size()];
    const int ops = 1 + static_cast<int>(rng() % 4);
    for (int op = 0; op < ops; ++op) trace::testing::mutate_once(text, rng, tokens);
    Mapping m;
    try {
      m = parse(text);
    } catch (const InputError&) {
      continue;
    }
    ++parsed;
    for (std::size_t t = 0; t < targets.size(); ++t) {
      std::string out;
      try {
        out = set_value(text, m, targets[t].first, targets[t].second, values[t]);
      } catch (const InputError& e) {
        ++refused;
        EXPECT_NE(std::string(e.what()).find("m.toml:"), std::string::npos) << e.what();
        continue;
      }
      try {
        const Mapping after = parse(out);
        ++edited;
        EXPECT_TRUE(reads_back(after, targets[t].second)) << targets[t].second << " in:\n" << out;
      } catch (const InputError&) {
        // The edit made the text invalid (a table defined twice, say): `check` reports it.
      }
    }
  }
  EXPECT_GT(parsed, 200);
  EXPECT_GT(edited, 200);
}

}  // namespace
}  // namespace kanoko::mapping
