// libkanoko-capture: records an MPI program's events through the MPI profiling interface (PMPI).
// Each wrapper below replaces the MPI_ function of the same name (by LD_PRELOAD or by linking this
// library before libmpi), records what it needs and calls the PMPI_ version. Records go to a
// per-rank memory buffer that is written to DIR/rank-N.kcap in large blocks; at MPI_Finalize rank
// 0 merges the files into one native trace (src/capture/merge.cpp). Method, file format and
// environment variables: docs/capture.md.
//
// Rules this file keeps: no exception leaves a wrapper (the application is C); a capture failure
// (unwritable folder, full disk) prints one message and turns capture off for that rank, never the
// program; the only code that runs in a signal handler is write(2) of the committed part of the
// buffer. Capture assumes MPI calls come from one thread at a time (MPI_THREAD_FUNNELED or less).
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <mpi.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/capture/merge.hpp"

#define KANOKO_EXPORT extern "C" __attribute__((visibility("default")))
/// In a wrapper: where the program called it (the return address into the caller).
#define KANOKO_RA __builtin_return_address(0)

namespace {

double now_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double cpu_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

bool env_flag(const char* name, bool fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return !(std::strcmp(v, "0") == 0 || std::strcmp(v, "no") == 0 || std::strcmp(v, "off") == 0 ||
           std::strcmp(v, "false") == 0);
}

double env_number(const char* name, double fallback, double lo, double hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(x >= lo && x <= hi)) {
    std::fprintf(stderr, "kanoko-capture: ignoring %s=%s (expected a number from %g to %g); using %g\n", name, v, lo,
                 hi, fallback);
    return fallback;
  }
  return x;
}

std::string env_string(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

enum class LoadKind { off, cpu, compute };

/// The deepest call path `KANOKO_CAPTURE_CALL_PATH_DEPTH` may ask for.
constexpr int kMaxCallPathDepth = 32;

/// A call site as recorded: the return addresses of the wrapped call (innermost first).
struct SiteKey {
  int n = 0;
  std::array<std::uintptr_t, kMaxCallPathDepth> pc{};
  bool operator==(const SiteKey& o) const {
    return n == o.n && std::equal(pc.begin(), pc.begin() + n, o.pc.begin());
  }
};
struct SiteHash {
  std::size_t operator()(const SiteKey& k) const {
    std::size_t h = static_cast<std::size_t>(k.n);
    for (int i = 0; i < k.n; ++i) h = (h ^ k.pc[static_cast<std::size_t>(i)]) * 0x100000001b3ULL;
    return h;
  }
};

/// An executable segment of a loaded object, recorded once as a `mod` record.
struct Segment {
  std::uintptr_t lo = 0;
  std::uintptr_t hi = 0;
};

/// A receive posted by MPI_Irecv, waiting for its completion.
struct PendingRecv {
  double post_s = 0;
  MPI_Comm comm = MPI_COMM_NULL;
};

/// Everything one rank records. One instance, created in MPI_Init, never destroyed (the process
/// may exit without MPI_Finalize; the signal handler and atexit flush read it).
struct Capture {
  bool active = false;  ///< false before init, after finalize, or after a write error
  bool p2p = true;
  bool collectives = true;
  bool compute = true;
  LoadKind load = LoadKind::cpu;
  double load_period_s = 0.1;
  double flush_period_s = 1.0;
  bool merge = true;
  bool keep = false;
  std::string output;
  std::string dir;
  std::string path;  ///< this rank's file

  int rank = 0;
  int size = 1;
  MPI_Comm comm = MPI_COMM_NULL;  ///< private duplicate of MPI_COMM_WORLD for the clock sync
  int fd = -1;

  // Buffer: records are appended whole; `committed` is what a signal handler may write.
  std::vector<char> buffer;
  volatile std::size_t committed = 0;
  double last_flush_s = 0;

  double last_exit_s = -1;       ///< end of the previous MPI call: a compute interval starts here
  double outside_mpi_s = 0;      ///< compute time in the current load period (LoadKind::compute)
  double period_start_s = 0;     ///< current load period
  double period_cpu_s = 0;
  double overhead_s = 0;         ///< time spent in this library's own bookkeeping
  int depth = 0;                 ///< nesting of wrappers (MPI calling MPI)
  int call_path_depth = 1;       ///< return addresses recorded per call (0: no call sites)
  std::uint32_t site = 0;        ///< the current wrapped call's site index (0: none)
  void* last_ra = nullptr;       ///< depth 1: the previous call's return address and its site
  std::uint32_t last_site = 0;
  std::unordered_map<SiteKey, std::uint32_t, SiteHash> sites;  ///< interned call sites → index (from 1)
  std::vector<Segment> segments;  ///< executable segments of the objects recorded so far

  std::unordered_map<MPI_Request, PendingRecv> pending;
  std::unordered_map<MPI_Comm, std::vector<int>> world_ranks;  ///< for communicators other than WORLD
  std::unordered_map<std::string, long> coll_seq;              ///< per communicator key
};

Capture* g = nullptr;

void fail_capture(const char* what, int err) {
  if (g == nullptr || !g->active) return;
  std::fprintf(stderr,
               "kanoko-capture: rank %d: %s %s: %s; capture is off for this rank from here on, the program "
               "continues\n",
               g->rank, what, g->path.c_str(), std::strerror(err));
  g->active = false;
}

/// Writes the committed buffer. Async-signal-safe (write(2) only) when `in_signal`.
bool write_all(int fd, const char* p, std::size_t n, int* err) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

/// The thread (kernel id) writing the buffer now, 0 when none. The buffer is written by flush(),
/// by the flush at exit and by the fatal-signal handler; whichever claims it first writes it, so
/// that no bytes are written twice (mpirun sends SIGTERM to ranks that may be in their exit flush).
std::atomic<pid_t> g_flush_owner{0};
static_assert(std::atomic<pid_t>::is_always_lock_free, "claimed inside a signal handler");

/// Claims the buffer for writing. A write in progress on another thread is awaited, up to half a
/// second (mpirun's SIGKILL follows its SIGTERM by a second), so that its bytes are whole before a
/// signal's default action ends the process; a write that a signal handler interrupted on its own
/// thread is not (the handler then writes nothing). Async-signal-safe.
bool claim_buffer() {
  const pid_t me = ::gettid();
  for (int waited_ms = 0;; ++waited_ms) {
    pid_t owner = 0;
    if (g_flush_owner.compare_exchange_strong(owner, me)) return true;
    if (owner == me || waited_ms >= 500) return false;
    const struct timespec one_ms {0, 1000000};
    ::nanosleep(&one_ms, nullptr);
  }
}

void release_buffer() { g_flush_owner.store(0); }

void flush() {
  if (g == nullptr || g->fd < 0 || !claim_buffer()) return;
  const std::size_t n = g->committed;
  int err = 0;
  if (n > 0 && !write_all(g->fd, g->buffer.data(), n, &err)) {
    fail_capture("cannot write", err);
    ::close(g->fd);
    g->fd = -1;
  }
  g->committed = 0;
  release_buffer();
}

/// Appends whole records (lines) to the buffer, flushing it when full; a text larger than the
/// buffer is written directly.
void append(const char* text, std::size_t len) {
  if (g == nullptr || !g->active) return;
  if (g->committed + len > g->buffer.size()) flush();
  if (!g->active) return;
  if (g->committed + len > g->buffer.size() && len <= g->buffer.size()) return;  // a dying process holds the buffer
  if (len > g->buffer.size()) {
    int err = 0;
    if (g->fd >= 0 && !write_all(g->fd, text, len, &err)) fail_capture("cannot write", err);
    return;
  }
  std::memcpy(g->buffer.data() + g->committed, text, len);
  std::atomic_signal_fence(std::memory_order_release);
  g->committed = g->committed + len;
}

/// Appends one record (a printf-formatted line) to the buffer, flushing it when full.
__attribute__((format(printf, 1, 2))) void record(const char* fmt, ...) {
  if (g == nullptr || !g->active) return;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n <= 0) return;
  append(line, std::min(static_cast<std::size_t>(n), sizeof line - 1));
}

/// Builds one record of the per-call kinds (st, m, s, r) without printf: formatting a double
/// with "%.9f" costs about a microsecond, several per MPI call; integer digits cost a few ns.
/// Times print exactly as "%.9f" does (to the nanosecond).
class RecordLine {
 public:
  RecordLine& text(const char* s) {
    while (*s != '\0' && n_ < kRoom) buf_[n_++] = *s++;
    return *this;
  }
  RecordLine& seconds(double t) {
    if (t < 0) {
      text("-");
      t = -t;
    }
    const auto ns = static_cast<unsigned long long>(t * 1e9 + 0.5);
    digits(ns / 1000000000ULL, 1);
    text(".");
    return digits(ns % 1000000000ULL, 9);
  }
  RecordLine& integer(long long v) {
    if (v < 0) text("-");
    return digits(v < 0 ? 0ULL - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v), 1);
  }
  /// Ends the line and appends it to the buffer.
  void commit() {
    buf_[n_++] = '\n';
    append(buf_, n_);
  }

 private:
  /// `v` in decimal, zero-padded to `width` digits.
  RecordLine& digits(unsigned long long v, int width) {
    char tmp[24];
    int k = 0;
    do {
      tmp[k++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (k < width) tmp[k++] = '0';
    while (k > 0 && n_ < kRoom) buf_[n_++] = tmp[--k];
    return *this;
  }
  static constexpr std::size_t kRoom = 255;  // one byte left for the newline
  char buf_[kRoom + 1];
  std::size_t n_ = 0;
};

// ---- call sites (docs/capture.md, "Call sites") ----------------------------------------------

/// Records a `mod` line for each executable segment of a loaded object not recorded yet: the
/// object's load bias, the segment's address range and the object's file, so that the merge can
/// resolve the addresses after the program has exited (ASLR, position-independent code).
int record_module(dl_phdr_info* info, std::size_t /*size*/, void* /*data*/) {
  std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (path.empty()) {
    // The program itself: dl_iterate_phdr gives it no name.
    char exe[4096];
    const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe);
    if (n > 0 && static_cast<std::size_t>(n) < sizeof exe) path.assign(exe, static_cast<std::size_t>(n));
  }
  if (path.empty() || path[0] != '/') return 0;  // the vDSO has no file to read later
  std::replace(path.begin(), path.end(), '\n', '?');
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    const std::uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    const std::uintptr_t hi = lo + ph.p_memsz;
    if (std::any_of(g->segments.begin(), g->segments.end(), [&](const Segment& s) { return s.lo == lo; })) continue;
    g->segments.push_back(Segment{lo, hi});
    char head[80];
    const int n = std::snprintf(head, sizeof head, "mod %lx %lx %lx ", static_cast<unsigned long>(info->dlpi_addr),
                                static_cast<unsigned long>(lo), static_cast<unsigned long>(hi));
    const std::string line = std::string(head, static_cast<std::size_t>(n)) + path + "\n";
    append(line.data(), line.size());
  }
  return 0;
}

bool known_address(std::uintptr_t a) {
  return std::any_of(g->segments.begin(), g->segments.end(), [&](const Segment& s) { return a >= s.lo && a < s.hi; });
}

/// The index of call site `k`, recording it (`cs` line) when new. A new site in an object loaded
/// after MPI_Init (dlopen) records the objects loaded since.
std::uint32_t intern_site(const SiteKey& k) {
  const auto it = g->sites.find(k);
  if (it != g->sites.end()) return it->second;
  for (int i = 0; i < k.n; ++i) {
    if (!known_address(k.pc[static_cast<std::size_t>(i)])) {
      ::dl_iterate_phdr(record_module, nullptr);
      break;
    }
  }
  const auto index = static_cast<std::uint32_t>(g->sites.size() + 1);
  g->sites.emplace(k, index);
  char line[32 + 20 * kMaxCallPathDepth];
  int n = std::snprintf(line, sizeof line, "cs %u", index);
  for (int i = 0; i < k.n; ++i) {
    n += std::snprintf(line + n, sizeof line - static_cast<std::size_t>(n), " %lx",
                       static_cast<unsigned long>(k.pc[static_cast<std::size_t>(i)]));
  }
  line[n++] = '\n';
  append(line, static_cast<std::size_t>(n));
  return index;
}

/// Sets g->site to the call site of the current wrapped call, whose return address is `ra`:
/// that address alone at depth 1 (free), else the stack from it outward (backtrace(3), measured
/// in bench/bench_capture.c).
__attribute__((noinline)) void note_site(void* ra) {
  if (g->call_path_depth == 1 && ra == g->last_ra) {  // a loop calling from the same line
    g->site = g->last_site;
    return;
  }
  SiteKey k;
  k.n = 1;
  k.pc[0] = reinterpret_cast<std::uintptr_t>(ra);
  if (g->call_path_depth > 1) {
    // This function and the wrapper sit above the caller: 3 frames more than asked for (each
    // frame costs, bench/bench_capture.cpp), and when `ra` is not among them, `ra` alone.
    void* frames[kMaxCallPathDepth + 3];
    const int got = ::backtrace(frames, g->call_path_depth + 3);
    int at = 0;
    while (at < got && frames[at] != ra) ++at;
    if (at < got) {
      k.n = 0;
      for (int i = at; i < got && k.n < g->call_path_depth; ++i) {
        k.pc[static_cast<std::size_t>(k.n++)] = reinterpret_cast<std::uintptr_t>(frames[i]);
      }
    }
  }
  g->site = intern_site(k);
  g->last_ra = ra;
  g->last_site = g->site;
}

/// Fatal signals and exit without MPI_Finalize: write what is buffered, so the rank's data up to
/// here stays readable. Only write(2) here.
void emergency_flush() {
  if (g == nullptr || g->fd < 0 || !claim_buffer()) return;
  int err = 0;
  const std::size_t n = g->committed;
  if (n > 0 && write_all(g->fd, g->buffer.data(), n, &err)) g->committed = 0;
  release_buffer();
}

constexpr int kFatalSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGSEGV, SIGBUS, SIGABRT, SIGFPE};
constexpr int kSignalSlots = 32;
struct sigaction g_previous[kSignalSlots];  // the handlers we chain to, by signal number

/// Writes what is buffered, then hands the signal on: to the handler that was there before us
/// (Open MPI's or the program's), or to the default action.
void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  emergency_flush();
  const struct sigaction& old = g_previous[sig];
  if ((old.sa_flags & SA_SIGINFO) != 0 && old.sa_sigaction != nullptr) {
    old.sa_sigaction(sig, info, context);
    return;
  }
  if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
    old.sa_handler(sig);
    return;
  }
  if (old.sa_handler == SIG_IGN) return;
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_signal_flush() {
  for (const int sig : kFatalSignals) {
    if (sig >= kSignalSlots) continue;
    struct sigaction sa {};
    sa.sa_sigaction = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO;
    ::sigaction(sig, &sa, &g_previous[sig]);
  }
}

int world_rank(MPI_Comm comm, int r) {
  if (comm == MPI_COMM_WORLD || r < 0) return r;
  auto it = g->world_ranks.find(comm);
  if (it == g->world_ranks.end()) {
    MPI_Group group = MPI_GROUP_NULL;
    MPI_Group world = MPI_GROUP_NULL;
    int n = 0;
    PMPI_Comm_group(comm, &group);
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    PMPI_Group_size(group, &n);
    std::vector<int> local(static_cast<std::size_t>(n));
    std::vector<int> global(static_cast<std::size_t>(n), -1);
    for (int i = 0; i < n; ++i) local[static_cast<std::size_t>(i)] = i;
    PMPI_Group_translate_ranks(group, n, local.data(), world, global.data());
    PMPI_Group_free(&group);
    PMPI_Group_free(&world);
    it = g->world_ranks.emplace(comm, std::move(global)).first;
  }
  return r < static_cast<int>(it->second.size()) ? it->second[static_cast<std::size_t>(r)] : -1;
}

int type_size(MPI_Datatype t) {
  int s = 0;
  if (PMPI_Type_size(t, &s) != MPI_SUCCESS) return 0;
  return s;
}

/// Records the load of the period that started at period_start_s, once it is load_period_s long;
/// `last` (at MPI_Finalize) records the final period however short, so that every run, even one
/// shorter than a period, has its load.
void sample_load(double t, bool last = false) {
  if (g->load == LoadKind::off) return;
  if (t < g->period_start_s + g->load_period_s && !(last && t > g->period_start_s)) return;
  const double wall = t - g->period_start_s;
  double value = 0;
  if (g->load == LoadKind::cpu) {
    const double c = cpu_s();
    value = (c - g->period_cpu_s) / wall;
    g->period_cpu_s = c;
  } else {
    value = g->outside_mpi_s / wall;
    g->outside_mpi_s = 0;
  }
  // Stamped at the start of the period it measures, as the paper-program generator does.
  record("l %.9f %.6f\n", g->period_start_s, std::max(0.0, value));
  g->period_start_s = t;
}

/// Wrapper entry: closes the compute interval since the previous MPI call. Returns the entry time.
double enter() {
  const double t = now_s();
  if (g->last_exit_s >= 0) {
    const double d = t - g->last_exit_s;
    if (g->compute) RecordLine().text("st ").seconds(g->last_exit_s).text(" ").seconds(d).text(" compute").commit();
    g->outside_mpi_s += d;
  }
  sample_load(t);
  if (t - g->last_flush_s >= g->flush_period_s) {
    record("o %.9f %.9f\n", t, g->overhead_s);  // so that a partial trace reports overhead too
    flush();
    g->last_flush_s = t;
  }
  return t;
}

/// Wrapper exit; `t_in` is enter()'s time and `t_mpi` the time spent in PMPI. Records the call
/// `name` (nullptr: not recorded) as an `m` record with its call site.
void leave(double t_in, double t_mpi, const char* name) {
  const double t = now_s();
  if (name != nullptr) {
    RecordLine().text("m ").seconds(t_in).text(" ").seconds(t - t_in).text(" ").text(name).text(" ").integer(g->site).commit();
  }
  g->overhead_s += std::max(0.0, (t - t_in) - t_mpi);
  g->last_exit_s = t;
}

/// Measures this rank's clock offset to rank 0 by ping-pong on the private communicator. Rank 0
/// stamps t0, rank r answers with its clock tr, rank 0 stamps t1 on the answer: the true offset
/// lies in [t0 - tr, t1 - tr], so the midpoint is within (t1 - t0) / 2. The best of kRounds
/// round trips is kept, and rank 0 sends (offset, bound) back so that every file is complete.
void clock_sync() {
  constexpr int kRounds = 10;
  double result[2] = {0, 0};
  if (g->rank == 0) {
    for (int r = 1; r < g->size; ++r) {
      double best_rtt = 1e300;
      for (int i = 0; i < kRounds; ++i) {
        double tr = 0;
        const double t0 = now_s();
        PMPI_Send(&t0, 1, MPI_DOUBLE, r, 1, g->comm);
        PMPI_Recv(&tr, 1, MPI_DOUBLE, r, 2, g->comm, MPI_STATUS_IGNORE);
        const double t1 = now_s();
        if (t1 - t0 < best_rtt) {
          best_rtt = t1 - t0;
          result[0] = 0.5 * (t0 + t1) - tr;
          result[1] = 0.5 * (t1 - t0);
        }
      }
      PMPI_Send(result, 2, MPI_DOUBLE, r, 3, g->comm);
    }
    result[0] = 0;
    result[1] = 0;
  } else {
    for (int i = 0; i < kRounds; ++i) {
      double t0 = 0;
      PMPI_Recv(&t0, 1, MPI_DOUBLE, 0, 1, g->comm, MPI_STATUS_IGNORE);
      const double tr = now_s();
      PMPI_Send(&tr, 1, MPI_DOUBLE, 0, 2, g->comm);
    }
    PMPI_Recv(result, 2, MPI_DOUBLE, 0, 3, g->comm, MPI_STATUS_IGNORE);
  }
  PMPI_Barrier(g->comm);
  record("sync %.9f %.9f %.9f\n", now_s(), result[0], result[1]);
}

void flush_at_exit() { emergency_flush(); }

void start_capture() {
  if (!env_flag("KANOKO_CAPTURE", true)) return;
  auto* c = new Capture();
  g = c;
  c->p2p = env_flag("KANOKO_CAPTURE_P2P", true);
  c->collectives = env_flag("KANOKO_CAPTURE_COLLECTIVES", true);
  c->compute = env_flag("KANOKO_CAPTURE_COMPUTE", true);
  const std::string load = env_string("KANOKO_CAPTURE_LOAD", "cpu");
  if (load == "off") {
    c->load = LoadKind::off;
  } else if (load == "compute") {
    c->load = LoadKind::compute;
  } else {
    if (load != "cpu") std::fprintf(stderr, "kanoko-capture: KANOKO_CAPTURE_LOAD=%s is not cpu, compute or off; using cpu\n", load.c_str());
    c->load = LoadKind::cpu;
  }
  c->load_period_s = env_number("KANOKO_CAPTURE_LOAD_PERIOD", 0.1, 1e-4, 3600);
  c->flush_period_s = env_number("KANOKO_CAPTURE_FLUSH_PERIOD", 1.0, 0, 3600);
  const double buffer_mib = env_number("KANOKO_CAPTURE_BUFFER_MB", 4, 0.01, 1024);
  c->call_path_depth = static_cast<int>(env_number("KANOKO_CAPTURE_CALL_PATH_DEPTH", 1, 0, kMaxCallPathDepth));
  c->merge = env_flag("KANOKO_CAPTURE_MERGE", true);
  c->keep = env_flag("KANOKO_CAPTURE_KEEP", false);
  c->output = env_string("KANOKO_CAPTURE_OUTPUT", "kanoko-trace.kntr");
  c->dir = env_string("KANOKO_CAPTURE_DIR", (c->output + ".ranks").c_str());
  c->buffer.resize(static_cast<std::size_t>(buffer_mib * 1048576.0));

  PMPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &c->size);
  PMPI_Comm_dup(MPI_COMM_WORLD, &c->comm);
  c->path = c->dir + "/" + kanoko::capture::rank_file_name(c->rank);
  c->active = true;
  if (::mkdir(c->dir.c_str(), 0777) != 0 && errno != EEXIST) {
    fail_capture("cannot create the folder for", errno);
  } else {
    c->fd = ::open(c->path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (c->fd < 0) fail_capture("cannot open", errno);
  }
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  for (char* p = host; *p != '\0'; ++p) {
    if (*p == ' ' || *p == '=') *p = '_';
  }
  record("kcap 1 rank=%d size=%d host=%s pid=%ld call_path_depth=%d\n", c->rank, c->size, host,
         static_cast<long>(::getpid()), c->call_path_depth);
  if (c->call_path_depth > 0) ::dl_iterate_phdr(record_module, nullptr);
  // Every rank takes part in the synchronisation even if its own file failed: rank 0 needs it.
  const bool was_active = c->active;
  c->active = true;
  clock_sync();
  c->active = was_active && c->fd >= 0;
  flush();
  c->last_flush_s = now_s();
  c->period_start_s = c->last_flush_s;
  c->period_cpu_s = cpu_s();
  c->last_exit_s = c->last_flush_s;
  install_signal_flush();
  std::atexit(flush_at_exit);
}

void finish_capture() {
  Capture* c = g;
  const double t = enter();
  sample_load(t, true);
  // Final clock synchronisation: the merge interpolates the offset between init and here.
  const bool was_active = c->active;
  c->active = true;
  const int saved_fd = c->fd;
  if (!was_active) c->fd = -1;  // records go nowhere, but the ping-pong must run
  clock_sync();
  c->fd = saved_fd;
  c->active = was_active;
  (void)t;  // the per-call overhead stops here; the synchronisation and merge are fixed costs
  record("o %.9f %.9f\n", now_s(), c->overhead_s);
  record("fin %.9f\n", now_s());
  flush();
  if (c->fd >= 0) {
    if (::close(c->fd) != 0) fail_capture("cannot close", errno);
    c->fd = -1;
  }
  int ok = c->active ? 1 : 0;
  int all_ok = 0;
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, c->comm);
  if (c->rank == 0 && c->merge) {
    if (all_ok == 0) {
      std::fprintf(stderr,
                   "kanoko-capture: some ranks could not write their capture files; no merged trace. Merge "
                   "what is left with: kanoko capture --merge %s -o %s\n",
                   c->dir.c_str(), c->output.c_str());
    } else {
      try {
        const auto s = kanoko::capture::merge_capture_dir(c->dir, c->output);
        std::fprintf(stderr,
                     "kanoko-capture: wrote %s: %d ranks, %llu messages, %llu collectives, %.3f s; clock "
                     "alignment bound %.3g s; capture overhead at most %.2f%% of a rank's run time\n",
                     c->output.c_str(), s.ranks, static_cast<unsigned long long>(s.messages),
                     static_cast<unsigned long long>(s.collectives), s.end_s, s.max_clock_bound_s,
                     100.0 * s.max_overhead_fraction);
        for (const auto& line : kanoko::capture::call_site_report(s)) std::fprintf(stderr, "kanoko-capture: %s\n", line.c_str());
        if (!c->keep) {
          for (int r = 0; r < c->size; ++r) {
            ::unlink((c->dir + "/" + kanoko::capture::rank_file_name(r)).c_str());
          }
          ::rmdir(c->dir.c_str());
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "kanoko-capture: merging %s failed: %s\n", c->dir.c_str(), e.what());
      }
    }
  }
  // Wait for rank 0's merge without busy-polling: on an oversubscribed machine spinning ranks
  // would take the CPU the merge needs.
  MPI_Request done = MPI_REQUEST_NULL;
  PMPI_Ibarrier(c->comm, &done);
  int finished = 0;
  while (PMPI_Test(&done, &finished, MPI_STATUS_IGNORE) == MPI_SUCCESS && finished == 0) {
    const timespec pause{0, 1000000};
    ::nanosleep(&pause, nullptr);
  }
  PMPI_Comm_free(&c->comm);
  c->active = false;
}

/// Records a completed receive (status from PMPI). Open MPI's status holds the received size in
/// bytes, so counting it in MPI_BYTE gives the bytes whatever the receive's datatype.
void record_recv(double post_s, double done_s, MPI_Comm comm, const MPI_Status& st) {
  if (st.MPI_SOURCE == MPI_PROC_NULL || st.MPI_SOURCE < 0) return;
  int count = 0;
  PMPI_Get_count(&st, MPI_BYTE, &count);
  if (count == MPI_UNDEFINED) count = 0;
  RecordLine()
      .text("r ")
      .seconds(post_s)
      .text(" ")
      .seconds(done_s)
      .text(" ")
      .integer(world_rank(comm, st.MPI_SOURCE))
      .text(" ")
      .integer(count)
      .text(" ")
      .integer(st.MPI_TAG)
      .commit();
}

void record_send(double t, int dst, int count, MPI_Datatype type, int tag, MPI_Comm comm) {
  if (dst == MPI_PROC_NULL || dst < 0) return;
  const long long bytes = static_cast<long long>(count) * type_size(type);
  RecordLine()
      .text("s ")
      .seconds(t)
      .text(" ")
      .integer(world_rank(comm, dst))
      .text(" ")
      .integer(bytes)
      .text(" ")
      .integer(tag)
      .text(" ")
      .integer(g->site)
      .commit();
}

/// After a request completed (request handle saved before the call): a pending receive is
/// recorded with its status.
void complete(MPI_Request req, double done_s, const MPI_Status& st) {
  if (req == MPI_REQUEST_NULL) return;
  const auto it = g->pending.find(req);
  if (it == g->pending.end()) return;
  if (g->p2p) record_recv(it->second.post_s, done_s, it->second.comm, st);
  g->pending.erase(it);
}

bool tracing() { return g != nullptr && g->active && g->depth == 0; }

/// Runs `body` (the PMPI call `name`) bracketed by enter/leave, with its call site (`ra`: the
/// wrapper's return address) and, when its kind (collective or not) is captured, an `m` record of
/// the call; returns its result. No exception escapes.
template <class Body, class After>
int traced(const char* name, bool collective_call, void* ra, Body body, After after) {
  if (!tracing()) return body();
  ++g->depth;
  int rc = MPI_SUCCESS;
  try {
    const double t_in = enter();
    g->site = 0;
    if (g->call_path_depth > 0) note_site(ra);
    const double t0 = now_s();
    rc = body();
    const double t1 = now_s();
    after(t_in, t0, t1);
    leave(t_in, t1 - t0, (collective_call ? g->collectives : g->p2p) ? name : nullptr);
  } catch (...) {
    // Only std::bad_alloc can reach here; stop capturing rather than disturb the program.
    fail_capture("ran out of memory writing", ENOMEM);
  }
  --g->depth;
  return rc;
}

std::string coll_group(MPI_Comm comm) {
  std::string key;
  if (comm == MPI_COMM_WORLD) {
    key = "w";
  } else {
    int n = 0;
    PMPI_Comm_size(comm, &n);
    key = "c" + std::to_string(world_rank(comm, 0)) + "n" + std::to_string(n);
  }
  return key + "." + std::to_string(g->coll_seq[key]++);
}

template <class Body>
int collective(const char* name, const char* mpi_name, void* ra, MPI_Comm comm, long long bytes, int root, Body body) {
  return traced(mpi_name, true, ra, body, [&](double, double t0, double t1) {
    if (!g->collectives) return;
    const std::string group = coll_group(comm);
    record("k %.9f %.9f %s %lld %d %s\n", t0, t1 - t0, name, bytes, root >= 0 ? world_rank(comm, root) : -1,
           group.c_str());
  });
}

int comm_size(MPI_Comm comm) {
  int n = 0;
  PMPI_Comm_size(comm, &n);
  return n;
}

}  // namespace

// ---- init / finalize -----------------------------------------------------------------------

KANOKO_EXPORT int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS && g == nullptr) {
    try {
      start_capture();
    } catch (...) {
      std::fprintf(stderr, "kanoko-capture: could not start (out of memory); the program runs untraced\n");
      if (g != nullptr) g->active = false;
    }
  }
  return rc;
}

KANOKO_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS && g == nullptr) {
    try {
      start_capture();
    } catch (...) {
      std::fprintf(stderr, "kanoko-capture: could not start (out of memory); the program runs untraced\n");
      if (g != nullptr) g->active = false;
    }
  }
  return rc;
}

KANOKO_EXPORT int MPI_Finalize(void) {
  if (g != nullptr && g->comm != MPI_COMM_NULL && g->depth == 0) {
    try {
      finish_capture();
    } catch (...) {
      std::fprintf(stderr, "kanoko-capture: finishing the capture failed (out of memory)\n");
    }
  }
  return PMPI_Finalize();
}

KANOKO_EXPORT int MPI_Comm_free(MPI_Comm* comm) {
  if (g != nullptr && comm != nullptr) g->world_ranks.erase(*comm);
  return PMPI_Comm_free(comm);
}

// ---- point-to-point --------------------------------------------------------------------------

#define KANOKO_SEND_WRAPPER(NAME)                                                                    \
  KANOKO_EXPORT int MPI_##NAME(const void* buf, int count, MPI_Datatype type, int dest, int tag,    \
                               MPI_Comm comm) {                                                       \
    return traced("MPI_" #NAME, false, KANOKO_RA, [&] { return PMPI_##NAME(buf, count, type, dest, tag, comm); }, \
                  [&](double t_in, double, double) {                                                 \
                    if (g->p2p) record_send(t_in, dest, count, type, tag, comm);                     \
                  });                                                                                \
  }
KANOKO_SEND_WRAPPER(Send)
KANOKO_SEND_WRAPPER(Ssend)
KANOKO_SEND_WRAPPER(Rsend)
KANOKO_SEND_WRAPPER(Bsend)

#define KANOKO_ISEND_WRAPPER(NAME)                                                                   \
  KANOKO_EXPORT int MPI_##NAME(const void* buf, int count, MPI_Datatype type, int dest, int tag,    \
                               MPI_Comm comm, MPI_Request* req) {                                    \
    return traced("MPI_" #NAME, false, KANOKO_RA, [&] { return PMPI_##NAME(buf, count, type, dest, tag, comm, req); }, \
                  [&](double t_in, double, double) {                                                 \
                    if (g->p2p) record_send(t_in, dest, count, type, tag, comm);                     \
                  });                                                                                \
  }
KANOKO_ISEND_WRAPPER(Isend)
KANOKO_ISEND_WRAPPER(Issend)
KANOKO_ISEND_WRAPPER(Irsend)
KANOKO_ISEND_WRAPPER(Ibsend)

KANOKO_EXPORT int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                           MPI_Status* status) {
  MPI_Status local{};
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  return traced("MPI_Recv", false, KANOKO_RA, [&] { return PMPI_Recv(buf, count, type, source, tag, comm, st); },
                [&](double t_in, double, double t1) {
                  if (g->p2p) record_recv(t_in, t1, comm, *st);
                });
}

KANOKO_EXPORT int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                            MPI_Request* req) {
  return traced("MPI_Irecv", false, KANOKO_RA, [&] { return PMPI_Irecv(buf, count, type, source, tag, comm, req); },
                [&](double t_in, double, double) {
                  if (g->p2p && req != nullptr) g->pending[*req] = PendingRecv{t_in, comm};
                });
}

KANOKO_EXPORT int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf,
                               int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                               MPI_Status* status) {
  MPI_Status local{};
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  return traced("MPI_Sendrecv", false, KANOKO_RA,
      [&] { return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, st); },
      [&](double t_in, double, double t1) {
        if (!g->p2p) return;
        record_send(t_in, dest, scount, stype, stag, comm);
        record_recv(t_in, t1, comm, *st);
      });
}

KANOKO_EXPORT int MPI_Wait(MPI_Request* req, MPI_Status* status) {
  MPI_Status local{};
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  const MPI_Request saved = req != nullptr ? *req : MPI_REQUEST_NULL;
  return traced("MPI_Wait", false, KANOKO_RA, [&] { return PMPI_Wait(req, st); }, [&](double, double, double t1) { complete(saved, t1, *st); });
}

KANOKO_EXPORT int MPI_Test(MPI_Request* req, int* flag, MPI_Status* status) {
  MPI_Status local{};
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  const MPI_Request saved = req != nullptr ? *req : MPI_REQUEST_NULL;
  return traced("MPI_Test", false, KANOKO_RA, [&] { return PMPI_Test(req, flag, st); }, [&](double, double, double t1) {
    if (*flag != 0) complete(saved, t1, *st);
  });
}

KANOKO_EXPORT int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
  if (!tracing()) return PMPI_Waitall(n, reqs, statuses);
  std::vector<MPI_Request> saved(reqs, reqs + n);
  std::vector<MPI_Status> local;
  MPI_Status* st = statuses;
  if (statuses == MPI_STATUSES_IGNORE) {
    local.resize(static_cast<std::size_t>(n));
    st = local.data();
  }
  return traced("MPI_Waitall", false, KANOKO_RA, [&] { return PMPI_Waitall(n, reqs, st); }, [&](double, double, double t1) {
    for (int i = 0; i < n; ++i) complete(saved[static_cast<std::size_t>(i)], t1, st[i]);
  });
}

KANOKO_EXPORT int MPI_Testall(int n, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  if (!tracing()) return PMPI_Testall(n, reqs, flag, statuses);
  std::vector<MPI_Request> saved(reqs, reqs + n);
  std::vector<MPI_Status> local;
  MPI_Status* st = statuses;
  if (statuses == MPI_STATUSES_IGNORE) {
    local.resize(static_cast<std::size_t>(n));
    st = local.data();
  }
  return traced("MPI_Testall", false, KANOKO_RA, [&] { return PMPI_Testall(n, reqs, flag, st); }, [&](double, double, double t1) {
    if (*flag == 0) return;
    for (int i = 0; i < n; ++i) complete(saved[static_cast<std::size_t>(i)], t1, st[i]);
  });
}

KANOKO_EXPORT int MPI_Waitany(int n, MPI_Request reqs[], int* index, MPI_Status* status) {
  if (!tracing()) return PMPI_Waitany(n, reqs, index, status);
  std::vector<MPI_Request> saved(reqs, reqs + n);
  MPI_Status local{};
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  return traced("MPI_Waitany", false, KANOKO_RA, [&] { return PMPI_Waitany(n, reqs, index, st); }, [&](double, double, double t1) {
    if (*index != MPI_UNDEFINED && *index >= 0) complete(saved[static_cast<std::size_t>(*index)], t1, *st);
  });
}

KANOKO_EXPORT int MPI_Testany(int n, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
  if (!tracing()) return PMPI_Testany(n, reqs, index, flag, status);
  std::vector<MPI_Request> saved(reqs, reqs + n);
  MPI_Status local{};
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  return traced("MPI_Testany", false, KANOKO_RA, [&] { return PMPI_Testany(n, reqs, index, flag, st); }, [&](double, double, double t1) {
    if (*flag != 0 && *index != MPI_UNDEFINED && *index >= 0) {
      complete(saved[static_cast<std::size_t>(*index)], t1, *st);
    }
  });
}

KANOKO_EXPORT int MPI_Waitsome(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!tracing()) return PMPI_Waitsome(n, reqs, outcount, indices, statuses);
  std::vector<MPI_Request> saved(reqs, reqs + n);
  std::vector<MPI_Status> local;
  MPI_Status* st = statuses;
  if (statuses == MPI_STATUSES_IGNORE) {
    local.resize(static_cast<std::size_t>(n));
    st = local.data();
  }
  return traced("MPI_Waitsome", false, KANOKO_RA, [&] { return PMPI_Waitsome(n, reqs, outcount, indices, st); }, [&](double, double, double t1) {
    if (*outcount == MPI_UNDEFINED) return;
    for (int i = 0; i < *outcount; ++i) complete(saved[static_cast<std::size_t>(indices[i])], t1, st[i]);
  });
}

KANOKO_EXPORT int MPI_Testsome(int n, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!tracing()) return PMPI_Testsome(n, reqs, outcount, indices, statuses);
  std::vector<MPI_Request> saved(reqs, reqs + n);
  std::vector<MPI_Status> local;
  MPI_Status* st = statuses;
  if (statuses == MPI_STATUSES_IGNORE) {
    local.resize(static_cast<std::size_t>(n));
    st = local.data();
  }
  return traced("MPI_Testsome", false, KANOKO_RA, [&] { return PMPI_Testsome(n, reqs, outcount, indices, st); }, [&](double, double, double t1) {
    if (*outcount == MPI_UNDEFINED) return;
    for (int i = 0; i < *outcount; ++i) complete(saved[static_cast<std::size_t>(indices[i])], t1, st[i]);
  });
}

KANOKO_EXPORT int MPI_Request_free(MPI_Request* req) {
  if (g != nullptr && req != nullptr) g->pending.erase(*req);
  return PMPI_Request_free(req);
}

// ---- collectives -----------------------------------------------------------------------------
// `bytes` is what this rank contributes: its send buffer (the root's buffer for a broadcast).

KANOKO_EXPORT int MPI_Barrier(MPI_Comm comm) {
  return collective("barrier", "MPI_Barrier", KANOKO_RA, comm, 0, -1, [&] { return PMPI_Barrier(comm); });
}

KANOKO_EXPORT int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  return collective("bcast", "MPI_Bcast", KANOKO_RA, comm, static_cast<long long>(count) * type_size(type), root,
                    [&] { return PMPI_Bcast(buf, count, type, root, comm); });
}

KANOKO_EXPORT int MPI_Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                             MPI_Comm comm) {
  return collective("reduce", "MPI_Reduce", KANOKO_RA, comm, static_cast<long long>(count) * type_size(type), root,
                    [&] { return PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm); });
}

KANOKO_EXPORT int MPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op,
                                MPI_Comm comm) {
  return collective("allreduce", "MPI_Allreduce", KANOKO_RA, comm, static_cast<long long>(count) * type_size(type), -1,
                    [&] { return PMPI_Allreduce(sbuf, rbuf, count, type, op, comm); });
}

KANOKO_EXPORT int MPI_Gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                             MPI_Datatype rtype, int root, MPI_Comm comm) {
  return collective("gather", "MPI_Gather", KANOKO_RA, comm, static_cast<long long>(scount) * type_size(stype), root,
                    [&] { return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm); });
}

KANOKO_EXPORT int MPI_Scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                              MPI_Datatype rtype, int root, MPI_Comm comm) {
  int me = 0;
  PMPI_Comm_rank(comm, &me);
  const long long bytes = me == root ? static_cast<long long>(scount) * type_size(stype) * comm_size(comm) : 0;
  return collective("scatter", "MPI_Scatter", KANOKO_RA, comm, bytes, root,
                    [&] { return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm); });
}

KANOKO_EXPORT int MPI_Allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                                MPI_Datatype rtype, MPI_Comm comm) {
  return collective("allgather", "MPI_Allgather", KANOKO_RA, comm, static_cast<long long>(scount) * type_size(stype), -1,
                    [&] { return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm); });
}

KANOKO_EXPORT int MPI_Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                               MPI_Datatype rtype, MPI_Comm comm) {
  return collective("alltoall", "MPI_Alltoall", KANOKO_RA, comm, static_cast<long long>(scount) * type_size(stype) * comm_size(comm), -1,
                    [&] { return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm); });
}
