#include "src/trace/paper_programs.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <string>
#include <system_error>
#include <vector>

#include "src/base/check.hpp"
#include "src/base/error.hpp"
#include "src/base/suggest.hpp"

namespace kanoko::trace {
namespace {

// All simulated times are integer nanoseconds: the event order is exact (no floating-point ties)
// and a time prints as an exact decimal, so the file's time order is the simulation's.
using Nanos = std::int64_t;

constexpr Nanos kNanosPerSecond = 1'000'000'000;
/// Options that take seconds accept at most this much (a day), so every sum stays in range.
constexpr double kMaxSeconds = 86400.0;
/// A mesh trace is held in memory before it is written; 10 M messages is about 500 MB of text.
constexpr long long kMaxMeshMessages = 10'000'000;

const FileLoc kFibonacciLoc{"kanoko generate fibonacci"};
const FileLoc kMeshLoc{"kanoko generate mesh"};

Nanos to_nanos(double seconds) { return static_cast<Nanos>(std::llround(seconds * 1e9)); }

double to_seconds(Nanos ns) { return static_cast<double>(ns) / 1e9; }

// ------------------------------------------------------------------------------------------
// Formatting
// ------------------------------------------------------------------------------------------

void append_int(std::string& out, std::uint64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

/// Seconds as an exact decimal with trailing zeros dropped: 1500000 ns -> "0.0015".
void append_time(std::string& out, Nanos ns) {
  KANOKO_ASSERT(ns >= 0, "negative trace time");
  const auto total = static_cast<std::uint64_t>(ns);
  const auto per_second = static_cast<std::uint64_t>(kNanosPerSecond);
  append_int(out, total / per_second);
  std::uint64_t frac = total % per_second;
  if (frac == 0) return;
  char digits[9];
  for (int i = 8; i >= 0; --i) {
    digits[i] = static_cast<char>('0' + frac % 10);
    frac /= 10;
  }
  std::size_t len = 9;
  while (digits[len - 1] == '0') --len;
  out += '.';
  out.append(digits, len);
}

/// A fraction with 6 significant digits ("0.934512", "1", "0").
void append_fraction(std::string& out, double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 6);
  out.append(buf, r.ptr);
}

/// "a, b, c"
std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

// ------------------------------------------------------------------------------------------
// Option checks
// ------------------------------------------------------------------------------------------

void require_seconds(const FileLoc& loc, const char* name, double v, bool positive) {
  if (!std::isfinite(v) || v < 0 || (positive && v <= 0) || v > kMaxSeconds) {
    throw InputError(loc, std::string(name) + " = " + std::to_string(v) + " s: must be " +
                              (positive ? "> 0" : ">= 0") + " and at most " +
                              std::to_string(static_cast<int>(kMaxSeconds)) + " s");
  }
}

void require_range(const FileLoc& loc, const char* name, long long v, long long lo, long long hi,
                   const char* why = nullptr) {
  if (v < lo || v > hi) {
    std::string msg = std::string(name) + " = " + std::to_string(v) + ": must be " +
                      std::to_string(lo) + ".." + std::to_string(hi);
    if (why != nullptr) msg += std::string(" (") + why + ")";
    throw InputError(loc, msg);
  }
}

void require_bandwidth(const FileLoc& loc, double v) {
  if (!std::isfinite(v) || v < 1.0) {
    throw InputError(loc, "bandwidth_bytes_per_s = " + std::to_string(v) + ": must be >= 1 byte/s");
  }
}

/// Time to push `bytes` through a link.
Nanos transfer_nanos(std::uint64_t bytes, double bandwidth_bytes_per_s) {
  return static_cast<Nanos>(std::llround(static_cast<double>(bytes) / bandwidth_bytes_per_s * 1e9));
}

// ------------------------------------------------------------------------------------------
// TraceBuilder: collects messages and CPU activity, derives states and load samples, and writes
// everything in time order.
// ------------------------------------------------------------------------------------------

enum class Activity : std::uint8_t { Compute, Send, Recv };

constexpr std::string_view activity_name(Activity a) {
  switch (a) {
    case Activity::Compute:
      return "compute";
    case Activity::Send:
      return "send";
    case Activity::Recv:
      return "recv";
  }
  return "compute";
}

class TraceBuilder {
 public:
  static constexpr std::uint32_t kNoMessage = std::numeric_limits<std::uint32_t>::max();

  /// `detailed`: keep send/recv/compute apart; otherwise every activity is a `compute` state.
  TraceBuilder(std::size_t nodes, Nanos sample_ns, bool detailed)
      : sample_ns_(sample_ns), detailed_(detailed), busy_(nodes), last_state_(nodes, kNone) {}

  /// Records a message sent at `send`; its receive time is set later with set_recv().
  std::uint32_t add_message(std::uint32_t src, std::uint32_t dst, std::uint64_t bytes, int tag,
                            Nanos send) {
    KANOKO_ASSERT(messages_.size() < kNoMessage, "too many messages");
    messages_.push_back(MessageRec{send, -1, src, dst, bytes, tag});
    bytes_ += bytes;
    return static_cast<std::uint32_t>(messages_.size() - 1);
  }

  void set_recv(std::uint32_t message, Nanos recv) {
    MessageRec& m = messages_[message];
    KANOKO_ASSERT(recv >= m.send, "message received before it was sent");
    m.recv = recv;
  }

  /// The CPU of `node` is busy with `what` during [start, start + duration).
  void add_activity(std::uint32_t node, Nanos start, Nanos duration, Activity what) {
    if (duration <= 0) return;
    const Activity shown = detailed_ ? what : Activity::Compute;
    std::size_t& last = last_state_[node];
    if (last != kNone && states_[last].name == shown && states_[last].end == start) {
      states_[last].end = start + duration;  // back-to-back: one longer state
    } else {
      KANOKO_ASSERT(last == kNone || states_[last].end <= start, "overlapping CPU activity");
      last = states_.size();
      states_.push_back(StateRec{start, start + duration, node, shown});
    }
    add_busy(node, start, start + duration);
  }

  [[nodiscard]] std::uint64_t message_count() const { return messages_.size(); }
  [[nodiscard]] std::uint64_t byte_count() const { return bytes_; }
  [[nodiscard]] std::uint64_t state_count() const { return states_.size(); }

  /// Busy nanoseconds of every node over the whole run.
  [[nodiscard]] Nanos total_busy() const {
    Nanos sum = 0;
    for (const auto& per_node : busy_) {
      for (const Nanos b : per_node) sum += b;
    }
    return sum;
  }

  /// Appends the load samples and the sorted entries after `header` and writes it all to `out`.
  /// Throws InputError (at `loc`) when the sampling period would give an unreasonable number of
  /// load samples for this run.
  void write(std::string header, Nanos end, const FileLoc& loc, std::ostream& out) const {
    const std::size_t periods =
        std::max<std::size_t>(1, static_cast<std::size_t>((end + sample_ns_ - 1) / sample_ns_));
    if (periods * busy_.size() > kMaxLoadSamples) {
      throw InputError(loc, "the run lasts " + std::to_string(to_seconds(end)) +
                                " s, so a sampling "
                                "period of " +
                                std::to_string(to_seconds(sample_ns_)) + " s would write " +
                                std::to_string(periods * busy_.size()) + " load samples (at most " +
                                std::to_string(kMaxLoadSamples) +
                                "); use a longer sampling period");
    }
    // Entries in a fixed order before the stable sort by time: at equal times, load samples come
    // first, then messages, then states, each in the order it was generated.
    struct Ref {
      Nanos time;
      std::uint8_t kind;  // 0 load, 1 message, 2 state
      std::uint32_t index;
    };
    std::vector<Ref> refs;
    refs.reserve(periods * busy_.size() + messages_.size() + states_.size());
    for (std::size_t p = 0; p < periods; ++p) {
      for (std::size_t node = 0; node < busy_.size(); ++node) {
        refs.push_back(Ref{static_cast<Nanos>(p) * sample_ns_, 0,
                           static_cast<std::uint32_t>(p * busy_.size() + node)});
      }
    }
    for (std::size_t i = 0; i < messages_.size(); ++i) {
      refs.push_back(Ref{messages_[i].send, 1, static_cast<std::uint32_t>(i)});
    }
    for (std::size_t i = 0; i < states_.size(); ++i) {
      refs.push_back(Ref{states_[i].begin, 2, static_cast<std::uint32_t>(i)});
    }
    std::stable_sort(refs.begin(), refs.end(),
                     [](const Ref& a, const Ref& b) { return a.time < b.time; });

    std::string text = std::move(header);
    text.reserve(text.size() + refs.size() * 40 + 32);
    for (const Ref& r : refs) {
      switch (r.kind) {
        case 0: {
          const std::size_t p = r.index / busy_.size();
          const std::size_t node = r.index % busy_.size();
          const Nanos begin = static_cast<Nanos>(p) * sample_ns_;
          const Nanos length = std::min(sample_ns_, end - begin);
          const Nanos busy = p < busy_[node].size() ? busy_[node][p] : 0;
          const double fraction =
              length > 0 ? static_cast<double>(busy) / static_cast<double>(length) : 0.0;
          text += "load ";
          append_time(text, begin);
          text += ' ';
          append_int(text, node);
          text += ' ';
          append_fraction(text, fraction);
          text += '\n';
          break;
        }
        case 1: {
          const MessageRec& m = messages_[r.index];
          KANOKO_ASSERT(m.recv >= 0, "message never received");
          text += "msg ";
          append_time(text, m.send);
          text += ' ';
          append_int(text, m.src);
          text += ' ';
          append_int(text, m.dst);
          text += ' ';
          append_int(text, m.bytes);
          text += " tag=";
          append_int(text, static_cast<std::uint64_t>(m.tag));
          text += " recv=";
          append_time(text, m.recv);
          text += '\n';
          break;
        }
        default: {
          const StateRec& s = states_[r.index];
          text += "state ";
          append_time(text, s.begin);
          text += ' ';
          append_int(text, s.node);
          text += ' ';
          append_time(text, s.end - s.begin);
          text += ' ';
          text += activity_name(s.name);
          text += '\n';
          break;
        }
      }
    }
    text += "end ";
    append_time(text, end);
    text += '\n';
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) throw RunError("writing the generated trace failed");
  }

 private:
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  static constexpr std::size_t kMaxLoadSamples = 20'000'000;

  struct MessageRec {
    Nanos send;
    Nanos recv;
    std::uint32_t src;
    std::uint32_t dst;
    std::uint64_t bytes;
    int tag;
  };
  struct StateRec {
    Nanos begin;
    Nanos end;
    std::uint32_t node;
    Activity name;
  };

  /// Adds [begin, end) to the node's busy time, split over the sampling periods it spans.
  void add_busy(std::uint32_t node, Nanos begin, Nanos end) {
    std::vector<Nanos>& periods = busy_[node];
    while (begin < end) {
      const auto p = static_cast<std::size_t>(begin / sample_ns_);
      const Nanos period_end = (static_cast<Nanos>(p) + 1) * sample_ns_;
      const Nanos piece_end = std::min(end, period_end);
      if (periods.size() <= p) periods.resize(p + 1, 0);
      periods[p] += piece_end - begin;
      begin = piece_end;
    }
  }

  Nanos sample_ns_;
  bool detailed_;
  std::vector<MessageRec> messages_;
  std::vector<StateRec> states_;
  std::vector<std::vector<Nanos>> busy_;  ///< [node][period] busy nanoseconds
  std::vector<std::size_t> last_state_;   ///< per node, index of its latest state
  std::uint64_t bytes_ = 0;
};

void append_node(std::string& out, std::size_t id, const std::string& name,
                 const std::string& host) {
  out += "node 0 ";
  append_int(out, id);
  out += " name=";
  out += name;
  if (!host.empty()) {
    out += " host=";
    out += host;
  }
  out += " rank=";
  append_int(out, id);
  out += '\n';
}

// ------------------------------------------------------------------------------------------
// Fibonacci
// ------------------------------------------------------------------------------------------

/// SplitMix64 (Steele, Lea & Flood 2014): a tiny generator whose output is fully specified, so a
/// seed gives the same trace on every platform (std:: distributions are implementation-defined).
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  /// Uniform in [0, bound), without modulo bias (rejects the short top range).
  std::uint64_t below(std::uint64_t bound) {
    KANOKO_ASSERT(bound > 0, "empty range");
    const std::uint64_t threshold = (0 - bound) % bound;
    for (;;) {
      const std::uint64_t r = next();
      if (r >= threshold) return r % bound;
    }
  }

 private:
  std::uint64_t state_;
};

std::uint64_t fibonacci_number(int n) {
  std::uint64_t a = 0;
  std::uint64_t b = 1;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t next = a + b;
    a = b;
    b = next;
  }
  return a;
}

class FibonacciSimulation {
 public:
  FibonacciSimulation(const FibonacciOptions& o, TraceBuilder& trace)
      : o_(o),
        trace_(trace),
        nodes_(static_cast<std::size_t>(o.nodes)),
        rng_(o.seed),
        spawn_ns_(to_nanos(o.spawn_compute_s)),
        add_ns_(to_nanos(o.add_compute_s)),
        leaf_ns_(to_nanos(o.leaf_compute_s)),
        send_ns_(to_nanos(o.send_overhead_s)),
        recv_ns_(to_nanos(o.recv_overhead_s)),
        call_flight_ns_(to_nanos(o.latency_s) +
                        transfer_nanos(o.call_bytes, o.bandwidth_bytes_per_s)),
        reply_flight_ns_(to_nanos(o.latency_s) +
                         transfer_nanos(o.reply_bytes, o.bandwidth_bytes_per_s)) {
    if (o.distribution == FibonacciOptions::Distribution::Torus) {
      torus_ = fibonacci_torus_shape(o.nodes);
    }
  }

  FibonacciResult run() {
    const std::uint64_t total_calls = 2 * fibonacci_number(o_.n + 1) - 1;
    calls_.reserve(total_calls);  // no reallocation: call records are addressed by index
    calls_.push_back(Call{kNoParent, 0, static_cast<std::uint8_t>(o_.n), 0, 0});
    schedule(0, Event::Arrive, 0, Work{0, TraceBuilder::kNoMessage, 0, false});

    while (!events_.empty()) {
      const Event e = events_.top();
      events_.pop();
      Node& node = nodes_[e.node];
      if (e.type == Event::Arrive) {
        if (node.busy) {
          node.ready.push_back(e.work);
        } else {
          start(e.node, e.work, e.time);
        }
      } else {
        node.busy = false;
        if (!node.ready.empty()) {
          const Work next = node.ready.front();
          node.ready.pop_front();
          start(e.node, next, e.time);
        }
      }
    }
    KANOKO_ASSERT(finished_, "the root call never finished");
    KANOKO_ASSERT(calls_.size() == total_calls, "call count differs from 2 fib(n+1) - 1");

    FibonacciResult r;
    r.value = value_;
    r.calls = calls_.size();
    r.messages = trace_.message_count();
    r.bytes = trace_.byte_count();
    r.end_s = to_seconds(end_);
    r.torus_rows = torus_[0];
    r.torus_cols = torus_[1];
    return r;
  }

  [[nodiscard]] Nanos end() const { return end_; }

 private:
  static constexpr std::uint32_t kNoParent = std::numeric_limits<std::uint32_t>::max();

  struct Call {
    std::uint32_t parent;  ///< index of the parent call, kNoParent for the root
    std::uint32_t node;    ///< node it runs on
    std::uint8_t k;        ///< argument
    std::uint8_t replies;  ///< child values received so far
    std::uint64_t sum;     ///< sum of the child values received so far
  };
  /// A unit of ready work in a node's FIFO: a call to run or a child's value to take in.
  struct Work {
    std::uint32_t call;     ///< the call to run, or (reply) the parent call receiving a value
    std::uint32_t message;  ///< message that brought it, or kNoMessage (the root call)
    std::uint64_t value;    ///< reply: the child's value
    bool reply;
  };
  struct Event {
    enum Type : std::uint8_t { Arrive, CpuFree };
    Nanos time;
    std::uint64_t seq;  ///< creation order: ties in time are resolved deterministically
    Type type;
    std::uint32_t node;
    Work work;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };
  struct Node {
    bool busy = false;
    std::deque<Work> ready;
  };

  void schedule(Nanos time, Event::Type type, std::uint32_t node, Work work) {
    events_.push(Event{time, seq_++, type, node, work});
  }

  /// The node that runs child `which` (0: fib(k−1), 1: fib(k−2)) of a call on `node`.
  std::uint32_t child_node(std::uint32_t node, int which) {
    const auto p = static_cast<std::uint32_t>(o_.nodes);
    switch (o_.distribution) {
      case FibonacciOptions::Distribution::Random: {
        // Uniform over the other P−1 nodes, so every call is a message as in ring and torus.
        const auto r = static_cast<std::uint32_t>(rng_.below(p - 1));
        return r >= node ? r + 1 : r;
      }
      case FibonacciOptions::Distribution::Ring:
        return (node + 1) % p;
      case FibonacciOptions::Distribution::Torus: {
        const auto cols = static_cast<std::uint32_t>(torus_[1]);
        const auto rows = static_cast<std::uint32_t>(torus_[0]);
        const std::uint32_t row = node / cols;
        const std::uint32_t col = node % cols;
        if (which == 0) return row * cols + (col + 1) % cols;  // right
        return ((row + 1) % rows) * cols + col;                // down
      }
    }
    return 0;
  }

  /// Sends a message and returns the CPU time after its send overhead.
  Nanos send(std::uint32_t from, std::uint32_t to, bool reply, Work work, Nanos at) {
    const std::uint64_t bytes = reply ? o_.reply_bytes : o_.call_bytes;
    work.message = trace_.add_message(from, to, bytes, reply ? 2 : 1, at);
    trace_.add_activity(from, at, send_ns_, Activity::Send);
    const Nanos done = at + send_ns_;
    schedule(done + (reply ? reply_flight_ns_ : call_flight_ns_), Event::Arrive, to, work);
    return done;
  }

  /// Call `call` has its value: return it to the parent (or end the program at the root).
  Nanos finish(std::uint32_t call, std::uint64_t value, Nanos at) {
    const Call& c = calls_[call];
    if (c.parent == kNoParent) {
      finished_ = true;
      value_ = value;
      end_ = at;
      return at;
    }
    return send(c.node, calls_[c.parent].node, true, Work{c.parent, 0, value, true}, at);
  }

  /// Runs one unit of work on the node's CPU from `at` to completion (no preemption).
  void start(std::uint32_t node, const Work& w, Nanos at) {
    nodes_[node].busy = true;
    Nanos t = at;
    if (w.message != TraceBuilder::kNoMessage) {
      trace_.add_activity(node, t, recv_ns_, Activity::Recv);
      t += recv_ns_;
      trace_.set_recv(w.message, t);
    }
    if (!w.reply) {
      const std::uint32_t call = w.call;
      const int k = calls_[call].k;
      if (k < 2) {
        trace_.add_activity(node, t, leaf_ns_, Activity::Compute);
        t = finish(call, static_cast<std::uint64_t>(k), t + leaf_ns_);
      } else {
        trace_.add_activity(node, t, spawn_ns_, Activity::Compute);
        t += spawn_ns_;
        for (int which = 0; which < 2; ++which) {
          const std::uint32_t target = child_node(node, which);
          KANOKO_ASSERT(calls_.size() < calls_.capacity(), "more calls than 2 fib(n+1) - 1");
          const auto child = static_cast<std::uint32_t>(calls_.size());
          calls_.push_back(Call{call, target, static_cast<std::uint8_t>(k - 1 - which), 0, 0});
          t = send(node, target, false, Work{child, 0, 0, false}, t);
        }
      }
    } else {
      Call& parent = calls_[w.call];
      parent.sum += w.value;
      parent.replies = static_cast<std::uint8_t>(parent.replies + 1);
      if (parent.replies == 2) {
        trace_.add_activity(node, t, add_ns_, Activity::Compute);
        t = finish(w.call, parent.sum, t + add_ns_);
      }
    }
    schedule(t, Event::CpuFree, node, Work{});
  }

  const FibonacciOptions& o_;
  TraceBuilder& trace_;
  std::vector<Node> nodes_;
  std::vector<Call> calls_;
  std::priority_queue<Event, std::vector<Event>, Later> events_;
  std::uint64_t seq_ = 0;
  SplitMix64 rng_;
  std::array<int, 2> torus_{0, 0};
  Nanos spawn_ns_, add_ns_, leaf_ns_, send_ns_, recv_ns_, call_flight_ns_, reply_flight_ns_;
  bool finished_ = false;
  std::uint64_t value_ = 0;
  Nanos end_ = 0;
};

// ------------------------------------------------------------------------------------------
// Mesh
// ------------------------------------------------------------------------------------------

struct MeshGeometry {
  int x_count, y_count, z_count;

  [[nodiscard]] int count() const { return x_count * y_count * z_count; }
  [[nodiscard]] int index(int x, int y, int z) const { return x + x_count * (y + y_count * z); }
  [[nodiscard]] std::array<int, 3> coords(int i) const {
    return {i % x_count, (i / x_count) % y_count, i / (x_count * y_count)};
  }
  /// Mesh neighbours of node i in the fixed send order −x, +x, −y, +y, −z, +z (absent ones
  /// skipped: no wrap-around); `axis` receives 0, 1, 2 for each.
  void neighbours(int i, std::vector<int>& out, std::vector<int>& axis) const {
    out.clear();
    axis.clear();
    const auto c = coords(i);
    const std::array<int, 3> size{x_count, y_count, z_count};
    for (int a = 0; a < 3; ++a) {
      for (const int step : {-1, +1}) {
        auto n = c;
        n[static_cast<std::size_t>(a)] += step;
        if (n[static_cast<std::size_t>(a)] < 0 ||
            n[static_cast<std::size_t>(a)] >= size[static_cast<std::size_t>(a)]) {
          continue;
        }
        out.push_back(index(n[0], n[1], n[2]));
        axis.push_back(a);
      }
    }
  }
  /// In the hot octant at the origin corner: every coordinate below half the size, rounded up
  /// (for 3×3×3 the 2×2×2 sub-cube holding n(0,0,0)).
  [[nodiscard]] bool hot(int i) const {
    const auto c = coords(i);
    return c[0] < (x_count + 1) / 2 && c[1] < (y_count + 1) / 2 && c[2] < (z_count + 1) / 2;
  }
  [[nodiscard]] bool adjacent(int a, int b) const {
    const auto ca = coords(a);
    const auto cb = coords(b);
    return std::abs(ca[0] - cb[0]) + std::abs(ca[1] - cb[1]) + std::abs(ca[2] - cb[2]) == 1;
  }
  [[nodiscard]] std::string name(int i) const {
    const auto c = coords(i);
    return "n(" + std::to_string(c[0]) + "," + std::to_string(c[1]) + "," + std::to_string(c[2]) +
           ")";
  }
};

MeshGeometry geometry_of(const MeshOptions& o) {
  return MeshGeometry{o.dims[0], o.dims[1], o.dims[2]};
}

/// Halo bytes from a to b in an iteration; a and b must be adjacent and options valid.
std::uint64_t halo_bytes(const MeshOptions& o, const MeshGeometry& g, int iteration, int a, int b) {
  const bool active = iteration % o.cycle_iterations < o.active_iterations;
  std::uint64_t bytes =
      std::uint64_t{o.halo_layer_bytes} *
      static_cast<std::uint64_t>(active ? o.active_halo_depth : o.quiet_halo_depth);
  if (o.communication == MeshOptions::Communication::Skewed && g.hot(a) && g.hot(b)) {
    bytes *= static_cast<std::uint64_t>(o.hot_factor);
  }
  return bytes;
}

std::string fibonacci_header(const FibonacciOptions& o, const FibonacciResult& shape) {
  std::string h = "kntr 1\n";
  h += "# Kanoko paper 4.1: parallel recursive fib(" + std::to_string(o.n) + ") on " +
       std::to_string(o.nodes) + " processors, " + std::string(to_string(o.distribution)) +
       " load distribution";
  if (o.distribution == FibonacciOptions::Distribution::Torus) {
    h += " (" + std::to_string(shape.torus_rows) + "x" + std::to_string(shape.torus_cols) +
         " torus)";
  }
  if (o.distribution == FibonacciOptions::Distribution::Random)
    h += ", seed " + std::to_string(o.seed);
  h += "\n# modelled by 'kanoko generate fibonacci' (docs/paper-programs.md); msg tag=1 call "
       "(parent -> child), tag=2 reply (child -> parent)\n";
  h += "# load T ID V = busy fraction of node ID's CPU during [T, T + sample period); states: ";
  h += o.detailed_states ? "recv / compute / send\n"
                         : "compute = a run of CPU activity, message handling included\n";
  for (int i = 0; i < o.nodes; ++i) {
    append_node(h, static_cast<std::size_t>(i), "pe" + std::to_string(i),
                "cenju3-pe" + std::to_string(i));
  }
  return h;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public: Fibonacci
// ---------------------------------------------------------------------------------------------

std::string_view to_string(FibonacciOptions::Distribution d) {
  switch (d) {
    case FibonacciOptions::Distribution::Random:
      return "random";
    case FibonacciOptions::Distribution::Ring:
      return "ring";
    case FibonacciOptions::Distribution::Torus:
      return "torus";
  }
  return "random";
}

FibonacciOptions::Distribution parse_fibonacci_distribution(std::string_view name) {
  using D = FibonacciOptions::Distribution;
  for (const D d : {D::Random, D::Ring, D::Torus}) {
    if (name == to_string(d)) return d;
  }
  const std::vector<std::string> valid{"random", "ring", "torus"};
  throw InputError(kFibonacciLoc, "unknown distribution '" + std::string(name) + "'" +
                                      did_you_mean(name, valid) + "; valid: " + join_names(valid));
}

std::array<int, 2> fibonacci_torus_shape(int nodes) {
  for (int rows = static_cast<int>(std::sqrt(static_cast<double>(std::max(nodes, 0)))) + 1;
       rows >= 2; --rows) {
    if (rows <= nodes / rows && nodes % rows == 0) return {rows, nodes / rows};
  }
  throw InputError(kFibonacciLoc,
                   "nodes = " + std::to_string(nodes) +
                       ": the torus distribution needs nodes = R x C with R, C >= 2 (4, 6, 8, 9, "
                       "10, 12, ...); " +
                       std::to_string(nodes) + " cannot form a 2-D torus");
}

void validate(const FibonacciOptions& o) {
  const FileLoc& loc = kFibonacciLoc;
  require_range(loc, "n", o.n, 0, max_fibonacci_n, "the trace grows as fib(n)");
  require_range(loc, "nodes", o.nodes, 2, max_fibonacci_nodes);
  if (o.distribution == FibonacciOptions::Distribution::Torus) (void)fibonacci_torus_shape(o.nodes);
  require_seconds(loc, "sample_interval_s", o.sample_interval_s, true);
  if (to_nanos(o.sample_interval_s) < 1000) {
    throw InputError(loc, "sample_interval_s = " + std::to_string(o.sample_interval_s) +
                              " s: must be at least 1 microsecond");
  }
  require_seconds(loc, "spawn_compute_s", o.spawn_compute_s, false);
  require_seconds(loc, "add_compute_s", o.add_compute_s, false);
  require_seconds(loc, "leaf_compute_s", o.leaf_compute_s, false);
  require_seconds(loc, "send_overhead_s", o.send_overhead_s, false);
  require_seconds(loc, "recv_overhead_s", o.recv_overhead_s, false);
  require_seconds(loc, "latency_s", o.latency_s, false);
  require_bandwidth(loc, o.bandwidth_bytes_per_s);
  require_range(loc, "call_bytes", o.call_bytes, 1, 1LL << 30);
  require_range(loc, "reply_bytes", o.reply_bytes, 1, 1LL << 30);
}

FibonacciResult write_fibonacci_trace(const FibonacciOptions& o, std::ostream& out) {
  validate(o);
  TraceBuilder trace(static_cast<std::size_t>(o.nodes), to_nanos(o.sample_interval_s),
                     o.detailed_states);
  FibonacciSimulation sim(o, trace);
  FibonacciResult result = sim.run();
  result.states = trace.state_count();
  trace.write(fibonacci_header(o, result), sim.end(), kFibonacciLoc, out);
  return result;
}

// ---------------------------------------------------------------------------------------------
// Public: mesh
// ---------------------------------------------------------------------------------------------

std::string_view to_string(MeshOptions::Communication c) {
  return c == MeshOptions::Communication::Uniform ? "uniform" : "skewed";
}

std::string_view to_string(MeshOptions::Load l) {
  return l == MeshOptions::Load::Light ? "light" : "heavy";
}

MeshOptions::Communication parse_mesh_communication(std::string_view name) {
  if (name == "uniform") return MeshOptions::Communication::Uniform;
  if (name == "skewed") return MeshOptions::Communication::Skewed;
  const std::vector<std::string> valid{"uniform", "skewed"};
  throw InputError(kMeshLoc, "unknown communication '" + std::string(name) + "'" +
                                 did_you_mean(name, valid) + "; valid: " + join_names(valid));
}

MeshOptions::Load parse_mesh_load(std::string_view name) {
  if (name == "light") return MeshOptions::Load::Light;
  if (name == "heavy") return MeshOptions::Load::Heavy;
  const std::vector<std::string> valid{"light", "heavy"};
  throw InputError(kMeshLoc, "unknown load '" + std::string(name) + "'" +
                                 did_you_mean(name, valid) + "; valid: " + join_names(valid));
}

void validate(const MeshOptions& o) {
  const FileLoc& loc = kMeshLoc;
  require_range(loc, "dims[0]", o.dims[0], 1, 16);
  require_range(loc, "dims[1]", o.dims[1], 1, 16);
  require_range(loc, "dims[2]", o.dims[2], 1, 16);
  if (o.dims[0] * o.dims[1] * o.dims[2] < 2)
    throw InputError(loc, "the mesh needs at least 2 nodes");
  require_range(loc, "iterations", o.iterations, 1, 100000);
  require_seconds(loc, "iteration_s", o.iteration_s, true);
  require_seconds(loc, "sample_interval_s", o.sample_interval_s, true);
  if (to_nanos(o.sample_interval_s) < 1000 || to_nanos(o.iteration_s) < 1000) {
    throw InputError(loc, "iteration_s and sample_interval_s must be at least 1 microsecond");
  }
  if (to_seconds(to_nanos(o.iteration_s)) * o.iterations > kMaxSeconds) {
    throw InputError(loc, "iterations x iteration_s must be at most a day");
  }
  const long long edges = static_cast<long long>(o.dims[0] - 1) * o.dims[1] * o.dims[2] +
                          static_cast<long long>(o.dims[1] - 1) * o.dims[0] * o.dims[2] +
                          static_cast<long long>(o.dims[2] - 1) * o.dims[0] * o.dims[1];
  const long long messages = 2 * edges * o.iterations;
  if (messages > kMaxMeshMessages) {
    throw InputError(loc, std::to_string(o.iterations) + " iterations on this mesh would write " +
                              std::to_string(messages) + " messages (at most " +
                              std::to_string(kMaxMeshMessages) + "); trace fewer iterations");
  }
  require_range(loc, "cycle_iterations", o.cycle_iterations, 1, 100000);
  require_range(loc, "active_iterations", o.active_iterations, 0, o.cycle_iterations,
                "an active phase cannot be longer than its cycle");
  require_range(loc, "active_halo_depth", o.active_halo_depth, 1, 64);
  require_range(loc, "quiet_halo_depth", o.quiet_halo_depth, 1, 64);
  require_range(loc, "halo_layer_bytes", o.halo_layer_bytes, 1, 1LL << 24);
  require_range(loc, "hot_factor", o.hot_factor, 1, 64);
  require_seconds(loc, "light_compute_s", o.light_compute_s, false);
  require_seconds(loc, "heavy_compute_s", o.heavy_compute_s, false);
  require_seconds(loc, "send_overhead_s", o.send_overhead_s, false);
  require_seconds(loc, "recv_overhead_s", o.recv_overhead_s, false);
  require_seconds(loc, "latency_s", o.latency_s, false);
  require_bandwidth(loc, o.bandwidth_bytes_per_s);
}

std::uint64_t mesh_halo_bytes(const MeshOptions& o, int iteration, int a, int b) {
  validate(o);
  const MeshGeometry g = geometry_of(o);
  if (a < 0 || b < 0 || a >= g.count() || b >= g.count() || !g.adjacent(a, b)) {
    throw InputError(kMeshLoc, "nodes " + std::to_string(a) + " and " + std::to_string(b) +
                                   " are not mesh neighbours");
  }
  if (iteration < 0) throw InputError(kMeshLoc, "iteration must be >= 0");
  return halo_bytes(o, g, iteration, a, b);
}

MeshResult write_mesh_trace(const MeshOptions& o, std::ostream& out) {
  validate(o);
  const MeshGeometry g = geometry_of(o);
  const int count = g.count();
  const auto node_count = static_cast<std::size_t>(count);
  TraceBuilder trace(node_count, to_nanos(o.sample_interval_s), true);

  const Nanos period = to_nanos(o.iteration_s);
  const Nanos send_ns = to_nanos(o.send_overhead_s);
  const Nanos recv_ns = to_nanos(o.recv_overhead_s);
  const Nanos latency = to_nanos(o.latency_s);
  const Nanos compute =
      to_nanos(o.load == MeshOptions::Load::Light ? o.light_compute_s : o.heavy_compute_s);

  std::vector<std::vector<int>> neighbours(node_count);
  std::vector<std::vector<int>> axes(node_count);
  for (int i = 0; i < count; ++i) {
    g.neighbours(i, neighbours[static_cast<std::size_t>(i)], axes[static_cast<std::size_t>(i)]);
  }

  struct Arrival {
    Nanos time;
    int sender;
    std::uint32_t message;
  };
  std::vector<std::vector<Arrival>> arrivals(node_count);
  std::vector<Nanos> cpu_free(node_count);
  MeshResult result;

  for (int it = 0; it < o.iterations; ++it) {
    const Nanos start = static_cast<Nanos>(it) * period;
    // Every node posts its halo sends back to back at the start of the iteration.
    for (int i = 0; i < count; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      Nanos t = start;
      for (std::size_t j = 0; j < neighbours[ui].size(); ++j) {
        const int to = neighbours[ui][j];
        const std::uint64_t bytes = halo_bytes(o, g, it, i, to);
        const std::uint32_t m =
            trace.add_message(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(to), bytes,
                              1 + axes[ui][j], t);
        trace.add_activity(static_cast<std::uint32_t>(i), t, send_ns, Activity::Send);
        t += send_ns;
        arrivals[static_cast<std::size_t>(to)].push_back(
            Arrival{t + latency + transfer_nanos(bytes, o.bandwidth_bytes_per_s), i, m});
      }
      cpu_free[ui] = t;
    }
    // Then it takes in its halos in arrival order, and computes on the updated block.
    for (int i = 0; i < count; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      auto& in = arrivals[ui];
      std::sort(in.begin(), in.end(), [](const Arrival& a, const Arrival& b) {
        return a.time != b.time ? a.time < b.time : a.sender < b.sender;
      });
      Nanos t = cpu_free[ui];
      for (const Arrival& a : in) {
        t = std::max(t, a.time);
        trace.add_activity(static_cast<std::uint32_t>(i), t, recv_ns, Activity::Recv);
        t += recv_ns;
        trace.set_recv(a.message, t);
      }
      in.clear();
      result.max_exchange_s = std::max(result.max_exchange_s, to_seconds(t - start));
      if (t + compute > start + period) {
        throw InputError(
            kMeshLoc,
            "iteration " + std::to_string(it) + " of node " + g.name(i) + " overruns its period: " +
                "the halo exchange takes " + std::to_string(to_seconds(t - start)) + " s and the " +
                std::string(to_string(o.load)) + " compute " + std::to_string(to_seconds(compute)) +
                " s, more than iteration_s = " + std::to_string(o.iteration_s) +
                " s; shorten the compute time or lengthen the iteration");
      }
      trace.add_activity(static_cast<std::uint32_t>(i), t, compute, Activity::Compute);
    }
  }

  const Nanos end = static_cast<Nanos>(o.iterations) * period;
  std::string header = "kntr 1\n";
  header += "# Kanoko paper 4.2: iterative 3-D stencil on a " + std::to_string(o.dims[0]) + "x" +
            std::to_string(o.dims[1]) + "x" + std::to_string(o.dims[2]) + " mesh, " +
            std::string(to_string(o.communication)) + " communication, " +
            std::string(to_string(o.load)) + " load\n";
  header +=
      "# modelled by 'kanoko generate mesh' (docs/paper-programs.md); msg tag = 1 + axis of the "
      "halo (1 x, 2 y, 3 z)\n";
  header += "# load T ID V = busy fraction of node ID's CPU during [T, T + sample period)\n";
  for (int i = 0; i < count; ++i) append_node(header, static_cast<std::size_t>(i), g.name(i), {});
  std::uint64_t link_id = 0;
  for (int i = 0; i < count; ++i) {
    for (const int n : neighbours[static_cast<std::size_t>(i)]) {
      if (n < i) continue;  // each edge once, from its lower-index end
      header += "link 0 ";
      append_int(header, link_id++);
      header += ' ';
      append_int(header, static_cast<std::uint64_t>(i));
      header += ' ';
      append_int(header, static_cast<std::uint64_t>(n));
      header += '\n';
    }
  }
  trace.write(std::move(header), end, kMeshLoc, out);

  result.nodes = node_count;
  result.links = link_id;
  result.messages = trace.message_count();
  result.bytes = trace.byte_count();
  result.states = trace.state_count();
  result.end_s = to_seconds(end);
  result.mean_load = static_cast<double>(trace.total_busy()) /
                     (static_cast<double>(end) * static_cast<double>(count));
  return result;
}

}  // namespace kanoko::trace
