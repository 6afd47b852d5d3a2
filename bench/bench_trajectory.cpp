// The current trajectory format (3) against format 1's work, in the same run (the trajectory robustness issue,
// point 6). Format 1 is no longer written, so its baseline is what its writer and reader did with
// the same frame bytes:
//   * write: each frame assembled from Eigen maps into a buffer, written through AtomicOutputFile
//     with one running FNV-1a 64 over it, then commit (flush, fsync, rename): format 1's Writer
//     minus its header and sections;
//   * open: map the file and FNV-1a 64 over every byte (format 1 checked the whole checksum on
//     open);
//   * read: open, then every frame's positions, velocities and statistics summed.
// The current format is the real Writer and Reader: write with per-block checksums, flushes and a synced
// completion record; open (header, sections, block index: no frame is read); read (every frame,
// so every block is checked on first use).
// Each measurement runs --repeat times; the fastest is reported, with the ratio current / format 1
// (time; > 1 is slower). Files live in a temporary folder (page cache), removed at the end.
//
//   build/bench/kanoko_bench_trajectory                    # 1000 bodies, 13 statistics, 400 frames
//   build/bench/kanoko_bench_trajectory --bodies 64 --frames 20000
//
// The last lines are machine-readable (scripts/speed-table.py reads them), one per measurement:
// `BENCH bench=trajectory case=CASE format=1|3 value=V unit=U` (3: trajectory::kVersionMajor), with the cases write, open and
// read (seconds), replay (body-frames read per second: every frame's positions, velocities and
// statistics) and bytes_per_body_frame (the file's bytes over bodies × frames).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "src/base/atomic_file.hpp"
#include "src/base/hash.hpp"
#include "src/trajectory/trajectory.hpp"

namespace {

namespace fs = std::filesystem;
using kanoko::trajectory::Metadata;

volatile double g_sink;

double fastest_s(int repeat, const std::function<void()>& run) {
  double best = 1e300;
  for (int i = 0; i < repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

/// The frame bytes of frame k: time, positions, velocities, statistics (as the Writer lays them out).
void fill_frame(std::vector<double>& frame, std::size_t k) {
  frame[0] = 0.01 * static_cast<double>(k);
  for (std::size_t i = 1; i < frame.size(); ++i) frame[i] = 0.1 + 1e-4 * static_cast<double>((i * 7 + k) % 1000);  // valid for every statistic
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t bodies = 1000, frames = 400;
  int repeat = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const auto v = std::strtoull(argv[i + 1], nullptr, 10);
    if (a == "--bodies") bodies = v;
    else if (a == "--frames") frames = v;
    else if (a == "--repeat") repeat = static_cast<int>(v);
    else {
      std::fprintf(stderr, "usage: %s [--bodies N] [--frames F] [--repeat R]\n", argv[0]);
      return 2;
    }
  }
  const fs::path dir = fs::temp_directory_path() / ("kanoko-bench-trajectory-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Metadata meta;
  meta.bodies.resize(bodies);
  meta.stat_names = {"load", "mass", "bytes_sent", "bytes_recv", "msgs_sent", "msgs_recv", "bytes_sent_total",
                     "bytes_recv_total", "msgs_sent_total", "msgs_recv_total", "busy", "communicating", "idle"};
  meta.dt_s = 0.01;
  const std::size_t stats = meta.stat_names.size();
  const auto n = static_cast<Eigen::Index>(bodies);
  std::vector<double> frame(1 + 6 * bodies + stats * bodies);
  const double mb = static_cast<double>(frame.size() * sizeof(double) * frames) / 1e6;

  const fs::path v2 = dir / "v2.kntj", v1 = dir / "v1.bin";
  const double write2 = fastest_s(repeat, [&] {
    kanoko::trajectory::Writer w(v2, meta);
    for (std::size_t k = 0; k < frames; ++k) {
      fill_frame(frame, k);
      const double* p = frame.data();
      w.append_frame(p[0], Eigen::Map<const Eigen::Matrix3Xd>(p + 1, 3, n),
                     Eigen::Map<const Eigen::Matrix3Xd>(p + 1 + 3 * n, 3, n),
                     Eigen::Map<const Eigen::MatrixXd>(p + 1 + 6 * n, static_cast<Eigen::Index>(stats), n));
    }
    w.commit();
  });
  const double write1 = fastest_s(repeat, [&] {
    kanoko::AtomicOutputFile out(v1);
    kanoko::Fnv1a64 checksum;
    std::vector<double> buf(frame.size());  // format 1's Writer assembled each frame like this too
    for (std::size_t k = 0; k < frames; ++k) {
      fill_frame(frame, k);
      const double* p = frame.data();
      buf[0] = p[0];
      Eigen::Map<Eigen::Matrix3Xd>(buf.data() + 1, 3, n) = Eigen::Map<const Eigen::Matrix3Xd>(p + 1, 3, n);
      Eigen::Map<Eigen::Matrix3Xd>(buf.data() + 1 + 3 * n, 3, n) = Eigen::Map<const Eigen::Matrix3Xd>(p + 1 + 3 * n, 3, n);
      Eigen::Map<Eigen::MatrixXd>(buf.data() + 1 + 6 * n, static_cast<Eigen::Index>(stats), n) =
          Eigen::Map<const Eigen::MatrixXd>(p + 1 + 6 * n, static_cast<Eigen::Index>(stats), n);
      out.write(buf.data(), buf.size() * sizeof(double));
      checksum.update(buf.data(), buf.size() * sizeof(double));
    }
    const std::uint64_t c = checksum.digest();
    out.write(&c, sizeof c);
    out.commit();
  });
  const double open2 = fastest_s(repeat, [&] {
    const kanoko::trajectory::Reader r(v2);
    g_sink = static_cast<double>(r.frame_count());
  });
  // Format 1's open: map, checksum every byte.
  auto open1_map = [&](const std::function<void(const double*)>& then) {
    const int fd = ::open(v1.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    ::fstat(fd, &st);
    const auto size = static_cast<std::size_t>(st.st_size);
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    kanoko::Fnv1a64 f;
    f.update(p, size - 8);
    g_sink = static_cast<double>(f.digest() & 1U);
    then(static_cast<const double*>(p));
    ::munmap(p, size);
    ::close(fd);
  };
  const double open1 = fastest_s(repeat, [&] { open1_map([](const double*) {}); });
  const double read2 = fastest_s(repeat, [&] {
    const kanoko::trajectory::Reader r(v2);
    double sum = 0;
    for (std::size_t k = 0; k < r.frame_count(); ++k) {
      const auto f = r.frame(k);
      sum += f.positions.sum() + f.velocities.sum() + f.stats.sum();
    }
    g_sink = sum;
  });
  const double read1 = fastest_s(repeat, [&] {
    open1_map([&](const double* base) {
      double sum = 0;
      for (std::size_t k = 0; k < frames; ++k) {
        const double* p = base + k * frame.size();
        sum += Eigen::Map<const Eigen::ArrayXd>(p + 1, static_cast<Eigen::Index>(frame.size() - 1)).sum();
      }
      g_sink = sum;
    });
  });
  std::printf("trajectory: %zu bodies, %zu statistics, %zu frames, %.1f MB of frames (fastest of %d)\n", bodies, stats,
              frames, mb, repeat);
  constexpr int kCurrent = kanoko::trajectory::kVersionMajor;
  const std::string current = "format " + std::to_string(kCurrent);
  std::printf("%-6s %12s %12s %14s\n", "", "format 1", current.c_str(), (std::to_string(kCurrent) + " / 1 (time)").c_str());
  const auto row = [&](const char* what, double t1, double t2, bool throughput) {
    if (throughput) {
      std::printf("%-6s %9.0f MB/s %9.0f MB/s %14.2f\n", what, mb / t1, mb / t2, t2 / t1);
    } else {
      std::printf("%-6s %10.3f ms %10.3f ms %14.4f\n", what, 1e3 * t1, 1e3 * t2, t2 / t1);
    }
  };
  row("write", write1, write2, true);
  row("open", open1, open2, false);
  row("read", read1, read2, true);
  const double body_frames = static_cast<double>(bodies) * static_cast<double>(frames);
  const auto line = [](const char* what, int format, double value, const char* unit) {
    std::printf("BENCH bench=trajectory case=%s format=%d value=%.6g unit=%s\n", what, format, value, unit);
  };
  for (int format : {1, kCurrent}) {
    const bool two = format == kCurrent;
    line("write", format, two ? write2 : write1, "s");
    line("open", format, two ? open2 : open1, "s");
    line("read", format, two ? read2 : read1, "s");
    line("replay", format, body_frames / (two ? read2 : read1), "body_frames_per_s");
    line("bytes_per_body_frame", format, static_cast<double>(fs::file_size(two ? v2 : v1)) / body_frames, "B");
  }
  fs::remove_all(dir);
  return 0;
}
