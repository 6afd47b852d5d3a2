// A generated MPI-like run of any size, for the views' benchmark (bench/bench_views.cpp) and their
// smoke tests: each iteration every rank computes (a varying time), sends one message to its
// neighbour (an overhead state), receives (overhead) and waits (idle) for the iteration's end.
// During a "hot" span of the run a block of ranks also sends bursts of messages to each other:
// the dense region an aggregated space-time view must show where it is.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "src/trace/event.hpp"

namespace kanoko::views::testing {

struct BigRunSpec {
  std::uint32_t ranks = 512;
  std::uint64_t messages = 1000000;  ///< about this many
  double hot_t0 = 0.4;               ///< the hot span, as fractions of the run
  double hot_t1 = 0.6;
  double hot_rank0 = 0.25;           ///< the hot block, as fractions of the ranks
  double hot_rank1 = 0.5;
  std::uint32_t burst = 4;           ///< extra messages per hot rank and hot iteration
  unsigned seed = 1;
  double iteration_s = 1e-3;
};

/// One record of the run, kept so that a benchmark can replay the same run many times.
struct GeneratedEvent {
  double t = 0;       ///< send or begin time
  double t2 = 0;      ///< receive or end time
  std::uint32_t a = 0;  ///< sender or entity
  std::uint32_t b = 0;  ///< receiver
  std::uint8_t kind = 0;  ///< 0 message, 1 compute, 2 send, 3 recv, 4 idle
};

struct GeneratedRun {
  std::uint32_t ranks = 0;
  std::vector<GeneratedEvent> events;  ///< in time order
  double end_s = 0;
  std::uint64_t messages = 0;
  std::uint64_t hot_messages = 0;  ///< burst messages (inside the hot span and block)
  std::uint32_t hot_rank_begin = 0;
  std::uint32_t hot_rank_end = 0;
  double hot_begin_s = 0;
  double hot_end_s = 0;
};

inline GeneratedRun generate_big_run(const BigRunSpec& spec) {
  GeneratedRun run;
  run.ranks = std::max<std::uint32_t>(2, spec.ranks);
  const std::uint32_t n = run.ranks;
  run.hot_rank_begin = static_cast<std::uint32_t>(spec.hot_rank0 * n);
  run.hot_rank_end = std::max(run.hot_rank_begin + 2, static_cast<std::uint32_t>(spec.hot_rank1 * n));
  run.hot_rank_end = std::min(run.hot_rank_end, n);
  const double hot_share = (spec.hot_t1 - spec.hot_t0) * static_cast<double>(run.hot_rank_end - run.hot_rank_begin) / n;
  const double per_iteration = static_cast<double>(n) * (1.0 + spec.burst * hot_share);
  const auto iterations = std::max<std::uint64_t>(4, static_cast<std::uint64_t>(static_cast<double>(spec.messages) / per_iteration));
  const double T = spec.iteration_s;
  run.end_s = static_cast<double>(iterations) * T;
  run.hot_begin_s = spec.hot_t0 * run.end_s;
  run.hot_end_s = spec.hot_t1 * run.end_s;
  std::mt19937 rng(spec.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<std::uint32_t> hot(run.hot_rank_begin, run.hot_rank_end - 1);
  std::vector<GeneratedEvent> chunk;
  run.events.reserve(static_cast<std::size_t>(iterations) * n * 5);
  for (std::uint64_t i = 0; i < iterations; ++i) {
    const double b = static_cast<double>(i) * T;
    const bool hot_time = b >= run.hot_begin_s && b < run.hot_end_s;
    chunk.clear();
    for (std::uint32_t r = 0; r < n; ++r) {
      const double c = T * (0.45 + 0.3 * unit(rng));
      const double sent = b + c;
      chunk.push_back({b, sent, r, 0, 1});
      chunk.push_back({sent, sent + 0.05 * T, r, 0, 2});
      chunk.push_back({sent, b + 0.85 * T, r, (r + 1) % n, 0});
      ++run.messages;
      if (hot_time && r >= run.hot_rank_begin && r < run.hot_rank_end) {
        for (std::uint32_t k = 0; k < spec.burst; ++k) {
          chunk.push_back({sent + 0.01 * T * k, b + 0.86 * T + 0.01 * T * k, r, hot(rng), 0});
          ++run.messages;
          ++run.hot_messages;
        }
      }
      chunk.push_back({b + 0.85 * T, b + 0.9 * T, r, 0, 3});
      chunk.push_back({b + 0.9 * T, b + T, r, 0, 4});
    }
    std::stable_sort(chunk.begin(), chunk.end(), [](const GeneratedEvent& x, const GeneratedEvent& y) { return x.t < y.t; });
    run.events.insert(run.events.end(), chunk.begin(), chunk.end());
  }
  return run;
}

/// Feeds `run` to `sink`: its entities ("rank N"), its records in time order, then its end.
inline void replay(const GeneratedRun& run, trace::TraceSink& sink) {
  for (std::uint32_t r = 0; r < run.ranks; ++r) {
    trace::Entity e;
    e.index = r;
    e.id = r;
    e.rank = r;
    e.name = "rank " + std::to_string(r);
    sink.on_entity(e);
  }
  static constexpr const char* kStates[] = {"", "compute", "send", "recv", "idle"};
  for (const GeneratedEvent& ev : run.events) {
    if (ev.kind == 0) {
      trace::Message m;
      m.send_s = ev.t;
      m.recv_s = ev.t2;
      m.src = ev.a;
      m.dst = ev.b;
      m.bytes = 1024;
      sink.on_message(m);
    } else {
      trace::StateInterval s;
      s.begin_s = ev.t;
      s.end_s = ev.t2;
      s.entity = ev.a;
      s.name = kStates[ev.kind];
      sink.on_state(s);
    }
  }
  sink.on_end(run.end_s);
}

}  // namespace kanoko::views::testing
