// A trace stream kept in memory: what a reader delivered, recorded once and delivered again to
// another sink without reading the files. A command that must read a trace twice (a survey to
// infer the mapping and the interval, then the timeline that depends on both) records the first
// pass and replays it as the second, at memory speed instead of parsing speed.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "src/trace/event.hpp"

namespace kanoko::trace {

/// Records every TraceSink call, in order and whole (every field, every string), in a compact
/// byte log. Messages and states, nearly all of a big trace, take a few bytes more than their
/// numbers: a time equal to the last record's is not repeated, integers are written in as many
/// bytes as they need (LEB128), default fields (no receive time, tag or code location) are left
/// out, and a state name among the last sixteen written is a byte (a 1 GB trace of 21 million
/// events takes 321 MB, where whole records took about 870 MB).
///
/// Bounded: when a record would take the log past `budget_bytes`, it stops recording and
/// frees what it holds (complete() is then false for good), so a trace too large for memory costs
/// a second read, never the memory. A log is complete once it has recorded the stream's end
/// within its budget; only a complete log replays.
class EventLog final : public TraceSink {
 public:
  /// `chunk_bytes`: the size of the blocks it allocates (0: a sixteenth of the budget, between
  /// 64 KiB and 32 MiB).
  explicit EventLog(std::size_t budget_bytes, std::size_t chunk_bytes = 0);

  void on_entity(const Entity& e) override;
  void on_link(const Link& l) override;
  void on_message(const Message& m) override;
  void on_load(const LoadSample& s) override;
  void on_state(const StateInterval& s) override;
  void on_location(LocationIndex index, const CodeLocation& l) override;
  void on_collective(const Collective& c) override;
  void on_collective_records() override;
  void on_marker(const Marker& m) override;
  void on_end(double end_s) override;

  /// The whole stream, up to its end, was recorded within the budget.
  [[nodiscard]] bool complete() const { return ended_ && !over_budget_; }
  /// Recording stopped because the log would have exceeded its budget.
  [[nodiscard]] bool over_budget() const { return over_budget_; }
  /// Bytes the records take (0 once over budget); the memory held is at most a chunk more.
  [[nodiscard]] std::size_t bytes() const { return recorded_; }
  /// Delivers the recorded stream to `sink`, call for call, as the reader delivered it. Throws
  /// std::logic_error when the log is not complete.
  void replay(TraceSink& sink) const;
  /// Delivers what was recorded so far (a batch of a stream that goes on: PipeSink). Throws
  /// std::logic_error when the log ran over its budget.
  void replay_recorded(TraceSink& sink) const;

  /// Moves the records so far out into a log of their own (a batch), leaving this one empty.
  [[nodiscard]] std::unique_ptr<EventLog> take_records();
  /// Called after each record is written, with whether it was the stream's end (a PipeSink
  /// hands its batches over from there).
  void after_each_record(std::function<void(bool end)> f) { after_ = std::move(f); }

  /// The default budget of a log beside a read: a quarter of the machine's memory, at most 8 GiB
  /// (the run's own data comes after).
  [[nodiscard]] static std::size_t default_budget();

 private:
  struct Chunk {
    std::unique_ptr<char[]> data;
    std::size_t used = 0;
    std::size_t size = 0;
  };
  /// Room for a record of `n` bytes; nullptr once over budget.
  char* reserve(std::size_t n);
  /// Ends a record reserved for at most its size: it took the bytes up to `end`.
  void shrink_last(const char* end);
  /// A state's name as the log stores it: the index of the same name among the last kNames
  /// written in full (a record then holds a byte instead of the name), or -1.
  [[nodiscard]] int cached_name(std::string_view name) const;
  void drop_all();
  void recorded(bool end = false) {
    if (after_) after_(end);
  }

  /// How many names the log remembers to refer back to (state names repeat: compute, idle, ...).
  static constexpr std::size_t kNames = 16;
  /// Context that message and state records are written against (the time of the last one,
  /// the last names written in full); it starts again, empty, with every log that
  /// take_records() leaves, so that any log replays from its first record.
  struct Context {
    std::uint64_t time_bits = 0;  ///< the bits of the last message's or state's first time
    bool have_time = false;
    std::array<std::string_view, kNames> names{};  ///< where the log holds them
    std::size_t next_name = 0;
    void remember(std::string_view name) { names[next_name++ % kNames] = name; }
    /// Whether a record's first time `t` is the last one, bit for bit; it becomes the last one.
    bool repeats(double t) {
      const auto bits = std::bit_cast<std::uint64_t>(t);
      const bool same = have_time && time_bits == bits;
      time_bits = bits;
      have_time = true;
      return same;
    }
    [[nodiscard]] double last_time() const { return std::bit_cast<double>(time_bits); }
  };
  Context context_;
  std::vector<Chunk> chunks_;
  std::size_t budget_;
  std::size_t chunk_bytes_;
  std::size_t held_ = 0;      // bytes allocated in chunks
  std::size_t recorded_ = 0;  // bytes of records
  bool over_budget_ = false;
  bool ended_ = false;
  std::function<void(bool)> after_;
};

/// A pipeline stage: delivers a stream to `down` on a thread of its own, in order, in batches of
/// about a MiB (EventLogs), so that the thread feeding it goes on with its own work (a replayed
/// survey's selection and survey) while `down` (the timeline) works on the other core. At most
/// a few batches wait. finish() waits for `down` to have taken everything and rethrows what it
/// threw; once `down` has thrown, the rest of the stream is dropped. The destructor stops and
/// joins the thread without delivering what is left (an exception left the feeding side).
class PipeSink {
 public:
  explicit PipeSink(TraceSink& down);
  ~PipeSink();
  PipeSink(const PipeSink&) = delete;
  PipeSink& operator=(const PipeSink&) = delete;

  /// Where the stream goes in.
  [[nodiscard]] TraceSink& input() { return batch_; }
  /// Waits until `down` has taken the whole stream; rethrows its exception.
  void finish();

 private:
  struct Shared;
  /// Hands the records so far over to the thread when they make a batch (or `now`).
  void hand_over(bool now);

  EventLog batch_;
  std::unique_ptr<Shared> shared_;
};

}  // namespace kanoko::trace
