// The space-time view coloured by code location (src/views/location_colours): on
// traces/smpi/late4-locations.trace the late receive (the profile's first row) gets the first
// colour on the receivers' rows only; the drawn image shows it; `kanoko plot --colour-by`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "src/base/error.hpp"
#include "src/views/draw.hpp"
#include "src/views/location_colours.hpp"
#include "src/views/view.hpp"
#include "tests/support/test_support.hpp"

namespace kanoko::views {
namespace KANOKO_UNITY_ID {

std::filesystem::path late4() { return test::source_dir() / "traces/smpi/late4-locations.trace"; }

std::string receive_site() {
  return "late.c:" + std::to_string(test::line_with(test::source_dir() / "traces/smpi/late.c", "/* RECEIVE */"));
}

/// Pixels of the image (cairo ARGB32, opaque) within 6 of colour c.
int pixels_of(const ViewImage& im, const Rgb& c) {
  int n = 0;
  for (int y = 0; y < im.height; ++y) {
    for (int x = 0; x < im.width; ++x) {
      std::uint32_t px = 0;
      std::memcpy(&px, &im.pixels[static_cast<std::size_t>(y) * static_cast<std::size_t>(im.stride) + 4U * static_cast<std::size_t>(x)], 4);
      const auto ch = [&](unsigned shift) { return static_cast<int>((px >> shift) & 0xFFU); };
      if (std::abs(ch(16) - static_cast<int>(std::lround(255 * c.r))) <= 6 &&
          std::abs(ch(8) - static_cast<int>(std::lround(255 * c.g))) <= 6 &&
          std::abs(ch(0) - static_cast<int>(std::lround(255 * c.b))) <= 6) {
        ++n;
      }
    }
  }
  return n;
}

TEST(LocationColours, TheLateReceiveHasTheFirstColourOnTheReceiversRows) {
  const LocationColouring c = read_location_colouring(late4(), "auto");
  ASSERT_FALSE(c.labels.empty());
  EXPECT_EQ(c.labels[0], receive_site());
  EXPECT_LE(c.labels.size(), LocationColouring::kTop);
  const auto& entities = c.source->trace.entities();
  const double t0 = c.source->trace.begin_s();
  const double t1 = c.source->trace.end_s();
  for (EntityIndex e = 0; e < entities.size(); ++e) {
    const std::vector<std::uint8_t> cols = location_columns(c, e, t0, t1, 200);
    const auto first = std::count(cols.begin(), cols.end(), std::uint8_t{1});
    if (entities[e].rank == 0) {
      EXPECT_EQ(first, 0) << "the late sender never receives";
    } else {
      EXPECT_GT(first, 10) << entities[e].name;
    }
  }
  // Drawn: the first colour is on the picture, and only when colouring by location.
  const TraceIndex index = build_trace_index(late4());
  const auto view = make_view("spacetime");
  ViewState state = default_view_state(index);
  const int by_class = pixels_of(render_view_image(*view, index, state, 640, 300), location_colour(1));
  state.location_colours = std::make_shared<const LocationColouring>(c);
  const int by_location = pixels_of(render_view_image(*view, index, state, 640, 300), location_colour(1));
  EXPECT_EQ(by_class, 0);
  EXPECT_GT(by_location, 2000);
}

TEST(LocationColours, PlotCommandColoursByLocationOrRefusesATraceWithout) {
  test::TempDir dir;
  const auto ok = test::run_kanoko({"plot", "spacetime", late4().string(), "-o", (dir / "a.png").string(),
                                    "--colour-by", "location"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "a.png"));
  const auto none = test::run_kanoko({"plot", "spacetime", (test::source_dir() / "traces/smpi/pipeline8-flat.trace").string(),
                                      "-o", (dir / "b.png").string(), "--colour-by", "location"});
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("no code locations"), std::string::npos) << none.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "b.png"));
  const auto bad = test::run_kanoko({"plot", "spacetime", late4().string(), "-o", (dir / "c.png").string(),
                                     "--colour-by", "rainbow"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("expected class or location"), std::string::npos) << bad.err;
  const auto matrix = test::run_kanoko({"plot", "matrix", late4().string(), "-o", (dir / "d.png").string(),
                                        "--colour-by", "location"});
  EXPECT_NE(matrix.exit_code, 0);
}

}  // namespace
}  // namespace kanoko::views
