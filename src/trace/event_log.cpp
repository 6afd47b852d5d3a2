#include "src/trace/event_log.hpp"

#include <algorithm>
#include <bit>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>

#include "src/base/memory.hpp"

namespace kanoko::trace {

namespace {

/// What a record is: its first byte.
enum class Kind : std::uint8_t {
  entity,
  link,
  message,
  load,
  state,
  location,
  collective,
  collective_records,
  marker,
  end,
};

/// A record's first byte: its kind in the low bits; a message's or a state's flags above them.
constexpr std::uint8_t kKindBits = 0x0F;
constexpr std::uint8_t kSameTime = 0x10;    ///< message, state: its first time is the last record's
constexpr std::uint8_t kNoReceive = 0x20;   ///< message: no receive time (recv_s is -1)
constexpr std::uint8_t kNameCached = 0x20;  ///< state: its name is a byte, the slot of an earlier one
constexpr std::uint8_t kNoTag = 0x40;       ///< message: tag -1
constexpr std::uint8_t kNoLocation = 0x80;  ///< message, state: code location 0

/// The most bytes an integer takes in LEB128.
constexpr std::size_t kMost32 = 5;
constexpr std::size_t kMost64 = 10;

std::uint64_t bits_of(double v) { return std::bit_cast<std::uint64_t>(v); }
/// Signed integers as unsigned ones of about their magnitude (-1 → 1, 1 → 2).
std::uint64_t zigzag(std::int64_t v) { return (static_cast<std::uint64_t>(v) << 1U) ^ static_cast<std::uint64_t>(v >> 63); }
std::int64_t unzigzag(std::uint64_t u) { return static_cast<std::int64_t>(u >> 1U) ^ -static_cast<std::int64_t>(u & 1U); }

/// Records are written into chunks of a sixteenth of the budget, between these sizes (a record
/// larger than a chunk gets a chunk of its own).
constexpr std::size_t kMostChunkBytes = std::size_t{32} << 20;
constexpr std::size_t kLeastChunkBytes = std::size_t{64} << 10;

/// Bytes a string takes in a record: its length, then its characters.
std::size_t text_size(std::string_view s) { return sizeof(std::uint32_t) + s.size(); }

/// Writes fields one after another (no padding, no alignment).
class Put {
 public:
  explicit Put(char* p) : p_(p) {}
  template <typename T>
  Put& operator()(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::memcpy(p_, &v, sizeof v);
    p_ += sizeof v;
    return *this;
  }
  Put& text(std::string_view s) {
    (*this)(static_cast<std::uint32_t>(s.size()));
    if (!s.empty()) std::memcpy(p_, s.data(), s.size());  // an empty view may hold a null pointer
    p_ += s.size();
    return *this;
  }
  /// An unsigned integer in LEB128: seven bits a byte, the lowest first, the high bit set on all
  /// but the last.
  Put& varint(std::uint64_t v) {
    while (v >= 0x80U) {
      *p_++ = static_cast<char>(static_cast<std::uint8_t>(v | 0x80U));
      v >>= 7U;
    }
    *p_++ = static_cast<char>(static_cast<std::uint8_t>(v));
    return *this;
  }
  [[nodiscard]] const char* at() const { return p_; }

 private:
  char* p_;
};

/// Reads what Put wrote, in the same order.
class Get {
 public:
  explicit Get(const char* p) : p_(p) {}
  template <typename T>
  T value() {
    T v;
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
    return v;
  }
  /// Reads the next field into `v`.
  template <typename T>
  Get& operator()(T& v) {
    v = value<T>();
    return *this;
  }
  std::string_view text() {
    const auto n = value<std::uint32_t>();
    const std::string_view s(p_, n);
    p_ += n;
    return s;
  }
  template <typename S>
  Get& text(S& s) {
    s = text();
    return *this;
  }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
      const auto b = static_cast<std::uint8_t>(*p_++);
      v |= static_cast<std::uint64_t>(b & 0x7FU) << shift;
      if ((b & 0x80U) == 0) return v;
    }
  }
  [[nodiscard]] const char* at() const { return p_; }

 private:
  const char* p_;
};

}  // namespace

EventLog::EventLog(std::size_t budget_bytes, std::size_t chunk_bytes)
    : budget_(budget_bytes),
      chunk_bytes_(chunk_bytes > 0 ? chunk_bytes : std::clamp(budget_bytes / 16, kLeastChunkBytes, kMostChunkBytes)) {}

std::size_t EventLog::default_budget() {
  constexpr std::size_t kMost = std::size_t{8} << 30;
  const std::optional<std::uint64_t> ram = physical_memory_bytes();
  if (!ram) return kMost / 8;  // unknown memory: 1 GiB
  return static_cast<std::size_t>(std::min<std::uint64_t>(kMost, *ram / 4));
}

void EventLog::drop_all() {
  context_ = {};
  chunks_.clear();
  chunks_.shrink_to_fit();
  held_ = 0;
  recorded_ = 0;
  over_budget_ = true;
}

char* EventLog::reserve(std::size_t n) {
  if (over_budget_) return nullptr;
  if (chunks_.empty() || chunks_.back().size - chunks_.back().used < n) {
    const std::size_t size = std::max(chunk_bytes_, n);
    if (held_ + size > budget_) {
      drop_all();
      return nullptr;
    }
    Chunk c;
    c.data.reset(new char[size]);
    c.size = size;
    chunks_.push_back(std::move(c));
    held_ += size;
  }
  Chunk& c = chunks_.back();
  char* p = c.data.get() + c.used;
  c.used += n;
  recorded_ += n;
  return p;
}

void EventLog::shrink_last(const char* end) {
  Chunk& c = chunks_.back();
  const auto unused = static_cast<std::size_t>(c.data.get() + c.used - end);
  c.used -= unused;
  recorded_ -= unused;
}

int EventLog::cached_name(std::string_view name) const {
  const std::size_t known = std::min(context_.next_name, kNames);
  for (std::size_t k = 0; k < known; ++k) {
    if (context_.names[k] == name) return static_cast<int>(k);
  }
  return -1;
}

std::unique_ptr<EventLog> EventLog::take_records() {
  auto out = std::make_unique<EventLog>(budget_, chunk_bytes_);
  out->chunks_ = std::move(chunks_);
  out->held_ = std::exchange(held_, 0);
  out->recorded_ = std::exchange(recorded_, 0);
  out->ended_ = ended_;
  chunks_.clear();
  context_ = {};  // the next log's records stand alone
  return out;
}

void EventLog::on_entity(const Entity& e) {
  std::size_t n = 1 + sizeof e.index + sizeof e.id + text_size(e.name) + text_size(e.host) + sizeof e.rank + sizeof(std::uint32_t);
  for (const Enclosing& x : e.above_host) n += text_size(x.type) + text_size(x.name);
  char* p = reserve(n);
  if (p == nullptr) return;
  Put put{p};
  put(Kind::entity)(e.index)(e.id).text(e.name).text(e.host)(e.rank)(static_cast<std::uint32_t>(e.above_host.size()));
  for (const Enclosing& x : e.above_host) put.text(x.type).text(x.name);
  recorded();
}

void EventLog::on_link(const Link& l) {
  char* p = reserve(1 + sizeof l.id + sizeof l.a + sizeof l.b + text_size(l.name));
  if (p == nullptr) return;
  Put{p}(Kind::link)(l.id)(l.a)(l.b).text(l.name);
  recorded();
}

void EventLog::on_message(const Message& m) {
  constexpr std::size_t most = 1 + sizeof m.send_s + sizeof m.recv_s + 3 * kMost32 + 2 * kMost64;
  char* p = reserve(most);
  if (p == nullptr) return;
  auto first = static_cast<std::uint8_t>(Kind::message);
  if (context_.repeats(m.send_s)) first |= kSameTime;
  if (bits_of(m.recv_s) == bits_of(-1.0)) first |= kNoReceive;
  if (m.tag == -1) first |= kNoTag;
  if (m.location == 0) first |= kNoLocation;
  Put put{p};
  put(first);
  if ((first & kSameTime) == 0) put(m.send_s);
  if ((first & kNoReceive) == 0) put(m.recv_s);
  put.varint(m.src).varint(m.dst).varint(m.bytes);
  if ((first & kNoTag) == 0) put.varint(zigzag(m.tag));
  if ((first & kNoLocation) == 0) put.varint(m.location);
  shrink_last(put.at());
  recorded();
}

void EventLog::on_load(const LoadSample& s) {
  char* p = reserve(1 + sizeof s.time_s + sizeof s.entity + sizeof s.value);
  if (p == nullptr) return;
  Put{p}(Kind::load)(s.time_s)(s.entity)(s.value);
  recorded();
}

void EventLog::on_state(const StateInterval& s) {
  if (over_budget_) return;  // (the names it remembers are gone)
  const int cached = cached_name(s.name);
  char* p = reserve(1 + sizeof s.begin_s + sizeof s.end_s + 2 * kMost32 + (cached >= 0 ? 1 : text_size(s.name)));
  if (p == nullptr) return;
  auto first = static_cast<std::uint8_t>(Kind::state);
  if (context_.repeats(s.begin_s)) first |= kSameTime;
  if (cached >= 0) first |= kNameCached;
  if (s.location == 0) first |= kNoLocation;
  Put put{p};
  put(first);
  if ((first & kSameTime) == 0) put(s.begin_s);
  put(s.end_s).varint(s.entity);
  if ((first & kNoLocation) == 0) put.varint(s.location);
  if (cached >= 0) {
    put(static_cast<std::uint8_t>(cached));
  } else {
    const char* name = put.at() + sizeof(std::uint32_t);
    put.text(s.name);
    context_.remember({name, s.name.size()});
  }
  shrink_last(put.at());
  recorded();
}

void EventLog::on_location(LocationIndex index, const CodeLocation& l) {
  char* p = reserve(1 + sizeof index + sizeof l.line + sizeof l.caller + text_size(l.file) + text_size(l.function));
  if (p == nullptr) return;
  Put{p}(Kind::location)(index)(l.line)(l.caller).text(l.file).text(l.function);
  recorded();
}

void EventLog::on_collective(const Collective& c) {
  char* p = reserve(1 + sizeof c.begin_s + sizeof c.end_s + sizeof c.entity + sizeof c.bytes + sizeof c.root + text_size(c.name) +
                    text_size(c.group));
  if (p == nullptr) return;
  Put{p}(Kind::collective)(c.begin_s)(c.end_s)(c.entity)(c.bytes)(c.root).text(c.name).text(c.group);
  recorded();
}

void EventLog::on_collective_records() {
  char* p = reserve(1);
  if (p == nullptr) return;
  Put{p}(Kind::collective_records);
  recorded();
}

void EventLog::on_marker(const Marker& m) {
  char* p = reserve(1 + sizeof m.time_s + sizeof m.entity + text_size(m.name));
  if (p == nullptr) return;
  Put{p}(Kind::marker)(m.time_s)(m.entity).text(m.name);
  recorded();
}

void EventLog::on_end(double end_s) {
  char* p = reserve(1 + sizeof end_s);
  if (p == nullptr) return;
  Put{p}(Kind::end)(end_s);
  ended_ = true;
  recorded(true);
}

void EventLog::replay(TraceSink& sink) const {
  if (!complete()) throw std::logic_error("EventLog::replay: the log is not complete");
  replay_recorded(sink);
}

void EventLog::replay_recorded(TraceSink& sink) const {
  if (over_budget_) throw std::logic_error("EventLog::replay_recorded: the log ran over its budget");
  Entity entity;
  Context context;  // as the records were written against it
  for (const Chunk& c : chunks_) {
    Get get(c.data.get());
    const char* const end = c.data.get() + c.used;
    while (get.at() < end) {
      const auto first = get.value<std::uint8_t>();
      const auto flags = static_cast<std::uint8_t>(first & ~kKindBits);
      switch (static_cast<Kind>(first & kKindBits)) {
        case Kind::entity: {
          get(entity.index)(entity.id).text(entity.name).text(entity.host)(entity.rank);
          entity.above_host.resize(get.value<std::uint32_t>());
          for (Enclosing& x : entity.above_host) get.text(x.type).text(x.name);
          sink.on_entity(entity);
          break;
        }
        case Kind::link: {
          Link l;
          get(l.id)(l.a)(l.b).text(l.name);
          sink.on_link(l);
          break;
        }
        case Kind::message: {
          Message m;
          m.send_s = (flags & kSameTime) != 0 ? context.last_time() : get.value<double>();
          context.repeats(m.send_s);
          m.recv_s = (flags & kNoReceive) != 0 ? -1.0 : get.value<double>();
          m.src = static_cast<EntityIndex>(get.varint());
          m.dst = static_cast<EntityIndex>(get.varint());
          m.bytes = get.varint();
          m.tag = (flags & kNoTag) != 0 ? -1 : unzigzag(get.varint());
          m.location = (flags & kNoLocation) != 0 ? 0 : static_cast<LocationIndex>(get.varint());
          sink.on_message(m);
          break;
        }
        case Kind::load: {
          LoadSample l;
          get(l.time_s)(l.entity)(l.value);
          sink.on_load(l);
          break;
        }
        case Kind::state: {
          StateInterval st;
          st.begin_s = (flags & kSameTime) != 0 ? context.last_time() : get.value<double>();
          context.repeats(st.begin_s);
          get(st.end_s);
          st.entity = static_cast<EntityIndex>(get.varint());
          st.location = (flags & kNoLocation) != 0 ? 0 : static_cast<LocationIndex>(get.varint());
          if ((flags & kNameCached) != 0) {
            st.name = context.names[get.value<std::uint8_t>()];
          } else {
            st.name = get.text();
            context.remember(st.name);
          }
          sink.on_state(st);
          break;
        }
        case Kind::location: {
          LocationIndex index = 0;
          CodeLocation l;
          get(index)(l.line)(l.caller).text(l.file).text(l.function);
          sink.on_location(index, l);
          break;
        }
        case Kind::collective: {
          Collective k;
          get(k.begin_s)(k.end_s)(k.entity)(k.bytes)(k.root).text(k.name).text(k.group);
          sink.on_collective(k);
          break;
        }
        case Kind::collective_records:
          sink.on_collective_records();
          break;
        case Kind::marker: {
          Marker m;
          get(m.time_s)(m.entity).text(m.name);
          sink.on_marker(m);
          break;
        }
        case Kind::end:
          sink.on_end(get.value<double>());
          break;
      }
    }
  }
}

// ---- PipeSink ----------------------------------------------------------------------------

namespace {

/// A batch is handed over once it holds this much; at most kMostWaiting batches wait.
constexpr std::size_t kBatchBytes = std::size_t{1} << 20;
constexpr std::size_t kMostWaiting = 4;

}  // namespace

struct PipeSink::Shared {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::unique_ptr<EventLog>> queue;
  bool closing = false;  ///< no batch comes after those queued
  bool stop = false;     ///< drop what is queued
  std::exception_ptr failed;
  std::thread worker;
};

// No budget to speak of (a batch is handed over at kBatchBytes), in blocks a little larger than a
// batch so that one block holds it.
PipeSink::PipeSink(TraceSink& down)
    : batch_(std::numeric_limits<std::size_t>::max(), kBatchBytes + (std::size_t{64} << 10)), shared_(std::make_unique<Shared>()) {
  batch_.after_each_record([this](bool end) { hand_over(end); });
  Shared& sh = *shared_;
  sh.worker = std::thread([&sh, &down] {
    bool failed = false;
    for (;;) {
      std::unique_ptr<EventLog> batch;
      {
        std::unique_lock lock(sh.mutex);
        sh.changed.wait(lock, [&] { return !sh.queue.empty() || sh.closing; });
        if (sh.stop || sh.queue.empty()) return;
        batch = std::move(sh.queue.front());
        sh.queue.pop_front();
      }
      sh.changed.notify_all();  // room for the next batch
      if (failed) continue;     // drained, not delivered
      try {
        batch->replay_recorded(down);
      } catch (...) {
        failed = true;
        const std::lock_guard lock(sh.mutex);
        sh.failed = std::current_exception();
      }
    }
  });
}

PipeSink::~PipeSink() {
  Shared& sh = *shared_;
  if (!sh.worker.joinable()) return;
  {
    const std::lock_guard lock(sh.mutex);
    sh.closing = true;
    sh.stop = true;
  }
  sh.changed.notify_all();
  sh.worker.join();
}

void PipeSink::hand_over(bool now) {
  if (batch_.bytes() == 0 || (!now && batch_.bytes() < kBatchBytes)) return;
  std::unique_ptr<EventLog> batch = batch_.take_records();
  Shared& sh = *shared_;
  {
    std::unique_lock lock(sh.mutex);
    sh.changed.wait(lock, [&] { return sh.queue.size() < kMostWaiting || sh.failed; });
    if (!sh.failed) sh.queue.push_back(std::move(batch));
  }
  sh.changed.notify_all();
}

void PipeSink::finish() {
  hand_over(true);
  Shared& sh = *shared_;
  {
    const std::lock_guard lock(sh.mutex);
    sh.closing = true;
  }
  sh.changed.notify_all();
  if (sh.worker.joinable()) sh.worker.join();
  if (sh.failed) std::rethrow_exception(sh.failed);
}

}  // namespace kanoko::trace
