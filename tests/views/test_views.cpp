// The views as a whole: registry, linking through the shared selection (a click in one view is
// highlighted in the others, at the place where a click picks the same entity), export to PNG
// and SVG of the requested size, and the view group files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <regex>
#include <string>

#include "src/base/error.hpp"
#include "src/views/draw.hpp"
#include "src/views/view.hpp"
#include "tests/support/test_support.hpp"
#include "tests/views/view_test_traces.hpp"

namespace kanoko::views {
namespace KANOKO_UNITY_ID {

constexpr int kW = 480;
constexpr int kH = 360;

std::uint32_t pixel(const ViewImage& img, int x, int y) {
  std::uint32_t v = 0;
  std::memcpy(&v, img.pixels.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(img.stride) +
                      4 * static_cast<std::size_t>(x),
              4);
  return v;
}

TEST(Views, RegistryNamesAndSuggestions) {
  const auto names = view_names();
  EXPECT_EQ(names, (std::vector<std::string>{"spacetime", "matrix", "kiviat", "utilisation", "summary"}));
  for (const auto& n : names) EXPECT_EQ(make_view(n)->name(), n);
  try {
    (void)make_view("kiviatt", "--views");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'kiviat'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--views"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parse_view_list("matrix, kiviat"), (std::vector<std::string>{"matrix", "kiviat"}));
  EXPECT_THROW(parse_view_list("matrix,,kiviat"), InputError);
  EXPECT_THROW(parse_view_list("matrix,spacetme"), InputError);
  // Each view declares the data it reads.
  for (const auto& n : names) EXPECT_NE(make_view(n)->needs(), 0U) << n;
}

// Renders `view` with and without the selection of entity `e`; every pixel that changed is part
// of the highlight. A click there must pick `e` more often than any other entity.
std::int64_t entity_picked_in_highlight(const View& view, const TraceIndex& ix, std::int64_t e) {
  ViewState plain = default_view_state(ix);
  ViewState selected = plain;
  selected.selection.entity = e;
  const ViewImage a = render_view_image(view, ix, plain, kW, kH);
  const ViewImage b = render_view_image(view, ix, selected, kW, kH);
  std::map<std::int64_t, int> votes;
  const Rect area{0, 0, kW, kH};
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      if (pixel(a, x, y) == pixel(b, x, y)) continue;
      const Selection s = view.pick(x + 0.5, y + 0.5, area, ix, selected);
      if (s.has_entity()) ++votes[s.entity];
    }
  }
  if (votes.empty()) return -1;
  return std::max_element(votes.begin(), votes.end(), [](const auto& l, const auto& r) { return l.second < r.second; })->first;
}

TEST(Views, SelectionPropagatesBetweenViews) {
  const TraceIndex ix = index_text(ring_trace(5, true));
  const Rect area{0, 0, kW, kH};
  SelectionHub hub;
  std::vector<Selection> heard;
  const int id = hub.subscribe([&](const Selection& s) { heard.push_back(s); });
  // Click the matrix where it shows 1 -> 2.
  const auto matrix = make_view("matrix");
  const ViewState state = default_view_state(ix);
  bool clicked = false;
  for (int y = 0; y < kH && !clicked; y += 2) {
    for (int x = 0; x < kW && !clicked; x += 2) {
      const Selection s = matrix->pick(x, y, area, ix, state);
      if (s.pair_src == 1 && s.pair_dst == 2) {
        hub.set(apply_pick(hub.current(), s));
        clicked = true;
      }
    }
  }
  ASSERT_TRUE(clicked);
  ASSERT_EQ(heard.size(), 1U);
  EXPECT_EQ(heard[0].entity, 1);
  EXPECT_TRUE(heard[0].has_pair());
  // Every view with entities highlights entity 1 where a click picks entity 1.
  for (const char* name : {"spacetime", "matrix", "kiviat", "summary"}) {
    EXPECT_EQ(entity_picked_in_highlight(*make_view(name), ix, hub.current().entity), 1) << name;
    EXPECT_EQ(entity_picked_in_highlight(*make_view(name), ix, 3), 3) << name;
  }
  // A click in the utilisation view moves the selected time and keeps the entity.
  const auto util = make_view("utilisation");
  const Selection t = util->pick(kW / 2.0, kH / 2.0, area, ix, state);
  ASSERT_TRUE(t.has_time());
  EXPECT_FALSE(t.has_entity());
  hub.set(apply_pick(hub.current(), t));
  EXPECT_EQ(hub.current().entity, 1);
  EXPECT_NEAR(hub.current().time_s, t.time_s, 1e-12);
  hub.remove(id);
  hub.set(Selection{});
  EXPECT_EQ(heard.size(), 2U);
}

TEST(Views, ClickingAMessageInTheSpaceTimeDiagramPicksItsPair) {
  const TraceIndex ix = index_text(ring_trace(2, true));
  const auto st = make_view("spacetime");
  ViewState state = default_view_state(ix);
  const Rect area{0, 0, kW, kH};
  // Scan for a message pick and check it names a real message of that pair.
  int found = 0;
  for (int y = 0; y < kH; y += 1) {
    for (int x = 0; x < kW; x += 3) {
      const Selection s = st->pick(x, y, area, ix, state);
      if (!s.has_pair()) continue;
      ++found;
      ASSERT_GE(s.message, 0);
      const MessageRecord& m = ix.messages[static_cast<std::size_t>(s.message)];
      EXPECT_EQ(static_cast<std::int64_t>(m.src), s.pair_src);
      EXPECT_EQ(static_cast<std::int64_t>(m.dst), s.pair_dst);
      EXPECT_EQ((m.src + 1) % 4, m.dst);
    }
  }
  EXPECT_GT(found, 0);
  // The selected pair is drawn differently.
  ViewState sel = state;
  sel.selection.pair_src = 0;
  sel.selection.pair_dst = 1;
  EXPECT_NE(render_view_image(*st, ix, state, kW, kH).pixels, render_view_image(*st, ix, sel, kW, kH).pixels);
}

TEST(Views, ExportedImagesHaveTheRequestedSize) {
  const TraceIndex ix = index_text(ring_trace(3, true));
  test::TempDir dir;
  for (const auto& name : view_names()) {
    const auto view = make_view(name);
    ViewState state = default_view_state(ix);
    state.time_s = 3.0;
    const auto png = dir / (name + ".png");
    const auto svg = dir / (name + ".svg");
    export_view(*view, ix, state, png, 640, 300);
    export_view(*view, ix, state, svg, 500, 420);
    const std::string p = test::read_text(png);
    ASSERT_GT(p.size(), 24U) << name;
    EXPECT_EQ(p.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    EXPECT_EQ(p.substr(12, 4), "IHDR");
    const auto be32 = [&](std::size_t at) {
      return (static_cast<unsigned>(static_cast<unsigned char>(p[at])) << 24U) |
             (static_cast<unsigned>(static_cast<unsigned char>(p[at + 1])) << 16U) |
             (static_cast<unsigned>(static_cast<unsigned char>(p[at + 2])) << 8U) |
             static_cast<unsigned>(static_cast<unsigned char>(p[at + 3]));
    };
    EXPECT_EQ(be32(16), 640U) << name;
    EXPECT_EQ(be32(20), 300U) << name;
    const std::string s = test::read_text(svg);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(s, m, std::regex(R"(<svg[^>]*\swidth="([0-9.]+)(px)?\"[^>]*\sheight="([0-9.]+)(px)?\")")))
        << name << ": " << s.substr(0, 300);
    EXPECT_EQ(std::stod(m[1].str()), 500.0) << name;
    EXPECT_EQ(std::stod(m[3].str()), 420.0) << name;
    EXPECT_GT(s.size(), 1000U) << name;  // it drew something
  }
  // No temporary files are left behind, and bad requests write nothing.
  EXPECT_EQ(test::list_dir(dir.path()).size(), 2 * view_names().size());
  const auto view = make_view("matrix");
  EXPECT_THROW(export_view(*view, ix, default_view_state(ix), dir / "x.jpg", 100, 100), InputError);
  EXPECT_THROW(export_view(*view, ix, default_view_state(ix), dir / "x.png", 8, 100), InputError);
  EXPECT_THROW(export_view(*view, ix, default_view_state(ix), dir / "x.png", 100, 100000), InputError);
  EXPECT_EQ(test::list_dir(dir.path()).size(), 2 * view_names().size());
}

TEST(Views, DrawingIsDeterministicAndFollowsTheCursor) {
  const TraceIndex ix = index_text(ring_trace(3, true));
  for (const auto& name : view_names()) {
    const auto view = make_view(name);
    ViewState a = default_view_state(ix);
    a.time_s = 1.0;
    ViewState b = a;
    b.time_s = 5.0;
    EXPECT_EQ(render_view_image(*view, ix, a, 300, 200).pixels, render_view_image(*view, ix, a, 300, 200).pixels) << name;
    EXPECT_NE(render_view_image(*view, ix, a, 300, 200).pixels, render_view_image(*view, ix, b, 300, 200).pixels) << name;
  }
}

TEST(Views, ManyEntitiesAndLongTracesDrawInSmallAreas) {
  const TraceIndex ix = index_text(random_trace(64, 2000, 5, nullptr));
  for (const auto& name : view_names()) {
    const auto view = make_view(name);
    ViewState s = default_view_state(ix);
    s.selection.entity = 40;
    s.selection.pair_src = 40;
    s.selection.pair_dst = 3;
    const ViewImage img = render_view_image(*view, ix, s, 40, 30);
    EXPECT_EQ(img.width, 40);
    const ViewImage big = render_view_image(*view, ix, s, 900, 700);
    EXPECT_EQ(big.height, 700);
  }
}

TEST(Views, EmptyTraceDrawsWithoutEntities) {
  const TraceIndex ix = index_text("kntr 1\n");
  for (const auto& name : view_names()) {
    const auto view = make_view(name);
    const ViewState s = default_view_state(ix);
    EXPECT_NO_THROW((void)render_view_png(*view, ix, s, 200, 100)) << name;
    EXPECT_FALSE(view->pick(50, 50, Rect{0, 0, 200, 100}, ix, s).has_entity()) << name;
  }
}

}  // namespace
}  // namespace kanoko::views
