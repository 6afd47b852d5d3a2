// The trace's digest in the input hash, computed ahead while the inference reads the trace
// (src/sim/trace_hash.hpp).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "src/base/error.hpp"
#include "src/base/hash.hpp"
#include "src/sim/trace_hash.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::sim {
namespace KANOKO_UNITY_ID {

void write(const std::filesystem::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

/// The digest as docs/trajectory-format.md defines it, computed here independently.
std::uint64_t expected(const std::vector<std::pair<std::string, std::string>>& files) {
  Xxh3_64 h;
  for (const auto& [name, bytes] : files) {
    h.update_value(static_cast<std::uint64_t>(name.size()));
    h.update(name);
    h.update(bytes.data(), bytes.size());
  }
  return h.digest();
}

TEST(TraceHash, NamesAndBytesOfEveryFileInOrder) {
  test::TempDir dir;
  const std::string a(3'000'000, 'a');  // more than one read of 1 MiB
  write(dir.path() / "a.prv", a);
  write(dir.path() / "a.pcf", "pcf");
  EXPECT_EQ(trace_files_hash({dir.path() / "a.prv", dir.path() / "a.pcf"}),
            expected({{"a.prv", a}, {"a.pcf", "pcf"}}));
  EXPECT_NE(trace_files_hash({dir.path() / "a.pcf", dir.path() / "a.prv"}),
            trace_files_hash({dir.path() / "a.prv", dir.path() / "a.pcf"}));
}

TEST(TraceHash, APrefetchedDigestIsTheSameAndAChangedFileIsReadAgain) {
  test::TempDir dir;
  const auto trace = dir.path() / "t.kntr";
  write(trace, std::string(2'500'000, 'x'));
  prefetch_trace_files_hash(trace);
  prefetch_trace_files_hash(trace);  // once is enough: the second finds it under way
  EXPECT_EQ(trace_files_hash({trace}), expected({{"t.kntr", std::string(2'500'000, 'x')}}));
  // Rewritten (another size, then the same size later): the digest follows the bytes, not the
  // one computed for the earlier version.
  write(trace, "changed");
  EXPECT_EQ(trace_files_hash({trace}), expected({{"t.kntr", "changed"}}));
  prefetch_trace_files_hash(trace);
  EXPECT_EQ(trace_files_hash({trace}), expected({{"t.kntr", "changed"}}));
  const auto before = std::filesystem::last_write_time(trace);
  write(trace, "CHANGED");  // the same size, and perhaps the same clock tick: moved on explicitly
  std::filesystem::last_write_time(trace, before + std::chrono::seconds(10));
  EXPECT_EQ(trace_files_hash({trace}), expected({{"t.kntr", "CHANGED"}}));
}

TEST(TraceHash, AMissingFileIsAnErrorNamingIt) {
  test::TempDir dir;
  const auto missing = dir.path() / "gone.kntr";
  prefetch_trace_files_hash(missing);  // left alone
  prefetch_trace_files_hash(dir.path());  // a folder too
  try {
    (void)trace_files_hash({missing});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gone.kntr"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kanoko::sim
