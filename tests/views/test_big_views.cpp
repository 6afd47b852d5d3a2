// The views on big runs (issue 14, points 3, 4 and 6): the index built on a thread of its own
// with progress and cancel, the space-time view aggregated to the pixels (density where the
// messages are, a selection drawn as an outline), legends on `kanoko plot` pictures, labels that
// never collide at 64, 512 and 4096 entities, and per-view zoom and pan with bad inputs.
#include <gtest/gtest.h>
#include <cairo.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/views/builtin_views.hpp"
#include "src/views/draw.hpp"
#include "src/views/models.hpp"
#include "src/views/view.hpp"
#include "tests/support/test_support.hpp"
#include "tests/views/big_run.hpp"
#include "tests/views/view_test_traces.hpp"

namespace kanoko::views {
namespace KANOKO_UNITY_ID {

TraceIndex index_run(const testing::GeneratedRun& run) {
  TraceIndexBuilder b;
  testing::replay(run, b);
  return b.take();
}

testing::GeneratedRun small_run(std::uint32_t ranks, std::uint64_t messages) {
  testing::BigRunSpec spec;
  spec.ranks = ranks;
  spec.messages = messages;
  return testing::generate_big_run(spec);
}

// The run as a native trace file.
void write_native(const testing::GeneratedRun& run, const std::filesystem::path& path) {
  std::ofstream out(path);
  out << "kntr 1\n";
  for (std::uint32_t r = 0; r < run.ranks; ++r) out << "node 0 " << r << " name=r" << r << "\n";
  static constexpr const char* kStates[] = {"", "compute", "send", "recv", "idle"};
  char line[160];
  for (const auto& ev : run.events) {
    if (ev.kind == 0) {
      std::snprintf(line, sizeof line, "msg %.9g %u %u 64 recv=%.9g\n", ev.t, ev.a, ev.b, ev.t2);
    } else {
      std::snprintf(line, sizeof line, "state %.9g %u %.9g %s\n", ev.t, ev.a, ev.t2 - ev.t, kStates[ev.kind]);
    }
    out << line;
  }
  std::snprintf(line, sizeof line, "end %.9g\n", run.end_s);
  out << line;
}

struct Pixel {
  double r, g, b;
};
Pixel pixel_at(const ViewImage& img, int x, int y) {
  std::uint32_t v = 0;
  std::memcpy(&v, img.pixels.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(img.stride) + 4 * static_cast<std::size_t>(x), 4);
  return Pixel{((v >> 16U) & 0xFFU) / 255.0, ((v >> 8U) & 0xFFU) / 255.0, (v & 0xFFU) / 255.0};
}
// 1 for a pixel the message density dominates (its navy over the states' green, yellow, red).
double darkness(const Pixel& p) { return p.b > p.g + 0.05 ? 1.0 : 0.0; }

// Share of the pixels of `img` in [x0, x1) × [y0, y1) that the density dominates.
double mean_darkness(const ViewImage& img, double x0, double x1, double y0, double y1) {
  double sum = 0;
  int n = 0;
  for (int y = static_cast<int>(y0); y < static_cast<int>(y1); ++y) {
    for (int x = static_cast<int>(x0); x < static_cast<int>(x1); ++x) {
      sum += darkness(pixel_at(img, x, y));
      ++n;
    }
  }
  return n > 0 ? sum / n : 0.0;
}

// ---- index build: progress, cancel, background ------------------------------------------------

// Forwards to a builder and samples its progress as it goes.
class SamplingSink final : public trace::TraceSink {
 public:
  SamplingSink(TraceIndexBuilder& b, const IndexProgress& p) : b_(b), p_(p) {}
  void on_entity(const trace::Entity& e) override { b_.on_entity(e); }
  void on_link(const trace::Link& l) override { b_.on_link(l); }
  void on_message(const trace::Message& m) override {
    b_.on_message(m);
    sample();
  }
  void on_load(const trace::LoadSample& s) override { b_.on_load(s); }
  void on_state(const trace::StateInterval& s) override {
    b_.on_state(s);
    sample();
  }
  void on_end(double end_s) override { b_.on_end(end_s); }
  std::vector<double> fractions;
  std::vector<std::uint64_t> records;

 private:
  void sample() {
    if (++n_ % 5000 != 0) return;
    fractions.push_back(p_.fraction());
    records.push_back(p_.records.load());
  }
  TraceIndexBuilder& b_;
  const IndexProgress& p_;
  std::uint64_t n_ = 0;
};

TEST(BigViews, IndexBuildReportsProgressInOrder) {
  const auto run = small_run(64, 60000);
  IndexProgress progress;
  progress.expected_end_s.store(run.end_s);
  TraceIndexBuilder builder;
  builder.set_progress(&progress);
  SamplingSink sink(builder, progress);
  testing::replay(run, sink);
  const TraceIndex ix = builder.take();
  EXPECT_EQ(ix.message_count, run.messages);
  ASSERT_GE(sink.fractions.size(), 10U);
  for (std::size_t i = 1; i < sink.fractions.size(); ++i) {
    EXPECT_GE(sink.fractions[i], sink.fractions[i - 1]);
    EXPECT_GT(sink.records[i], sink.records[i - 1]);
  }
  EXPECT_GT(sink.fractions.front(), 0.0);
  EXPECT_LT(sink.fractions.front(), 0.2);
  EXPECT_GT(sink.fractions.back(), 0.8);
  EXPECT_LE(sink.fractions.back(), 0.95);  // not done before the index is
  EXPECT_TRUE(progress.finishing.load());
  EXPECT_NE(progress.text().find("%"), std::string::npos) << progress.text();
  // Without the expected span, the fraction is unknown and the text counts records.
  IndexProgress unknown;
  unknown.records.store(12345);
  EXPECT_LT(unknown.fraction(), 0.0);
  EXPECT_NE(unknown.text().find("12.3 k records"), std::string::npos) << unknown.text();
}

TEST(BigViews, IndexBuildIsCancelled) {
  const auto run = small_run(64, 20000);
  IndexProgress progress;
  progress.cancel.store(true);
  TraceIndexBuilder builder;
  builder.set_progress(&progress);
  EXPECT_THROW(testing::replay(run, builder), IndexBuildCancelled);
}

TEST(BigViews, IndexBuildJobRunsInTheBackground) {
  const test::TempDir dir;
  const auto run = small_run(64, 40000);
  write_native(run, dir / "run.kntr");
  {
    IndexBuildJob job(dir / "run.kntr", {}, "auto", run.end_s);
    const TraceIndex ix = job.take();
    EXPECT_TRUE(job.ready());
    EXPECT_EQ(ix.message_count, run.messages);
    EXPECT_EQ(ix.entity_count(), 64U);
    EXPECT_TRUE(job.progress().done.load());
    EXPECT_DOUBLE_EQ(job.progress().fraction(), 1.0);
    EXPECT_GT(job.progress().records.load(), 0U);
  }
  {
    IndexBuildJob job(dir / "run.kntr", {}, "auto", run.end_s);
    job.cancel();
    EXPECT_THROW((void)job.take(), IndexBuildCancelled);
  }
  {  // a job dropped while running cancels and joins its thread
    const IndexBuildJob job(dir / "run.kntr");
  }
  {
    IndexBuildJob job(dir / "missing.kntr");
    try {
      (void)job.take();
      FAIL() << "no error";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("missing.kntr"), std::string::npos) << e.what();
    }
  }
}

// ---- space-time aggregation --------------------------------------------------------------------

TEST(BigViews, AggregatedSpaceTimeShowsTheDenseRegion) {
  const auto run = small_run(512, 250000);
  const TraceIndex ix = index_run(run);
  const auto view = make_view("spacetime");
  const ViewState s = default_view_state(ix);
  constexpr int kW = 1280;
  constexpr int kH = 360;
  const ViewImage img = render_view_image(*view, ix, s, kW, kH);
  const Rect plot = view->zoom_axes(Rect{0, 0, kW, kH}, ix, s).plot;
  const auto x_of = [&](double t) { return plot.x + (t - ix.begin_s) / ix.span_s() * plot.w; };
  const auto y_of = [&](double e) { return plot.y + e / 512.0 * plot.h; };
  const double hx0 = x_of(run.hot_begin_s) + 2;
  const double hx1 = x_of(run.hot_end_s) - 2;
  const double hy0 = y_of(run.hot_rank_begin) + 2;
  const double hy1 = y_of(run.hot_rank_end) - 2;
  const double hot = mean_darkness(img, hx0, hx1, hy0, hy1);
  // The same time span on other ranks, and the same ranks at other times.
  const double other_ranks = mean_darkness(img, hx0, hx1, y_of(run.hot_rank_end) + 2, plot.y + plot.h - 1);
  const double other_times = mean_darkness(img, plot.x + 1, x_of(run.hot_begin_s) - 2, hy0, hy1);
  EXPECT_GT(hot, 2 * other_ranks) << hot << " vs " << other_ranks;
  EXPECT_GT(hot, 2 * other_times) << hot << " vs " << other_times;
  EXPECT_GT(hot, 0.3);
  // Not a solid block: the states show through outside the hot region.
  EXPECT_LT(other_ranks, 0.3);
  // A click on a row picks its entity and the time, not some message among a million.
  const double yc = y_of(300.5);
  const Selection pick = view->pick(plot.x + plot.w / 2, yc, Rect{0, 0, kW, kH}, ix, s);
  EXPECT_EQ(pick.entity, 300);
  EXPECT_TRUE(pick.has_time());
  EXPECT_FALSE(pick.has_pair());
  EXPECT_EQ(pick.message, -1);
}

TEST(BigViews, SelectedRankIsAnOutlineNotAFlood) {
  const auto run = small_run(512, 60000);
  const TraceIndex ix = index_run(run);
  const auto view = make_view("spacetime");
  constexpr int kW = 1280;
  constexpr int kH = 360;
  ViewState plain = default_view_state(ix);
  ViewState selected = plain;
  selected.selection.entity = 200;
  selected.selection.time_s = ix.span_s() / 2;
  plain.selection.time_s = selected.selection.time_s;  // only the entity differs
  const ViewImage a = render_view_image(*view, ix, plain, kW, kH);
  const ViewImage b = render_view_image(*view, ix, selected, kW, kH);
  const Rect plot = view->zoom_axes(Rect{0, 0, kW, kH}, ix, plain).plot;
  const double row_y = plot.y + 200.5 / 512.0 * plot.h;
  int changed = 0;
  int far = 0;
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      const Pixel p = pixel_at(a, x, y);
      const Pixel q = pixel_at(b, x, y);
      if (p.r == q.r && p.g == q.g && p.b == q.b) continue;
      ++changed;
      if (std::abs(y - row_y) > 8) ++far;
    }
  }
  EXPECT_GT(changed, static_cast<int>(plot.w));  // the outline is there
  EXPECT_LT(changed, static_cast<int>(plot.w * 8));  // and it is no fill
  EXPECT_EQ(far, 0);
  // Rows many pixels high: the selected row's inside keeps its states, only its edge changes.
  const TraceIndex few = index_run(small_run(24, 3000));
  ViewState p2 = default_view_state(few);
  ViewState s2 = p2;
  s2.selection.entity = 10;
  const ViewImage c = render_view_image(*view, few, p2, kW, kH);
  const ViewImage d = render_view_image(*view, few, s2, kW, kH);
  const Rect plot2 = view->zoom_axes(Rect{0, 0, kW, kH}, few, p2).plot;
  const double row_h = plot2.h / 24;
  ASSERT_GE(row_h, 10);
  int edge = 0;
  int inside = 0;
  for (int y = static_cast<int>(plot2.y + 10 * row_h); y < static_cast<int>(plot2.y + 11 * row_h); ++y) {
    for (int x = static_cast<int>(plot2.x) + 4; x < static_cast<int>(plot2.x + plot2.w) - 4; ++x) {
      const Pixel p = pixel_at(c, x, y);
      const Pixel q = pixel_at(d, x, y);
      const bool same = p.r == q.r && p.g == q.g && p.b == q.b;
      const bool in = y >= plot2.y + 10 * row_h + 3 && y < plot2.y + 11 * row_h - 4;
      if (!same) ++(in ? inside : edge);
    }
  }
  EXPECT_GT(edge, static_cast<int>(plot2.w));
  EXPECT_EQ(inside, 0);
}

// ---- legends -------------------------------------------------------------------------------------

// Pixels of a PNG file as a ViewImage.
ViewImage read_png(const std::filesystem::path& path) {
  cairo_surface_t* s = cairo_image_surface_create_from_png(path.string().c_str());
  ViewImage img;
  if (cairo_surface_status(s) == CAIRO_STATUS_SUCCESS) {
    cairo_surface_flush(s);
    img.width = cairo_image_surface_get_width(s);
    img.height = cairo_image_surface_get_height(s);
    img.stride = cairo_image_surface_get_stride(s);
    const unsigned char* d = cairo_image_surface_get_data(s);
    img.pixels.assign(d, d + static_cast<std::size_t>(img.stride) * static_cast<std::size_t>(img.height));
  }
  cairo_surface_destroy(s);
  return img;
}

// Pixels of exactly colour c in rows [y0, y1).
int count_colour(const ViewImage& img, const Rgb& c, int y0, int y1) {
  int n = 0;
  for (int y = std::max(0, y0); y < std::min(img.height, y1); ++y) {
    for (int x = 0; x < img.width; ++x) {
      const Pixel p = pixel_at(img, x, y);
      if (std::abs(p.r - c.r) < 0.01 && std::abs(p.g - c.g) < 0.01 && std::abs(p.b - c.b) < 0.01) ++n;
    }
  }
  return n;
}

TEST(BigViews, PlotPicturesHaveTheirLegends) {
  const test::TempDir dir;
  write_native(small_run(16, 3000), dir / "run.kntr");
  constexpr int kH = 400;
  const auto plot = [&](const std::string& view) {
    const auto out = dir / (view + ".png");
    const auto r = test::run_kanoko({"plot", view, (dir / "run.kntr").string(), "-o", out.string(), "--size", "800x400"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return read_png(out);
  };
  // The legend strip is the bottom kLegendHeight pixels.
  const int strip = kH - static_cast<int>(kLegendHeight) - 2;
  for (const std::string view : {"spacetime", "utilisation"}) {
    const ViewImage img = plot(view);
    ASSERT_EQ(img.height, kH) << view;
    for (const StateClass c : {StateClass::Busy, StateClass::Overhead, StateClass::Idle}) {
      EXPECT_GE(count_colour(img, class_fill(c), strip, kH), 25) << view << " " << class_name(c);
    }
  }
  // The matrix's scale: its ramp's darkest end is in the strip.
  const ViewImage matrix = plot("matrix");
  int ramp = 0;
  for (int y = strip; y < kH; ++y) {
    for (int x = 0; x < matrix.width; ++x) {
      const Pixel p = pixel_at(matrix, x, y);
      if (p.b > p.r + 0.4) ++ramp;
    }
  }
  EXPECT_GE(ramp, 40);
  const ViewImage kiviat = plot("kiviat");
  EXPECT_GE(count_colour(kiviat, class_colour(StateClass::Busy), strip, kH), 25);
  // And the legends say their units.
  const ViewState s = default_view_state(index_text(ring_trace(2, true)));
  const TraceIndex ix = index_text(ring_trace(2, true));
  const auto texts = [&](const std::string& view, const ViewState& st) {
    std::string all;
    for (const auto& t : view_text_boxes(*make_view(view), ix, st, 800, 400)) all += t.text + "|";
    return all;
  };
  EXPECT_NE(texts("matrix", s).find("messages per cell"), std::string::npos);
  ViewState bytes = s;
  bytes.bytes = true;
  EXPECT_NE(texts("matrix", bytes).find("bytes per cell"), std::string::npos);
  EXPECT_NE(texts("kiviat", s).find("busy share"), std::string::npos);
  EXPECT_NE(texts("utilisation", s).find("number of entities"), std::string::npos);
  EXPECT_NE(texts("spacetime", s).find("idle (waiting)"), std::string::npos);
}

// ---- labels --------------------------------------------------------------------------------------

TEST(BigViews, LabelsNeverOverlap) {
  for (const std::uint32_t ranks : {64U, 512U, 4096U}) {
    const TraceIndex ix = index_run(small_run(ranks, 4 * ranks));
    for (const std::string name : {"matrix", "kiviat", "spacetime"}) {
      const auto view = make_view(name);
      for (const auto& [w, h] : {std::pair{640, 480}, std::pair{400, 300}, std::pair{1280, 360}}) {
        const auto boxes = view_text_boxes(*view, ix, default_view_state(ix), w, h);
        int entity_labels = 0;
        for (const auto& b : boxes) entity_labels += b.text.rfind("rank ", 0) == 0 ? 1 : 0;
        EXPECT_GE(entity_labels, 4) << name << " " << ranks << " " << w << "x" << h;
        for (std::size_t i = 0; i < boxes.size(); ++i) {
          for (std::size_t j = i + 1; j < boxes.size(); ++j) {
            EXPECT_FALSE(boxes_overlap(boxes[i].box, boxes[j].box))
                << name << " " << ranks << " " << w << "x" << h << ": '" << boxes[i].text << "' and '" << boxes[j].text << "'";
          }
        }
      }
    }
  }
}

// ---- zoom and pan --------------------------------------------------------------------------------

TEST(BigViews, ZoomAndPanMoveTheVisibleWindow) {
  const TraceIndex ix = index_run(small_run(64, 3000));
  const auto view = make_view("spacetime");
  const Rect area{0, 0, 800, 400};
  ViewState s = default_view_state(ix);
  const Rect plot = view->zoom_axes(area, ix, s).plot;
  const double x = plot.x + plot.w * 0.25;
  const double y = plot.y + plot.h * 0.75;
  const double t_before = s.window_t0_s + 0.25 * (s.window_t1_s - s.window_t0_s);
  const ViewImage before = render_view_image(*view, ix, s, 800, 400);
  ASSERT_TRUE(zoom_at(s, *view, area, ix, x, y, 2.0));
  EXPECT_NEAR(s.window_t1_s - s.window_t0_s, ix.span_s() / 2, 1e-9 * ix.span_s());
  EXPECT_NEAR(s.window_t0_s + 0.25 * (s.window_t1_s - s.window_t0_s), t_before, 1e-9 * ix.span_s());
  EXPECT_NEAR(s.entity1 - s.entity0, 32.0, 1e-9);
  EXPECT_NEAR(s.entity0 + 0.75 * (s.entity1 - s.entity0), 48.0, 1e-9);  // the entity under the pointer stays
  // A panel draws the shared cursor and selection in its own window.
  ViewState shared = default_view_state(ix);
  shared.time_s = 0.002;
  shared.selection.entity = 7;
  const ViewState panel = with_window(shared, s);
  EXPECT_EQ(panel.time_s, 0.002);
  EXPECT_EQ(panel.selection.entity, 7);
  EXPECT_EQ(panel.window_t0_s, s.window_t0_s);
  EXPECT_EQ(panel.entity0, s.entity0);
  EXPECT_EQ(panel.entity1, s.entity1);
  EXPECT_TRUE(zoomed(s, ix));
  EXPECT_NE(render_view_image(*view, ix, s, 800, 400).pixels, before.pixels);
  // A pick after the zoom finds the entity under the pointer (on its label: no message lines).
  EXPECT_EQ(view->pick(plot.x - 10, y + 0.3 * plot.h / 32, area, ix, s).entity, 48);
  // Pan: the content follows the pointer; the window stays inside the run.
  const double t0 = s.window_t0_s;
  ASSERT_TRUE(pan(s, *view, area, ix, -plot.w / 4, 0));
  EXPECT_NEAR(s.window_t0_s - t0, (s.window_t1_s - s.window_t0_s) / 4, 1e-9 * ix.span_s());
  (void)pan(s, *view, area, ix, 1e9, -1e9);
  EXPECT_DOUBLE_EQ(s.window_t0_s, ix.begin_s);
  EXPECT_DOUBLE_EQ(s.entity1, 64.0);
  reset_zoom(s, ix);
  EXPECT_FALSE(zoomed(s, ix));
  EXPECT_EQ(render_view_image(*view, ix, s, 800, 400).pixels, before.pixels);
}

TEST(BigViews, ZoomRefusesBadInputs) {
  const TraceIndex ix = index_run(small_run(64, 3000));
  const Rect area{0, 0, 800, 400};
  for (const std::string name : {"spacetime", "matrix", "kiviat", "utilisation"}) {
    const auto view = make_view(name);
    ViewState s = default_view_state(ix);
    const Rect plot = view->zoom_axes(area, ix, s).plot;
    const double x = plot.x + plot.w / 3;
    const double y = plot.y + plot.h / 3;
    const ViewState start = s;
    for (const double f : {0.0, -2.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
      EXPECT_FALSE(zoom_at(s, *view, area, ix, x, y, f)) << name << " " << f;
    }
    EXPECT_FALSE(zoom_at(s, *view, area, ix, plot.x - 5, y, 2.0)) << name;  // outside the plot
    EXPECT_FALSE(zoom_at(s, *view, area, ix, x, std::nan(""), 2.0)) << name;
    EXPECT_FALSE(pan(s, *view, area, ix, std::nan(""), 1)) << name;
    EXPECT_EQ(s.window_t0_s, start.window_t0_s);
    EXPECT_EQ(s.entity1, start.entity1);
    // Zooming out past the whole run does nothing; a huge factor is one bounded step.
    EXPECT_FALSE(zoom_at(s, *view, area, ix, x, y, 0.5)) << name;
    EXPECT_TRUE(zoom_at(s, *view, area, ix, x, y, 1e300)) << name;
    for (int i = 0; i < 200; ++i) (void)zoom_at(s, *view, area, ix, x, y, 1e300);
    double t0 = 0;
    double t1 = 0;
    visible_window(ix, s, t0, t1);
    EXPECT_GT(t1 - t0, 0.0) << name;
    EXPECT_GE(t1 - t0, ix.span_s() * kMinZoomFraction * 0.999) << name;
    double e0 = 0;
    double e1 = 0;
    visible_entities(ix, s, e0, e1);
    EXPECT_GE(e1 - e0, 1.0 - 1e-9) << name;
    EXPECT_NO_THROW((void)render_view_png(*view, ix, s, 400, 200)) << name;
  }
  // The summary has no time axis: the wheel scrolls its rows instead (SummaryScrollsItsRows).
  ViewState s = default_view_state(ix);
  EXPECT_FALSE(zoom_at(s, *make_view("summary"), area, ix, 100, 100, std::nan("")));
  EXPECT_FALSE(zoom_at(s, *make_view("summary"), area, ix, 100, 100, 2.0));  // already at the first row
  // An empty trace: nothing to zoom, nothing breaks.
  const TraceIndex empty = index_text("kntr 1\n");
  for (const auto& name : view_names()) {
    ViewState e = default_view_state(empty);
    const auto view = make_view(name);
    (void)zoom_at(e, *view, area, empty, 200, 200, 2.0);
    (void)pan(e, *view, area, empty, 10, 10);
    EXPECT_NO_THROW((void)render_view_png(*view, empty, e, 300, 200)) << name;
  }
}

// The summary table of 64 ranks in a short panel: the wheel and a drag scroll its rows, a pick
// finds the row under the pointer after the scroll, the selection no longer pulls the rows back
// while the user has scrolled, and reset_zoom() brings back the first row.
TEST(BigViews, SummaryScrollsItsRows) {
  const TraceIndex ix = index_run(small_run(64, 3000));
  const Rect area{0, 0, 700, 260};
  const auto view = make_view("summary");
  ViewState s = default_view_state(ix);
  const ZoomAxes axes = view->zoom_axes(area, ix, s);
  ASSERT_TRUE(axes.rows_y);
  ASSERT_GT(axes.row_height, 0.0);
  const double x = axes.plot.x + axes.plot.w / 2;
  const double y = axes.plot.y + axes.row_height / 2;  // the first row shown
  EXPECT_EQ(view->pick(x, y, area, ix, s).entity, 0);
  const auto before = render_view_image(*view, ix, s, 700, 260).pixels;
  EXPECT_FALSE(zoom_at(s, *view, area, ix, x, y, 1.25));  // up at the top: nothing to scroll
  ASSERT_TRUE(zoom_at(s, *view, area, ix, x, y, 1 / 1.25));  // one notch down
  EXPECT_EQ(view->pick(x, y, area, ix, s).entity, static_cast<std::int64_t>(kScrollRows));
  EXPECT_TRUE(zoomed(s, ix));
  EXPECT_NE(render_view_image(*view, ix, s, 700, 260).pixels, before);
  // A drag up by two rows shows two rows further.
  ASSERT_TRUE(pan(s, *view, area, ix, 0, -2 * axes.row_height));
  EXPECT_EQ(view->pick(x, y, area, ix, s).entity, static_cast<std::int64_t>(kScrollRows) + 2);
  // The scroll wins over a selection elsewhere in the table.
  s.selection.entity = 0;
  EXPECT_EQ(view->pick(x, y, area, ix, s).entity, static_cast<std::int64_t>(kScrollRows) + 2);
  // Scrolling far down stops with the last row in view, and one notch up moves at once.
  for (int i = 0; i < 100; ++i) (void)zoom_at(s, *view, area, ix, x, y, 0.5);
  const double rows = axes.plot.h / axes.row_height;
  EXPECT_EQ(view->pick(x, axes.plot.y + (rows - 0.5) * axes.row_height, area, ix, s).entity, 63);
  const auto first_at_end = view->pick(x, y, area, ix, s).entity;
  ASSERT_TRUE(zoom_at(s, *view, area, ix, x, y, 1.25));
  EXPECT_EQ(view->pick(x, y, area, ix, s).entity, first_at_end - static_cast<std::int64_t>(kScrollRows));
  reset_zoom(s, ix);
  s.selection = {};
  EXPECT_FALSE(zoomed(s, ix));
  EXPECT_EQ(render_view_image(*view, ix, s, 700, 260).pixels, before);
}

TEST(BigViews, PlotShowsAnEntityRange) {
  const test::TempDir dir;
  write_native(small_run(16, 3000), dir / "run.kntr");
  const std::string trace = (dir / "run.kntr").string();
  const std::string out = (dir / "m.png").string();
  auto r = test::run_kanoko({"plot", "matrix", trace, "-o", out, "--entities", "4:8"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const std::string bad : {"8:4", "0:99", "x:3", "-1:3"}) {
    r = test::run_kanoko({"plot", "matrix", trace, "-o", (dir / "bad.png").string(), "--entities", bad});
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_NE(r.err.find("--entities"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.png"));
  r = test::run_kanoko({"plot", "--help"});
  EXPECT_NE(r.out.find("--entities"), std::string::npos);
}

// ---- the benchmark's smoke version ---------------------------------------------------------------

TEST(BigViews, BenchSmokeEveryViewDrawsA4096RankRun) {
  const auto run = small_run(4096, 40000);
  const TraceIndex ix = index_run(run);
  EXPECT_EQ(ix.message_count, run.messages);
  for (const auto& name : view_names()) {
    const auto view = make_view(name);
    const ViewImage img = render_view_image(*view, ix, default_view_state(ix), 1280, 360);
    EXPECT_EQ(img.width, 1280) << name;
  }
  std::string title;
  for (const auto& t : view_text_boxes(*make_view("spacetime"), ix, default_view_state(ix), 1280, 360)) {
    if (t.text.rfind("space-time", 0) == 0) title = t.text;
  }
  EXPECT_NE(title.find("rows merged"), std::string::npos) << title;
  EXPECT_NE(title.find("as density"), std::string::npos) << title;
}

}  // namespace
}  // namespace kanoko::views
