// Speed of the simulation engine (issue 4), measured against the machine itself.
//
//   FmaPeak/threads            the machine's double-precision peak, measured in the same run:
//                              independent chains of fused multiply-adds on the widest vectors the
//                              CPU has. Every force case reports GFLOP/s and its fraction of it.
//   BarnesHut/N/threads        one Barnes–Hut evaluation (θ = 0.5, monopole) on a Plummer sphere;
//                              from N = 10 000 on with the median and 99th-percentile relative
//                              force error against direct summation at 1 000 bodies (err_median,
//                              err_p99; integrators/forces/force_accuracy.hpp)
//   BarnesHutV1/N/threads      the same with issue 4's evaluator (Evaluator::BarnesHutV1), the
//                              baseline: the table gives every new figure as a ratio to it
//   BarnesHutQuadrupole/N/threads   the same with quadrupoles
//   BarnesHutTuning/N/group/θ×100/q/leaf   group size, θ, multipole (q = 1: quadrupole) and leaf
//                              size at 2 threads, with the errors: what chose the defaults
//   Direct/N/threads           one direct-summation evaluation on a Plummer sphere
//   Auto/N                     one evaluation with `auto` (the evaluator a mapping gets by default)
//   Rk4Step/N/threads          one full RK4 step of a model: 4 evaluations, springs (ring),
//                              communication pulls, friction, masses, state update; the tree built
//                              at the step's first evaluation and refitted at the three others
//   Rk4StepV1/N/threads        the same with the baseline: barnes-hut-v1, a tree per evaluation
//                              (both at N = 1 000, 10 000, 100 000 and 1 000 000, 2 threads)
//   SimulateWrite/N/k          `kanoko simulate` on a generated trace (RK4, 20 steps) with a frame
//                              every k steps; the share of wall time spent writing the trajectory
//                              (frames and the final commit, which syncs the file to disk)
//
// Each case runs 5 repetitions; the tables at the end show medians (wall time): issue 4's targets,
// then issue 15's, each figure as a ratio to the baseline barnes-hut-v1 of the same run, with the
// accuracy of both (docs/engine-performance.md). Run all with
//   build/bench/kanoko_bench_forces
// or a subset with --benchmark_filter=REGEX, e.g. issue 15's comparison alone with
//   --benchmark_filter='^BarnesHut(V1)?/|Rk4Step' --benchmark_enable_random_interleaving=true
// (interleaved repetitions: a change of load hits the evaluator and its baseline alike). The
// machine is shared: run it when it is quiet, and compare ratios from one run.
// Machine-readable results: --benchmark_out=FILE --benchmark_out_format=json (Google Benchmark's
// own), which scripts/speed-table.py reads for docs/speed.md.
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "integrators/forces/body_distributions.hpp"
#include "integrators/forces/force_accuracy.hpp"
#include "integrators/forces/force_kernels.hpp"
#include "integrators/forces/repulsion.hpp"
#include "integrators/steppers/steppers.hpp"
#include "models/model.hpp"
#include "src/mapping/mapping.hpp"
#include "src/sim/simulate.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trace/timeline.hpp"

namespace {

using kanoko::integrators::Evaluator;
using kanoko::integrators::ForceScratch;
using kanoko::integrators::RepulsionParams;

constexpr int kRepetitions = 5;

// ---------------------------------------------------------------------------------------------
// Peak: independent FMA chains, enough of them to cover latency × pipes.

constexpr int kFmaChains = 12;
constexpr std::int64_t kFmaRounds = 20'000'000;

__attribute__((target("avx512f"))) double fma_chains_avx512(std::int64_t rounds) {
  __m512d acc[kFmaChains];
  for (int c = 0; c < kFmaChains; ++c) acc[c] = _mm512_set1_pd(1.0 + 1e-3 * c);
  const __m512d a = _mm512_set1_pd(0.999999);
  const __m512d b = _mm512_set1_pd(1e-7);
  for (std::int64_t r = 0; r < rounds; ++r) {
    // Unrolled, so that the chains live in registers (not on the stack).
#pragma GCC unroll 16
    for (int c = 0; c < kFmaChains; ++c) acc[c] = _mm512_fmadd_pd(acc[c], a, b);
  }
  __m512d s = acc[0];
  for (int c = 1; c < kFmaChains; ++c) s = _mm512_add_pd(s, acc[c]);
  double out[8];
  _mm512_storeu_pd(out, s);
  double sum = 0;
  for (double v : out) sum += v;
  return sum;
}

__attribute__((target("avx2,fma"))) double fma_chains_avx2(std::int64_t rounds) {
  __m256d acc[kFmaChains];
  for (int c = 0; c < kFmaChains; ++c) acc[c] = _mm256_set1_pd(1.0 + 1e-3 * c);
  const __m256d a = _mm256_set1_pd(0.999999);
  const __m256d b = _mm256_set1_pd(1e-7);
  for (std::int64_t r = 0; r < rounds; ++r) {
    // Unrolled, so that the chains live in registers (not on the stack).
#pragma GCC unroll 16
    for (int c = 0; c < kFmaChains; ++c) acc[c] = _mm256_fmadd_pd(acc[c], a, b);
  }
  __m256d s = acc[0];
  for (int c = 1; c < kFmaChains; ++c) s = _mm256_add_pd(s, acc[c]);
  double out[4];
  _mm256_storeu_pd(out, s);
  return out[0] + out[1] + out[2] + out[3];
}

/// Double-precision flops per FMA instruction of the widest available kind (2 per lane).
int flops_per_fma_instruction(bool avx512) { return avx512 ? 16 : 8; }

void FmaPeak(benchmark::State& state) {
  const auto threads = static_cast<int>(state.range(0));
  const bool avx512 = __builtin_cpu_supports("avx512f") != 0;
  const bool avx2 = __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0;
  if (!avx512 && !avx2) {
    state.SkipWithError("no FMA unit to probe");
    return;
  }
  for (auto _ : state) {
    std::vector<std::thread> pool;
    std::vector<double> sink(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        sink[static_cast<std::size_t>(t)] = avx512 ? fma_chains_avx512(kFmaRounds) : fma_chains_avx2(kFmaRounds);
      });
    }
    for (auto& th : pool) th.join();
    benchmark::DoNotOptimize(sink.data());
  }
  const double flops = static_cast<double>(kFmaRounds) * kFmaChains * flops_per_fma_instruction(avx512) * threads;
  state.counters["GFLOPs"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(FmaPeak)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(kRepetitions);

// ---------------------------------------------------------------------------------------------
// Force evaluations

const Eigen::Matrix3Xd& plummer(std::size_t n) {
  static std::map<std::size_t, Eigen::Matrix3Xd> cache;
  auto it = cache.find(n);
  if (it == cache.end()) it = cache.emplace(n, kanoko::integrators::plummer_sphere(n, 42)).first;
  return it->second;
}

/// Resident memory of this process (bytes), from /proc.
std::size_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      std::size_t kb = 0;
      status >> kb;
      return kb * 1024;
    }
    status.ignore(1 << 20, '\n');
  }
  return 0;
}

/// Sample of bodies and their direct-summation forces for the accuracy counters, per N.
struct Reference {
  std::vector<Eigen::Index> targets;
  std::vector<Eigen::Vector3d> forces;
};

const Reference& reference(std::size_t n) {
  static std::map<std::size_t, Reference> cache;
  auto it = cache.find(n);
  if (it == cache.end()) {
    Reference r;
    r.targets = kanoko::integrators::spread_sample(n, 1000);
    r.forces = kanoko::integrators::reference_repulsion(plummer(n), r.targets);
    it = cache.emplace(n, std::move(r)).first;
  }
  return it->second;
}

/// Adds err_median and err_p99 (relative force error against direct summation at 1 000 bodies)
/// for one evaluation with `p` (strength 1).
void accuracy_counters(benchmark::State& state, const Eigen::Matrix3Xd& x, const RepulsionParams& p) {
  if (x.cols() < 10'000) return;
  ForceScratch scratch;
  Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, x.cols());
  kanoko::integrators::add_repulsion(x, p, scratch, f);
  const Reference& r = reference(static_cast<std::size_t>(x.cols()));
  const auto e = kanoko::integrators::relative_force_errors(f, r.targets, r.forces);
  state.counters["err_median"] = e.median();
  state.counters["err_p99"] = e.p99();
}

struct EvalOptions {
  Evaluator evaluator = Evaluator::BarnesHut;
  kanoko::integrators::Multipole multipole = kanoko::integrators::Multipole::Monopole;
  double theta = 0.5;
  std::uint32_t group_size = 0;
  std::uint32_t leaf_size = 8;
};

void evaluate_forces(benchmark::State& state, const EvalOptions& o, std::size_t n, int threads) {
  RepulsionParams p;
  p.strength = 1.0;
  p.evaluator = o.evaluator;
  p.theta = o.theta;
  p.multipole = o.multipole;
  p.group_size = o.group_size;
  p.leaf_size = o.leaf_size;
  p.threads = threads;
  const std::size_t rss_before = resident_bytes();
  const Eigen::Matrix3Xd& x = plummer(n);
  ForceScratch scratch;
  Eigen::Matrix3Xd f = Eigen::Matrix3Xd::Zero(3, x.cols());
  kanoko::integrators::add_repulsion(x, p, scratch, f);  // warm-up: sizes the scratch
  for (auto _ : state) {
    kanoko::integrators::add_repulsion(x, p, scratch, f);
    benchmark::DoNotOptimize(f.data());
  }
  const auto& s = scratch.stats();
  namespace k = kanoko::integrators::detail;
  const double flops =
      static_cast<double>(s.body_body) * k::kFlopsBodyBody +
      static_cast<double>(s.body_cell) *
          (o.multipole == kanoko::integrators::Multipole::Quadrupole ? k::kFlopsBodyQuadrupole : k::kFlopsBodyMonopole);
  state.counters["GFLOPs"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["interactions_per_body"] =
      static_cast<double>(s.body_body + s.body_cell) / static_cast<double>(n);
  // Memory: the positions and forces (48 bytes per body) and the evaluator's scratch.
  state.counters["bytes_per_body"] = 48.0 + static_cast<double>(scratch.bytes()) / static_cast<double>(n);
  // Growth of the resident set over the case (positions, forces, scratch), when measurable: only
  // meaningful the first time a size is used in the process.
  const std::size_t rss_after = resident_bytes();
  state.counters["rss_growth_per_body"] =
      rss_after > rss_before ? static_cast<double>(rss_after - rss_before) / static_cast<double>(n) : 0.0;
  if (s.evaluator != Evaluator::Direct) accuracy_counters(state, x, p);
  state.SetLabel(std::string(kanoko::integrators::to_string(s.evaluator)) + ", " +
                 kanoko::integrators::to_string(s.simd) + ", " + std::to_string(s.threads) + " thr");
}

void evaluate_forces(benchmark::State& state, Evaluator evaluator,
                     kanoko::integrators::Multipole multipole = kanoko::integrators::Multipole::Monopole) {
  EvalOptions o;
  o.evaluator = evaluator;
  o.multipole = multipole;
  evaluate_forces(state, o, static_cast<std::size_t>(state.range(0)), static_cast<int>(state.range(1)));
}

void BarnesHut(benchmark::State& state) { evaluate_forces(state, Evaluator::BarnesHut); }
void BarnesHutV1(benchmark::State& state) { evaluate_forces(state, Evaluator::BarnesHutV1); }
void Direct(benchmark::State& state) { evaluate_forces(state, Evaluator::Direct); }
void Auto(benchmark::State& state) { evaluate_forces(state, Evaluator::Auto); }
void BarnesHutQuadrupole(benchmark::State& state) {
  evaluate_forces(state, Evaluator::BarnesHut, kanoko::integrators::Multipole::Quadrupole);
}
void BarnesHutTuning(benchmark::State& state) {
  EvalOptions o;
  o.group_size = static_cast<std::uint32_t>(state.range(1));
  o.theta = static_cast<double>(state.range(2)) / 100.0;
  o.multipole =
      state.range(3) != 0 ? kanoko::integrators::Multipole::Quadrupole : kanoko::integrators::Multipole::Monopole;
  o.leaf_size = static_cast<std::uint32_t>(state.range(4));
  evaluate_forces(state, o, static_cast<std::size_t>(state.range(0)), 2);
}

using BenchFunction = void (*)(benchmark::State&);

/// Registers `current` and `baseline` alike, so that the tables can take ratios: at `sizes` (the
/// products of N and threads), and at N = 1 000 000 on 2 threads once per repetition.
bool register_with_baseline(std::pair<const char*, BenchFunction> current, std::pair<const char*, BenchFunction> baseline,
                            const std::vector<std::vector<std::int64_t>>& sizes) {
  for (const auto& [name, fn] : {current, baseline}) {
    benchmark::RegisterBenchmark(name, fn)
        ->ArgsProduct(sizes)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Repetitions(kRepetitions);
    benchmark::RegisterBenchmark(name, fn)
        ->Args({1'000'000, 2})
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Repetitions(kRepetitions);
  }
  return true;
}

// The current evaluator and the baseline.
[[maybe_unused]] const bool kComparisonRegistered =
    register_with_baseline({"BarnesHut", &BarnesHut}, {"BarnesHutV1", &BarnesHutV1}, {{10'000, 100'000}, {1, 2}});
// Direct summation around the `auto` threshold, and the exact 1k case.
BENCHMARK(Direct)
    ->ArgsProduct({{1'000, 2'048, 4'096}, {2}})
    ->Args({1'000, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Repetitions(kRepetitions);
BENCHMARK(BarnesHut)
    ->ArgsProduct({{1'000, 2'048, 4'096}, {2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Repetitions(kRepetitions);
BENCHMARK(BarnesHutV1)->Args({1'000, 2})->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(kRepetitions);
BENCHMARK(Auto)->Args({10'000, 2})->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(kRepetitions);
BENCHMARK(BarnesHutQuadrupole)
    ->Args({100'000, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Repetitions(kRepetitions);
BENCHMARK(BarnesHutTuning)
    ->ArgsProduct({{100'000}, {16, 32, 64, 128, 192, 256, 384, 512, 768, 1024}, {50}, {0}, {8}})
    ->ArgsProduct({{100'000}, {128, 192, 256, 384, 512, 768}, {50}, {0}, {4, 6, 12, 16}})
    ->ArgsProduct({{100'000}, {32, 64, 384, 768}, {60, 70, 80}, {1}, {8}})
    ->ArgsProduct({{1'000'000}, {256, 384, 512, 768, 1024}, {50}, {0}, {8}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Repetitions(3);

// ---------------------------------------------------------------------------------------------
// A full RK4 step of the model

kanoko::trace::Timeline ring_timeline(int n) {
  std::string trace = "kntr 1\n";
  for (int i = 0; i < n; ++i) trace += "node 0 " + std::to_string(i) + "\n";
  for (int i = 0; i < n; i += 5) trace += "load 0.0 " + std::to_string(i) + " 0.5\n";
  for (int i = 0; i < n; i += 3) trace += "msg 0.01 " + std::to_string(i) + " " + std::to_string((i + 1) % n) + " 100\n";
  trace += "end 1\n";
  kanoko::trace::TimelineBuilder builder({0.1, {"compute"}});
  kanoko::trace::read_native_trace_text(trace, "bench.kntr", builder);
  return builder.take();
}

/// One RK4 step of the model; `baseline`: barnes-hut-v1 and a tree per evaluation (no begin_step).
void rk4_step(benchmark::State& state, bool baseline) {
  const auto n = static_cast<int>(state.range(0));
  const auto threads = static_cast<int>(state.range(1));
  const kanoko::trace::Timeline tl = ring_timeline(n);
  const auto m = kanoko::mapping::parse_mapping_text(
      "[bodies]\nplacement = \"ring\"\n[mass]\nload_gain = 1\n[springs]\ntopology = \"ring\"\n"
      "[forces.repulsion]\nstrength = 1e-6\n[forces.communication]\nmode = \"symmetric\"\n"
      "[forces.friction]\nbeta = 1\n",
      "bench.toml");
  kanoko::models::Model model(m, tl);
  model.set_threads(threads);
  if (baseline) model.set_repulsion_evaluator(Evaluator::BarnesHutV1);
  // The bodies of a Plummer sphere (the ring placement only sets the springs' natural lengths).
  Eigen::VectorXd y = model.initial_state();
  Eigen::Map<Eigen::Matrix3Xd>(y.data(), 3, n) = plummer(static_cast<std::size_t>(n));
  auto stepper = kanoko::integrators::make_rk4(
      [&](double t, const Eigen::VectorXd& s, Eigen::VectorXd& d) { model.derivative(t, s, d); }, y.size());
  if (!baseline) model.begin_step();
  stepper->step(0, 1e-4, y);  // warm-up
  double t = 1e-4;
  for (auto _ : state) {
    if (!baseline) model.begin_step();
    stepper->step(t, 1e-4, y);
    t += 1e-4;
  }
  benchmark::DoNotOptimize(y.data());
  state.SetLabel(std::string(kanoko::integrators::to_string(model.force_stats().evaluator)) + ", " +
                 std::to_string(model.spring_edges().size()) + " springs, " + std::to_string(model.pulls().size()) +
                 " pulls" + (model.force_stats().refitted ? ", tree refitted" : ""));
}
void Rk4Step(benchmark::State& state) { rk4_step(state, false); }
void Rk4StepV1(benchmark::State& state) { rk4_step(state, true); }
// 1k to 1M bodies, the current evaluator and the baseline alike (issue 15, point 6: the speed
// table of docs/speed.md); the 1M-body step runs once per repetition.
[[maybe_unused]] const bool kRk4Registered =
    register_with_baseline({"Rk4Step", &Rk4Step}, {"Rk4StepV1", &Rk4StepV1}, {{1'000, 10'000, 100'000}, {2}});

// ---------------------------------------------------------------------------------------------
// Trajectory writing during a simulation

void SimulateWrite(benchmark::State& state) {
  const auto n = static_cast<int>(state.range(0));
  const auto frame_every = static_cast<int>(state.range(1));
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "kanoko-bench-forces";
  std::filesystem::create_directories(dir);
  {
    std::ofstream trace(dir / "t.kntr");
    trace << "kntr 1\n";
    for (int i = 0; i < n; ++i) trace << "node 0 " << i << "\n";
    for (int i = 0; i < n; i += 3) trace << "msg 0.01 " << i << ' ' << (i + 1) % n << " 100\n";
    trace << "end 0.1\n";
    std::ofstream mapping(dir / "m.toml");
    mapping << "[simulation]\ninterval = 0.1\ndt = 0.005\nframe_every = " << frame_every
            << "\n[bodies]\nplacement = \"lattice\"\n"
               "lattice = [" << n / 100 << ", 10, 10]\n[springs]\ntopology = \"mesh\"\n[forces.repulsion]\n"
               "strength = 1e-4\n[forces.communication]\nmode = \"symmetric\"\n[forces.friction]\nbeta = 1\n";
  }
  kanoko::sim::SimulateOptions o;
  o.trace = dir / "t.kntr";
  o.mapping = dir / "m.toml";
  o.output = dir / "run.kntj";
  o.force = true;
  o.progress = false;
  double write_share = 0;
  for (auto _ : state) {
    const kanoko::sim::SimulateSummary s = kanoko::sim::simulate(o);
    write_share = s.write_wall_s / s.wall_s;
    state.SetIterationTime(s.wall_s);
  }
  state.counters["write_percent"] = 100.0 * write_share;
  state.counters["frame_MB"] = static_cast<double>(std::filesystem::file_size(o.output)) /
                               (1.0 + 20.0 / frame_every) / 1e6;  // 20 steps + the first frame
  std::filesystem::remove_all(dir);
}
BENCHMARK(SimulateWrite)->Args({10'000, 1})->Args({10'000, 4})->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(1)->Repetitions(
    kRepetitions);

// ---------------------------------------------------------------------------------------------
// The table, from the medians of this run.

class TableReporter : public benchmark::ConsoleReporter {
 public:
  struct Result {
    double seconds = 0;
    std::map<std::string, double> counters;
  };

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Aggregate || r.aggregate_name != "median") continue;
      Result res;
      res.seconds = r.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(r.time_unit);
      for (const auto& [name, counter] : r.counters) res.counters[name] = counter.value;
      results_[r.run_name.function_name + "/" + r.run_name.args] = res;
    }
  }

  [[nodiscard]] const Result* find(const std::string& key) const {
    const auto it = results_.find(key);
    return it == results_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, Result> results_;
};

/// v with `decimals` decimals, then `suffix`.
std::string fmt(double v, int decimals, const char* suffix) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f%s", decimals, v, suffix);
  return buf;
}

void print_table(const TableReporter& t) {
  const auto* peak1 = t.find("FmaPeak/1");
  const auto* peak2 = t.find("FmaPeak/2");
  auto fraction = [&](const TableReporter::Result* r, int threads) -> std::string {
    const auto* peak = threads == 1 ? peak1 : peak2;
    if (r == nullptr || peak == nullptr || r->counters.count("GFLOPs") == 0U) return "";
    return fmt(100.0 * r->counters.at("GFLOPs") / peak->counters.at("GFLOPs"), 1, " %");
  };
  struct Row {
    std::string name, target, measured, peak, met;
  };
  std::vector<Row> rows;
  auto time_row = [&](const std::string& name, const std::string& key, double limit_s, int threads, int decimals,
                      bool milliseconds) {
    const auto* r = t.find(key);
    if (r == nullptr) return;
    const double unit = milliseconds ? 1e3 : 1.0;
    const char* suffix = milliseconds ? " ms" : " s";
    rows.push_back({name, limit_s > 0 ? fmt(limit_s * unit, decimals, suffix) : "-",
                    fmt(r->seconds * unit, decimals, suffix), fraction(r, threads),
                    limit_s > 0 ? (r->seconds <= limit_s ? "yes" : "NO") : ""});
  };
  time_row("one Barnes-Hut evaluation, N = 100 000, theta = 0.5, 2 threads", "BarnesHut/100000/2", 0.25, 2, 3, false);
  time_row("one full RK4 step, N = 100 000 (2 threads)", "Rk4Step/100000/2", 1.0, 2, 3, false);
  time_row("one force evaluation, N = 1 000 000 (2 threads)", "BarnesHut/1000000/2", 3.0, 2, 2, false);
  if (const auto* r = t.find("BarnesHut/1000000/2")) {
    const double bytes = r->counters.at("bytes_per_body");
    rows.push_back({"  memory per body, N = 1 000 000", "300 B", fmt(bytes, 0, " B"), "", bytes <= 300 ? "yes" : "NO"});
  }
  time_row("one force evaluation, N = 10 000 (auto, 2 threads)", "Auto/10000/2", 0.015, 2, 2, true);
  time_row("one force evaluation, N = 1 000 (direct, 2 threads)", "Direct/1000/2", 0.001, 2, 3, true);
  time_row("  the same on 1 thread", "Direct/1000/1", 0.001, 1, 3, true);
  const auto* one = t.find("BarnesHut/100000/1");
  const auto* two = t.find("BarnesHut/100000/2");
  if (one != nullptr && two != nullptr) {
    const double speedup = one->seconds / two->seconds;
    rows.push_back({"2 threads over 1 thread (Barnes-Hut, N = 100 000)", ">= 1.80x", fmt(speedup, 2, "x"), "",
                    speedup >= 1.8 ? "yes" : "NO"});
  }
  time_row("(not in the issue) Barnes-Hut with quadrupoles, N = 100 000, 2 threads", "BarnesHutQuadrupole/100000/2",
           0, 2, 3, false);
  for (const char* n : {"2048", "4096"}) {
    time_row(std::string("(auto threshold) direct, N = ") + n, std::string("Direct/") + n + "/2", 0, 2, 2, true);
    time_row(std::string("(auto threshold) Barnes-Hut, N = ") + n, std::string("BarnesHut/") + n + "/2", 0, 2, 2,
             true);
  }
  for (const char* every : {"1", "4"}) {
    if (const auto* r = t.find(std::string("SimulateWrite/10000/") + every)) {
      const double share = r->counters.at("write_percent");
      rows.push_back({std::string("trajectory write during simulation (N = 10 000, a frame every ") + every +
                          " step" + (every[0] == '1' ? "" : "s") + ")",
                      "<= 5 %", fmt(share, 2, " %"), "", share <= 5.0 ? "yes" : "NO"});
    }
  }
  std::printf("\nIssue 4 targets (medians of %d repetitions, wall time):\n\n", kRepetitions);
  std::printf("| case | target | measured | fraction of FMA peak | met |\n|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %s | %s | %s | %s |\n", r.name.c_str(), r.target.c_str(), r.measured.c_str(), r.peak.c_str(),
                r.met.c_str());
  }
  if (peak1 != nullptr && peak2 != nullptr) {
    std::printf("\nFMA peak measured in this run: %.1f GFLOP/s on 1 thread, %.1f GFLOP/s on 2 threads.\n",
                peak1->counters.at("GFLOPs"), peak2->counters.at("GFLOPs"));
    std::printf("Flops are counted as issue 4's kernels perform them (19 per body-body interaction, 20 per\n"
                "body-cell, a square root and a division counted as one each); the fast kernels do the same\n"
                "work without the square root and division, in more FMA-pipe operations.\n");
  }
}

/// Issue 15, point 2: every figure as a ratio to barnes-hut-v1 (issue 4's evaluator) in this run.
void print_baseline_table(const TableReporter& t) {
  std::printf("\nIssue 15 point 2: against the baseline barnes-hut-v1 in this run (medians of %d, wall time)\n\n",
              kRepetitions);
  std::printf("| case | baseline | now | ratio | target | met |\n|---|---|---|---|---|---|\n");
  auto ratio_row = [&](const std::string& name, const std::string& now_key, const std::string& base_key,
                       double max_ratio, double max_seconds) {
    const auto* now = t.find(now_key);
    const auto* base = t.find(base_key);
    if (now == nullptr || base == nullptr) return;
    const double ratio = now->seconds / base->seconds;
    std::string target, met;
    bool ok = true;
    if (max_ratio > 0) {
      target = "<= " + fmt(max_ratio, 2, "x");
      ok = ok && ratio <= max_ratio;
    }
    if (max_seconds > 0) {
      target += (target.empty() ? "" : ", ") + std::string("<= ") + fmt(max_seconds, 2, " s");
      ok = ok && now->seconds <= max_seconds;
    }
    if (!target.empty()) met = ok ? "yes" : "NO";
    std::printf("| %s | %s | %s | %s | %s | %s |\n", name.c_str(), fmt(base->seconds * 1e3, 2, " ms").c_str(),
                fmt(now->seconds * 1e3, 2, " ms").c_str(), fmt(ratio, 3, "x").c_str(), target.c_str(), met.c_str());
  };
  ratio_row("full RK4 step, N = 100 000, 2 threads", "Rk4Step/100000/2", "Rk4StepV1/100000/2", 0, 0.36);
  ratio_row("evaluation, N = 1 000 000, 2 threads", "BarnesHut/1000000/2", "BarnesHutV1/1000000/2", 0.67, 0);
  ratio_row("evaluation, N = 100 000, 2 threads", "BarnesHut/100000/2", "BarnesHutV1/100000/2", 0, 0);
  ratio_row("evaluation, N = 100 000, 1 thread", "BarnesHut/100000/1", "BarnesHutV1/100000/1", 0, 0);
  ratio_row("evaluation, N = 10 000, 2 threads", "BarnesHut/10000/2", "BarnesHutV1/10000/2", 0, 0);
  ratio_row("evaluation, N = 1 000, 2 threads asked (one used now)", "BarnesHut/1000/2", "BarnesHutV1/1000/2", 0, 0);
  std::printf("\nAccuracy at theta = 0.5: relative force error against direct summation at 1 000 bodies\n\n");
  std::printf("| N | baseline median | now median | baseline p99 | now p99 | equal or better |\n"
              "|---|---|---|---|---|---|\n");
  for (const char* n : {"10000", "100000", "1000000"}) {
    const auto* now = t.find(std::string("BarnesHut/") + n + "/2");
    const auto* base = t.find(std::string("BarnesHutV1/") + n + "/2");
    if (now == nullptr || base == nullptr || now->counters.count("err_median") == 0U ||
        base->counters.count("err_median") == 0U) {
      continue;
    }
    const double nm = now->counters.at("err_median"), bm = base->counters.at("err_median");
    const double np = now->counters.at("err_p99"), bp = base->counters.at("err_p99");
    std::printf("| %s | %.3g | %.3g | %.3g | %.3g | %s |\n", n, bm, nm, bp, np, nm <= bm && np <= bp ? "yes" : "NO");
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  TableReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_table(reporter);
  print_baseline_table(reporter);
  benchmark::Shutdown();
  return 0;
}
