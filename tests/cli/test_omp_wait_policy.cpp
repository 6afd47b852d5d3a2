// The OpenMP threads' waiting in the commands that evaluate forces (src/cli/main.cpp,
// choose_openmp_wait): a short spin unless the user chose.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/support/test_support.hpp"

namespace kanoko {
namespace {

using test::kanoko_binary;
using test::run_program;

/// What libgomp reports it read at its start (OMP_DISPLAY_ENV prints its settings to stderr).
std::string runtime_settings(const std::string& environment) {
  return run_program({"/usr/bin/env", "OMP_DISPLAY_ENV=verbose", environment, kanoko_binary(), "simulate", "--help"}).err;
}

TEST(OmpWaitPolicy, ThreadsSpinBrieflyThenSleep) {
  const std::string settings = runtime_settings("KANOKO_UNRELATED=1");
  EXPECT_NE(settings.find("GOMP_SPINCOUNT = '10000'"), std::string::npos) << settings;
}

TEST(OmpWaitPolicy, TheUsersChoiceWins) {
  std::string settings = runtime_settings("GOMP_SPINCOUNT=1234");
  EXPECT_NE(settings.find("GOMP_SPINCOUNT = '1234'"), std::string::npos) << settings;
  settings = runtime_settings("OMP_WAIT_POLICY=active");
  EXPECT_NE(settings.find("OMP_WAIT_POLICY = 'ACTIVE'"), std::string::npos) << settings;
  EXPECT_EQ(settings.find("GOMP_SPINCOUNT = '10000'"), std::string::npos) << settings;
}

}  // namespace
}  // namespace kanoko
