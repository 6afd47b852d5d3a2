#include "src/trace/event_window.hpp"

#include <algorithm>
#include <tuple>

namespace kanoko::trace {
namespace {

struct Later {
  template <typename H>
  bool operator()(const H& x, const H& y) const {
    return x.t != y.t ? x.t > y.t : x.seq > y.seq;
  }
};

}  // namespace

std::string ReaderWarning::str() const { return first.str() + ": warning: " + std::to_string(count) + "x " + what; }

void ReaderWarnings::add(std::string_view what, const FileLoc& where, std::uint64_t count) {
  for (ReaderWarning& w : items_) {
    if (w.what == what) {
      w.count += count;
      return;
    }
  }
  items_.push_back(ReaderWarning{std::string(what), count, where});
}

std::uint64_t ReaderWarnings::total() const {
  std::uint64_t n = 0;
  for (const ReaderWarning& w : items_) n += w.count;
  return n;
}

EventWindow::EventWindow(TraceSink& sink, std::size_t max_held, std::function<void(double)> before_release)
    : sink_(sink), max_held_(std::max<std::size_t>(max_held, 2)), before_release_(std::move(before_release)) {}

double EventWindow::admit(double t) {
  if (t < emitted_) {
    ++late_;
    return emitted_;
  }
  return t;
}

EventWindow::Held EventWindow::held(Kind kind, double t, EntityIndex a, double t2) {
  Held h;
  h.kind = kind;
  h.t = admit(t);
  h.a = a;
  h.t2 = t2 < 0 ? t2 : std::max(t2, h.t);  // an end never before the (admitted) start; < 0: unknown
  return h;
}

void EventWindow::state(double begin_s, double end_s, EntityIndex entity, std::string_view name, LocationIndex location) {
  Held h = held(Kind::State, begin_s, entity, std::max(end_s, 0.0));
  h.name = name;
  h.location = location;
  push(std::move(h));
}

void EventWindow::message(const Message& m) {
  Held h = held(Kind::Message, m.send_s, m.src, m.recv_s);
  std::tie(h.b, h.bytes, h.number, h.location) = std::tuple(m.dst, m.bytes, m.tag, m.location);
  push(std::move(h));
}

void EventWindow::load(const LoadSample& s) {
  Held h = held(Kind::Load, s.time_s, s.entity, 0);
  h.value = s.value;
  push(std::move(h));
}

void EventWindow::collective(const Collective& c) {
  Held h = held(Kind::Collective, c.begin_s, c.entity, std::max(c.end_s, 0.0));
  std::tie(h.bytes, h.number, h.name, h.group) = std::tuple(c.bytes, c.root, c.name, c.group);
  push(std::move(h));
}

void EventWindow::marker(const Marker& m) {
  Held h = held(Kind::Marker, m.time_s, m.entity, m.time_s);
  h.name = m.name;
  push(std::move(h));
}

void EventWindow::push(Held h) {
  const std::uint64_t seq = seq_++;
  std::uint32_t index = 0;
  if (free_.empty()) {
    index = static_cast<std::uint32_t>(pool_.size());
    pool_.push_back(std::move(h));
  } else {
    index = free_.back();
    free_.pop_back();
    pool_[index] = std::move(h);
  }
  heap_.push_back(Slot{pool_[index].t, seq, index});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
  if (heap_.size() > max_held_ && !releasing_) release();
}

void EventWindow::release() {
  // The time below which the older half of the window lies.
  scratch_.clear();
  for (const Slot& h : heap_) scratch_.push_back(h.t);
  const std::size_t cut = heap_.size() - max_held_ / 2 - 1;
  std::nth_element(scratch_.begin(), scratch_.begin() + static_cast<std::ptrdiff_t>(cut), scratch_.end());
  const double until = scratch_[cut];
  releasing_ = true;
  if (before_release_) before_release_(until);
  releasing_ = false;
  while (!heap_.empty() && heap_.front().t <= until) pop_and_emit();
}

void EventWindow::flush() {
  while (!heap_.empty()) pop_and_emit();
}

void EventWindow::pop_and_emit() {
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  const std::uint32_t index = heap_.back().index;
  heap_.pop_back();
  const Held& h = pool_[index];
  emitted_ = std::max(emitted_, h.t);
  switch (h.kind) {
    case Kind::State: sink_.on_state(StateInterval{h.t, h.t2, h.a, h.name, h.location}); break;
    case Kind::Message: sink_.on_message(Message{h.t, h.t2, h.a, h.b, h.bytes, h.number, h.location}); break;
    case Kind::Load: sink_.on_load(LoadSample{h.t, h.a, h.value}); break;
    case Kind::Collective: sink_.on_collective(Collective{h.t, h.t2, h.a, h.name, h.bytes, h.number, h.group}); break;
    case Kind::Marker: sink_.on_marker(Marker{h.t, h.a, h.name}); break;
  }
  free_.push_back(index);  // only now: the sink saw the event's strings
}

bool StateStacks::push(EntityIndex e, double t, std::string_view name, LocationIndex location) {
  if (e >= stacks_.size()) stacks_.resize(std::size_t{e} + 1);
  if (stacks_[e].size() >= kMaxDepth) return false;
  stacks_[e].push_back(Open{t, std::string(name), location});
  ++open_;
  return true;
}

bool StateStacks::pop(EntityIndex e, double t, std::string* name) {
  if (e >= stacks_.size() || stacks_[e].empty()) return false;
  // Off the stack before the window sees it: the window may split what is still open.
  Open o = std::move(stacks_[e].back());
  stacks_[e].pop_back();
  --open_;
  window_.state(o.begin_s, t, e, o.name, o.location);
  if (name != nullptr) *name = std::move(o.name);
  return true;
}

void StateStacks::split_before(double until) {
  if (open_ == 0) return;
  for (std::size_t e = 0; e < stacks_.size(); ++e) {
    for (Open& o : stacks_[e]) {
      if (o.begin_s < until) {
        window_.state(o.begin_s, until, static_cast<EntityIndex>(e), o.name, o.location);
        o.begin_s = until;
      }
    }
  }
}

std::uint64_t StateStacks::close_all(double t) {
  std::uint64_t n = 0;
  for (std::size_t e = 0; e < stacks_.size(); ++e) {
    while (pop(static_cast<EntityIndex>(e), std::max(t, stacks_[e].empty() ? t : stacks_[e].back().begin_s))) ++n;
  }
  return n;
}

}  // namespace kanoko::trace
