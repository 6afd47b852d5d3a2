// A tiny trajectory for the scene tests: three bodies in pure red, green and blue at known fixed
// places, one spring between red and green, eleven frames from t = 0 to 10 s, and traffic in each
// of its ten 1 s intervals (tiny_run_traffic below).
#pragma once

#include <Eigen/Core>
#include <array>
#include <filesystem>
#include <functional>
#include <string>

#include "src/trajectory/trajectory.hpp"

namespace kanoko::test {

/// Body positions of the tiny run (columns: red, green, blue).
inline Eigen::Matrix3Xd tiny_run_positions() {
  Eigen::Matrix3Xd p(3, 3);
  p.col(0) << -2.0, 0.0, 0.0;
  p.col(1) << 2.0, 0.5, 0.0;
  p.col(2) << 0.0, 1.5, 1.5;
  return p;
}

inline constexpr double kTinyRunEnd_s = 10.0;

/// Traffic of the tiny run in interval k (0..9): red → green 1000 (k + 1) bytes in one message,
/// green → red 10 bytes in one message, and from interval 5 on red → blue 5000 bytes in two.
inline void add_tiny_run_traffic(trajectory::Metadata& meta) {
  meta.traffic_begin = {0};
  for (std::uint32_t k = 0; k < 10; ++k) {
    meta.traffic.push_back({0, 1, 1000.0 * (k + 1), 1});
    meta.traffic.push_back({1, 0, 10.0, 1});
    if (k >= 5) meta.traffic.push_back({0, 2, 5000.0, 2});
    meta.traffic_begin.push_back(meta.traffic.size());
  }
}
inline constexpr float kTinyRunRadius = 0.6F;

/// Variations of the tiny run.
struct TinyRunOptions {
  /// The blue body's "mass" statistic is 1 at t = 0 and 8 from t = 5 s on (so its drawn radius
  /// doubles); otherwise all masses are 1.
  bool growing_blue_mass = false;
  std::string mapping_text;    ///< stored as the run's mapping ("": none)
  std::string source_mapping;  ///< the mapping's recorded path
  /// The "load" statistic of body i in frame k (0..10); unset: 1 everywhere.
  std::function<double(std::size_t body, int frame)> load;
};

/// Writes the tiny run to `path`.
inline void write_tiny_run(const std::filesystem::path& path, const TinyRunOptions& options) {
  trajectory::Metadata meta;
  const std::array<std::array<float, 3>, 3> colours{
      {{1.0F, 0.0F, 0.0F}, {0.0F, 1.0F, 0.0F}, {0.0F, 0.0F, 1.0F}}};
  const std::array<const char*, 3> names{"red", "green", "blue"};
  for (std::size_t i = 0; i < 3; ++i) {
    trajectory::BodyInfo b;
    b.name = names[i];
    b.host = "node" + std::to_string(i);
    b.rank = static_cast<std::int64_t>(i);
    b.colour_rgb = colours[i];
    b.radius = kTinyRunRadius;
    meta.bodies.push_back(b);
  }
  meta.edges = {{0U, 1U}};
  meta.stat_names = {trajectory::stat::kLoad, trajectory::stat::kMass};
  meta.dt_s = 0.1;
  meta.steps_per_frame = 10;
  meta.interval_s = 1.0;
  meta.trace_begin_s = 0.0;
  meta.trace_end_s = kTinyRunEnd_s;
  meta.integrator = "rk4";
  meta.mapping_text = options.mapping_text;
  meta.source_mapping = options.source_mapping;
  add_tiny_run_traffic(meta);
  trajectory::Writer writer(path, meta);
  const Eigen::Matrix3Xd positions = tiny_run_positions();
  const Eigen::Matrix3Xd velocities = Eigen::Matrix3Xd::Zero(3, 3);
  for (int k = 0; k <= 10; ++k) {
    const double t = kTinyRunEnd_s * k / 10.0;
    Eigen::MatrixXd stats = Eigen::MatrixXd::Ones(2, 3);
    if (options.growing_blue_mass && t >= 5.0) stats(1, 2) = 8.0;
    for (std::size_t i = 0; options.load && i < 3; ++i) stats(0, static_cast<Eigen::Index>(i)) = options.load(i, k);
    writer.append_frame(t, positions, velocities, stats);
  }
  writer.commit();
}

/// Writes the tiny run to `path`; with `growing_blue_mass` as in TinyRunOptions.
inline void write_tiny_run(const std::filesystem::path& path, bool growing_blue_mass = false) {
  TinyRunOptions options;
  options.growing_blue_mass = growing_blue_mass;
  write_tiny_run(path, options);
}

}  // namespace kanoko::test
