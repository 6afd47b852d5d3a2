// Small mappings and timelines built from text, shared by the model and simulation tests.
#pragma once

#include <string>

#include "src/mapping/mapping.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::test {

/// Bins native trace text with the given interval.
inline trace::Timeline timeline_from_text(const std::string& text, double interval_s = 0.1,
                                          std::vector<std::string> busy_states = {"compute"}) {
  trace::TimelineOptions o;
  o.interval_s = interval_s;
  o.busy_states = std::move(busy_states);
  trace::TimelineBuilder b(o);
  trace::read_native_trace_text(text, "test.kntr", b);
  return b.take();
}

/// N nodes declared at time 0, ids 0..N-1.
inline std::string node_lines(int n) {
  std::string s = "kntr 1\n";
  for (int i = 0; i < n; ++i) s += "node 0 " + std::to_string(i) + " name=b" + std::to_string(i) + "\n";
  return s;
}

}  // namespace kanoko::test
