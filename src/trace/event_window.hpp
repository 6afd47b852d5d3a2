// Time ordering for readers whose events become known out of order: a state is known at its end,
// a message at its receive, and Chrome JSON files are written thread buffer by thread buffer.
// Events wait in a bounded window and leave it in time order; the state stacks every such reader
// keeps live here too, so that a window overflow can cut long open states into pieces instead of
// moving them in time.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/error.hpp"
#include "src/trace/event.hpp"

namespace kanoko::trace {

/// Events a window holds at most by default (about 100 MB).
inline constexpr std::size_t kDefaultEventWindow = std::size_t{1} << 20U;

/// One kind of recoverable problem of a reader: how often it happened and where first.
struct ReaderWarning {
  std::string what;
  std::uint64_t count = 0;
  FileLoc first;
  /// "file:line:column: warning: N× what"
  [[nodiscard]] std::string str() const;
};

/// Warnings of one read, grouped by kind in the order they first happened.
class ReaderWarnings {
 public:
  void add(std::string_view what, const FileLoc& where, std::uint64_t count = 1);
  [[nodiscard]] const std::vector<ReaderWarning>& items() const { return items_; }
  [[nodiscard]] std::uint64_t total() const;

 private:
  std::vector<ReaderWarning> items_;
};

/// Sorts events by their first time stamp within a window of at most `max_held` events and
/// passes them on to a sink. When the window is full, the older half leaves; before that,
/// `before_release(T)` lets the reader hand in the parts before T of whatever it still holds open
/// (StateStacks::split_before). An event older than what already left is moved to that time and
/// counted as late.
class EventWindow {
 public:
  EventWindow(TraceSink& sink, std::size_t max_held, std::function<void(double)> before_release = {});

  void state(double begin_s, double end_s, EntityIndex entity, std::string_view name, LocationIndex location = 0);
  void message(const Message& m);
  void load(const LoadSample& s);
  void collective(const Collective& c);
  void marker(const Marker& m);
  /// Passes on everything held (end of trace).
  void flush();

  [[nodiscard]] std::uint64_t late_events() const { return late_; }
  [[nodiscard]] std::size_t held() const { return heap_.size(); }

 private:
  enum class Kind : std::uint8_t { State, Message, Load, Collective, Marker };
  struct Held {
    double t = 0;
    Kind kind = Kind::State;
    EntityIndex a = 0;
    EntityIndex b = 0;
    double t2 = 0;
    double value = 0;
    std::uint64_t bytes = 0;
    std::int64_t number = -1;  ///< tag or root
    LocationIndex location = 0;
    std::string name;
    std::string group;
  };
  /// A heap entry: the event's order and where it waits in the pool (events stay in place).
  struct Slot {
    double t;
    std::uint64_t seq;
    std::uint32_t index;
  };
  double admit(double t);
  Held held(Kind kind, double t, EntityIndex a, double t2);
  void push(Held h);
  void release();
  void pop_and_emit();

  TraceSink& sink_;
  std::size_t max_held_;
  std::function<void(double)> before_release_;
  std::deque<Held> pool_;             ///< waiting events (and free slots, reused); no doubling
  std::vector<std::uint32_t> free_;   ///< free slots of pool_
  std::vector<Slot> heap_;            ///< a min-heap on (t, seq)
  std::vector<double> scratch_;
  std::uint64_t seq_ = 0;
  std::uint64_t late_ = 0;
  double emitted_ = -1e300;  ///< time of the last event passed on
  bool releasing_ = false;
};

/// The open states of every entity (push/pop nesting), feeding finished states to a window.
class StateStacks {
 public:
  /// Nesting deeper than this is refused (push returns false).
  static constexpr std::size_t kMaxDepth = 100000;

  explicit StateStacks(EventWindow& window) : window_(window) {}
  [[nodiscard]] bool push(EntityIndex e, double t, std::string_view name, LocationIndex location = 0);
  /// Ends the innermost open state of `e` at t; false when none is open. `name` receives its name.
  bool pop(EntityIndex e, double t, std::string* name = nullptr);
  /// Emits the part before `until` of every state open since earlier and restarts it there.
  void split_before(double until);
  /// Ends every open state at t (end of trace); returns how many there were.
  std::uint64_t close_all(double t);
  [[nodiscard]] std::size_t depth(EntityIndex e) const { return e < stacks_.size() ? stacks_[e].size() : 0; }

 private:
  struct Open {
    double begin_s;
    std::string name;
    LocationIndex location;
  };
  EventWindow& window_;
  std::vector<std::vector<Open>> stacks_;
  std::size_t open_ = 0;
};

}  // namespace kanoko::trace
