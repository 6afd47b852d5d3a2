// The dependency direction of integrators/ (issue 15, "Where it goes"): the steppers and the force
// evaluation are two libraries that depend on nothing of the project but the base library, each
// including only its own folder and src/base. The model and everything above include them, never
// the other way round.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/test_support.hpp"

namespace kanoko::test {
namespace KANOKO_UNITY_ID {

/// "file:line: #include ..." for every project include of the files in `folder` (relative to the
/// source root) that names neither src/base nor `folder` itself.
std::vector<std::string> foreign_includes(const std::string& folder) {
  std::vector<std::string> found;
  const std::filesystem::path root = source_dir();
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root / folder)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".cpp" && ext != ".hpp") continue;
    ++files;
    std::ifstream in(entry.path());
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      const std::string prefix = "#include \"";
      if (!line.starts_with(prefix)) continue;
      const std::string path = line.substr(prefix.size());
      if (path.starts_with("src/base/") || path.starts_with(folder + "/")) continue;
      found.push_back(folder + "/" + entry.path().filename().string() + ":" + std::to_string(number) + ": " + line);
    }
  }
  EXPECT_GT(files, 3U) << folder;  // the folder was found and read
  return found;
}

TEST(IntegratorIncludes, StepperAndForceLibrariesIncludeOnlyTheBaseLibrary) {
  for (const std::string folder : {"integrators/steppers", "integrators/forces"}) {
    EXPECT_EQ(foreign_includes(folder), std::vector<std::string>{}) << folder;
  }
}

}  // namespace
}  // namespace kanoko::test
