// Issue 17, "every error located": every reader's errors on mutated inputs name the file and a
// line (and column) or, for the few whole-file problems, say what was expected; every message is
// one line within the cap. Seeds are the fuzz seeds and shipped examples; the readers run through
// their in-memory entry points, so thousands of mutants take well under a second each format.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "src/trace/chrome_reader.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trace/otf2_reader.hpp"
#include "src/trace/paje_reader.hpp"
#include "src/trace/paraver_reader.hpp"
#include "src/trace/readers.hpp"
#include "src/trace/simgrid_ti_reader.hpp"
#include "tests/support/located_errors.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

using test::InputKind;

/// A sink that drops everything: only the readers' own checks run.
class DiscardSink final : public TraceSink {
 public:
  void on_entity(const Entity&) override {}
  void on_link(const Link&) override {}
  void on_message(const Message&) override {}
  void on_load(const LoadSample&) override {}
  void on_state(const StateInterval&) override {}
  void on_end(double) override {}
};

/// Every file of a fuzz seed folder (name, content); at most the first `max_bytes` of each, cut at
/// a line end, so that the shipped multi-megabyte examples stay quick.
std::vector<std::pair<std::string, std::string>> seeds_in(const std::filesystem::path& folder,
                                                          std::size_t max_bytes = 16 * 1024) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& name : test::list_dir(folder)) {
    std::string text = test::read_text(folder / name);
    if (text.size() > max_bytes) text.resize(text.rfind('\n', max_bytes) + 1);
    out.emplace_back((folder / name).string(), std::move(text));
  }
  return out;
}

/// Adds the files of `folder` whose names end with `suffix` to `seeds`.
void add_examples(std::vector<std::pair<std::string, std::string>>& seeds, const std::filesystem::path& folder,
                  const std::string& suffix) {
  for (auto& [name, text] : seeds_in(folder)) {
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      seeds.emplace_back(std::move(name), std::move(text));
    }
  }
}

const std::filesystem::path kSeeds = test::source_dir() / "tests/fuzz/seeds";
constexpr int kRounds = 400;

/// Runs the mutants and fails with each distinct problem once; also checks that errors happened.
void expect_located(const std::vector<std::pair<std::string, std::string>>& seeds, const std::vector<std::string>& tokens,
                    const std::vector<std::string>& whole_file, const std::function<void(const std::string&)>& read) {
  ASSERT_FALSE(seeds.empty());
  int errors = 0;
  const auto problems =
      test::mutation_location_problems(seeds, kRounds, tokens, InputKind::text, whole_file, read, &errors);
  for (const auto& [problem, example] : problems) ADD_FAILURE() << example << ": " << problem;
  EXPECT_GT(errors, 0) << "no mutant was refused: the test checks nothing";
}

TEST(ErrorLocations, NativeTrace) {
  auto seeds = seeds_in(kSeeds / "native_trace");
  add_examples(seeds, test::source_dir() / "traces", "fib22-ring.kntr");
  add_examples(seeds, test::source_dir() / "traces", "mesh-skewed-heavy.kntr");
  expect_located(seeds, {"kntr 1\n", "entity", "send", "\n", " ", "1e308", "-1", "nan", "\"", "#"}, {},
                 [](const std::string& s) {
                   DiscardSink sink;
                   read_native_trace_text(s, "t.kntr", sink);
                 });
}

TEST(ErrorLocations, Paje) {
  auto seeds = seeds_in(kSeeds / "paje");
  add_examples(seeds, test::source_dir() / "traces/simgrid", ".trace");
  add_examples(seeds, test::source_dir() / "traces/smpi", ".trace");
  PajeOptions options;
  options.load_variable = "load";
  expect_located(seeds, {"%EventDef", "%EndEventDef", "\n", " ", "\"", "1e308", "-1", "string", "date"}, {},
                 [&options](const std::string& s) {
                   DiscardSink sink;
                   read_paje_trace_text(s, "t.trace", sink, options);
                 });
}

TEST(ErrorLocations, Chrome) {
  expect_located(seeds_in(kSeeds / "chrome"), {"{", "}", "[", "]", ",", "\"ph\":\"X\"", "\"ts\":", "1e308", "-1", "\""},
                 {}, [](const std::string& s) {
                   DiscardSink sink;
                   read_chrome_trace_text(s, "t.json", sink);
                 });
}

TEST(ErrorLocations, Paraver) {
  ParaverOptions options;
  options.load_event_type = 42000050;
  expect_located(seeds_in(kSeeds / "paraver"), {"\n", ":", "1:", "2:", "3:", "#Paraver", "\f", "-1", "99999999999"}, {},
                 [&options](const std::string& s) {
                   const auto [prv, pcf, row] = testing::split_paraver_bundle(s);
                   DiscardSink sink;
                   read_paraver_trace_text(prv, pcf, row, "t.prv", sink, options);
                 });
}

TEST(ErrorLocations, SimgridTi) {
  expect_located(seeds_in(kSeeds / "simgrid_ti"),
                 {"\n", " ", "compute", "send", "recv", "Isend", "wait", "bcast", "-1", "1e308", "p0", "p1"}, {},
                 [](const std::string& s) {
                   DiscardSink sink;
                   read_simgrid_ti_text(s, "t.txt", sink);
                 });
}

// OTF2 is binary: errors name the part of the archive (libotf2 gives no byte offsets). The anchor
// is not mutated: libotf2 itself spins for seconds on some anchor mutations (tests/fuzz/README.md).
TEST(ErrorLocations, Otf2) {
  const auto archive = test::shared_dir() / "traces/otf2/ping-pong-otf2";
  if (!std::filesystem::exists(archive)) GTEST_SKIP() << "no " << archive;
  test::TempDir dir;
  const auto copy = dir / "a";
  std::filesystem::copy(archive, copy, std::filesystem::copy_options::recursive);
  for (const auto& e : std::filesystem::recursive_directory_iterator(copy)) {
    std::filesystem::permissions(e.path(), std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  }
  for (const char* part : {"traces.def", "traces/0.evt", "traces/1.def"}) {
    const std::string original = test::read_text(copy / part);
    int errors = 0;
    const auto problems = test::mutation_location_problems(
        {{part, original}}, 60, {std::string(1, '\0'), std::string(4, '\xff'), "\x01\x02"}, InputKind::binary,
        {"directory holds"},
        [&](const std::string& s) {
          test::write_text(copy / part, s);
          DiscardSink sink;
          (void)read_otf2_trace(copy / "traces.otf2", sink);
        },
        &errors);
    test::write_text(copy / part, original);
    for (const auto& [problem, example] : problems) ADD_FAILURE() << example << ": " << problem;
    EXPECT_GT(errors, 0) << part;
  }
}

// A TI index line naming a 180 KB path: the message is one line within the cap, the path cut.
TEST(ErrorLocations, AHugeTiIndexLineIsCappedInTheMessage) {
  test::TempDir dir;
  test::write_text(dir / "r0.txt", "0 init\n0 compute 10\n0 finalize\n");
  test::write_text(dir / "index.txt", "r0.txt\n" + std::string(180 * 1024, 'x') + "\n");
  DiscardSink sink;
  try {
    read_trace(dir / "index.txt", sink, "simgrid-ti");
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(test::location_problem(e, InputKind::text, {}), "") << what.substr(0, 300);
    EXPECT_LE(what.size(), 400U) << what.substr(0, 300);
    EXPECT_NE(what.find("index.txt:2:1: error: rank 1's action file"), std::string::npos) << what.substr(0, 300);
    EXPECT_NE(what.find("more bytes) does not exist"), std::string::npos) << what.substr(0, 300);
  }
}

// Content no reader recognises: the message names the file, shows the first bytes (escaped, so
// the line stays one line) and lists the formats tried.
TEST(ErrorLocations, UnknownFormatShowsTheFirstBytesAndTheFormatsTried) {
  test::TempDir dir;
  const auto path = dir / "mystery.dat";
  test::write_text(path, "\x01\x02garbage\nsecond line" + std::string(500, 'z'));
  DiscardSink sink;
  try {
    read_trace(path, sink);
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(test::location_problem(e, InputKind::text, {}), "") << what;
    EXPECT_NE(what.find(path.string() + ":1:1: error: unknown trace format"), std::string::npos) << what;
    EXPECT_NE(what.find("'\\x01\\x02garbage\\x0asecond line"), std::string::npos) << what;
    EXPECT_NE(what.find("more bytes)"), std::string::npos) << what;
    EXPECT_NE(what.find("tried native, paje, otf2, chrome, paraver, simgrid-ti"), std::string::npos) << what;
  }
  test::write_text(path, "");
  try {
    read_trace(path, sink);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the file is empty"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kanoko::trace
