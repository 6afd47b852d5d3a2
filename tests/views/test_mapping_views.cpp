// Views named by the mapping ([visual] views): parsed with the mapping, checked against the view
// registry when `kanoko view` opens the run (an unknown name is an error naming the key, before
// any window opens), and overridden by --views.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "src/mapping/mapping.hpp"
#include "tests/support/test_support.hpp"
#include "tests/views/view_test_traces.hpp"

namespace kanoko::views {
namespace KANOKO_UNITY_ID {

using test::run_kanoko;

std::string mapping_with_views(const std::string& views) {
  std::ifstream in(test::source_dir() / "mappings/from-trace.toml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text + "\n[visual]\nviews = " + views + "\n";
}

TEST(MappingViews, ParsedWithTheVisualSection) {
  const mapping::Mapping m = mapping::parse_mapping_text(mapping_with_views(R"(["spacetime", "matrix"])"), "m.toml");
  EXPECT_EQ(m.visual.views, (std::vector<std::string>{"spacetime", "matrix"}));
  EXPECT_THROW((void)mapping::parse_mapping_text(mapping_with_views("\"spacetime\""), "m.toml"), InputError);
}

TEST(MappingViews, AnUnknownNameStopsTheViewerWithTheKeyAndASuggestion) {
#ifndef KANOKO_TEST_HAVE_SCENE
  GTEST_SKIP() << "kanoko view needs the scene (configured with -DKANOKO_SCENE=OFF)";
#endif
  test::TempDir dir;
  test::write_text(dir / "ring.kntr", ring_trace(2, true));
  test::write_text(dir / "m.toml", mapping_with_views(R"(["spacetim"])"));
  const auto run = dir / "ring.kntj";
  const auto sim =
      run_kanoko({"simulate", (dir / "ring.kntr").string(), "--mapping", (dir / "m.toml").string(), "-o", run.string()});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const auto r = run_kanoko({"view", run.string(), "--no-sound", "--exit-after", "0"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("[visual] views"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spacetime"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kanoko::views
