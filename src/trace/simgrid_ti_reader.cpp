#include "src/trace/simgrid_ti_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"
#include "src/base/suggest.hpp"
#include "src/trace/decompress.hpp"
#include "src/trace/text_input.hpp"

namespace kanoko::trace {
namespace {

constexpr std::size_t kMaxRanks = std::size_t{1} << 20U;
constexpr std::size_t kBufferBudget = std::size_t{16} << 20U;  ///< read buffers of all ranks together
constexpr double kMaxVolume = 1e30;                            ///< flops or bytes an action may name

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

struct TiToken {
  std::string_view text;
  std::size_t column;
};

void tokenize(std::string_view line, std::vector<TiToken>& out) {
  out.clear();
  std::size_t i = 0;
  while (i < line.size()) {
    if (is_blank(line[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < line.size() && !is_blank(line[j])) ++j;
    out.push_back(TiToken{line.substr(i, j - i), i + 1});
    i = j;
  }
}

bool parse_rank(std::string_view s, std::int64_t& out) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && out >= 0;
}

/// The actions Kanoko replays.
enum class Act : std::uint8_t {
  Init, Finalize, CommSize, CommSplit, CommDup, Location, Compute, Sleep, Send, Isend, Recv, Irecv, Test, Wait,
  Waitall, SendRecv, Barrier, Bcast, Reduce, Allreduce, Alltoall, Alltoallv, Gather, Allgather, Gatherv, Scatter,
  Scatterv, Allgatherv, Reducescatter, Scan, Exscan
};

struct ActName {
  std::string_view name;
  Act act;
};
constexpr std::array<ActName, 31> kActions{{
    {"init", Act::Init},           {"finalize", Act::Finalize},     {"comm_size", Act::CommSize},
    {"comm_split", Act::CommSplit}, {"comm_dup", Act::CommDup},      {"location", Act::Location},
    {"compute", Act::Compute},     {"sleep", Act::Sleep},           {"send", Act::Send},
    {"isend", Act::Isend},         {"recv", Act::Recv},             {"irecv", Act::Irecv},
    {"test", Act::Test},           {"wait", Act::Wait},             {"waitall", Act::Waitall},
    {"sendRecv", Act::SendRecv},   {"barrier", Act::Barrier},       {"bcast", Act::Bcast},
    {"reduce", Act::Reduce},       {"allreduce", Act::Allreduce},   {"alltoall", Act::Alltoall},
    {"alltoallv", Act::Alltoallv}, {"gather", Act::Gather},         {"allgather", Act::Allgather},
    {"gatherv", Act::Gatherv},     {"scatter", Act::Scatter},       {"scatterv", Act::Scatterv},
    {"allgatherv", Act::Allgatherv}, {"reducescatter", Act::Reducescatter}, {"scan", Act::Scan},
    {"exscan", Act::Exscan},
}};

bool find_action(std::string_view name, Act& out) {
  for (const ActName& a : kActions) {
    // SimGrid's own traces have used other capitalisations (Isend, allReduce, allToAll).
    if (a.name.size() == name.size() &&
        std::equal(a.name.begin(), a.name.end(), name.begin(), [](char x, char y) {
          return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
        })) {
      out = a.act;
      return true;
    }
  }
  return false;
}

/// The lines of one rank: a whole file (index form) or the lines of one rank in a shared file.
/// Reads through a small buffer with pread, reopening the file per refill, so that thousands of
/// ranks need neither thousands of descriptors nor the whole file in memory.
class TiSource {
 public:
  TiSource(std::string name, std::filesystem::path path, std::string_view memory, std::int64_t only_rank,
         std::uint64_t offset, std::int64_t line, std::size_t buffer_bytes)
      : name_(std::move(name)), path_(std::move(path)), memory_(memory), only_rank_(only_rank), offset_(offset),
        line_(line - 1), buffer_bytes_(buffer_bytes) {}

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] std::int64_t line() const { return line_; }

  /// The next non-blank line of this rank, or false at the end.
  bool next(std::string_view& out) {
    for (;;) {
      std::string_view l;
      if (!raw_line(l)) return false;
      ++line_;
      std::size_t b = 0;
      while (b < l.size() && is_blank(l[b])) ++b;
      if (b == l.size()) continue;
      if (only_rank_ >= 0) {
        std::size_t e = b;
        while (e < l.size() && !is_blank(l[e])) ++e;
        std::int64_t r = -1;
        if (!parse_rank(l.substr(b, e - b), r) || r != only_rank_) continue;
      }
      out = l;
      return true;
    }
  }

 private:
  bool raw_line(std::string_view& out) {
    if (!path_.empty()) return file_line(out);
    if (offset_ >= memory_.size()) return false;
    const std::size_t nl = memory_.find('\n', offset_);
    const std::size_t end = nl == std::string_view::npos ? memory_.size() : nl;
    out = memory_.substr(offset_, end - offset_);
    offset_ = end + 1;
    return true;
  }

  bool file_line(std::string_view& out) {
    for (;;) {
      const std::size_t nl = buffer_.find('\n', pos_);
      if (nl != std::string::npos) {
        out = std::string_view(buffer_).substr(pos_, nl - pos_);
        pos_ = nl + 1;
        return true;
      }
      if (eof_) {
        if (pos_ >= buffer_.size()) return false;
        out = std::string_view(buffer_).substr(pos_);
        pos_ = buffer_.size();
        return true;
      }
      buffer_.erase(0, pos_);
      pos_ = 0;
      if (buffer_.size() > kMaxTextLineBytes) {
        throw InputError(FileLoc{name_, line_ + 1, 1}, "line is longer than 16 MiB: not a TI trace (binary file?)");
      }
      refill();
    }
  }

  void refill() {
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(FileLoc{name_}, std::string("cannot open trace: ") + std::strerror(errno));
    const std::size_t have = buffer_.size();
    buffer_.resize(have + buffer_bytes_);
    ssize_t n = 0;
    do {
      n = ::pread(fd, buffer_.data() + have, buffer_bytes_, static_cast<off_t>(offset_));
    } while (n < 0 && errno == EINTR);
    const int err = errno;
    ::close(fd);
    if (n < 0) {
      if (err == EISDIR) throw InputError(FileLoc{name_}, "is a directory, expected a TI action file");
      throw InputError(FileLoc{name_}, std::string("read failed: ") + std::strerror(err));
    }
    buffer_.resize(have + static_cast<std::size_t>(n));
    offset_ += static_cast<std::uint64_t>(n);
    if (n == 0) eof_ = true;
  }

  std::string name_;
  std::filesystem::path path_;
  std::string_view memory_;
  std::int64_t only_rank_;
  std::uint64_t offset_;
  std::int64_t line_;
  std::size_t buffer_bytes_;
  std::string buffer_;
  std::size_t pos_ = 0;
  bool eof_ = false;
};

/// A nonblocking request of one rank.
struct Request {
  std::uint64_t id = 0;
  bool is_send = false;
  std::int64_t src = 0;  ///< rank ids as written in the trace
  std::int64_t dst = 0;
  std::int64_t tag = 0;
  double done = -1;  ///< completion time, < 0 while not matched
  FileLoc where;
};

/// A send waiting for its receive.
struct TiPendingSend {
  std::int64_t tag;
  double arrival;
  std::uint64_t bytes;
  FileLoc where;
};

/// A receive waiting for its send.
struct PostedRecv {
  std::int64_t tag;
  double posted;
  std::size_t rank;  ///< receiving rank index
  std::uint64_t request;
  FileLoc where;
};

bool tags_match(std::int64_t a, std::int64_t b) { return a == b || a < 0 || b < 0; }

enum class Status : std::uint8_t { Ready, Blocked, Done };

struct Rank {
  std::int64_t id = 0;
  std::unique_ptr<TiSource> source;
  double clock = 0;
  Status status = Status::Ready;
  double block_start = 0;
  std::string blocked_in;        ///< the action it waits in
  FileLoc blocked_at;
  std::vector<std::uint64_t> waiting;  ///< requests it waits for (all must complete)
  bool in_collective = false;
  bool queued = false;                 ///< has an entry in the ready queue
  double dt_default = 1;               ///< bytes of the default datatype (byte, or double after `init 1`)
  std::vector<Request> requests;
  std::uint64_t collectives = 0;       ///< collectives it has entered
  /// Requests a test found complete (SimGrid then ignores the wait that follows), at most 1024.
  std::deque<std::array<std::int64_t, 3>> tested;
};

/// The collective all ranks must reach before any leaves it.
struct PendingCollective {
  std::string name;
  FileLoc first;
  std::size_t arrived = 0;
  double last_arrival = 0;
  double max_size = 0;      ///< largest size argument × datatype
  double sum_contrib = 0;   ///< bytes over all ranks
  double max_contrib = 0;
  double max_flops = 0;
  std::int64_t root = -1;
  std::vector<double> arrival;  ///< per rank index
  std::vector<double> contrib;
};

class Replay {
 public:
  Replay(TraceSink& sink, const SimgridTiOptions& options, const std::string& name)
      : sink_(sink), options_(options),
        window_(sink, std::max<std::size_t>(options.max_held, 2), [this](double until) { split_waits(until); }) {
    const auto check = [&](double v, bool zero_ok, const char* what) {
      if (!std::isfinite(v) || v < 0 || (v == 0 && !zero_ok)) {
        throw InputError(FileLoc{name}, std::string("cannot replay with ") + what + " " + std::to_string(v) + ": it must be " +
                                            (zero_ok ? ">= 0" : "> 0") + " and finite");
      }
    };
    check(options_.flop_rate, false, "a flop rate of");
    check(options_.bandwidth, false, "a bandwidth of");
    check(options_.latency_s, true, "a latency of");
  }

  void add_rank(std::int64_t id, std::unique_ptr<TiSource> source) {
    Rank r;
    r.id = id;
    r.source = std::move(source);
    ranks_.push_back(std::move(r));
  }

  SimgridTiSummary run(bool indexed) {
    const std::size_t n = ranks_.size();
    summary_.indexed = indexed;
    summary_.ranks = n;
    index_of_.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      index_of_.emplace(ranks_[i].id, i);
      Entity e;
      e.index = static_cast<EntityIndex>(i);
      e.id = ranks_[i].id;
      e.name = "rank-" + std::to_string(ranks_[i].id);
      e.rank = ranks_[i].id;
      sink_.on_entity(e);
      make_ready(i, 0.0);
    }
    coll_.arrival.assign(n, 0);
    coll_.contrib.assign(n, 0);
    std::uint64_t steps = 0;
    while (!ready_.empty()) {
      const std::size_t i = ready_.top().second;
      ready_.pop();
      ranks_[i].queued = false;
      step(i);
      if (++steps % 65536 == 0) check_interrupt();
    }
    deadlock_check();
    finish_warnings();
    for (const Rank& r : ranks_) summary_.end_s = std::max(summary_.end_s, r.clock);
    try {
      window_.flush();
      sink_.on_end(summary_.end_s);
    } catch (const InputError& e) {
      // A sink may refuse the run (too long to bin) without knowing where it came from.
      const auto& ds = e.diagnostics();
      if (ds.size() == 1 && ds[0].loc.file.empty()) {
        throw InputError(FileLoc{ranks_.front().source->name()}, ds[0].message + " (the replayed run ends at " +
                                                                    std::to_string(summary_.end_s) + " s)");
      }
      throw;
    }
    if (window_.late_events() > 0) {
      warnings_.add("event out of time order beyond the reordering window: moved to the latest time passed on",
                    FileLoc{ranks_.empty() ? std::string() : ranks_[0].source->name()}, window_.late_events());
    }
    summary_.warnings = warnings_.items();
    return summary_;
  }

 private:
  // ---- parsing helpers ----

  [[noreturn]] void fail(const TiToken& t, const std::string& msg) const { throw InputError(loc(t), msg); }
  [[nodiscard]] FileLoc loc(const TiToken& t) const {
    return FileLoc{cur_->source->name(), cur_->source->line(), static_cast<std::int64_t>(t.column)};
  }
  [[nodiscard]] FileLoc line_loc() const { return FileLoc{cur_->source->name(), cur_->source->line(), 1}; }

  double volume(std::size_t k, const char* what) const {
    const TiToken& t = tokens_[k];
    double v = 0;
    const auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size() || !std::isfinite(v)) {
      fail(t, std::string("expected ") + what + ", found '" + shown(t.text) + "'");
    }
    if (v < 0 || v > kMaxVolume) fail(t, std::string(what) + " must be between 0 and 1e30, found " + shown(t.text));
    return v;
  }

  std::int64_t integer(std::size_t k, const char* what) const {
    const TiToken& t = tokens_[k];
    std::int64_t v = 0;
    const auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size()) {
      fail(t, std::string("expected ") + what + ", found '" + shown(t.text) + "'");
    }
    return v;
  }

  /// Index of the rank written at token k; an error if the trace has no such rank.
  std::size_t peer(std::size_t k) const {
    const std::int64_t id = integer(k, "a rank number");
    const auto it = index_of_.find(id);
    if (it == index_of_.end()) {
      fail(tokens_[k], "rank " + std::to_string(id) + " is not in the trace (it has " + std::to_string(ranks_.size()) +
                           " ranks, " + std::to_string(ranks_.front().id) + " .. " + std::to_string(ranks_.back().id) + ")");
    }
    return it->second;
  }

  /// Bytes of one element of the datatype at token k (SimGrid's codes), or the rank's default.
  double datatype(std::size_t k) const {
    if (k >= tokens_.size()) return cur_->dt_default;
    static constexpr std::array<double, 7> kSizes{8, 4, 1, 2, 8, 4, 1};  // double int char short long float byte
    const std::int64_t code = integer(k, "a datatype code");
    return code >= 0 && code < static_cast<std::int64_t>(kSizes.size()) ? kSizes[static_cast<std::size_t>(code)]
                                                                          : cur_->dt_default;
  }

  void args(std::size_t min, std::size_t max, const char* usage) const {
    const std::size_t have = tokens_.size() - 2;
    if (have < min) {
      const TiToken& last = tokens_.back();
      throw InputError(FileLoc{cur_->source->name(), cur_->source->line(), static_cast<std::int64_t>(last.column + last.text.size())},
                       "too few arguments: expected '" + std::string(usage) + "'");
    }
    if (have > max) fail(tokens_[2 + max], "too many arguments: expected '" + std::string(usage) + "'");
  }

  [[nodiscard]] double transfer(double bytes) const { return options_.latency_s + bytes / options_.bandwidth; }

  static std::uint64_t to_bytes(double b) {
    return b >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(std::llround(b));
  }

  // ---- the scheduler ----

  void state(std::size_t i, double begin, double end, std::string_view name) {
    if (end > begin) window_.state(begin, end, static_cast<EntityIndex>(i), name);
  }

  void make_ready(std::size_t i, double clock) {
    Rank& r = ranks_[i];
    r.status = Status::Ready;
    r.clock = clock;
    r.queued = true;
    ready_.push({clock, i});
  }

  void block(std::size_t i, std::string_view in) {
    Rank& r = ranks_[i];
    r.status = Status::Blocked;
    r.block_start = r.clock;
    r.blocked_in = std::string(in);
    r.blocked_at = line_loc();
  }

  /// A blocked rank whose wait is over resumes at `when`; its wait becomes a state.
  void unblock(std::size_t i, double when) {
    Rank& r = ranks_[i];
    when = std::max(when, r.clock);
    state(i, r.block_start, when, "communication");
    r.waiting.clear();
    make_ready(i, when);
  }

  /// Window overflow: the waits still open are emitted up to `until` and continue from there.
  void split_waits(double until) {
    for (std::size_t i = 0; i < ranks_.size(); ++i) {
      Rank& r = ranks_[i];
      if (r.status == Status::Blocked && r.block_start < until) {
        state(i, r.block_start, until, "communication");
        r.block_start = until;
      }
    }
  }

  void step(std::size_t i) {
    cur_ = &ranks_[i];
    std::string_view line;
    if (!cur_->source->next(line)) {
      cur_->status = Status::Done;
      return;
    }
    if (line.size() > kMaxTextLineBytes) {
      throw InputError(line_loc(), "line is longer than 16 MiB: not a TI trace (binary file?)");
    }
    if (const void* nul = std::memchr(line.data(), '\0', line.size())) {
      throw InputError(FileLoc{cur_->source->name(), cur_->source->line(),
                               static_cast<std::int64_t>(static_cast<const char*>(nul) - line.data()) + 1},
                       "binary content (NUL byte): not a text trace");
    }
    tokenize(line, tokens_);
    std::int64_t id = 0;
    if (!parse_rank(tokens_[0].text, id)) fail(tokens_[0], "expected a rank number, found '" + shown(tokens_[0].text) + "'");
    if (id != cur_->id) {
      warnings_.add("action of another rank in a per-rank file (replayed as the file's rank, as the index says)", line_loc());
    }
    if (tokens_.size() < 2) fail(tokens_[0], "expected an action after the rank number");
    Act act{};
    if (!find_action(tokens_[1].text, act)) {
      std::vector<std::string> names;
      for (const ActName& a : kActions) names.emplace_back(a.name);
      fail(tokens_[1], "unknown action '" + shown(tokens_[1].text) + "'" + did_you_mean(std::string(tokens_[1].text), names));
    }
    ++summary_.actions;
    try {
      dispatch(i, act);
    } catch (const InputError& e) {
      const auto& ds = e.diagnostics();
      if (ds.size() == 1 && ds[0].loc.file.empty()) throw InputError(loc(tokens_[1]), ds[0].message);
      throw;
    }
    if (cur_->status == Status::Ready && !cur_->queued) make_ready(i, cur_->clock);
  }

  void dispatch(std::size_t i, Act act) {
    Rank& r = *cur_;
    switch (act) {
      case Act::Init:
        args(0, 1, "init [set_default_double]");
        r.dt_default = tokens_.size() > 2 ? 8 : 1;
        return;
      case Act::Finalize:
      case Act::CommSplit:
      case Act::CommDup: return;
      case Act::CommSize:
        args(1, 1, "comm_size N");
        volume(2, "a communicator size");
        return;
      case Act::Location: return;
      case Act::Compute: {
        args(1, 1, "compute FLOPS");
        const double f = volume(2, "a number of flops");
        summary_.flops += f;
        const double end = r.clock + f / options_.flop_rate;
        state(i, r.clock, end, "compute");
        r.clock = end;
        return;
      }
      case Act::Sleep: {
        args(1, 1, "sleep SECONDS");
        const double end = r.clock + volume(2, "a duration in seconds");
        state(i, r.clock, end, "sleep");
        r.clock = end;
        return;
      }
      case Act::Send:
      case Act::Isend: {
        args(2, 4, "send DST [TAG] SIZE [DATATYPE]");
        const std::size_t dst = peer(2);
        const bool old = tokens_.size() == 4;  // before 2018: send DST SIZE
        const std::int64_t tag = old ? 0 : integer(3, "a tag");
        const double bytes = volume(old ? 3 : 4, "a size") * datatype(old ? 4 : 5);
        const double done = send(i, dst, tag, bytes);
        if (act == Act::Send) {
          state(i, r.clock, done, "communication");
          r.clock = done;
        } else {
          r.requests.push_back(Request{next_request_++, true, r.id, ranks_[dst].id, tag, done, line_loc()});
        }
        return;
      }
      case Act::Recv:
      case Act::Irecv: {
        args(2, 4, "recv SRC [TAG] SIZE [DATATYPE]");
        const std::size_t src = peer(2);
        const bool old = tokens_.size() == 4;
        const std::int64_t tag = old ? 0 : integer(3, "a tag");
        volume(old ? 3 : 4, "a size");
        const std::uint64_t id = next_request_++;
        r.requests.push_back(Request{id, false, ranks_[src].id, r.id, tag, -1, line_loc()});
        receive(i, src, tag, id);
        if (act == Act::Recv) wait_for(i, {id}, "recv");
        return;
      }
      case Act::Test:
      case Act::Wait: {
        args(0, 3, "wait [SRC DST TAG]");
        const std::uint64_t id = find_request(act == Act::Test);
        if (id == 0) return;
        if (act == Act::Test) {
          const auto it = request(i, id);
          if (it->done >= 0 && it->done <= r.clock) {
            if (r.tested.size() >= 1024) r.tested.pop_front();
            r.tested.push_back({it->src, it->dst, it->tag});
            r.requests.erase(it);
          }
          return;
        }
        wait_for(i, {id}, "wait");
        return;
      }
      case Act::Waitall: {
        args(0, 1, "waitall");
        std::vector<std::uint64_t> ids;
        for (const Request& q : r.requests) ids.push_back(q.id);
        wait_for(i, std::move(ids), "waitall");
        return;
      }
      case Act::SendRecv: {
        args(4, 6, "sendRecv SENDCOUNT DST RECVCOUNT SRC [DATATYPE DATATYPE]");
        const double bytes = volume(2, "a send count") * datatype(6);
        const std::size_t dst = peer(3);
        volume(4, "a receive count");
        const std::size_t src = peer(5);
        const double done = send(i, dst, 0, bytes);
        r.requests.push_back(Request{next_request_++, true, r.id, ranks_[dst].id, 0, done, line_loc()});
        const std::uint64_t id = next_request_++;
        r.requests.push_back(Request{id, false, ranks_[src].id, r.id, 0, -1, line_loc()});
        receive(i, src, 0, id);
        wait_for(i, {id - 1, id}, "sendRecv");
        return;
      }
      default: collective(i, act); return;
    }
  }

  /// The request a wait/test names (SRC DST TAG), or the rank's last one; 0 when there is none.
  std::uint64_t find_request(bool quiet) {
    Rank& r = *cur_;
    if (tokens_.size() == 2) {
      if (!r.requests.empty()) return r.requests.back().id;
    } else {
      if (tokens_.size() != 5) fail(tokens_[2], "expected 'wait SRC DST TAG' or 'wait'");
      const std::int64_t src = integer(2, "a rank number");
      const std::int64_t dst = integer(3, "a rank number");
      const std::int64_t tag = integer(4, "a tag");
      for (const Request& q : r.requests) {
        if (q.src == src && q.dst == dst && tags_match(q.tag, tag)) return q.id;
      }
      const auto t = std::find_if(r.tested.begin(), r.tested.end(), [&](const std::array<std::int64_t, 3>& x) {
        return x[0] == src && x[1] == dst && tags_match(x[2], tag);
      });
      if (t != r.tested.end()) {
        r.tested.erase(t);
        return 0;
      }
    }
    if (!quiet) warnings_.add("wait for a request that was never started or already completed (ignored)", line_loc());
    return 0;
  }

  std::vector<Request>::iterator request(std::size_t i, std::uint64_t id) {
    auto& qs = ranks_[i].requests;
    return std::find_if(qs.begin(), qs.end(), [&](const Request& q) { return q.id == id; });
  }

  /// Blocks rank i until every request in `ids` is complete; completed ones are forgotten.
  void wait_for(std::size_t i, std::vector<std::uint64_t> ids, std::string_view in) {
    Rank& r = ranks_[i];
    double done = r.clock;
    bool all = true;
    for (const std::uint64_t id : ids) {
      const auto it = request(i, id);
      if (it == r.requests.end()) continue;
      if (it->done < 0) {
        all = false;
      } else {
        done = std::max(done, it->done);
      }
    }
    block(i, in);
    r.waiting = std::move(ids);
    if (all) complete_wait(i, done);
  }

  /// Rank i waits for its `waiting` requests, all complete now: they end at `done`.
  void complete_wait(std::size_t i, double done) {
    Rank& r = ranks_[i];
    for (const std::uint64_t id : r.waiting) {
      const auto it = request(i, id);
      if (it != r.requests.end()) r.requests.erase(it);
    }
    unblock(i, done);
  }

  /// Re-checks a blocked rank after one of its requests completed.
  void recheck(std::size_t i) {
    Rank& r = ranks_[i];
    if (r.status != Status::Blocked || r.in_collective) return;
    double done = r.clock;
    for (const std::uint64_t id : r.waiting) {
      const auto it = request(i, id);
      if (it == r.requests.end()) continue;
      if (it->done < 0) return;
      done = std::max(done, it->done);
    }
    complete_wait(i, done);
  }

  static std::uint64_t pair_key(std::size_t src, std::size_t dst) {
    return (static_cast<std::uint64_t>(src) << 32U) | static_cast<std::uint64_t>(dst);
  }

  /// Rank i sends `bytes` to dst now; returns when the transfer is over (the send's completion).
  double send(std::size_t i, std::size_t dst, std::int64_t tag, double bytes) {
    Rank& r = ranks_[i];
    const double arrival = r.clock + transfer(bytes);
    const std::uint64_t b = to_bytes(bytes);
    ++summary_.sends;
    summary_.bytes += b;
    window_.message(Message{r.clock, arrival, static_cast<EntityIndex>(i), static_cast<EntityIndex>(dst), b, tag});
    const std::uint64_t key = pair_key(i, dst);
    auto pit = posted_.find(key);
    if (pit != posted_.end()) {
      auto& list = pit->second;
      const auto m = std::find_if(list.begin(), list.end(), [&](const PostedRecv& p) { return tags_match(p.tag, tag); });
      if (m != list.end()) {
        const PostedRecv p = *m;
        list.erase(m);
        if (list.empty()) posted_.erase(pit);
        const auto q = request(p.rank, p.request);
        if (q != ranks_[p.rank].requests.end()) q->done = std::max(p.posted, arrival);
        recheck(p.rank);
        return arrival;
      }
    }
    unmatched_[key].push_back(TiPendingSend{tag, arrival, b, line_loc()});
    return arrival;
  }

  /// Rank i posts a receive from src; completes request `id` now if a send is waiting.
  void receive(std::size_t i, std::size_t src, std::int64_t tag, std::uint64_t id) {
    Rank& r = ranks_[i];
    ++summary_.receives;
    const std::uint64_t key = pair_key(src, i);
    auto uit = unmatched_.find(key);
    if (uit != unmatched_.end()) {
      auto& list = uit->second;
      const auto m = std::find_if(list.begin(), list.end(), [&](const TiPendingSend& s) { return tags_match(s.tag, tag); });
      if (m != list.end()) {
        request(i, id)->done = std::max(r.clock, m->arrival);
        list.erase(m);
        if (list.empty()) unmatched_.erase(uit);
        return;
      }
    }
    posted_[key].push_back(PostedRecv{tag, r.clock, i, id, line_loc()});
  }

  // ---- collectives ----

  void collective(std::size_t i, Act act) {
    Rank& r = *cur_;
    const std::size_t n = ranks_.size();
    double size = 0;     // the operation's size argument (bytes)
    double contrib = 0;  // bytes this rank sends
    double flops = 0;
    std::int64_t root = -1;
    const auto sum_counts = [&](std::size_t from, std::size_t count) {
      double s = 0;
      for (std::size_t k = from; k < from + count; ++k) s += volume(k, "a count");
      return s;
    };
    const auto root_at = [&](std::size_t k) {
      const auto zero = index_of_.find(0);
      root = k < tokens_.size() ? static_cast<std::int64_t>(peer(k)) : zero != index_of_.end() ? static_cast<std::int64_t>(zero->second) : 0;
    };
    switch (act) {
      case Act::Barrier: args(0, 0, "barrier"); break;
      case Act::Bcast:
        args(1, 3, "bcast SIZE [ROOT [DATATYPE]]");
        root_at(3);
        size = volume(2, "a size") * datatype(4);
        contrib = static_cast<std::int64_t>(i) == root ? size : 0;
        break;
      case Act::Reduce:
        args(2, 4, "reduce COMM_SIZE COMP_SIZE [ROOT [DATATYPE]]");
        root_at(4);
        size = contrib = volume(2, "a size") * datatype(5);
        flops = volume(3, "a number of flops");
        break;
      case Act::Allreduce:
      case Act::Scan:
      case Act::Exscan:
        args(2, 3, "allreduce COMM_SIZE COMP_SIZE [DATATYPE]");
        size = contrib = volume(2, "a size") * datatype(4);
        flops = volume(3, "a number of flops");
        break;
      case Act::Alltoall:
        args(2, 4, "alltoall SEND_SIZE RECV_SIZE [DATATYPE DATATYPE]");
        size = volume(2, "a size") * datatype(4);
        volume(3, "a size");
        contrib = size * static_cast<double>(n);
        break;
      case Act::Alltoallv:
        // alltoallv SEND_BUF SEND_COUNTS×N RECV_BUF RECV_COUNTS×N [DATATYPE DATATYPE]
        args(2 * n + 2, 2 * n + 4, "alltoallv SEND_BUF SEND_COUNTS... RECV_BUF RECV_COUNTS... [DATATYPE DATATYPE]");
        volume(2, "a buffer size");
        contrib = sum_counts(3, n) * datatype(2 * n + 4);
        volume(3 + n, "a buffer size");
        sum_counts(4 + n, n);
        size = contrib;
        break;
      case Act::Gather:
      case Act::Allgather:
      case Act::Scatter:
        args(2, 5, "gather SEND_SIZE RECV_SIZE [ROOT] [DATATYPE DATATYPE]");
        size = contrib = volume(2, "a size") * datatype(5);
        volume(3, "a size");
        if (act != Act::Allgather) {
          root_at(4);
        }
        break;
      case Act::Gatherv:
      case Act::Allgatherv:
        // gatherv SEND_SIZE RECV_COUNTS×N [ROOT] [DATATYPE DATATYPE]
        args(1 + n, 4 + n, "gatherv SEND_SIZE RECV_COUNTS... [ROOT] [DATATYPE DATATYPE]");
        size = contrib = volume(2, "a size") * datatype(4 + n);
        sum_counts(3, n);
        if (act == Act::Gatherv) {
          root_at(3 + n);
        }
        break;
      case Act::Scatterv:
        // scatterv SEND_COUNTS×N RECV_SIZE [ROOT] [DATATYPE DATATYPE]
        args(1 + n, 4 + n, "scatterv SEND_COUNTS... RECV_SIZE [ROOT] [DATATYPE DATATYPE]");
        size = sum_counts(2, n) * datatype(4 + n);
        volume(2 + n, "a size");
        root_at(3 + n);
        contrib = static_cast<std::int64_t>(i) == root ? size : 0;
        break;
      case Act::Reducescatter:
        // reducescatter RECV_COUNTS×N COMP_SIZE [DATATYPE]
        args(1 + n, 2 + n, "reducescatter RECV_COUNTS... COMP_SIZE [DATATYPE]");
        size = contrib = sum_counts(2, n) * datatype(3 + n);
        flops = volume(2 + n, "a number of flops");
        break;
      default: break;
    }
    const std::string name = std::string(kActions[static_cast<std::size_t>(act)].name);
    PendingCollective& c = coll_;
    if (c.arrived == 0) {
      c.name = name;
      c.first = line_loc();
      c.max_size = c.sum_contrib = c.max_contrib = c.max_flops = 0;
      c.root = root;
      c.last_arrival = 0;
    } else if (c.name != name) {
      throw InputError(std::vector<Diagnostic>{
          {loc(tokens_[1]), "collective mismatch: rank " + std::to_string(r.id) + " calls " + name + " as its collective number " +
                                std::to_string(r.collectives + 1) + " where another rank calls " + c.name},
          {c.first, "the other rank's " + c.name + " is here"}});
    }
    ++r.collectives;
    summary_.flops += flops;
    ++c.arrived;
    c.last_arrival = std::max(c.last_arrival, r.clock);
    c.max_size = std::max(c.max_size, size);
    c.sum_contrib += contrib;
    c.max_contrib = std::max(c.max_contrib, contrib);
    c.max_flops = std::max(c.max_flops, flops);
    c.arrival[i] = r.clock;
    c.contrib[i] = contrib;
    block(i, name);
    r.in_collective = true;
    if (c.arrived == n) finish_collective(act);
  }

  /// Everyone has arrived: the operation takes steps × latency + volume / bandwidth + flops / rate.
  void finish_collective(Act act) {
    PendingCollective& c = coll_;
    const double n = static_cast<double>(ranks_.size());
    const double lg = n > 1 ? std::ceil(std::log2(n)) : 0;
    double steps = lg;
    double volume = 0;
    switch (act) {
      case Act::Barrier: break;
      case Act::Bcast:
      case Act::Reduce:
      case Act::Scan:
      case Act::Exscan: volume = lg * c.max_size; break;
      case Act::Allreduce:
      case Act::Reducescatter:
        steps = 2 * lg;
        volume = 2 * lg * c.max_size;
        break;
      case Act::Alltoall:
      case Act::Alltoallv:
        steps = n - 1;
        volume = c.max_contrib;
        break;
      default: volume = c.sum_contrib; break;  // (all)gather(v), scatter(v): everything passes one rank
    }
    const double end = c.last_arrival + steps * options_.latency_s + volume / options_.bandwidth + c.max_flops / options_.flop_rate;
    const std::string group = "ti." + std::to_string(summary_.collectives);
    ++summary_.collectives;
    for (std::size_t i = 0; i < ranks_.size(); ++i) {
      window_.collective(Collective{c.arrival[i], end, static_cast<EntityIndex>(i), c.name, to_bytes(c.contrib[i]), c.root, group});
      ranks_[i].in_collective = false;
      unblock(i, end);
    }
    c.arrived = 0;
  }

  // ---- the end ----

  void deadlock_check() {
    std::vector<Diagnostic> ds;
    std::size_t blocked = 0;
    for (const Rank& r : ranks_) {
      if (r.status != Status::Blocked) continue;
      if (++blocked <= 5) {
        ds.push_back(Diagnostic{r.blocked_at, "deadlock: rank " + std::to_string(r.id) + " waits forever in " + r.blocked_in +
                                                  (r.in_collective ? " (some ranks never reach this collective)"
                                                                   : " (no matching send ever comes)")});
      }
    }
    if (blocked > 5) ds.back().message += " (and " + std::to_string(blocked - 5) + " more blocked ranks)";
    if (!ds.empty()) throw InputError(std::move(ds));
  }

  void finish_warnings() {
    // Reported at the earliest unmatched send (the map's order is arbitrary).
    std::vector<const FileLoc*> sends;
    for (const auto& [key, list] : unmatched_) {
      for (const TiPendingSend& s : list) sends.push_back(&s.where);
    }
    std::sort(sends.begin(), sends.end(), [](const FileLoc* a, const FileLoc* b) {
      return std::tie(a->file, a->line) < std::tie(b->file, b->line);
    });
    for (const FileLoc* w : sends) warnings_.add("message sent but never received", *w);
    for (const Rank& r : ranks_) {
      for (const Request& q : r.requests) {
        if (!q.is_send && q.done < 0) warnings_.add("receive never matched by a send (the rank ended without waiting)", q.where);
      }
    }
  }

  TraceSink& sink_;
  SimgridTiOptions options_;
  EventWindow window_;
  ReaderWarnings warnings_;
  SimgridTiSummary summary_;
  std::vector<Rank> ranks_;
  std::unordered_map<std::int64_t, std::size_t> index_of_;
  using ReadyEntry = std::pair<double, std::size_t>;
  std::priority_queue<ReadyEntry, std::vector<ReadyEntry>, std::greater<>> ready_;
  Rank* cur_ = nullptr;
  std::vector<TiToken> tokens_;
  std::unordered_map<std::uint64_t, std::deque<TiPendingSend>> unmatched_;
  std::unordered_map<std::uint64_t, std::deque<PostedRecv>> posted_;
  PendingCollective coll_;
  std::uint64_t next_request_ = 1;
};

/// The first non-blank line's words.
std::vector<std::string_view> first_words(std::string_view text, std::size_t max_lines, std::vector<std::vector<std::string_view>>& lines) {
  lines.clear();
  std::size_t pos = 0;
  while (pos < text.size() && lines.size() < max_lines) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::vector<TiToken> toks;
    tokenize(text.substr(pos, end - pos), toks);
    pos = end + 1;
    if (toks.empty()) continue;
    std::vector<std::string_view> words;
    for (const TiToken& t : toks) words.push_back(t.text);
    lines.push_back(std::move(words));
  }
  return lines.empty() ? std::vector<std::string_view>{} : lines.front();
}

bool is_action_line(const std::vector<std::string_view>& words) {
  std::int64_t r = 0;
  Act a{};
  return words.size() >= 2 && parse_rank(words[0], r) && find_action(words[1], a);
}

/// Ranks of a single-file trace, with the offset and line of each rank's first action.
struct RankStart {
  std::int64_t id;
  std::uint64_t offset;
  std::int64_t line;
};

std::vector<RankStart> scan_ranks(const std::function<void(const std::function<void(std::string_view)>&)>& each_line,
                                  const std::string& name) {
  std::unordered_map<std::int64_t, std::size_t> seen;
  std::vector<RankStart> out;
  std::uint64_t offset = 0;
  std::int64_t line = 0;
  each_line([&](std::string_view l) {
    ++line;
    const std::uint64_t here = offset;
    offset += l.size() + 1;
    std::size_t b = 0;
    while (b < l.size() && is_blank(l[b])) ++b;
    if (b == l.size()) return;
    std::size_t e = b;
    while (e < l.size() && !is_blank(l[e])) ++e;
    std::int64_t r = 0;
    if (!parse_rank(l.substr(b, e - b), r)) {
      throw InputError(FileLoc{name, line, static_cast<std::int64_t>(b) + 1},
                       "expected a rank number at the start of a TI action line, found '" + shown(l.substr(b, e - b)) + "'");
    }
    if (seen.emplace(r, out.size()).second) {
      if (out.size() >= kMaxRanks) throw InputError(FileLoc{name, line, 1}, "more than 1 M ranks");
      out.push_back(RankStart{r, here, line});
    }
  });
  if (out.empty()) throw InputError(FileLoc{name, std::max<std::int64_t>(line, 1), 1}, "empty TI trace: no action line");
  std::sort(out.begin(), out.end(), [](const RankStart& a, const RankStart& b) { return a.id < b.id; });
  return out;
}

std::size_t buffer_for(std::size_t ranks) {
  return std::clamp<std::size_t>(kBufferBudget / std::max<std::size_t>(ranks, 1), 4096, std::size_t{256} << 10U);
}

SimgridTiSummary replay_single(const std::string& name, const std::filesystem::path& path, std::string_view memory,
                               TraceSink& sink, const SimgridTiOptions& options) {
  std::vector<RankStart> starts;
  if (path.empty()) {
    starts = scan_ranks([&](const std::function<void(std::string_view)>& f) {
      ChunkLineSplitter s(name, f);
      s.feed(memory);
      s.finish();
    }, name);
  } else {
    starts = scan_ranks([&](const std::function<void(std::string_view)>& f) { for_each_file_line(path, f); }, name);
  }
  Replay replay(sink, options, name);
  const std::size_t buf = buffer_for(starts.size());
  for (const RankStart& s : starts) {
    replay.add_rank(s.id, std::make_unique<TiSource>(name, path, memory, s.id, s.offset, s.line, buf));
  }
  return replay.run(false);
}

/// The action files a TI index lists, checked (one relative path per line, inside the index's
/// folder, an existing regular file): (path, name in messages).
std::vector<std::pair<std::filesystem::path, std::string>> index_files(const std::filesystem::path& index) {
  const std::string name = index.string();
  const std::filesystem::path folder = index.parent_path();
  std::vector<std::pair<std::filesystem::path, std::string>> files;
  std::int64_t line = 0;
  for_each_file_line(index, [&](std::string_view l) {
    ++line;
    std::vector<TiToken> toks;
    tokenize(l, toks);
    if (toks.empty()) return;
    if (toks.size() > 1) {
      throw InputError(FileLoc{name, line, static_cast<std::int64_t>(toks[1].column)},
                       "a TI index line names one action file; found more words ('" + shown(toks[1].text) + "')");
    }
    const std::filesystem::path rel(toks[0].text);
    const std::filesystem::path norm = rel.lexically_normal();
    if (rel.is_absolute() || norm.empty() || *norm.begin() == "..") {
      throw InputError(FileLoc{name, line, static_cast<std::int64_t>(toks[0].column)},
                       "'" + shown(toks[0].text) + "' leaves the index's folder: per-rank files must be named relative to "
                       "the index and lie in or below its folder");
    }
    if (files.size() >= kMaxRanks) throw InputError(FileLoc{name, line, 1}, "more than 1 M ranks");
    const std::filesystem::path p = folder / norm;
    // Checked now, so that a missing file is reported at its index line before anything is replayed.
    std::error_code ec;
    if (!std::filesystem::is_regular_file(p, ec)) {
      throw InputError(FileLoc{name, line, static_cast<std::int64_t>(toks[0].column)},
                       "rank " + std::to_string(files.size()) + "'s action file " + escaped_excerpt(p.string()) +
                           (std::filesystem::exists(p, ec) ? " is not a regular file" : " does not exist"));
    }
    files.emplace_back(p, p.string());
  });
  if (files.empty()) throw InputError(FileLoc{name, std::max<std::int64_t>(line, 1), 1}, "empty TI index: no action file listed");
  return files;
}

SimgridTiSummary replay_index(const std::filesystem::path& index, TraceSink& sink, const SimgridTiOptions& options) {
  const std::string name = index.string();
  const auto files = index_files(index);
  // A compressed action file is read from a decompressed temporary copy (TiSource reads at offsets).
  std::vector<PlainFile> plain;
  plain.reserve(files.size());
  for (const auto& f : files) plain.emplace_back(f.first, kMaxTextLineBytes, "TI trace");
  Replay replay(sink, options, name);
  const std::size_t buf = buffer_for(files.size());
  for (std::size_t r = 0; r < files.size(); ++r) {
    replay.add_rank(static_cast<std::int64_t>(r), std::make_unique<TiSource>(files[r].second, plain[r].path(),
                                                                             std::string_view{}, -1, 0, 1, buf));
  }
  return replay.run(true);
}

}  // namespace

bool looks_like_simgrid_ti(std::string_view head) {
  if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
  // The head may end inside a line: judge the complete lines only (all of it when it is short).
  const std::size_t last_nl = head.rfind('\n');
  if (head.size() >= 64 * 1024 && last_nl != std::string_view::npos) head = head.substr(0, last_nl);
  std::vector<std::vector<std::string_view>> lines;
  const std::vector<std::string_view> first = first_words(head, 16, lines);
  if (first.empty()) return false;
  if (is_action_line(first)) return true;
  // An index: every line one relative path of a file (with a '/' or a '.').
  for (const auto& words : lines) {
    if (words.size() != 1) return false;
    const std::string_view w = words[0];
    if (w.find_first_of("/.") == std::string_view::npos || w.front() == '/' || w.front() == '#' || w.front() == '%' ||
        w.front() == '{' || w.front() == '[' || w.find('\0') != std::string_view::npos) {
      return false;
    }
  }
  return true;
}

SimgridTiSummary read_simgrid_ti_text(std::string_view text, const std::string& name, TraceSink& sink,
                                      const SimgridTiOptions& options) {
  return replay_single(name, {}, text, sink, options);
}

namespace {

/// An action file starts with "RANK ACTION"; a file whose first line is one word is an index.
bool is_ti_index(const std::filesystem::path& path) {
  bool index = false;
  for_each_file_line_while(path, [&index](std::string_view line) {
    if (std::all_of(line.begin(), line.end(), is_blank)) return true;
    std::vector<std::vector<std::string_view>> lines;
    const auto words = first_words(line, 1, lines);
    index = words.size() == 1 && !is_action_line(words);
    return false;  // the first non-blank line decides
  });
  return index;
}

}  // namespace

SimgridTiSummary read_simgrid_ti_trace(const std::filesystem::path& path, TraceSink& sink, const SimgridTiOptions& options) {
  if (is_ti_index(path)) return replay_index(path, sink, options);
  // A compressed action file is read from a decompressed temporary copy (its ranks are read at
  // independent offsets).
  const PlainFile plain(path, kMaxTextLineBytes, "TI trace");
  return replay_single(path.string(), plain.path(), {}, sink, options);
}

std::vector<std::filesystem::path> simgrid_ti_files(const std::filesystem::path& path) {
  std::vector<std::filesystem::path> files{path};
  if (is_ti_index(path)) {
    for (const auto& f : index_files(path)) files.push_back(f.first);
  }
  return files;
}

}  // namespace kanoko::trace
