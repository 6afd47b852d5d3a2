// A time window over a trace stream: only what happens in [from, to) reaches the downstream sink,
// with times shifted so that the window starts at 0 (the timeline's begin_s is set back to `from`
// by the caller). States and receives that cross the window's edges are cut there; the latest load
// sample before the window holds at its start.
#pragma once

#include <cstddef>
#include <limits>
#include <string_view>
#include <vector>

#include "src/base/error.hpp"
#include "src/trace/event.hpp"

namespace kanoko::ingest {

/// Trace time window [from_s, to_s); the defaults cover the whole trace.
struct TimeWindow {
  double from_s = 0;
  double to_s = std::numeric_limits<double>::infinity();
  [[nodiscard]] bool whole() const { return from_s == 0 && to_s == std::numeric_limits<double>::infinity(); }
  bool operator==(const TimeWindow&) const = default;
};

/// One end of a window as written: trace seconds ("1.5"), or `iter:K`, the K-th iteration
/// (counted from 1) by the trace's markers (resolve_window in survey.hpp).
struct WindowBound {
  double seconds = 0;
  std::size_t iteration = 0;  ///< K of `iter:K`; 0 for a time in seconds
  [[nodiscard]] bool is_iteration() const { return iteration > 0; }
};

/// Reads a window bound: a finite number of seconds or `iter:K` with K >= 1. Throws InputError at
/// `where` ("--from", "map.toml:3:8") saying what is expected.
WindowBound parse_window_bound(std::string_view text, const FileLoc& where);

/// Forwards the part of a stream that falls in a window, shifted by -from_s.
class WindowSink final : public trace::TraceSink {
 public:
  WindowSink(TimeWindow window, trace::TraceSink& downstream) : window_(window), down_(downstream) {}

  void on_entity(const trace::Entity& e) override;
  void on_link(const trace::Link& l) override { down_.on_link(l); }
  void on_message(const trace::Message& m) override;
  void on_load(const trace::LoadSample& s) override;
  void on_state(const trace::StateInterval& s) override;
  void on_location(trace::LocationIndex index, const trace::CodeLocation& l) override { down_.on_location(index, l); }
  void on_collective(const trace::Collective& c) override;
  void on_marker(const trace::Marker& m) override;
  void on_end(double end_s) override;

  /// Events (messages, states, samples, collectives) left out because they fall outside.
  [[nodiscard]] std::uint64_t dropped() const { return dropped_; }

 private:
  /// Sizes the held-load slots to hold entity `e`.
  void make_room(trace::EntityIndex e);
  /// Sends the load samples that arrived before the window, at its start.
  void release_held_loads();
  TimeWindow window_;
  trace::TraceSink& down_;
  std::vector<trace::LoadSample> held_loads_;  ///< per entity: the latest sample before the window
  std::vector<bool> has_held_;
  bool released_ = false;
  std::uint64_t dropped_ = 0;
};

}  // namespace kanoko::ingest
