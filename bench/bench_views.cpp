// The space-time diagram's level-of-detail merge (VENUS's "dynamic-adjust-play-scale") against a
// baseline measured in the same run, on a long generated trace (N entities, M messages):
//
//   SpaceTime/EveryEvent/M   the baseline: every state segment and every message drawn as its
//                            own rectangle and line into an 800×400 cairo image
//   SpaceTime/Merged/M       the view as shipped: per pixel column per entity the dominant state,
//                            messages merged into bundles, then drawn into the same image
//   SpaceTime/Binned/M       the same with the raw detail dropped (index beyond its record
//                            limit): the picture comes from the fixed bins
//   Index/M                  building the index in one streaming pass (for scale)
//
// The ratio EveryEvent / Merged is the speed-up the merge buys. Run: build/bench/kanoko_bench_views
#include <benchmark/benchmark.h>
#include <cairo.h>

#include <random>
#include <string>

#include "src/trace/native_reader.hpp"
#include "src/views/draw.hpp"
#include "src/views/trace_index.hpp"
#include "src/views/view.hpp"

namespace {

constexpr int kEntities = 32;
constexpr int kWidth = 800;
constexpr int kHeight = 400;

// kEntities entities alternating compute / send / wait states, and `messages` messages between
// random pairs, in time order.
std::string make_trace(int messages) {
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> node(0, kEntities - 1);
  std::string s = "kntr 1\n";
  for (int i = 0; i < kEntities; ++i) s += "node 0 " + std::to_string(i) + "\n";
  const double dt = 1e-4;
  static const char* const kNames[] = {"compute", "send", "wait"};
  for (int k = 0; k < messages; ++k) {
    const double t = dt * k;
    const int e = k % kEntities;
    s += "state " + std::to_string(t) + " " + std::to_string(e) + " " + std::to_string(dt * kEntities) + " " +
         kNames[(k / kEntities) % 3] + "\n";
    s += "msg " + std::to_string(t) + " " + std::to_string(node(rng)) + " " + std::to_string(node(rng)) +
         " 64 recv=" + std::to_string(t + 5 * dt) + "\n";
  }
  return s + "end " + std::to_string(dt * messages + dt * kEntities) + "\n";
}

kanoko::views::TraceIndex make_index(int messages, std::size_t detail_limit) {
  kanoko::views::IndexOptions o;
  o.max_detail_records = detail_limit;
  kanoko::views::TraceIndexBuilder b(o);
  kanoko::trace::read_native_trace_text(make_trace(messages), "bench.kntr", b);
  return b.take();
}

void BM_SpaceTimeEveryEvent(benchmark::State& state) {
  const auto index = make_index(static_cast<int>(state.range(0)), std::size_t{1} << 26U);
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, kWidth, kHeight);
  const double row = static_cast<double>(kHeight) / kEntities;
  const auto x = [&](double t) { return t / index.end_s * kWidth; };
  for (auto _ : state) {
    cairo_t* cr = cairo_create(surface);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    for (std::size_t e = 0; e < index.entity_count(); ++e) {
      for (const auto& seg : index.segments[e]) {
        const auto c = kanoko::views::class_colour(seg.cls);
        cairo_set_source_rgb(cr, c.r, c.g, c.b);
        cairo_rectangle(cr, x(seg.begin_s), static_cast<double>(e) * row, x(seg.end_s) - x(seg.begin_s), row - 1);
        cairo_fill(cr);
      }
    }
    cairo_set_source_rgba(cr, 0.1, 0.1, 0.2, 0.55);
    cairo_set_line_width(cr, 0.6);
    for (const auto& m : index.messages) {
      cairo_move_to(cr, x(m.send_s), (m.src + 0.5) * row);
      cairo_line_to(cr, x(m.recv_s), (m.dst + 0.5) * row);
      cairo_stroke(cr);
    }
    cairo_destroy(cr);
    cairo_surface_flush(surface);
  }
  cairo_surface_destroy(surface);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void draw_view(benchmark::State& state, std::size_t detail_limit) {
  const auto index = make_index(static_cast<int>(state.range(0)), detail_limit);
  const auto view = kanoko::views::make_view("spacetime");
  const auto view_state = kanoko::views::default_view_state(index);
  for (auto _ : state) {
    const auto image = kanoko::views::render_view_image(*view, index, view_state, kWidth, kHeight);
    benchmark::DoNotOptimize(image.pixels.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_SpaceTimeMerged(benchmark::State& state) { draw_view(state, std::size_t{1} << 26U); }
void BM_SpaceTimeBinned(benchmark::State& state) { draw_view(state, 16); }

void BM_Index(benchmark::State& state) {
  const std::string text = make_trace(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    kanoko::views::TraceIndexBuilder b;
    kanoko::trace::read_native_trace_text(text, "bench.kntr", b);
    const auto index = b.take();
    benchmark::DoNotOptimize(index.messages.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

}  // namespace

BENCHMARK(BM_SpaceTimeEveryEvent)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SpaceTimeMerged)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SpaceTimeBinned)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Index)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
