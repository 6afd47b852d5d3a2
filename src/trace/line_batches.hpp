// Reading a text trace on several cores: worker threads read the file in batches of whole lines
// and pre-parse each batch (a format's `prepare`: tokens, numbers, the common entries), while the
// caller takes the batches in file order and does what depends on the order (declarations, the
// clock, matching, the sink), and reads and prepares batches itself while the one it needs is not
// ready. Memory is bounded by the batches in flight, not by the file.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"
#include "src/trace/decompress.hpp"

namespace kanoko::trace {

/// Whole lines of a file: every line ends with '\n' except perhaps the file's last one.
struct LineBatch {
  /// The lines, in `storage`: valid while the batch is (a batch moved keeps its text).
  std::string_view text;
  /// `text` is the start of one line longer than the reader's limit (no '\n' in it): the file
  /// is not a text trace. Nothing follows such a batch.
  bool overlong = false;
  /// The bytes under `text`, reused from batch to batch: read into without being zeroed first
  /// (a std::string's resize would write every byte of a batch once more before the read).
  std::unique_ptr<char[]> storage;
  std::size_t capacity = 0;  ///< bytes of `storage`
};

/// Calls f(line) for each line of the batch, without its '\n'.
template <typename F>
void for_each_line(const LineBatch& b, F&& f) {
  std::string_view rest = b.text;
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) {
      f(rest);
      return;
    }
    f(rest.substr(0, nl));
    rest.remove_prefix(nl + 1);
  }
}

/// Reads a file as successive LineBatch values of about `batch_bytes` each (not thread-safe); a
/// gzip, xz or zstd file is decompressed on the way (DecompressedInput).
class LineBatchSource {
 public:
  /// Throws InputError naming the file when it cannot be opened.
  LineBatchSource(const std::filesystem::path& path, std::size_t batch_bytes, std::size_t max_line_bytes);

  /// Fills `b` with the next lines; false at the end of the file. Throws InputError on a read
  /// error and on corrupt or truncated compressed data.
  bool next(LineBatch& b);

 private:
  DecompressedInput input_;
  std::size_t batch_bytes_;
  std::size_t max_line_bytes_;
  std::string carry_;  ///< the partial last line of the previous read
  bool done_ = false;
};

/// How a text trace file is read.
struct TextReadOptions {
  /// Threads in all, the calling one included: 0 one per core (at most 4), 1 the calling thread
  /// only, N the calling thread and N - 1 workers (at most 8).
  int threads = 0;
  std::size_t batch_bytes = std::size_t{256} << 10U;  ///< bytes read per batch
  bool operator==(const TextReadOptions&) const = default;  ///< same options, same events (survey_trace's memo)
};

/// The worker threads for TextReadOptions::threads = `requested`; 0 means "read on the calling
/// thread".
int reader_workers(int requested);

/// Batches of a file with their prepared data, in file order. With 0 workers the caller's thread
/// reads and prepares each batch when it asks for it.
template <typename Prepared>
class ParallelLineReader {
 public:
  using Prepare = std::function<void(const LineBatch&, Prepared&)>;

  ParallelLineReader(const std::filesystem::path& path, int workers, Prepare prepare, std::size_t batch_bytes,
                     std::size_t max_line_bytes)
      : source_(path, batch_bytes, max_line_bytes), prepare_(std::move(prepare)) {
    // Two batches per worker, the one the caller holds and one ready ahead: every slot is fresh
    // memory (page faults) and its batch leaves the core's cache when it waits. A worker that has
    // filled every slot sleeps until `workers + 1` of them are free again, then fills them in a
    // row: one sleep and wake-up per few batches, not one per batch (on two cores the worker
    // splits faster than the caller parses, and waited for nearly every batch).
    const std::size_t slots = workers > 0 ? 2 * static_cast<std::size_t>(workers) + 2 : 1;
    for (std::size_t i = 0; i < slots; ++i) slots_.push_back(std::make_unique<Slot>());
    wake_free_ = static_cast<std::size_t>(workers) + 1;
    free_ = slots;
    try {
      for (int w = 0; w < workers; ++w) threads_.emplace_back([this] { work(); });
    } catch (...) {
      stop();
      throw;
    }
  }
  ~ParallelLineReader() { stop(); }
  ParallelLineReader(const ParallelLineReader&) = delete;
  ParallelLineReader& operator=(const ParallelLineReader&) = delete;

  /// The next batch and its prepared data (valid until the next call), or false at the end.
  /// Rethrows, in file order, what reading or preparing a batch threw.
  bool next(const LineBatch*& batch, Prepared*& prepared) {
    if (threads_.empty()) {
      Slot& s = *slots_[0];
      if (!source_.next(s.batch)) return false;
      prepare_(s.batch, s.prepared);
      batch = &s.batch;
      prepared = &s.prepared;
      return true;
    }
    std::unique_lock lock(mutex_);
    if (holding_) {
      slots_[consumed_ % slots_.size()]->state = State::Free;
      ++consumed_;
      ++free_;
      holding_ = false;
      if (sleeping_ > 0 && free_ >= wake_free_) free_slots_.notify_all();
    }
    Slot& s = *slots_[consumed_ % slots_.size()];
    // While the batch it needs is not ready, the caller reads and prepares the next free one
    // itself: on two cores the preparing (the larger share of the work) is then split between
    // both threads instead of waiting for the one worker. Batches are still taken in file order,
    // and what a batch holds does not depend on the thread that prepared it.
    while (!(s.state == State::Ready && s.seq == consumed_)) {
      if (!fill_next(lock)) {
        caller_waits_ = true;
        ready_.wait(lock);
        caller_waits_ = false;
      }
    }
    if (s.error) std::rethrow_exception(s.error);
    if (s.end) return false;
    holding_ = true;
    batch = &s.batch;
    prepared = &s.prepared;
    return true;
  }

 private:
  enum class State : std::uint8_t { Free, Filling, Ready };
  struct Slot {
    State state = State::Free;
    std::uint64_t seq = 0;
    bool end = false;
    std::exception_ptr error;
    LineBatch batch;
    Prepared prepared;
  };

  /// Reads and prepares the next batch into the next slot when that slot is free and the file
  /// is not finished (the lock is released while preparing); false when there was nothing to do.
  /// Slots are filled and freed in sequence order, so the free ones follow slot read_.
  bool fill_next(std::unique_lock<std::mutex>& lock) {
    if (stop_ || finished_ || free_ == 0) return false;
    Slot& s = *slots_[read_ % slots_.size()];
    --free_;
    s.seq = read_++;
    s.state = State::Filling;
    s.end = false;
    s.error = nullptr;
    // The file is read under the lock (one reader at a time, in order); the rest is not.
    try {
      s.end = !source_.next(s.batch);
    } catch (...) {
      s.error = std::current_exception();
    }
    if (s.end || s.error) {
      finished_ = true;
      s.state = State::Ready;
      ready_.notify_all();
      free_slots_.notify_all();
      return true;
    }
    lock.unlock();
    try {
      prepare_(s.batch, s.prepared);
    } catch (...) {
      s.error = std::current_exception();
    }
    lock.lock();
    s.state = State::Ready;
    if (caller_waits_) ready_.notify_all();
    return true;
  }

  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ++sleeping_;
      free_slots_.wait(lock, [&] { return stop_ || finished_ || free_ >= wake_free_; });
      --sleeping_;
      while (fill_next(lock)) {
      }
      if (stop_ || finished_) return;
    }
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    free_slots_.notify_all();
    ready_.notify_all();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  LineBatchSource source_;
  Prepare prepare_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable ready_;       ///< a batch became ready (the caller waits on it)
  std::condition_variable free_slots_;  ///< slots were freed (the workers wait on it)
  std::size_t free_ = 0;                ///< slots free (they follow slot read_)
  std::size_t wake_free_ = 1;           ///< a sleeping worker wakes when this many slots are free
  int sleeping_ = 0;                    ///< workers waiting on free_slots_
  bool caller_waits_ = false;           ///< the caller waits on ready_
  std::uint64_t read_ = 0;      ///< sequence number of the next batch to read
  std::uint64_t consumed_ = 0;  ///< sequence number of the batch the caller gets next
  bool holding_ = false;        ///< the caller holds batch consumed_
  bool finished_ = false;       ///< the end of the file or an error was read
  bool stop_ = false;
};

/// Reads a text trace file as the readers do: batches prepared on TextReadOptions' threads, each
/// passed in file order to consume(batch, prepared, lines_before), which returns the number of
/// lines it took; Ctrl-C is checked between batches. A line longer than `max_line_bytes` is an
/// InputError at its line: "line is longer than 16 MiB: not a <what> (binary file?)".
template <typename Prepared, typename Consume>
void read_line_batches(const std::filesystem::path& path, const TextReadOptions& options, std::size_t max_line_bytes,
                       typename ParallelLineReader<Prepared>::Prepare prepare, const char* what, Consume&& consume) {
  ParallelLineReader<Prepared> reader(path, reader_workers(options.threads), std::move(prepare), options.batch_bytes,
                                      max_line_bytes);
  const LineBatch* batch = nullptr;
  Prepared* prepared = nullptr;
  std::int64_t lines = 0;
  std::size_t batches = 0;
  while (reader.next(batch, prepared)) {
    if (batch->overlong) {
      throw InputError(FileLoc{path.string(), lines + 1, 1}, "line is longer than " +
                                                                 std::to_string(max_line_bytes >> 20U) + " MiB: not a " +
                                                                 what + " (binary file?)");
    }
    lines += consume(*batch, *prepared, lines);
    if (++batches % 64 == 0) check_interrupt();
  }
}

}  // namespace kanoko::trace
