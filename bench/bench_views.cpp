// The companion views on big runs (issue 14, point 6), each against the old drawing measured in
// the same run where that is possible. Two generated MPI-like runs (tests/views/big_run.hpp):
// 512 ranks with about 1 M messages, and 4096 ranks with about 1 M messages.
//
//   Index/R                  building the TraceIndex from the run's records (one streaming pass)
//   SpaceTime/New/R          `spacetime` at 1280×360 as shipped: a picture of pixel columns ×
//                            pixel rows (rows merged beyond the pixels), messages as a density
//   SpaceTime/Old/R          the baseline, the drawing before issue 14: one rectangle per run of
//                            equal dominant class per entity row, every message bundle stroked
//   Matrix/New/R, Matrix/Old/512   the matrix aggregated to the pixels, against one rectangle per
//                            entity pair (Old only at 512: 4096² rectangles do not finish)
//   Kiviat/R, Summary/R, Utilisation/R   the other views at the same size
//
// Ratios: Old / New. Run: build/bench/kanoko_bench_views  (the runs are generated once, ~10 s).
#include <benchmark/benchmark.h>
#include <cairo.h>

#include <map>
#include <memory>
#include <string>

#include "src/views/draw.hpp"
#include "src/views/models.hpp"
#include "src/views/trace_index.hpp"
#include "src/views/view.hpp"
#include "tests/views/big_run.hpp"

namespace {

using namespace kanoko::views;

constexpr int kWidth = 1280;
constexpr int kHeight = 360;

const testing::GeneratedRun& run_of(std::uint32_t ranks) {
  static std::map<std::uint32_t, std::unique_ptr<testing::GeneratedRun>> runs;
  auto& r = runs[ranks];
  if (!r) {
    testing::BigRunSpec spec;
    spec.ranks = ranks;
    spec.messages = 1000000;
    r = std::make_unique<testing::GeneratedRun>(testing::generate_big_run(spec));
  }
  return *r;
}

const TraceIndex& index_of(std::uint32_t ranks) {
  static std::map<std::uint32_t, std::unique_ptr<TraceIndex>> indexes;
  auto& ix = indexes[ranks];
  if (!ix) {
    TraceIndexBuilder b;
    testing::replay(run_of(ranks), b);
    ix = std::make_unique<TraceIndex>(b.take());
  }
  return *ix;
}

void BM_Index(benchmark::State& state) {
  const auto& run = run_of(static_cast<std::uint32_t>(state.range(0)));
  for (auto _ : state) {
    TraceIndexBuilder b;
    testing::replay(run, b);
    const TraceIndex index = b.take();
    benchmark::DoNotOptimize(index.messages.data());
  }
  state.counters["records"] = static_cast<double>(run.events.size());
  state.counters["messages"] = static_cast<double>(run.messages);
}

void draw_view(benchmark::State& state, const char* name) {
  const TraceIndex& index = index_of(static_cast<std::uint32_t>(state.range(0)));
  const auto view = make_view(name);
  const ViewState view_state = default_view_state(index);
  for (auto _ : state) {
    const ViewImage image = render_view_image(*view, index, view_state, kWidth, kHeight);
    benchmark::DoNotOptimize(image.pixels.data());
  }
}

void BM_SpaceTimeNew(benchmark::State& state) { draw_view(state, "spacetime"); }
void BM_MatrixNew(benchmark::State& state) { draw_view(state, "matrix"); }
void BM_Kiviat(benchmark::State& state) { draw_view(state, "kiviat"); }
void BM_Summary(benchmark::State& state) { draw_view(state, "summary"); }
void BM_Utilisation(benchmark::State& state) { draw_view(state, "utilisation"); }

// The space-time drawing before issue 14 (the view's code then, on the same models): per entity
// row, one rectangle per run of equal dominant class, then every message bundle stroked.
void draw_old_spacetime(cairo_t* cr, const TraceIndex& index) {
  const Rect plot{81, 20, kWidth - 88.0, kHeight - 40.0};
  const std::size_t n = index.entity_count();
  const double row_h = plot.h / static_cast<double>(n);
  const auto columns = static_cast<std::size_t>(plot.w);
  const StateColumns cols = state_columns(index, index.begin_s, index.end_s, columns);
  const MessageBundles bundles = bundle_messages(index, index.begin_s, index.end_s, cols.columns);
  const double colw = plot.w / static_cast<double>(cols.columns);
  for (EntityIndex e = 0; e < n; ++e) {
    const double y = plot.y + static_cast<double>(e) * row_h;
    std::size_t start = 0;
    for (std::size_t c = 1; c <= cols.columns; ++c) {
      const StateClass k = cols.dominant(e, start);
      if (c < cols.columns && cols.dominant(e, c) == k) continue;
      set_colour(cr, class_colour(k), k == StateClass::Idle ? 0.35 : 1.0);
      cairo_rectangle(cr, plot.x + static_cast<double>(start) * colw, y, static_cast<double>(c - start) * colw,
                      std::max(row_h, 0.5));
      cairo_fill(cr);
      start = c;
    }
  }
  const double alpha = std::clamp(1.1 * static_cast<double>(columns) / static_cast<double>(bundles.bundles.size() + 1), 0.06, 0.55);
  for (const MessageBundle& b : bundles.bundles) {
    cairo_set_line_width(cr, std::min(4.0, 0.6 + 0.5 * std::log2(static_cast<double>(b.messages))));
    cairo_set_source_rgba(cr, 0.1, 0.1, 0.2, alpha);
    cairo_move_to(cr, plot.x + (b.send_column + 0.5) * colw, plot.y + (b.src + 0.5) * row_h);
    cairo_line_to(cr, plot.x + (b.recv_column + 0.5) * colw, plot.y + (b.dst + 0.5) * row_h);
    cairo_stroke(cr);
  }
}

// The matrix drawing before issue 14: one rectangle per entity pair.
void draw_old_matrix(cairo_t* cr, const TraceIndex& index) {
  const ViewState vs = default_view_state(index);
  double t0 = 0;
  double t1 = 0;
  current_interval(index, vs, t0, t1);
  const MatrixModel m = compute_matrix(index, t0, t1);
  const double cell = (kHeight - 30.0) / static_cast<double>(m.n);
  const double max = static_cast<double>(m.max_messages);
  for (std::size_t s = 0; s < m.n; ++s) {
    for (std::size_t d = 0; d < m.n; ++d) {
      const double t = max > 0 ? static_cast<double>(m.messages[s * m.n + d]) / max : 0.0;
      cairo_set_source_rgb(cr, 1 - 0.85 * t, 1 - 0.70 * t, 1 - 0.25 * t);
      cairo_rectangle(cr, 10 + static_cast<double>(d) * cell, 24 + static_cast<double>(s) * cell, cell, cell);
      cairo_fill(cr);
    }
  }
}

template <void (*Draw)(cairo_t*, const TraceIndex&)>
void draw_old(benchmark::State& state) {
  const TraceIndex& index = index_of(static_cast<std::uint32_t>(state.range(0)));
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, kWidth, kHeight);
  for (auto _ : state) {
    cairo_t* cr = cairo_create(surface);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    Draw(cr, index);
    cairo_destroy(cr);
    cairo_surface_flush(surface);
  }
  cairo_surface_destroy(surface);
}

void BM_SpaceTimeOld(benchmark::State& state) { draw_old<draw_old_spacetime>(state); }
void BM_MatrixOld(benchmark::State& state) { draw_old<draw_old_matrix>(state); }

}  // namespace

BENCHMARK(BM_Index)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_SpaceTimeNew)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SpaceTimeOld)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_MatrixNew)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MatrixOld)->Arg(512)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Kiviat)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Summary)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Utilisation)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
