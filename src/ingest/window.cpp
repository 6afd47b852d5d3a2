#include "src/ingest/window.hpp"

#include <algorithm>

namespace kanoko::ingest {

void WindowSink::make_room(trace::EntityIndex e) {
  if (held_loads_.size() <= e) {
    held_loads_.resize(e + 1);
    has_held_.resize(e + 1, false);
  }
}

void WindowSink::on_entity(const trace::Entity& e) {
  make_room(e.index);
  down_.on_entity(e);
}

void WindowSink::release_held_loads() {
  if (released_) return;
  released_ = true;
  for (std::size_t i = 0; i < held_loads_.size(); ++i) {
    if (!has_held_[i]) continue;
    trace::LoadSample s = held_loads_[i];
    s.time_s = 0;
    down_.on_load(s);
  }
}

void WindowSink::on_message(const trace::Message& m) {
  if (m.send_s < window_.from_s || m.send_s >= window_.to_s) {
    ++dropped_;
    return;
  }
  release_held_loads();
  trace::Message out = m;
  out.send_s -= window_.from_s;
  if (out.recv_s >= 0) out.recv_s = std::min(m.recv_s, window_.to_s) - window_.from_s;
  down_.on_message(out);
}

void WindowSink::on_load(const trace::LoadSample& s) {
  if (s.time_s < window_.from_s) {
    make_room(s.entity);
    held_loads_[s.entity] = s;
    has_held_[s.entity] = true;
    return;
  }
  if (s.time_s >= window_.to_s) {
    ++dropped_;
    return;
  }
  release_held_loads();
  trace::LoadSample out = s;
  out.time_s -= window_.from_s;
  down_.on_load(out);
}

void WindowSink::on_state(const trace::StateInterval& s) {
  const double begin = std::max(s.begin_s, window_.from_s);
  const double end = std::min(s.end_s, window_.to_s);
  if (!(end > begin)) {
    ++dropped_;
    return;
  }
  release_held_loads();
  trace::StateInterval out = s;
  out.begin_s = begin - window_.from_s;
  out.end_s = end - window_.from_s;
  down_.on_state(out);
}

void WindowSink::on_collective(const trace::Collective& c) {
  if (c.begin_s < window_.from_s || c.begin_s >= window_.to_s) {
    ++dropped_;
    return;
  }
  release_held_loads();
  trace::Collective out = c;
  out.begin_s -= window_.from_s;
  out.end_s = std::min(c.end_s, window_.to_s) - window_.from_s;
  down_.on_collective(out);
}

void WindowSink::on_end(double end_s) {
  release_held_loads();
  down_.on_end(std::max(0.0, std::min(end_s, window_.to_s) - window_.from_s));
}

}  // namespace kanoko::ingest
