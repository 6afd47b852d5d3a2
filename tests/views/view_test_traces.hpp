// Small native traces with known answers for the view tests.
#pragma once

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "src/trace/native_reader.hpp"
#include "src/views/trace_index.hpp"

namespace kanoko::views {

/// Indexes a native trace given as text.
inline TraceIndex index_text(const std::string& text, const IndexOptions& options = {}) {
  TraceIndexBuilder b(options);
  trace::read_native_trace_text(text, "test.kntr", b);
  return b.take();
}

/// Entries sorted by time (stable), then written as a trace.
class TraceText {
 public:
  explicit TraceText(int nodes) {
    for (int i = 0; i < nodes; ++i) head_ += "node 0 " + std::to_string(i) + " name=r" + std::to_string(i) + "\n";
  }
  void add(double t, const std::string& line) { entries_.emplace_back(t, entries_.size(), line); }
  [[nodiscard]] std::string text(double end_s) {
    std::sort(entries_.begin(), entries_.end());
    std::string out = "kntr 1\n" + head_;
    for (const auto& [t, seq, line] : entries_) out += line + "\n";
    char buf[64];
    std::snprintf(buf, sizeof buf, "end %.9g\n", end_s);
    return out + buf;
  }

 private:
  std::string head_;
  std::vector<std::tuple<double, std::size_t, std::string>> entries_;
};

inline std::string num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

/// The HYVT seed's T000-1: 4 ranks, `iterations` iterations of 2.1 s. Rank p computes c_p
/// (1 s, 2 s for rank 2), sends to p+1 (0.05 s overhead), receives from p-1 (0.05 s), then waits
/// at a barrier until 2.1 s (a `coll` entry when `barrier`, else a gap).
inline std::string ring_trace(int iterations, bool barrier) {
  TraceText t(4);
  for (int i = 0; i < iterations; ++i) {
    const double base = 2.1 * i;
    for (int p = 0; p < 4; ++p) {
      const double c = p == 2 ? 2.0 : 1.0;
      const double c_next = (p + 1) % 4 == 2 ? 2.0 : 1.0;
      t.add(base, "state " + num(base) + " " + std::to_string(p) + " " + num(c) + " compute");
      t.add(base + c, "state " + num(base + c) + " " + std::to_string(p) + " 0.05 send");
      const double recv = std::max(base + c + 0.05, base + c_next + 0.1);
      t.add(base + c, "msg " + num(base + c) + " " + std::to_string(p) + " " + std::to_string((p + 1) % 4) +
                          " 1000 tag=1 recv=" + num(recv));
      t.add(base + c + 0.05, "state " + num(base + c + 0.05) + " " + std::to_string(p) + " 0.05 recv");
      if (barrier) {
        t.add(base + c + 0.1, "coll " + num(base + c + 0.1) + " " + std::to_string(p) + " " + num(2.0 - c) +
                                  " barrier 0 group=b" + std::to_string(i));
      }
    }
  }
  return t.text(2.1 * iterations);
}

/// A random trace: `nodes` nodes alternating compute / send / wait states, and `messages` messages
/// between random pairs; `written` receives the count per (src, dst).
inline std::string random_trace(int nodes, int messages, unsigned seed, std::map<std::pair<int, int>, std::uint64_t>* written) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> node(0, nodes - 1);
  std::uniform_real_distribution<double> dur(0.0001, 0.003);
  TraceText t(nodes);
  const double span = 0.001 * messages;
  for (int p = 0; p < nodes; ++p) {
    double now = 0;
    int k = 0;
    while (now < span) {
      const double d = dur(rng);
      static const char* const kNames[] = {"compute", "send", "wait"};
      if (k % 4 != 3) t.add(now, "state " + num(now) + " " + std::to_string(p) + " " + num(d) + " " + kNames[k % 3]);
      now += d;
      ++k;
    }
  }
  for (int i = 0; i < messages; ++i) {
    const double at = span * i / messages;
    const int s = node(rng);
    const int d = node(rng);
    if (written != nullptr) ++(*written)[{s, d}];
    t.add(at, "msg " + num(at) + " " + std::to_string(s) + " " + std::to_string(d) + " 64 recv=" + num(at + dur(rng)));
  }
  return t.text(span + 0.01);
}

}  // namespace kanoko::views
