// A TraceSink for reader tests: keeps every event and checks the stream contract (entities
// announced before use, first time stamps non-decreasing, exactly one end).
#pragma once

#include <string>
#include <vector>

#include "src/trace/event.hpp"

namespace kanoko::trace::testing {

struct RecordedState {
  double begin_s;
  double end_s;
  EntityIndex entity;
  std::string name;
};

struct RecordedCollective {
  double begin_s;
  double end_s;
  EntityIndex entity;
  std::string name;
  std::uint64_t bytes;
  std::int64_t root;
  std::string group;
};

class StreamRecorder final : public TraceSink {
 public:
  std::vector<Entity> entities;
  std::vector<Message> messages;
  std::vector<LoadSample> loads;
  std::vector<RecordedState> states;
  std::vector<RecordedCollective> collectives;
  double end_s = -1;
  int end_calls = 0;
  int order_violations = 0;
  int unknown_entities = 0;

  void on_entity(const Entity& e) override {
    if (e.index != entities.size()) ++unknown_entities;
    entities.push_back(e);
  }
  void on_link(const Link&) override {}
  void on_message(const Message& m) override {
    check(m.send_s, m.src);
    check(m.send_s, m.dst);
    messages.push_back(m);
  }
  void on_load(const LoadSample& s) override {
    check(s.time_s, s.entity);
    loads.push_back(s);
  }
  void on_state(const StateInterval& s) override {
    check(s.begin_s, s.entity);
    if (s.end_s < s.begin_s) ++order_violations;
    states.push_back(RecordedState{s.begin_s, s.end_s, s.entity, std::string(s.name)});
  }
  void on_collective(const Collective& c) override {
    check(c.begin_s, c.entity);
    collectives.push_back(RecordedCollective{c.begin_s, c.end_s, c.entity, std::string(c.name), c.bytes, c.root,
                                             std::string(c.group)});
  }
  void on_end(double end) override {
    end_s = end;
    ++end_calls;
  }

  /// True when the stream kept its contract.
  [[nodiscard]] bool well_formed() const { return order_violations == 0 && unknown_entities == 0 && end_calls == 1; }

  /// Total seconds of states named `name` on entity `e`.
  [[nodiscard]] double state_seconds(EntityIndex e, const std::string& name) const {
    double s = 0;
    for (const RecordedState& r : states) {
      if (r.entity == e && r.name == name) s += r.end_s - r.begin_s;
    }
    return s;
  }

 private:
  void check(double t, EntityIndex e) {
    if (t < last_) ++order_violations;
    last_ = t;
    if (e >= entities.size()) ++unknown_entities;
  }
  double last_ = -1e300;
};

}  // namespace kanoko::trace::testing
