// Speed and quality of the starting layout from a communication graph (models/graph_layout.hpp)
// on four graph families at 1k and 10k bodies, against baselines measured in the same run:
//
//   stress      infer_graph_layout: pivot MDS start + sparse stress majorisation (the default)
//   pmds        the pivot-MDS start alone (stress_iterations = 0), a classical method
//   force       models/topology.hpp's graph_layout (force-directed, O(n²) per iteration; it gives
//               up above 2000 bodies, so only at 1k)
//   random      uniform random positions in a cube (no time)
//
// Families (all with weight-1 edges, lattice recognition off so every case is an embedding):
//   geometric   random geometric graph: points in the unit cube joined below a radius giving
//               about 10 neighbours each
//   communities groups of 100 bodies, 5 random partners inside the group each, and one partner in
//               another group for every tenth body
//   star        one hub joined to every other body
//   tree        random recursive tree (body i joined to a random earlier body)
//
// Quality: layout_quality with 64 sources (normalised stress at the best scale, lower is better;
// Spearman rank correlation of layout and graph distances). Times are medians of --repeat runs
// (wall clock). The peak resident memory of the whole run is printed at the end: an n×n matrix of
// doubles at 10k bodies alone would be 800 MB.
//
//   build/bench/kanoko_bench_layout [--repeat 3] [--sizes 1000,10000]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "models/graph_layout.hpp"
#include "models/topology.hpp"
#include "tests/support/graph_families.hpp"

namespace {

using kanoko::models::GraphLayoutOptions;
using kanoko::models::WeightedEdge;
using Edges = std::vector<WeightedEdge>;

Edges geometric(std::size_t n, std::uint64_t seed) {
  // 10 neighbours on average: (4/3) π r³ n = 10.
  return kanoko::test::random_geometric_graph(n, std::cbrt(10.0 / (4.0 / 3.0 * 3.141592653589793 * static_cast<double>(n))), seed);
}

Edges communities(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  constexpr std::size_t kGroup = 100;
  Edges e;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t base = i / kGroup * kGroup, size = std::min(kGroup, n - base);
    for (int k = 0; k < 5; ++k) {
      const std::size_t j = base + rng() % size;
      if (j != i) e.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j), 1});
    }
    if (i % 10 == 0) {
      const std::size_t j = rng() % n;
      if (j / kGroup != i / kGroup) e.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j), 1});
    }
  }
  return e;
}

Edges star(std::size_t n, std::uint64_t) {
  Edges e;
  for (std::uint32_t i = 1; i < n; ++i) e.push_back({0, i, 1});
  return e;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F>
double median_seconds(int repeat, const F& f) {
  std::vector<double> t;
  for (int r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return median(t);
}

struct Row {
  double seconds = 0;
  kanoko::models::LayoutQuality quality;
};

}  // namespace

int main(int argc, char** argv) {
  int repeat = 3;
  std::vector<std::size_t> sizes{1000, 10000};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
      sizes.clear();
      for (char* s = std::strtok(argv[++i], ","); s != nullptr; s = std::strtok(nullptr, ",")) {
        sizes.push_back(static_cast<std::size_t>(std::atol(s)));
      }
    } else {
      std::fprintf(stderr, "usage: kanoko_bench_layout [--repeat N] [--sizes 1000,10000]\n");
      return 2;
    }
  }
  const std::vector<std::pair<std::string, std::function<Edges(std::size_t, std::uint64_t)>>> families{
      {"geometric", geometric}, {"communities", communities}, {"star", star}, {"tree", kanoko::test::random_tree}};
  GraphLayoutOptions stress_opt;
  stress_opt.recognise_lattices = false;
  GraphLayoutOptions pmds_opt = stress_opt;
  pmds_opt.stress_iterations = 0;

  std::map<std::pair<std::string, std::string>, std::map<std::size_t, Row>> rows;  // (family, method) → n → row
  std::printf("%-12s %6s %7s %-7s %9s %9s %9s\n", "family", "n", "edges", "method", "time_s", "stress", "spearman");
  for (const auto& [family, make] : families) {
    for (std::size_t n : sizes) {
      const Edges edges = make(n, 1);
      auto report = [&, fam = family](const std::string& method, const Row& row) {
        rows[{fam, method}][n] = row;
        std::printf("%-12s %6zu %7zu %-7s %9.3f %9.4f %9.4f\n", fam.c_str(), n, edges.size(), method.c_str(),
                    row.seconds, row.quality.stress, row.quality.spearman);
        std::fflush(stdout);
      };
      for (const auto& [method, opt] : {std::pair{std::string("stress"), stress_opt}, std::pair{std::string("pmds"), pmds_opt}}) {
        Eigen::Matrix3Xd x;
        Row row;
        row.seconds = median_seconds(repeat, [&] { x = kanoko::models::infer_graph_layout(n, edges, opt).positions; });
        row.quality = kanoko::models::layout_quality(n, edges, x);
        report(method, row);
      }
      if (n <= 2000) {
        std::vector<kanoko::models::Edge> plain;
        for (const auto& e : edges) plain.push_back({e.a, e.b});
        Eigen::Matrix3Xd x;
        Row row;
        row.seconds = median_seconds(repeat, [&] { x = kanoko::models::graph_layout(n, plain, 1.0); });
        row.quality = kanoko::models::layout_quality(n, edges, x);
        report("force", row);
      }
      std::mt19937_64 rng(7);
      std::uniform_real_distribution<double> u(-1, 1);
      Eigen::Matrix3Xd x(3, static_cast<Eigen::Index>(n));
      for (Eigen::Index i = 0; i < x.cols(); ++i) x.col(i) = Eigen::Vector3d(u(rng), u(rng), u(rng));
      report("random", Row{0, kanoko::models::layout_quality(n, edges, x)});
    }
  }
  std::printf("\nratios (same run):\n");
  std::printf("%-12s %-22s %-18s %-18s %-18s\n", "family", "time(big)/time(small)", "stress/random", "stress/pmds",
              "stress/force");
  for (const auto& [family, make] : families) {
    const auto& ours = rows[{family, "stress"}];
    const std::size_t small = sizes.front(), big = sizes.back();
    char time_ratio[64] = "-";
    if (sizes.size() > 1) {
      std::snprintf(time_ratio, sizeof time_ratio, "%.1f (n ×%zu)", ours.at(big).seconds / ours.at(small).seconds,
                    big / small);
    }
    auto stress_ratio = [&](const std::string& method, std::size_t n) {
      const auto& other = rows[{family, method}];
      const auto it = other.find(n);
      if (it == other.end() || it->second.quality.stress == 0) return std::string("-");
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.3f (n=%zu)", ours.at(n).quality.stress / it->second.quality.stress, n);
      return std::string(buf);
    };
    std::printf("%-12s %-22s %-18s %-18s %-18s\n", family.c_str(), time_ratio, stress_ratio("random", big).c_str(),
                stress_ratio("pmds", big).c_str(), stress_ratio("force", small).c_str());
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("\npeak resident memory of the run: %.0f MB\n", static_cast<double>(usage.ru_maxrss) / 1024.0);
  return 0;
}
