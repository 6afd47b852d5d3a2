// Replays every seed and every past finding (tests/fuzz/seeds/<target>/, regressions/<target>/)
// through the fuzz targets' own entry functions, so that the ordinary and the ASan test runs keep
// every fixed crash fixed. A target may only accept its input or throw kanoko::InputError (caught
// inside it): anything escaping it fails the test, a crash or sanitizer report fails the run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/fuzz/targets.hpp"
#include "tests/support/test_support.hpp"

namespace fs = std::filesystem;

namespace {

fs::path fuzz_dir() { return kanoko::test::source_dir() / "tests" / "fuzz"; }

/// The files of folder `kind` (seeds or regressions) of one target.
std::vector<fs::path> inputs(const std::string& kind, std::string_view target) {
  std::vector<fs::path> out;
  const fs::path dir = fuzz_dir() / kind / std::string(target);
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> target_names() {
  std::vector<std::string> names;
  for (const auto& t : kanoko::fuzz::targets()) names.emplace_back(t.name);
  return names;
}

class FuzzReplay : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzReplay, EverySeedAndRegressionIsAcceptedOrRefused) {
  const auto& all = kanoko::fuzz::targets();
  const auto target = std::find_if(all.begin(), all.end(), [](const auto& t) { return t.name == GetParam(); });
  ASSERT_NE(target, all.end());
  std::vector<fs::path> files = inputs("seeds", target->name);
  ASSERT_FALSE(files.empty()) << "no seeds for " << GetParam();
  for (const auto& f : inputs("regressions", target->name)) files.push_back(f);
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    const std::string bytes = kanoko::test::read_text(f);
    EXPECT_NO_THROW(target->run(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzReplay, ::testing::ValuesIn(target_names()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

TEST(FuzzFolders, EveryFolderNamesATarget) {
  // A regression filed under a misspelt folder would never be replayed.
  const std::vector<std::string> names = target_names();
  std::size_t folders = 0;
  for (const char* kind : {"seeds", "regressions"}) {
    for (const auto& e : fs::directory_iterator(fuzz_dir() / kind)) {
      ++folders;
      EXPECT_TRUE(e.is_directory()) << e.path() << " is not a folder named after a target";
      EXPECT_NE(std::find(names.begin(), names.end(), e.path().filename().string()), names.end())
          << e.path() << " names no fuzz target (targets.cpp)";
    }
  }
  EXPECT_GE(folders, names.size());
}

}  // namespace
