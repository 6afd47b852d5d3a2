// The reordering queue of a streaming reader: events known late (a state at its end, a message at
// its receipt) are held until every earlier-starting event is known, then taken in time order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace kanoko::trace {

/// Events of type T (with `double t` and a `std::uint64_t seq` unique per event, increasing in
/// the order they are held) taken in (t, seq) order. The heap orders 24-byte keys; the events
/// themselves stay in a slab, written once and read once. A drain whose bound is past every held
/// event (the end of a read, or a watermark that jumps past all of them, as when the link start
/// that blocked everything is paired) sorts the keys once instead of popping them one by one:
/// sequential work instead of a heap's scattered reads, and the same order, since (t, seq) orders
/// the events totally.
template <typename T>
class HeldQueue {
 public:
  [[nodiscard]] bool empty() const { return heap_.empty(); }
  [[nodiscard]] std::size_t size() const { return heap_.size(); }
  /// Whether drain(until) would take an event: the earliest held one is at `until` or before.
  [[nodiscard]] bool due(double until) const { return !heap_.empty() && heap_.front().t <= until; }

  void push(const T& e) {
    std::uint32_t slot = 0;
    if (free_.empty()) {
      slot = static_cast<std::uint32_t>(slab_.size());
      slab_.push_back(e);
    } else {
      slot = free_.back();
      free_.pop_back();
      slab_[slot] = e;
    }
    heap_.push_back(Key{e.t, e.seq, slot});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
    max_t_ = std::max(max_t_, e.t);
  }

  /// Calls f(event) for every held event with t <= until, in (t, seq) order, and removes them.
  template <typename F>
  void drain(double until, F&& f) {
    if (heap_.size() >= kSortAtLeast && until >= max_t_) {
      std::sort(heap_.begin(), heap_.end(), Earlier{});
      for (const Key& k : heap_) f(slab_[k.slot]);
      clear();
      return;
    }
    while (!heap_.empty() && heap_.front().t <= until) {
      f(slab_[heap_.front().slot]);
      free_.push_back(heap_.front().slot);
      std::pop_heap(heap_.begin(), heap_.end(), Later{});
      heap_.pop_back();
    }
    if (heap_.empty()) clear();
  }

  /// Held events at least this many are sorted when a drain takes them all (fewer are popped).
  static constexpr std::size_t kSortAtLeast = 64;

 private:
  struct Key {
    double t;
    std::uint64_t seq;
    std::uint32_t slot;
  };
  struct Later {
    bool operator()(const Key& x, const Key& y) const { return x.t != y.t ? x.t > y.t : x.seq > y.seq; }
  };
  struct Earlier {
    bool operator()(const Key& x, const Key& y) const { return x.t != y.t ? x.t < y.t : x.seq < y.seq; }
  };

  void clear() {
    heap_.clear();
    slab_.clear();
    free_.clear();
    max_t_ = -std::numeric_limits<double>::infinity();
  }

  std::vector<Key> heap_;
  std::vector<T> slab_;
  std::vector<std::uint32_t> free_;
  double max_t_ = -std::numeric_limits<double>::infinity();  ///< at least every held event's time
};

}  // namespace kanoko::trace
