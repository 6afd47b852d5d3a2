// Fuzz target run_trajectory (libFuzzer, and the replay test): any bytes as a trajectory file
// (format 3, or formats 2 and 1 read as legacy: seeds of each), opened and read through every
// frame. Opening or throwing kanoko::InputError are the only allowed outcomes.
//
// The first input byte is a control byte: bit 0 reseals the rest (recomputes every checksum of
// the file's format, as a forger would: tests/trajectory/reseal.hpp), so that the fuzzer also
// reaches the structural and value checks behind the hashes; bit 1 opens with Open::partial (an
// unfinished run is read up to its last whole block) and calls refresh().
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include <Eigen/Core>

#include "src/base/error.hpp"
#include "tests/fuzz/targets.hpp"
#include "src/trajectory/trajectory.hpp"
#include "tests/trajectory/reseal.hpp"

void kanoko::fuzz::run_trajectory(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  const std::uint8_t control = data[0];
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((control & 1U) != 0) kanoko::trajectory::testing::reseal(bytes);
  // An in-memory file (memfd) opened by path, so that no disk is involved and nothing is left.
  static const int fd = ::memfd_create("kanoko-fuzz-trajectory", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ::ftruncate(fd, 0) != 0 || ::pwrite(fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
    return;
  }
  using kanoko::trajectory::Open;
  try {
    kanoko::trajectory::Reader r(path, (control & 2U) == 0 ? Open::complete : Open::partial);
    if ((control & 2U) != 0) r.refresh();
    double sum = static_cast<double>(r.complete());
    for (std::size_t k = 0; k < r.frame_count(); ++k) {
      const auto frame = r.frame(k);
      sum += frame.time_s + frame.positions.sum() + frame.velocities.sum() + frame.stats.sum();
    }
    if (r.frame_count() > 0) {
      Eigen::Matrix3Xd p;
      Eigen::MatrixXd s;
      const double mid = 0.5 * (r.begin_time() + r.end_time());
      r.positions_at(mid, p);
      r.stats_at(mid, s);
      sum += p.sum() + s.sum() + static_cast<double>(r.frame_at_or_before(mid));
    }
    for (const auto& b : r.meta().bodies) sum += static_cast<double>(b.name.size() + b.host.size());
    sum += static_cast<double>(kanoko::trajectory::reuse_problem(path).size());
    g_sink = sum;
  } catch (const kanoko::InputError&) {
  }
}
