// The environment ctest gives every test (tests/CMakeLists.txt, KANOKO_TEST_ENV): no sound card
// needed, and a configuration folder of the tests' own where the viewer's first-run help has
// already been shown. CMake 3.25's gtest_discover_tests once kept only the first entry of that
// list, and dropped the RUN_SERIAL after it, without a word.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace kanoko {
namespace KANOKO_UNITY_ID {

TEST(TestHarness, EveryTestGetsTheWholeEnvironmentOfTheSuite) {
  const char* drivers = std::getenv("ALSOFT_DRIVERS");
  if (drivers == nullptr) GTEST_SKIP() << "run outside ctest (no ALSOFT_DRIVERS): nothing to check";
  EXPECT_STREQ(drivers, "null");
  const char* config = std::getenv("XDG_CONFIG_HOME");
  ASSERT_NE(config, nullptr) << "ctest gave ALSOFT_DRIVERS but not XDG_CONFIG_HOME";
  const std::filesystem::path folder(config);
  EXPECT_EQ(folder.filename(), "test-config");
  EXPECT_TRUE(std::filesystem::exists(folder / "kanoko" / "help-shown")) << folder;
}

}  // namespace
}  // namespace kanoko
