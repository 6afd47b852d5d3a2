// Cost of the mapping's formulas (issue 5), against baselines measured in the same run:
//
//   SetInterval/Constant/N   Model::set_interval with mass = base + load_gain × load and the
//                            normalised communication gain (no formulas): the baseline
//   SetInterval/Formula/N    the same with a mass formula and a per-pair weight formula, both
//                            evaluated for every body and sending pair of the interval
//   Derivative/N             one force evaluation (dy/dt, repulsion with the default evaluator):
//                            an RK4 step makes 4 of these, and an interval holds ≥ 1 step
//
// The formulas are "fast enough not to show in a profile" when Formula − Constant is small next
// to the derivative evaluations of one interval. Run: build/bench/kanoko_bench_mapping
#include <benchmark/benchmark.h>

#include <string>

#include "models/model.hpp"
#include "src/mapping/mapping.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trace/timeline.hpp"

namespace {

/// N nodes, 8 intervals of 0.1 s, each node sending to 4 others per interval, load samples.
kanoko::trace::Timeline make_timeline(int n) {
  std::string s = "kntr 1\n";
  for (int i = 0; i < n; ++i) s += "node 0 " + std::to_string(i) + "\n";
  for (int bin = 0; bin < 8; ++bin) {
    const std::string t = std::to_string(0.1 * bin + 0.01);
    for (int i = 0; i < n; ++i) s += "load " + t + " " + std::to_string(i) + " " + std::to_string((i % 10) / 10.0) + "\n";
    for (int i = 0; i < n; ++i) {
      for (int k = 1; k <= 4; ++k) s += "msg " + t + " " + std::to_string(i) + " " + std::to_string((i + k * 7) % n) + " 100\n";
    }
  }
  s += "end 0.8\n";
  kanoko::trace::TimelineOptions o;
  kanoko::trace::TimelineBuilder b(o);
  kanoko::trace::read_native_trace_text(s, "bench.kntr", b);
  return b.take();
}

const std::string kCommon = "[bodies]\nplacement = \"sphere\"\n[forces.repulsion]\nstrength = 0.01\n[forces.friction]\nbeta = 2\n";
const std::string kConstant = kCommon + "[mass]\nload_gain = 9\n[forces.communication]\ngain = 1\n";
const std::string kFormula =
    kCommon + "[mass]\nexpression = \"1 + 9 * load + sqrt(bytes_sent_total) / 1000\"\n"
              "[forces.communication]\nweight = \"sqrt(bytes / peak_bytes) * (1 + src_load)\"\n";

void set_interval(benchmark::State& state, const std::string& text) {
  const auto tl = make_timeline(static_cast<int>(state.range(0)));
  const auto m = kanoko::mapping::parse_mapping_text(text, "bench.toml");
  kanoko::models::Model model(m, tl);
  std::size_t bin = 0;
  for (auto _ : state) {
    model.set_interval(bin);
    bin = (bin + 1) % tl.bin_count;
    benchmark::DoNotOptimize(model.masses().data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_SetIntervalConstant(benchmark::State& state) { set_interval(state, kConstant); }
void BM_SetIntervalFormula(benchmark::State& state) { set_interval(state, kFormula); }

void BM_Derivative(benchmark::State& state) {
  const auto tl = make_timeline(static_cast<int>(state.range(0)));
  const auto m = kanoko::mapping::parse_mapping_text(kConstant, "bench.toml");
  kanoko::models::Model model(m, tl);
  model.set_threads(1);
  const Eigen::VectorXd y = model.initial_state();
  Eigen::VectorXd d(y.size());
  for (auto _ : state) {
    model.derivative(0, y, d);
    benchmark::DoNotOptimize(d.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

}  // namespace

BENCHMARK(BM_SetIntervalConstant)->Name("SetInterval/Constant")->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SetIntervalFormula)->Name("SetInterval/Formula")->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Derivative)->Name("Derivative")->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
