// Throughput of the pipeline's stages, each next to a baseline measured in the same run (this
// machine is shared and noisy: compare ratios, not absolute numbers).
//
//   ReadNative/…         native trace → timeline, bytes per second
//   BaselineLineScan/…   memchr over the same bytes, counting lines: the floor any text reader pays
//   ModelStep/N          one RK4 step of a model with N bodies (springs on a ring, repulsion,
//                        communication, friction), body-steps per second
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <sstream>

#include "integrators/steppers/steppers.hpp"
#include "models/model.hpp"
#include "src/mapping/mapping.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trace/timeline.hpp"

namespace {

/// A synthetic native trace: `nodes` nodes, messages to random partners and periodic load.
const std::string& synthetic_trace(int nodes, int messages) {
  static std::map<std::pair<int, int>, std::string> cache;
  auto& text = cache[{nodes, messages}];
  if (!text.empty()) return text;
  std::mt19937_64 rng(42);
  std::ostringstream os;
  os << "kntr 1\n";
  for (int i = 0; i < nodes; ++i) os << "node 0 " << i << " name=rank-" << i << " host=node" << i / 16 << '\n';
  double t = 0;
  for (int m = 0; m < messages; ++m) {
    t += 1e-5;
    const auto src = static_cast<int>(rng() % static_cast<unsigned>(nodes));
    const auto dst = static_cast<int>(rng() % static_cast<unsigned>(nodes));
    os << "msg " << t << ' ' << src << ' ' << dst << ' ' << 64 + rng() % 4096 << " tag=" << m % 7 << " recv=" << t + 2e-6
       << '\n';
    if (m % 8 == 0) os << "state " << t << ' ' << src << " 0.00001 compute\n";
    if (m % 64 == 0) os << "load " << t << ' ' << dst << " 0." << rng() % 1000 << '\n';
  }
  os << "end " << t + 1e-3 << '\n';
  text = os.str();
  return text;
}

void ReadNative(benchmark::State& state) {
  const std::string& text = synthetic_trace(static_cast<int>(state.range(0)), 400'000);
  for (auto _ : state) {
    kanoko::trace::TimelineBuilder builder({0.1, {"compute"}});
    kanoko::trace::read_native_trace_text(text, "bench.kntr", builder);
    benchmark::DoNotOptimize(builder.take().pairs.size());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(text.size()));
}
BENCHMARK(ReadNative)->Arg(64)->Arg(4096)->Unit(benchmark::kMillisecond);

void BaselineLineScan(benchmark::State& state) {
  const std::string& text = synthetic_trace(static_cast<int>(state.range(0)), 400'000);
  for (auto _ : state) {
    std::size_t lines = 0;
    const char* p = text.data();
    const char* end = p + text.size();
    while ((p = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)))) != nullptr) {
      ++lines;
      ++p;
    }
    benchmark::DoNotOptimize(lines);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(text.size()));
}
BENCHMARK(BaselineLineScan)->Arg(64)->Arg(4096)->Unit(benchmark::kMillisecond);

void ModelStep(benchmark::State& state) {
  const auto n = static_cast<int>(state.range(0));
  std::string trace = "kntr 1\n";
  for (int i = 0; i < n; ++i) trace += "node 0 " + std::to_string(i) + "\n";
  for (int i = 0; i < n; ++i) trace += "msg 0.01 " + std::to_string(i) + " " + std::to_string((i + 1) % n) + " 100\n";
  trace += "end 1\n";
  kanoko::trace::TimelineBuilder builder({0.1, {"compute"}});
  kanoko::trace::read_native_trace_text(trace, "bench.kntr", builder);
  const kanoko::trace::Timeline tl = builder.take();
  const auto m = kanoko::mapping::parse_mapping_text(
      "[bodies]\nplacement = \"ring\"\n[springs]\ntopology = \"ring\"\n[forces.repulsion]\nstrength = 0.01\n"
      "[forces.communication]\nmode = \"symmetric\"\n[forces.friction]\nbeta = 1\n",
      "bench.toml");
  kanoko::models::Model model(m, tl);
  Eigen::VectorXd y = model.initial_state();
  auto stepper = kanoko::integrators::make_rk4(
      [&](double t, const Eigen::VectorXd& s, Eigen::VectorXd& d) { model.derivative(t, s, d); }, y.size());
  double t = 0;
  for (auto _ : state) {
    stepper->step(t, 1e-3, y);
    t += 1e-3;
  }
  benchmark::DoNotOptimize(y.data());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * n);
  state.SetLabel("items = body-steps");
}
BENCHMARK(ModelStep)->Arg(8)->Arg(27)->Arg(1000);

}  // namespace

BENCHMARK_MAIN();
