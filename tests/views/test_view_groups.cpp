// View group files: round trip, clear errors with line:column, and a corpus of mutated and
// truncated files that must either parse or fail with InputError (never crash).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "src/base/error.hpp"
#include "src/views/view.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::views {
namespace KANOKO_UNITY_ID {

std::string error_of(const std::string& text) {
  try {
    (void)parse_view_groups(text, "g.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ViewGroups, SaveLoadRoundTrip) {
  test::TempDir dir;
  const auto file = dir / "views.toml";
  save_view_group(file, "comm", {"spacetime", "matrix"});
  save_view_group(file, "util", {"kiviat", "utilisation", "summary"});
  EXPECT_EQ(load_view_group(file, "comm"), (std::vector<std::string>{"spacetime", "matrix"}));
  EXPECT_EQ(load_view_group(file, "util"), (std::vector<std::string>{"kiviat", "utilisation", "summary"}));
  save_view_group(file, "comm", {"matrix"});  // replaces
  EXPECT_EQ(load_view_group(file, "comm"), (std::vector<std::string>{"matrix"}));
  EXPECT_EQ(read_view_groups(file).size(), 2U);
  try {
    (void)load_view_group(file, "com");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'comm'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(save_view_group(file, "bad name", {"matrix"}), InputError);
  EXPECT_THROW(save_view_group(file, "x", {"nope"}), InputError);
  EXPECT_THROW(save_view_group(file, "x", {}), InputError);
  EXPECT_EQ(test::list_dir(dir.path()), (std::vector<std::string>{"views.toml"}));
}

TEST(ViewGroups, ErrorsNameLineAndColumn) {
  EXPECT_EQ(error_of("[groups]\na = [\"matrix\"]\n"), "");
  EXPECT_EQ(error_of("# c\n\n[groups]  # c\na=[]\n").find("g.toml:4"), 0U);
  EXPECT_NE(error_of("[groups]\na = [\"matrx\"]\n").find("g.toml:2:6: error: unknown view 'matrx' (did you mean 'matrix'?)"),
            std::string::npos)
      << error_of("[groups]\na = [\"matrx\"]\n");
  EXPECT_NE(error_of("[group]\n").find("g.toml:1:"), std::string::npos);
  EXPECT_NE(error_of("[group]\n").find("did you mean 'groups'"), std::string::npos);
  EXPECT_NE(error_of("a = [\"matrix\"]\n").find("after the [groups] header"), std::string::npos);
  EXPECT_NE(error_of("[groups]\na = [\"matrix\"]\na = [\"kiviat\"]\n").find("g.toml:3:"), std::string::npos);
  EXPECT_NE(error_of("[groups]\na = [\"matrix\" \"kiviat\"]\n").find("expected ',' or ']'"), std::string::npos);
  EXPECT_NE(error_of("[groups]\na = [\"matrix\"\n").find("g.toml:2:"), std::string::npos);
  EXPECT_NE(error_of("[groups]\na = [\"mat\\\"rix\"]\n").find("escapes"), std::string::npos);
  EXPECT_NE(error_of(std::string("[groups]\na\0 = []\n", 17)).find("NUL"), std::string::npos);
}

TEST(ViewGroups, MutatedAndTruncatedFilesNeverCrash) {
  const std::string seed =
      "# groups\n[groups]\ncomm = [\"spacetime\", \"matrix\"]  # c\nutil = [\"kiviat\",\"utilisation\", \"summary\"]\r\n";
  std::mt19937 rng(42);
  const std::string alphabet = "[]\"=,# \t\n\rabz_-\\\x01\xff";
  int parsed = 0;
  int refused = 0;
  for (std::size_t cut = 0; cut <= seed.size(); ++cut) {
    try {
      (void)parse_view_groups(seed.substr(0, cut), "t");
      ++parsed;
    } catch (const InputError&) {
      ++refused;
    }
  }
  for (int i = 0; i < 3000; ++i) {
    std::string s = seed;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      const std::size_t at = rng() % (s.size() + 1);
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0: s.insert(at, 1, c); break;
        case 1: if (at < s.size()) s.erase(at, 1); break;
        default: if (at < s.size()) s[at] = c; break;
      }
    }
    try {
      (void)parse_view_groups(s, "t");
      ++parsed;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("t:", 0), 0U) << e.what();
      ++refused;
    }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace kanoko::views
