// Throughput and memory of the Pajé and native trace readers (issue 3, point 5), with Debian's
// pj_dump (package pajeng) measured on the same file in the same run.
//
// The program writes, in a temporary folder that it removes at the end:
//   * a Pajé trace shaped like SimGrid 3.32 SMPI output with display-sizes (entity values with
//     aliases, numeric container aliases, PushState/PopState with Size, StartLink/EndLink of type
//     MPI_LINK with keys src_dst_tag_counter and Size, host variables), --paje-mb long;
//   * a native trace (.kntr) with messages, states and load samples, --native-mb long;
//   * shorter copies of both (--short-fraction of the length) for the memory comparison.
// Each measurement runs in a child process (fork), so that its peak resident memory is its own:
//   * Kanoko: read_trace() into a TimelineBuilder with 1000 bins over the trace, as
//     `kanoko simulate` does (the reader into the timeline); wall and CPU time, MB/s, peak RSS;
//     with the default reader threads (--threads) and on the calling thread only;
//   * pj_dump FILE > /dev/null (its normal dump) and pj_dump -q FILE (its parse and simulation
//     only): wall and CPU time, MB/s, peak RSS.
// The files are in the page cache when they are read (they were just written).
//
// With --compressed, only the Pajé trace is written, then compressed with gzip and zstd (their
// commands, default levels), and Kanoko reads the plain file and both copies in the same run: the
// throughput of the text (MB of the plain file per second) and its ratio to the plain read.
//
//   build/bench/kanoko_bench_readers                       # 1 GiB of each, 64 ranks
//   build/bench/kanoko_bench_readers --paje-mb 200 --native-mb 200 --no-pj-dump
//   build/bench/kanoko_bench_readers --compressed --paje-mb 200
//   build/bench/kanoko_bench_readers --locations --paje-mb 200 --repeat 5
//   build/bench/kanoko_bench_readers --smpi --threads 2          # a real SimGrid SMPI trace
//
// With --locations, only the Pajé trace is written, with SimGrid's call locations (the Fname and
// Lnumber fields of PajePushState), and a copy stripped of them; Kanoko reads both in turn: the
// ratio of the times for the same events (issue 19: within 10 %).
//
// With --smpi, only a real SimGrid SMPI trace is read (issue 15, point 3): traces/smpi/generate.sh
// runs the halo program of traces/smpi (a 3-D halo exchange, Irecv/Isend/Waitall, 64 ranks on the
// 4x4x4 torus, --smpi-iters iterations) under SimGrid SMPI with computing states and resource
// tracing (hosts' and links' variables, the platform's topology links), which makes about 24 MB
// at 200 iterations; --smpi-trace FILE reads a given trace instead. Kanoko reads it into the
// timeline (1000 bins over the run) with --threads and on one thread, pj_dump and pj_dump -q read
// it in the same run, and the ratios are printed.
//
// With --formats (issue 15, point 6: the speed table), one trace of --formats-mb MB per format is
// written (the SMPI-shaped Pajé trace, Paraver, OTF2 through libotf2's writer, Chrome trace-event
// JSON and native; the same 64 ranks computing, sending to a neighbour and waiting), and each is
// read by Kanoko into the timeline and by a baseline program on the same file in the same run:
// pj_dump for Pajé, otf2-print for OTF2, and `wc -l` (the lines counted, the floor of any reader
// of a text file) for the formats that have no reference reader in Debian.
//
// Every measurement is also printed as one machine-readable line (scripts/speed-table.py reads
// them): `BENCH bench=readers case=CASE tool=TOOL mb=.. wall_s=.. cpu_s=.. peak_mib=..`.
//
// Targets (issue 3): Pajé ≥ 20× pj_dump's throughput, native ≥ 300 MB/s, peak memory independent
// of the trace's length.
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <otf2/otf2.h>

#include "src/base/error.hpp"
#include "src/trace/line_batches.hpp"
#include "src/trace/readers.hpp"
#include "src/trace/timeline.hpp"
#include "tests/trace/otf2_writing.hpp"  // libotf2's writer, as the tests use it

namespace {

namespace fs = std::filesystem;
using kanoko::trace::ReaderOptions;
using kanoko::trace::TimelineBuilder;
using kanoko::trace::TimelineOptions;

struct Options {
  double paje_mb = 1024;
  double native_mb = 1024;
  double short_fraction = 0.25;
  int ranks = 64;
  bool pj_dump = true;
  bool keep = false;
  bool compressed = false;  ///< --compressed: the Pajé trace plain, gzip and zstd
  bool locations = false;   ///< --locations: the Pajé trace with call locations, and stripped of them
  bool smpi = false;        ///< --smpi: a real SimGrid SMPI trace (generated, or --smpi-trace)
  int smpi_iters = 200;     ///< --smpi-iters: iterations of the generated halo run
  fs::path smpi_trace;      ///< --smpi-trace: the SMPI trace to read instead of generating one
  bool formats = false;     ///< --formats: one trace per format, each against its baseline program
  double formats_mb = 200;  ///< --formats-mb: length of each of those traces
  int threads = 0;  ///< reader threads (ReaderOptions::threads): 0 one per core
  int repeat = 3;   ///< Kanoko runs per measurement (the median is reported)
  fs::path dir = fs::temp_directory_path();
  fs::path read;  ///< --read: only read this file (for a profiler), 1000 bins over 10 s
};

[[noreturn]] void usage(int code) {
  std::fputs(
      "usage: kanoko_bench_readers [options]\n"
      "Generates a SimGrid-SMPI-shaped Pajé trace and a native trace, then measures Kanoko's readers\n"
      "(reading and binning, as kanoko simulate does) and pj_dump (dump and -q) on the same Pajé file.\n"
      "  --paje-mb N         length of the Pajé trace in MB (default 1024)\n"
      "  --native-mb N       length of the native trace in MB (default 1024)\n"
      "  --short-fraction F  length of the short copies for the memory comparison (default 0.25)\n"
      "  --ranks N           MPI ranks / native nodes (default 64)\n"
      "  --dir DIR           where the temporary folder goes (default: the system temp folder)\n"
      "  --keep              keep the generated traces\n"
      "  --no-pj-dump        do not run pj_dump\n"
      "  --compressed        only the Pajé trace, read plain and as gzip and zstd copies (ratios to plain)\n"
      "  --locations         only the Pajé trace with SMPI call locations (Fname, Lnumber) and the same trace\n"
      "                      with those fields stripped, read alternately (ratio of times)\n"
      "  --smpi              only a real SimGrid SMPI trace: traces/smpi/generate.sh runs the 3-D halo program\n"
      "                      on 64 ranks (torus, computing states, resource variables; needs smpicc and smpirun,\n"
      "                      Debian libsimgrid-dev), then Kanoko and pj_dump read it (ratios from the same run)\n"
      "  --smpi-iters N      iterations of that run (default 200: about 24 MB)\n"
      "  --smpi-trace FILE   with --smpi: read this SMPI Pajé trace instead of generating one\n"
      "  --formats           one trace per format (Pajé, Paraver, OTF2, Chrome JSON, native), --formats-mb long,\n"
      "                      each read by Kanoko and by its baseline: pj_dump, otf2-print, else wc -l\n"
      "  --formats-mb N      length of each of those traces in MB (default 200)\n"
      "  --repeat N          Kanoko runs per measurement, the median reported (default 3)\n"
      "  --threads N         reader threads in all (0: one per core, the default; 1: the calling thread only)\n"
      "  --read FILE         only read FILE into a timeline in this process (to run under a profiler)\n",
      code == 0 ? stdout : stderr);
  std::exit(code);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "kanoko_bench_readers: %s needs a value\n", a.c_str());
        usage(2);
      }
      return argv[++i];
    };
    const auto number = [&](double lo, double hi) {
      const std::string v = value();
      double x = 0;
      const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
      if (r.ec != std::errc() || r.ptr != v.data() + v.size() || !(x >= lo && x <= hi)) {
        std::fprintf(stderr, "kanoko_bench_readers: %s wants a number from %g to %g, found '%s'\n", a.c_str(), lo, hi,
                     v.c_str());
        usage(2);
      }
      return x;
    };
    if (a == "--help" || a == "-h") usage(0);
    if (a == "--paje-mb") {
      o.paje_mb = number(1, 1e6);
    } else if (a == "--native-mb") {
      o.native_mb = number(1, 1e6);
    } else if (a == "--short-fraction") {
      o.short_fraction = number(0.01, 1);
    } else if (a == "--ranks") {
      o.ranks = static_cast<int>(number(2, 1e6));
    } else if (a == "--dir") {
      o.dir = value();
    } else if (a == "--keep") {
      o.keep = true;
    } else if (a == "--read") {
      o.read = value();
    } else if (a == "--threads") {
      o.threads = static_cast<int>(number(0, 64));
    } else if (a == "--repeat") {
      o.repeat = static_cast<int>(number(1, 100));
    } else if (a == "--no-pj-dump") {
      o.pj_dump = false;
    } else if (a == "--compressed") {
      o.compressed = true;
    } else if (a == "--locations") {
      o.locations = true;
    } else if (a == "--smpi") {
      o.smpi = true;
    } else if (a == "--smpi-iters") {
      o.smpi_iters = static_cast<int>(number(1, 100000));
    } else if (a == "--smpi-trace") {
      o.smpi_trace = value();
    } else if (a == "--formats") {
      o.formats = true;
    } else if (a == "--formats-mb") {
      o.formats_mb = number(0.1, 1e6);
    } else {
      std::fprintf(stderr, "kanoko_bench_readers: unknown option '%s'\n", a.c_str());
      usage(2);
    }
  }
  return o;
}

// ---- generators ----

/// Buffered output with hand-formatted numbers (the generators write gigabytes).
class Out {
 public:
  explicit Out(const fs::path& p) : f_(std::fopen(p.c_str(), "wb")) {
    if (f_ == nullptr) throw std::runtime_error("cannot write " + p.string());
    buf_.reserve(kFlush + 4096);
  }
  Out(const Out&) = delete;
  Out& operator=(const Out&) = delete;
  ~Out() {
    flush();
    std::fclose(f_);
  }
  Out& operator<<(std::string_view s) {
    buf_.append(s);
    if (buf_.size() >= kFlush) flush();
    return *this;
  }
  Out& operator<<(char c) {
    buf_.push_back(c);
    return *this;
  }
  Out& operator<<(std::uint64_t v) {
    char tmp[24];
    const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    buf_.append(tmp, r.ptr);
    return *this;
  }
  /// Microseconds as seconds with six decimals, as SimGrid writes time ("12.000345").
  Out& micros(std::uint64_t us) {
    *this << us / 1000000;
    char frac[8];
    std::snprintf(frac, sizeof frac, ".%06u", static_cast<unsigned>(us % 1000000));
    buf_.append(frac);
    return *this;
  }
  [[nodiscard]] std::uint64_t written() const { return written_ + buf_.size(); }

 private:
  static constexpr std::size_t kFlush = 1 << 20;
  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) {
      throw std::runtime_error("write failed (disk full?)");
    }
    written_ += buf_.size();
    buf_.clear();
  }
  std::FILE* f_;
  std::string buf_;
  std::uint64_t written_ = 0;
};

/// Calls write_round(round, t0 in µs, partner shift) for rounds of 100 µs until `o` holds
/// `bytes`; returns the number of rounds. In round k rank r sends to r + shift (mod n), the shift
/// cycling through 1…4 (a stencil), so that a bin of a long and of a short trace has the same
/// active pairs.
template <typename F>
std::uint64_t rounds(Out& o, std::uint64_t bytes, std::uint64_t n, F write_round) {
  std::uint64_t round = 0;
  for (; o.written() < bytes; ++round) write_round(round, round * 100, 1 + round % std::min<std::uint64_t>(4, n - 1));
  return round;
}

/// A Pajé trace like SimGrid 3.32's SMPI output with computing states and display-sizes.
/// Returns the trace's duration in seconds.
double write_paje_as(const fs::path& p, std::uint64_t bytes, int ranks, bool locations) {
  Out o(p);
  o << "#This file was generated by kanoko_bench_readers, shaped like SimGrid-3.32.0 SMPI output\n";
  const char* defs[][2] = {
      {"PajeDefineContainerType 0", "Alias string|Type string|Name string"},
      {"PajeDefineVariableType 1", "Alias string|Type string|Name string|Color color"},
      {"PajeDefineStateType 2", "Alias string|Type string|Name string"},
      {"PajeDefineLinkType 4", "Alias string|Type string|StartContainerType string|EndContainerType string|Name string"},
      {"PajeDefineEntityValue 5", "Alias string|Type string|Name string|Color color"},
      {"PajeCreateContainer 6", "Time date|Alias string|Type string|Container string|Name string"},
      {"PajeDestroyContainer 7", "Time date|Type string|Name string"},
      {"PajeSetVariable 8", "Time date|Type string|Container string|Value double"},
      {"PajePushState 12", locations ? "Time date|Type string|Container string|Value string|Size int|Fname string|Lnumber int"
                                     : "Time date|Type string|Container string|Value string|Size int"},
      {"PajePopState 13", "Time date|Type string|Container string"},
      {"PajeStartLink 15", "Time date|Type string|Container string|Value string|StartContainer string|Key string|Size int"},
      {"PajeEndLink 16", "Time date|Type string|Container string|Value string|EndContainer string|Key string"},
  };
  for (const auto& d : defs) {
    o << "%EventDef " << d[0] << "\n";
    std::string_view fields = d[1];
    while (!fields.empty()) {
      const std::size_t bar = fields.find('|');
      std::string_view f = fields.substr(0, bar);
      const std::size_t sp = f.find(' ');
      o << "%       " << f.substr(0, sp) << ' ' << f.substr(sp + 1) << '\n';
      fields = bar == std::string_view::npos ? std::string_view() : fields.substr(bar + 1);
    }
    o << "%EndEventDef\n";
  }
  o << "0 1 0 MPI\n2 2 1 MPI_STATE\n4 3 0 1 1 MPI_LINK\n0 6 0 HOST\n1 7 6 speed_used \"1 1 1\"\n";
  o << "5 15 2 PMPI_Init \"0 1 0\"\n5 16 2 computing \"0 1 1\"\n5 17 2 PMPI_Send \"0 0 1\"\n5 18 2 PMPI_Recv \"1 0 0\"\n";
  const int hosts = (ranks + 7) / 8;
  const std::uint64_t host_alias0 = 100;
  const std::uint64_t rank_alias0 = host_alias0 + static_cast<std::uint64_t>(hosts);
  for (int h = 0; h < hosts; ++h) o << "6 0.000000 " << host_alias0 + static_cast<std::uint64_t>(h) << " 6 0 \"host-" << static_cast<std::uint64_t>(h) << "\"\n";
  for (int r = 0; r < ranks; ++r) o << "6 0.000000 " << rank_alias0 + static_cast<std::uint64_t>(r) << " 1 0 \"rank-" << static_cast<std::uint64_t>(r) << "\"\n";
  // Every rank computes, sends and receives; every 8th round the hosts' speed_used is set.
  const auto n = static_cast<std::uint64_t>(ranks);
  const std::uint64_t count = rounds(o, bytes, n, [&](std::uint64_t round, std::uint64_t t0, std::uint64_t shift) {
    for (std::uint64_t r = 0; r < n; ++r) {
      o << "12 ";
      o.micros(t0) << " 2 " << rank_alias0 + r << " 16 " << 10000 + (r * 37 + round * 11) % 5000 << ".000000";
      if (locations) o << " \"solver.c\" " << 100 + r % 16;
      o << '\n';
    }
    for (std::uint64_t r = 0; r < n; ++r) {
      const std::uint64_t dst = (r + shift) % n;
      const std::uint64_t size = 64 + (r * 131 + round * 17) % 65536;
      o << "13 ";
      o.micros(t0 + 40) << " 2 " << rank_alias0 + r << "\n12 ";
      o.micros(t0 + 40) << " 2 " << rank_alias0 + r << " 17 " << size;
      if (locations) o << " \"exchange.c\" " << 200 + shift;
      o << "\n15 ";
      o.micros(t0 + 40) << " 3 0 PTP " << rank_alias0 + r << ' ' << r << '_' << dst << "_7_" << round << ' ' << size << '\n';
    }
    for (std::uint64_t r = 0; r < n; ++r) {
      o << "13 ";
      o.micros(t0 + 41) << " 2 " << rank_alias0 + r << '\n';
    }
    for (std::uint64_t d = 0; d < n; ++d) {
      o << "12 ";
      o.micros(t0 + 50) << " 2 " << rank_alias0 + d << " 18 NA";
      if (locations) o << " \"exchange.c\" " << 300 + shift;
      o << '\n';
    }
    for (std::uint64_t d = 0; d < n; ++d) {
      const std::uint64_t src = (d + n - shift) % n;
      o << "16 ";
      o.micros(t0 + 60) << " 3 0 PTP " << rank_alias0 + d << ' ' << src << '_' << d << "_7_" << round << "\n13 ";
      o.micros(t0 + 60) << " 2 " << rank_alias0 + d << '\n';
    }
    if (round % 8 == 0) {
      for (int h = 0; h < hosts; ++h) {
        o << "8 ";
        o.micros(t0 + 60) << " 7 " << host_alias0 + static_cast<std::uint64_t>(h) << " 0." << (round * 7 + static_cast<std::uint64_t>(h)) % 1000000 << '\n';
      }
    }
  });
  return static_cast<double>(count * 100) * 1e-6;
}

double write_paje(const fs::path& p, std::uint64_t bytes, int ranks) { return write_paje_as(p, bytes, ranks, false); }

/// The same trace with SimGrid's call locations (smpi/trace-call-location): every PajePushState
/// ends with the file and line of its call, 16 + 4 + 4 distinct call sites.
double write_paje_located(const fs::path& p, std::uint64_t bytes, int ranks) { return write_paje_as(p, bytes, ranks, true); }

/// `located` with its Fname and Lnumber fields removed (the definition lines and the last two
/// fields of each PajePushState): the same events, without locations.
void strip_locations(const fs::path& located, const fs::path& out) {
  std::ifstream in(located);
  std::ofstream o(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line == "%       Fname string" || line == "%       Lnumber int") continue;
    if (line.rfind("12 ", 0) == 0) line.erase(line.rfind(" \"", line.size()));  // the quoted file and the line after it
    o << line << '\n';
  }
  if (!o) throw std::runtime_error("cannot write " + out.string());
}

/// A native trace: messages to four partners in turn with receive times and tags, compute
/// states, load samples. Returns its duration in seconds.
double write_native(const fs::path& p, std::uint64_t bytes, int nodes) {
  Out o(p);
  o << "kntr 1\n";
  const auto n = static_cast<std::uint64_t>(nodes);
  for (std::uint64_t i = 0; i < n; ++i) o << "node 0 " << i << " name=rank-" << i << " host=node" << i / 16 << '\n';
  const std::uint64_t count = rounds(o, bytes, n, [&](std::uint64_t round, std::uint64_t t0, std::uint64_t shift) {
    for (std::uint64_t r = 0; r < n; ++r) {
      o << "state ";
      o.micros(t0) << ' ' << r << " 0.000040 compute\n";
    }
    for (std::uint64_t r = 0; r < n; ++r) {
      o << "msg ";
      o.micros(t0 + 40) << ' ' << r << ' ' << (r + shift) % n << ' ' << 64 + (r * 131 + round * 17) % 65536 << " tag=7 recv=";
      o.micros(t0 + 60) << '\n';
    }
    if (round % 8 == 0) {
      for (std::uint64_t r = 0; r < n; ++r) {
        o << "load ";
        o.micros(t0 + 60) << ' ' << r << " 0." << (round * 7 + r) % 1000 << '\n';
      }
    }
  });
  o << "end ";
  o.micros(count * 100) << '\n';
  return static_cast<double>(count * 100) * 1e-6;
}


/// Writes `count` rounds with write_round(round, t0 in µs, partner shift), as rounds() does, for
/// formats whose header gives the end time: `count` comes from rounds_for().
template <typename F>
void rounds_exactly(std::uint64_t count, std::uint64_t n, F write_round) {
  for (std::uint64_t round = 0; round < count; ++round) {
    write_round(round, round * 100, 1 + round % std::min<std::uint64_t>(4, n - 1));
  }
}

/// The number of rounds that make about `bytes`, from the length of the first 16 written to
/// /dev/null by `write_some(out, rounds)`.
template <typename F>
std::uint64_t rounds_for(std::uint64_t bytes, F write_some) {
  constexpr std::uint64_t kSample = 16;
  Out sample("/dev/null");
  write_some(sample, kSample);
  return std::max<std::uint64_t>(1, bytes * kSample / std::max<std::uint64_t>(1, sample.written()));
}

/// A Paraver trace (.prv with its .pcf and .row): every task runs, sends to a neighbour (a
/// communication record with logical and physical times) and waits a message. Returns its
/// duration in seconds.
double write_paraver(const fs::path& p, std::uint64_t bytes, int tasks) {
  const auto n = static_cast<std::uint64_t>(tasks);
  const auto body = [n](Out& o, std::uint64_t count) {
    rounds_exactly(count, n, [&](std::uint64_t round, std::uint64_t t0, std::uint64_t shift) {
      // In time order, as Paraver's tools write records: the running states, the sends, the waits.
      for (std::uint64_t r = 1; r <= n; ++r) o << "1:" << r << ":1:" << r << ":1:" << t0 << ':' << t0 + 40 << ":1\n";
      for (std::uint64_t r = 1; r <= n; ++r) {
        const std::uint64_t d = (r - 1 + shift) % n + 1;
        o << "3:" << r << ":1:" << r << ":1:" << t0 + 40 << ':' << t0 + 40 << ':' << d << ":1:" << d << ":1:" << t0 + 50
          << ':' << t0 + 60 << ':' << 64 + (r * 131 + round * 17) % 65536 << ":7\n";
      }
      for (std::uint64_t r = 1; r <= n; ++r) o << "1:" << r << ":1:" << r << ":1:" << t0 + 40 << ':' << t0 + 60 << ":3\n";
    });
  };
  const std::uint64_t count = rounds_for(bytes, body);
  {
    Out o(p);
    o << "#Paraver (01/01/2026 at 00:00):" << count * 100 << "_us:1(" << n << "):1:" << n << '(';
    for (std::uint64_t r = 1; r <= n; ++r) o << (r > 1 ? "," : "") << "1:1";
    o << ")\n";
    body(o, count);
  }
  Out pcf(fs::path(p).replace_extension(".pcf"));
  pcf << "STATES\n0 Idle\n1 Running\n3 Waiting a message\n\n";
  Out row(fs::path(p).replace_extension(".row"));
  row << "LEVEL TASK SIZE " << n << '\n';
  for (std::uint64_t r = 0; r < n; ++r) row << "rank-" << r << '\n';
  return static_cast<double>(count * 100) * 1e-6;
}

/// A Chrome trace-event JSON file: per round every thread has an `X` slice "compute", then a flow
/// (`s` with args.bytes, `f` at the receiver) and an `X` slice "MPI_Wait". Returns its duration.
double write_chrome(const fs::path& p, std::uint64_t bytes, int threads) {
  Out o(p);
  const auto n = static_cast<std::uint64_t>(threads);
  o << "{\"traceEvents\":[\n";
  for (std::uint64_t r = 0; r < n; ++r) {
    o << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" << r << ",\"args\":{\"name\":\"rank-" << r << "\"}},\n";
  }
  const std::uint64_t count = rounds(o, bytes, n, [&](std::uint64_t round, std::uint64_t t0, std::uint64_t shift) {
    for (std::uint64_t r = 0; r < n; ++r) {
      const std::uint64_t d = (r + shift) % n;
      const std::uint64_t id = round * n + r;
      o << "{\"name\":\"compute\",\"ph\":\"X\",\"pid\":1,\"tid\":" << r << ",\"ts\":" << t0 << ",\"dur\":40},\n";
      o << "{\"name\":\"msg\",\"cat\":\"mpi\",\"ph\":\"s\",\"id\":" << id << ",\"pid\":1,\"tid\":" << r << ",\"ts\":" << t0 + 40
        << ",\"args\":{\"bytes\":" << 64 + (r * 131 + round * 17) % 65536 << "}},\n";
      o << "{\"name\":\"msg\",\"cat\":\"mpi\",\"ph\":\"f\",\"bp\":\"e\",\"id\":" << id << ",\"pid\":1,\"tid\":" << d
        << ",\"ts\":" << t0 + 60 << "},\n";
      o << "{\"name\":\"MPI_Wait\",\"ph\":\"X\",\"pid\":1,\"tid\":" << r << ",\"ts\":" << t0 + 40 << ",\"dur\":20},\n";
    }
  });
  o << "{\"name\":\"end\",\"ph\":\"i\",\"pid\":1,\"tid\":0,\"ts\":" << count * 100 << "}\n]}\n";
  return static_cast<double>(count * 100) * 1e-6;
}

/// The bytes of every file under `p` (an OTF2 archive), or of the file `p`.
std::uint64_t bytes_under(const fs::path& p) {
  if (!fs::is_directory(p)) return fs::file_size(p);
  std::uint64_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(p)) {
    if (e.is_regular_file()) total += e.file_size();
  }
  return total;
}

/// An OTF2 archive in folder `dir` (anchor dir/traces.otf2) written with libotf2: `ranks` MPI
/// ranks, per round Enter/Leave "compute", MpiSend to a neighbour, Enter "MPI_Wait", MpiRecv from
/// the other side, Leave. Timer: 1 µs ticks. `count` rounds.
void write_otf2_rounds(const fs::path& dir, std::uint64_t count, int ranks) {
  OTF2_Archive* a = kanoko::trace::testing::open_otf2_for_writing(dir);
  if (a == nullptr) throw std::runtime_error("libotf2 cannot create an archive in " + dir.string());
  const auto n = static_cast<std::uint64_t>(ranks);
  enum : OTF2_RegionRef { kCompute = 0, kWait = 1 };
  std::vector<OTF2_EvtWriter*> w(n);
  for (std::uint64_t r = 0; r < n; ++r) w[r] = OTF2_Archive_GetEvtWriter(a, r);
  rounds_exactly(count, n, [&](std::uint64_t round, std::uint64_t t0, std::uint64_t shift) {
    for (std::uint64_t r = 0; r < n; ++r) {
      const std::uint64_t size = 64 + (r * 131 + round * 17) % 65536;
      const std::uint64_t src = (r + n - shift) % n;
      const std::uint64_t src_size = 64 + (src * 131 + round * 17) % 65536;
      OTF2_EvtWriter_Enter(w[r], nullptr, t0, kCompute);
      OTF2_EvtWriter_Leave(w[r], nullptr, t0 + 40, kCompute);
      OTF2_EvtWriter_MpiSend(w[r], nullptr, t0 + 40, static_cast<std::uint32_t>((r + shift) % n), 0, 7, size);
      OTF2_EvtWriter_Enter(w[r], nullptr, t0 + 40, kWait);
      OTF2_EvtWriter_MpiRecv(w[r], nullptr, t0 + 60, static_cast<std::uint32_t>(src), 0, 7, src_size);
      OTF2_EvtWriter_Leave(w[r], nullptr, t0 + 60, kWait);
    }
  });
  const std::vector<std::uint64_t> events = kanoko::trace::testing::close_otf2_events(a, w);
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
  OTF2_GlobalDefWriter_WriteClockProperties(g, 1'000'000, 0, count * 100, OTF2_UNDEFINED_TIMESTAMP);
  // Strings: 0 "", 1 compute, 2 MPI_Wait, 3 node0, 4 node, 5 MPI_COMM_WORLD, 6 Master thread,
  // then one "MPI Rank r" per rank.
  const char* fixed[] = {"", "compute", "MPI_Wait", "node0", "node", "MPI_COMM_WORLD", "Master thread"};
  OTF2_StringRef next = 0;
  for (const char* f : fixed) OTF2_GlobalDefWriter_WriteString(g, next++, f);
  for (std::uint64_t r = 0; r < n; ++r) OTF2_GlobalDefWriter_WriteString(g, next++, ("MPI Rank " + std::to_string(r)).c_str());
  OTF2_GlobalDefWriter_WriteRegion(g, kCompute, 1, 1, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
                                   OTF2_REGION_FLAG_NONE, 0, 0, 0);
  OTF2_GlobalDefWriter_WriteRegion(g, kWait, 2, 2, 0, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI,
                                   OTF2_REGION_FLAG_NONE, 0, 0, 0);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 3, 4, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  std::vector<std::uint64_t> all(n);
  for (std::uint64_t r = 0; r < n; ++r) {
    all[r] = r;
    OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<OTF2_LocationGroupRef>(r), static_cast<OTF2_StringRef>(7 + r),
                                            OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
  }
  for (std::uint64_t r = 0; r < n; ++r) {
    OTF2_GlobalDefWriter_WriteLocation(g, r, 6, OTF2_LOCATION_TYPE_CPU_THREAD, events[r],
                                       static_cast<OTF2_LocationGroupRef>(r));
  }
  OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                  static_cast<std::uint32_t>(n), all.data());
  OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                  static_cast<std::uint32_t>(n), all.data());
  OTF2_GlobalDefWriter_WriteComm(g, 0, 5, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  OTF2_Archive_CloseGlobalDefWriter(a, g);
  if (OTF2_Archive_Close(a) != OTF2_SUCCESS) throw std::runtime_error("libotf2 failed to close " + dir.string());
}

/// An OTF2 archive of about `bytes` in folder `dir` (the rounds from a 256-round sample archive).
/// Returns the duration in seconds.
double write_otf2(const fs::path& dir, std::uint64_t bytes, int ranks) {
  constexpr std::uint64_t kSample = 256;
  const fs::path sample = dir.string() + ".sample";
  write_otf2_rounds(sample, kSample, ranks);
  const std::uint64_t per_round = std::max<std::uint64_t>(1, bytes_under(sample) / kSample);
  fs::remove_all(sample);
  const std::uint64_t count = std::max<std::uint64_t>(1, bytes / per_round);
  write_otf2_rounds(dir, count, ranks);
  return static_cast<double>(count * 100) * 1e-6;
}

// ---- measurements ----

struct Run {
  bool ok = false;
  double wall_s = 0;
  double cpu_s = 0;
  double peak_mib = 0;
  std::string detail;
};

double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + 1e-6 * static_cast<double>(tv.tv_usec); }

/// Waits for child `pid`, started at `start`: its wall and CPU time, peak memory and success.
Run wait_child(pid_t pid, std::chrono::steady_clock::time_point start) {
  int status = 0;
  rusage ru{};
  ::wait4(pid, &status, 0, &ru);
  Run r;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.cpu_s = seconds(ru.ru_utime) + seconds(ru.ru_stime);
  r.peak_mib = static_cast<double>(ru.ru_maxrss) / 1024.0;
  r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  r.detail = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status)) : "killed by a signal";
  return r;
}

/// Runs `child` in a forked process; its result line comes back through a pipe.
template <typename F>
Run in_child(F child) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    std::string line;
    int code = 0;
    try {
      line = child();
    } catch (const std::exception& e) {
      line = std::string("error: ") + e.what();
      code = 1;
    }
    const ssize_t w = ::write(fds[1], line.data(), line.size());
    (void)w;
    ::_exit(code);
  }
  ::close(fds[1]);
  std::string detail;
  char buf[4096];
  for (ssize_t got; (got = ::read(fds[0], buf, sizeof buf)) > 0;) detail.append(buf, static_cast<std::size_t>(got));
  ::close(fds[0]);
  Run r = wait_child(pid, start);
  if (!detail.empty()) r.detail = detail;
  return r;
}

/// Reads `path` into a timeline of 1000 bins, as kanoko simulate does (the reader into the
/// timeline builder); returns what it holds.
std::string read_and_bin(const fs::path& path, double duration_s, int threads) {
  TimelineOptions options;
  options.interval_s = duration_s / 1000;
  options.busy_states = {"computing", "compute"};
  TimelineBuilder builder(options);
  ReaderOptions reader;
  reader.threads = threads;
  const auto report = kanoko::trace::read_trace(path, builder, "auto", reader);
  const kanoko::trace::Timeline tl = builder.take();
  return report.format + ": " + std::to_string(tl.entity_count()) + " entities, " + std::to_string(tl.message_count) +
         " messages, " + std::to_string(tl.state_count) + " states, " + std::to_string(tl.bin_count) + " bins";
}

/// Kanoko reading `path` in a child process.
Run kanoko_read_once(const fs::path& path, double duration_s, int threads) {
  return in_child([&]() { return read_and_bin(path, duration_s, threads); });
}

int g_repeat = 3;  ///< --repeat

/// Kanoko reading `path` g_repeat times: the run with the median wall time (a few seconds are
/// exposed to the machine's noise more than pj_dump's minute).
Run kanoko_read(const fs::path& path, double duration_s, int threads) {
  std::vector<Run> runs;
  for (int i = 0; i < g_repeat; ++i) {
    runs.push_back(kanoko_read_once(path, duration_s, threads));
    if (!runs.back().ok) return runs.back();
  }
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.wall_s < b.wall_s; });
  return runs[runs.size() / 2];
}

/// `args` (a program found on PATH and its arguments) run in a child process, its output sent to
/// /dev/null: wall and CPU time, peak memory; `missing` is the detail when it is not installed.
Run run_program(const std::vector<std::string>& args, const std::string& missing) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  Run r = wait_child(pid, start);
  if (r.detail == "exit status 127") r.detail = missing;
  return r;
}

/// pj_dump on `path`: with `quiet`, -q (parse and simulate, no output); else its normal dump,
/// written to /dev/null.
Run pj_dump(const fs::path& path, bool quiet) {
  std::vector<std::string> args{"pj_dump"};
  if (quiet) args.emplace_back("-q");
  args.push_back(path.string());
  return run_program(args, "pj_dump not found (apt-get install pajeng)");
}

std::string load_average() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return "?";
  char buf[128] = {};
  const bool got = std::fgets(buf, sizeof buf, f) != nullptr;
  std::fclose(f);
  std::string s = got ? buf : "?";
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

void print_run(const char* what, const Run& r, double mb) {
  if (!r.ok) {
    std::printf("  %-30s FAILED: %s\n", what, r.detail.c_str());
    return;
  }
  std::printf("  %-30s %8.1f MB  %7.2f s wall %7.2f s CPU  %8.1f MB/s wall %8.1f MB/s CPU  peak %7.1f MiB\n", what, mb,
              r.wall_s, r.cpu_s, mb / r.wall_s, mb / r.cpu_s, r.peak_mib);
  if (!r.detail.empty() && r.detail.rfind("exit status", 0) != 0) std::printf("  %-30s %s\n", "", r.detail.c_str());
}

/// The machine-readable line of one measurement (scripts/speed-table.py collects them).
void print_bench_line(const char* case_name, const char* tool, const Run& r, double mb) {
  if (!r.ok) return;
  std::printf("BENCH bench=readers case=%s tool=%s mb=%.6g wall_s=%.6g cpu_s=%.6g peak_mib=%.6g\n", case_name, tool, mb,
              r.wall_s, r.cpu_s, r.peak_mib);
}

double mb_of(const fs::path& p) { return static_cast<double>(fs::file_size(p)) / 1e6; }

/// `tool` -c `in` > `out` (gzip, zstd -q): the compressed copy.
void compress_with(const char* tool, const fs::path& in, const fs::path& out) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ::dup2(fd, 1) < 0) ::_exit(126);
    ::execlp(tool, tool, "-q", "-c", in.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(std::string(tool) + " failed on " + in.string() + " (apt-get install gzip zstd)");
  }
}

/// --locations: the Pajé trace with call locations and the same stripped of them, read in turn
/// (so that the machine's load falls on both alike); the ratio of the median times.
void bench_locations(const fs::path& located, double paje_s, int threads) {
  const fs::path stripped = located.string() + ".stripped";
  strip_locations(located, stripped);
  std::printf("  stripped copy: %.1f MB\n\nPajé with and without call locations (same events):\n", mb_of(stripped));
  std::vector<Run> with, without;
  const int repeat = g_repeat;
  g_repeat = 1;
  for (int i = 0; i < repeat; ++i) {
    with.push_back(kanoko_read(located, paje_s, threads));
    without.push_back(kanoko_read(stripped, paje_s, threads));
    if (!with.back().ok || !without.back().ok) break;
  }
  g_repeat = repeat;
  const auto median = [](std::vector<Run> runs, double Run::*field) {
    std::sort(runs.begin(), runs.end(), [&](const Run& a, const Run& b) { return a.*field < b.*field; });
    return runs[runs.size() / 2];
  };
  const Run w = median(with, &Run::cpu_s);
  const Run wo = median(without, &Run::cpu_s);
  print_run("kanoko read+bin, locations", w, mb_of(located));
  print_run("kanoko read+bin, stripped", wo, mb_of(stripped));
  std::printf("\nsummary (load average at end: %s)\n", load_average().c_str());
  if (w.ok && wo.ok) {
    std::printf("  with locations / stripped, same events: CPU %.3f, wall %.3f (medians of %zu runs each)\n",
                w.cpu_s / wo.cpu_s, median(with, &Run::wall_s).wall_s / median(without, &Run::wall_s).wall_s, with.size());
  }
}

/// --compressed: the Pajé trace read plain, as gzip and as zstd, in this run.
void bench_compressed(const fs::path& paje, double paje_s, int threads) {
  const fs::path gz = paje.string() + ".gz";
  const fs::path zst = paje.string() + ".zst";
  compress_with("gzip", paje, gz);
  compress_with("zstd", paje, zst);
  std::printf("  compressed: gzip %.1f MB (%.1fx), zstd %.1f MB (%.1fx)\n", mb_of(gz), mb_of(paje) / mb_of(gz),
              mb_of(zst), mb_of(paje) / mb_of(zst));
  std::printf("\nPajé, plain and compressed (MB of text per second):\n");
  const double mb = mb_of(paje);
  const Run plain = kanoko_read(paje, paje_s, threads);
  print_run("kanoko read+bin, plain", plain, mb);
  std::fflush(stdout);
  const Run g = kanoko_read(gz, paje_s, threads);
  print_run("kanoko read+bin, gzip", g, mb);
  std::fflush(stdout);
  const Run z = kanoko_read(zst, paje_s, threads);
  print_run("kanoko read+bin, zstd", z, mb);
  std::printf("\nsummary (load average at end: %s)\n", load_average().c_str());
  if (plain.ok && g.ok && z.ok) {
    std::printf("  throughput against plain (wall): gzip %.2fx, zstd %.2fx; CPU per MB against plain: gzip %.2fx, zstd "
                "%.2fx\n",
                plain.wall_s / g.wall_s, plain.wall_s / z.wall_s, g.cpu_s / plain.cpu_s, z.cpu_s / plain.cpu_s);
    std::printf("  peak memory: plain %.1f MiB, gzip %.1f MiB, zstd %.1f MiB\n", plain.peak_mib, g.peak_mib, z.peak_mib);
  }
}

/// The time of the last body line of a Pajé trace (its second field: SimGrid's last lines destroy
/// the containers at the end of the run), or 0 when none is found in its last 64 KiB.
double paje_end_s(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  const auto size = static_cast<std::streamoff>(fs::file_size(path));
  const std::streamoff from = std::max<std::streamoff>(0, size - (std::streamoff{1} << 16));
  in.seekg(from);
  std::string tail(static_cast<std::size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  // Lines from the last one back.
  std::size_t end = tail.size();
  while (end > 0) {
    const std::size_t nl = tail.rfind('\n', end - 1);
    const std::size_t begin = nl == std::string::npos ? 0 : nl + 1;
    const std::string_view line(tail.data() + begin, end - begin);
    end = nl == std::string::npos ? 0 : nl;
    if (line.empty() || line[0] < '0' || line[0] > '9') continue;
    const std::size_t a = line.find_first_of(" \t");
    const std::size_t b = a == std::string_view::npos ? a : line.find_first_not_of(" \t", a);
    if (b == std::string_view::npos) continue;
    double t = 0;
    const auto r = std::from_chars(line.data() + b, line.data() + line.size(), t);
    if (r.ec == std::errc() && t > 0) return t;
  }
  return 0;
}

/// traces/smpi/generate.sh: the 3-D halo program on 64 ranks of the torus, `iters` iterations,
/// with computing states and resource tracing, into `out`.
void generate_smpi(const fs::path& out, int iters) {
  const std::string script = std::string(KANOKO_BENCH_SOURCE_DIR) + "/traces/smpi/generate.sh";
  const std::string iterations = std::to_string(iters);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::execlp("sh", "sh", script.c_str(), "-p", "halo3d", "-n", "64", "--platform", "torus", "--resources", "-o",
             out.c_str(), "--", "--iters", iterations.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(script + " failed (it needs smpicc and smpirun: apt-get install libsimgrid-dev)");
  }
}

/// --smpi: a real SimGrid SMPI trace read by Kanoko (with the threads asked for and on one
/// thread) and by pj_dump, in this run.
void bench_smpi(const fs::path& trace, int threads, bool with_pj_dump) {
  const double end_s = paje_end_s(trace);
  if (!(end_s > 0)) throw std::runtime_error("no time found at the end of " + trace.string());
  const double mb = mb_of(trace);
  const int all = kanoko::trace::reader_workers(threads) + 1;
  std::printf("\nSimGrid SMPI trace %s: %.1f MB, %g s simulated\n", trace.c_str(), mb, end_s);
  const Run k = kanoko_read(trace, end_s, threads);
  const std::string with = "kanoko read+bin, " + std::to_string(all) + " thread" + (all > 1 ? "s" : "");
  print_run(with.c_str(), k, mb);
  std::fflush(stdout);
  Run k1;
  if (all > 1) {
    k1 = kanoko_read(trace, end_s, 1);
    print_run("kanoko read+bin, 1 thread", k1, mb);
    std::fflush(stdout);
  }
  Run d;
  Run dq;
  if (with_pj_dump) {
    d = pj_dump(trace, false);
    print_run("pj_dump (dump to /dev/null)", d, mb);
    std::fflush(stdout);
    dq = pj_dump(trace, true);
    print_run("pj_dump -q (no dump)", dq, mb);
  }
  print_bench_line("paje-smpi", "kanoko", k, mb);
  print_bench_line("paje-smpi", "kanoko-1-thread", k1, mb);
  print_bench_line("paje-smpi", "pj_dump", d, mb);
  print_bench_line("paje-smpi", "pj_dump-q", dq, mb);
  std::printf("\nsummary (load average at end: %s)\n", load_average().c_str());
  if (k.ok && d.ok) {
    std::printf("  SMPI Pajé, %d thread%s: kanoko %.1f MB/s wall, pj_dump %.2f MB/s wall: %.1fx wall, %.1fx CPU; target >= 20x\n",
                all, all > 1 ? "s" : "", mb / k.wall_s, mb / d.wall_s, d.wall_s / k.wall_s, d.cpu_s / k.cpu_s);
  }
  if (k.ok && dq.ok) {
    std::printf("  SMPI Pajé: against pj_dump -q (%.2f MB/s wall): %.1fx wall, %.1fx CPU\n", mb / dq.wall_s,
                dq.wall_s / k.wall_s, dq.cpu_s / k.cpu_s);
  }
  if (k1.ok && d.ok) {
    std::printf("  SMPI Pajé, 1 thread: %.1f MB/s wall: %.1fx pj_dump wall, %.1fx CPU\n", mb / k1.wall_s, d.wall_s / k1.wall_s,
                d.cpu_s / k1.cpu_s);
  }
}

/// --formats: one trace per format, --formats-mb long, read by Kanoko and by its baseline program
/// (pj_dump, otf2-print, else `wc -l`) on the same file, in this run.
void bench_formats(const fs::path& dir, const Options& o) {
  struct Format {
    const char* name;  ///< the case in the BENCH lines
    const char* what;
    double (*write)(const fs::path&, std::uint64_t, int);
    fs::path written;  ///< what the writer is given (a folder for OTF2)
    fs::path read;     ///< what the readers are given
    std::vector<std::string> baseline;
    const char* baseline_tool;
    const char* missing;
  };
  const fs::path otf2 = dir / "otf2";
  std::vector<Format> formats = {
      {"paje-synthetic", "Pajé (SMPI shape)", write_paje, dir / "smpi.trace", dir / "smpi.trace",
       {"pj_dump", (dir / "smpi.trace").string()}, "pj_dump", "pj_dump not found (apt-get install pajeng)"},
      {"paraver", "Paraver", write_paraver, dir / "run.prv", dir / "run.prv", {"wc", "-l", (dir / "run.prv").string()},
       "wc-l", "wc not found"},
      {"otf2", "OTF2", write_otf2, otf2, otf2 / "traces.otf2", {"otf2-print", (otf2 / "traces.otf2").string()},
       "otf2-print", "otf2-print not found (apt-get install otf2-tools)"},
      {"chrome-json", "Chrome trace-event JSON", write_chrome, dir / "run.json", dir / "run.json",
       {"wc", "-l", (dir / "run.json").string()}, "wc-l", "wc not found"},
      {"native", "native", write_native, dir / "run.kntr", dir / "run.kntr", {"wc", "-l", (dir / "run.kntr").string()},
       "wc-l", "wc not found"},
  };
  for (const Format& f : formats) {
    const auto start = std::chrono::steady_clock::now();
    const double duration = f.write(f.written, static_cast<std::uint64_t>(o.formats_mb * 1e6), o.ranks);
    const double mb = static_cast<double>(bytes_under(f.written)) / 1e6;
    std::printf("\n%s (%d ranks): wrote %.1f MB in %.1f s (%g s of trace)\n", f.what, o.ranks, mb,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), duration);
    std::fflush(stdout);
    const Run k = kanoko_read(f.read, duration, o.threads);
    print_run("kanoko read+bin", k, mb);
    std::fflush(stdout);
    const Run b = run_program(f.baseline, f.missing);
    print_run(f.baseline_tool, b, mb);
    print_bench_line(f.name, "kanoko", k, mb);
    print_bench_line(f.name, f.baseline_tool, b, mb);
    std::fflush(stdout);
    if (!k.ok) throw std::runtime_error(std::string("Kanoko could not read the ") + f.what + " trace: " + k.detail);
    fs::remove_all(f.written);
  }
  std::printf("\nload average at end: %s\n", load_average().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  g_repeat = o.repeat;
  if (!o.read.empty()) {
    try {
      std::printf("%s\n", read_and_bin(o.read, 10, o.threads).c_str());
      return 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kanoko_bench_readers: %s\n", e.what());
      return 1;
    }
  }
  std::string templ = (o.dir / "kanoko-bench-readers-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) {
    std::fprintf(stderr, "kanoko_bench_readers: cannot create a folder in %s: %s\n", o.dir.c_str(), std::strerror(errno));
    return 1;
  }
  const fs::path dir = templ;
  std::printf("kanoko_bench_readers: traces in %s; load average at start: %s\n", dir.c_str(), load_average().c_str());
  try {
    const auto gen = [&](const char* what, auto write, const fs::path& p, double mb) {
      const auto start = std::chrono::steady_clock::now();
      const double duration = write(p, static_cast<std::uint64_t>(mb * 1e6), o.ranks);
      std::printf("  wrote %-24s %8.1f MB in %.1f s (%g s of trace)\n", what, mb_of(p),
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), duration);
      std::fflush(stdout);
      return duration;
    };
    const fs::path paje = dir / "smpi.trace";
    if (o.smpi) {
      fs::path real = o.smpi_trace;
      if (real.empty()) {
        real = dir / "halo3d-64.trace";
        const auto start = std::chrono::steady_clock::now();
        generate_smpi(real, o.smpi_iters);
        std::printf("  generated %s with SimGrid SMPI (halo3d, 64 ranks, %d iterations) in %.1f s\n", real.c_str(),
                    o.smpi_iters, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
      bench_smpi(real, o.threads, o.pj_dump);
      if (!o.keep) fs::remove_all(dir);
      return 0;
    }
    if (o.formats) {
      bench_formats(dir, o);
      if (!o.keep) fs::remove_all(dir);
      return 0;
    }
    if (o.compressed) {
      bench_compressed(paje, gen("Pajé", write_paje, paje, o.paje_mb), o.threads);
      if (!o.keep) fs::remove_all(dir);
      return 0;
    }
    if (o.locations) {
      bench_locations(paje, gen("Pajé with locations", write_paje_located, paje, o.paje_mb), o.threads);
      if (!o.keep) fs::remove_all(dir);
      return 0;
    }
    const fs::path paje_short = dir / "smpi-short.trace";
    const fs::path native = dir / "run.kntr";
    const fs::path native_short = dir / "run-short.kntr";
    const double paje_s = gen("Pajé", write_paje, paje, o.paje_mb);
    const double paje_short_s = gen("Pajé (short)", write_paje, paje_short, o.paje_mb * o.short_fraction);
    const double native_s = gen("native", write_native, native, o.native_mb);
    const double native_short_s = gen("native (short)", write_native, native_short, o.native_mb * o.short_fraction);

    std::printf("\nPajé (%d ranks, SimGrid SMPI shape):\n", o.ranks);
    const Run k = kanoko_read(paje, paje_s, o.threads);
    print_run("kanoko read+bin", k, mb_of(paje));
    std::fflush(stdout);
    const Run ks = kanoko_read(paje_short, paje_short_s, o.threads);
    print_run("kanoko read+bin (short)", ks, mb_of(paje_short));
    std::fflush(stdout);
    // The same on the calling thread only (no worker threads), as on a one-core machine.
    Run k1;
    if (o.threads != 1) {
      k1 = kanoko_read(paje, paje_s, 1);
      print_run("kanoko read+bin, 1 thread", k1, mb_of(paje));
      std::fflush(stdout);
    }
    Run d;
    Run dq;
    if (o.pj_dump) {
      d = pj_dump(paje, false);
      print_run("pj_dump (dump to /dev/null)", d, mb_of(paje));
      std::fflush(stdout);
      dq = pj_dump(paje, true);
      print_run("pj_dump -q (no dump)", dq, mb_of(paje));
    }
    std::printf("\nnative (%d nodes):\n", o.ranks);
    const Run n = kanoko_read(native, native_s, o.threads);
    print_run("kanoko read+bin", n, mb_of(native));
    const Run ns = kanoko_read(native_short, native_short_s, o.threads);
    print_run("kanoko read+bin (short)", ns, mb_of(native_short));
    Run n1;
    if (o.threads != 1) {
      n1 = kanoko_read(native, native_s, 1);
      print_run("kanoko read+bin, 1 thread", n1, mb_of(native));
    }

    std::printf("\nsummary (load average at end: %s)\n", load_average().c_str());
    if (k.ok && d.ok) {
      std::printf("  Pajé: kanoko %.1f MB/s wall, pj_dump %.2f MB/s wall: %.1fx wall, %.1fx CPU; target >= 20x\n",
                  mb_of(paje) / k.wall_s, mb_of(paje) / d.wall_s, d.wall_s / k.wall_s, d.cpu_s / k.cpu_s);
    }
    if (k.ok && dq.ok) {
      std::printf("  Pajé: against pj_dump -q (%.2f MB/s wall): %.1fx wall, %.1fx CPU\n", mb_of(paje) / dq.wall_s,
                  dq.wall_s / k.wall_s, dq.cpu_s / k.cpu_s);
    }
    if (k1.ok && d.ok && dq.ok) {
      std::printf("  Pajé, 1 thread: %.1f MB/s wall: %.1fx pj_dump, %.1fx pj_dump -q (wall)\n", mb_of(paje) / k1.wall_s,
                  d.wall_s / k1.wall_s, dq.wall_s / k1.wall_s);
    }
    if (n.ok) std::printf("  native: %.1f MB/s wall, %.1f MB/s CPU; target >= 300 MB/s\n", mb_of(native) / n.wall_s,
                          mb_of(native) / n.cpu_s);
    if (n1.ok) std::printf("  native, 1 thread: %.1f MB/s wall\n", mb_of(native) / n1.wall_s);
    if (k.ok && ks.ok) {
      std::printf("  peak memory, Pajé: %.1f MiB for %.0f MB, %.1f MiB for %.0f MB\n", k.peak_mib, mb_of(paje), ks.peak_mib,
                  mb_of(paje_short));
    }
    if (n.ok && ns.ok) {
      std::printf("  peak memory, native: %.1f MiB for %.0f MB, %.1f MiB for %.0f MB\n", n.peak_mib, mb_of(native),
                  ns.peak_mib, mb_of(native_short));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kanoko_bench_readers: %s\n", e.what());
    if (!o.keep) fs::remove_all(dir);
    return 1;
  }
  if (!o.keep) fs::remove_all(dir);
  return 0;
}
