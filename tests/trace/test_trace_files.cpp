// trace_files: every file a read opens, per format, as the cache key of `kanoko simulate` needs
// them (a change in a .pcf, an OTF2 location file or a TI rank file must change the key).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/trace/readers.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::trace {
namespace KANOKO_UNITY_ID {

namespace fs = std::filesystem;

std::vector<std::string> names(const std::vector<fs::path>& files, const fs::path& base) {
  std::vector<std::string> out;
  for (const fs::path& f : files) out.push_back(f.lexically_relative(base).generic_string());
  return out;
}

TEST(TraceFiles, SingleFileFormatsAreTheFileAlone) {
  test::TempDir dir;
  test::write_text(dir / "t.kntr", "kntr 1\nnode 0 0\nend 1\n");
  EXPECT_EQ(trace_files(dir / "t.kntr"), std::vector<fs::path>{dir / "t.kntr"});
  const fs::path paje = test::source_dir() / "traces" / "simgrid" / "ring5.trace";
  EXPECT_EQ(trace_files(paje), std::vector<fs::path>{paje});
  EXPECT_EQ(trace_files(paje, "paje"), std::vector<fs::path>{paje});
}

TEST(TraceFiles, ParaverListsThePcfAndRowItReads) {
  const fs::path dir = test::shared_dir() / "traces" / "paraver";
  const fs::path prv = dir / "lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv";
  EXPECT_EQ(names(trace_files(prv), dir),
            (std::vector<std::string>{"lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv",
                                      "lulesh_4+4_with_uncores_sockets1+2.chop_5it.pcf",
                                      "lulesh_4+4_with_uncores_sockets1+2.chop_5it.row"}));
  // Named explicitly, and missing: what the reader opens.
  ReaderOptions o;
  o.paraver.pcf = dir / "qsort_beo3.pcf";
  o.paraver.row = dir / "no-such.row";
  EXPECT_EQ(names(trace_files(prv, "auto", o), dir),
            (std::vector<std::string>{"lulesh_4+4_with_uncores_sockets1+2.chop_5it.prv", "qsort_beo3.pcf"}));
}

TEST(TraceFiles, Otf2ListsTheArchiveFromItsAnchorOrFolder) {
  const fs::path dir = test::shared_dir() / "traces" / "otf2" / "ping-pong-otf2-papi";
  const std::vector<std::string> expected{"traces.otf2", "traces.def", "traces/0.def", "traces/0.evt", "traces/1.def",
                                          "traces/1.evt"};
  EXPECT_EQ(names(trace_files(dir / "traces.otf2"), dir), expected);
  // The folder reads as its anchor; its other files (scorep.cfg, MANIFEST.md) are not the trace.
  EXPECT_EQ(names(trace_files(dir), dir), expected);
}

TEST(TraceFiles, SimgridTiIndexListsItsRankFiles) {
  const fs::path dir = test::shared_dir() / "traces" / "simgrid-ti";
  const std::vector<fs::path> files = trace_files(dir / "smpi_replay.txt");
  ASSERT_EQ(files.size(), 33U);
  EXPECT_EQ(files[0], dir / "smpi_replay.txt");
  EXPECT_EQ(files[1], dir / "ti_traces_32_1" / "ti_trace0.txt");
  EXPECT_EQ(files[32], dir / "ti_traces_32_1" / "ti_trace31.txt");
  EXPECT_EQ(trace_files(dir / "actions_with_isend.txt"), std::vector<fs::path>{dir / "actions_with_isend.txt"});
}

TEST(TraceFiles, ABrokenTiIndexIsTheReadersError) {
  test::TempDir dir;
  fs::create_directories(dir / "r");
  test::write_text(dir / "r" / "0.txt", "0 init\n0 finalize\n");
  test::write_text(dir / "index.txt", "r/0.txt\nr/1.txt\n");
  try {
    trace_files(dir / "index.txt", "simgrid-ti");
    FAIL() << "a missing rank file was listed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("index.txt:2:1: error: rank 1's action file"), std::string::npos) << e.what();
  }
}

TEST(TraceFiles, UnknownFormatIsAnError) {
  test::TempDir dir;
  test::write_text(dir / "x.txt", "nothing a reader knows\n\x01\x02");
  EXPECT_THROW(trace_files(dir / "x.txt"), InputError);
  EXPECT_THROW(trace_files(dir / "x.txt", "pajé"), InputError);
}

}  // namespace
}  // namespace kanoko::trace
