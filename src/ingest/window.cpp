#include "src/ingest/window.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

namespace kanoko::ingest {

WindowBound parse_window_bound(std::string_view text, const FileLoc& where) {
  WindowBound b;
  const std::string_view iter = "iter:";
  if (text.substr(0, iter.size()) == iter) {
    const std::string_view k = text.substr(iter.size());
    const auto [end, ec] = std::from_chars(k.data(), k.data() + k.size(), b.iteration);
    if (ec != std::errc() || end != k.data() + k.size() || k.empty() || b.iteration == 0) {
      throw InputError(where, "expected iter:K with K a whole number from 1 (the K-th iteration marker), got '" +
                                  std::string(text) + "'");
    }
    return b;
  }
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), b.seconds);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || !std::isfinite(b.seconds)) {
    throw InputError(where, "expected a finite time in trace seconds or iter:K (the K-th iteration marker), got '" +
                                std::string(text) + "'");
  }
  return b;
}

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

void WindowSink::on_marker(const trace::Marker& m) {
  if (m.time_s < window_.from_s || m.time_s >= window_.to_s) return;
  trace::Marker out = m;
  out.time_s -= window_.from_s;
  down_.on_marker(out);
}

void WindowSink::on_end(double end_s) {
  release_held_loads();
  down_.on_end(std::max(0.0, std::min(end_s, window_.to_s) - window_.from_s));
}

}  // namespace kanoko::ingest
