// One stream to two sinks, call for call, in order (the first sink, then the second).
#pragma once

#include "src/trace/event.hpp"

namespace kanoko::trace {

class TeeSink final : public TraceSink {
 public:
  TeeSink(TraceSink& a, TraceSink& b) : a_(a), b_(b) {}
  void on_entity(const Entity& e) override { a_.on_entity(e), b_.on_entity(e); }
  void on_link(const Link& l) override { a_.on_link(l), b_.on_link(l); }
  void on_message(const Message& m) override { a_.on_message(m), b_.on_message(m); }
  void on_load(const LoadSample& s) override { a_.on_load(s), b_.on_load(s); }
  void on_state(const StateInterval& s) override { a_.on_state(s), b_.on_state(s); }
  void on_location(LocationIndex index, const CodeLocation& l) override { a_.on_location(index, l), b_.on_location(index, l); }
  void on_collective(const Collective& c) override { a_.on_collective(c), b_.on_collective(c); }
  void on_collective_records() override { a_.on_collective_records(), b_.on_collective_records(); }
  void on_marker(const Marker& m) override { a_.on_marker(m), b_.on_marker(m); }
  void on_end(double end_s) override { a_.on_end(end_s), b_.on_end(end_s); }

 private:
  TraceSink& a_;
  TraceSink& b_;
};

}  // namespace kanoko::trace
