// Small runs written on the fly for the sound tests: bodies with chosen positions, velocities and
// a per-body statistic over time.
#pragma once

#include <Eigen/Core>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "src/mapping/mapping.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::test {

/// A run of `bodies` bodies with frames at t = 0, dt, ..., end; stats "load" and "mass";
/// load(body, t) and position(body, t) given by the callers.
struct RunSpec {
  std::size_t bodies = 1;
  double dt_s = 0.1;
  double end_s = 4.0;
  std::function<double(std::size_t, double)> load = [](std::size_t, double) { return 0.0; };
  std::function<Eigen::Vector3d(std::size_t, double)> position = [](std::size_t b, double) {
    return Eigen::Vector3d(static_cast<double>(b), 0, 0);
  };
  std::function<Eigen::Vector3d(std::size_t, double)> velocity = [](std::size_t, double) {
    return Eigen::Vector3d::Zero().eval();
  };
  std::string mapping_text;
};

inline void write_run(const std::filesystem::path& path, const RunSpec& spec) {
  trajectory::Metadata meta;
  for (std::size_t i = 0; i < spec.bodies; ++i) {
    trajectory::BodyInfo b;
    b.name = "b" + std::to_string(i);
    b.rank = static_cast<std::int64_t>(i);
    meta.bodies.push_back(b);
  }
  meta.stat_names = {trajectory::stat::kLoad, trajectory::stat::kMass};
  meta.dt_s = spec.dt_s;
  meta.interval_s = spec.dt_s;
  meta.trace_end_s = spec.end_s;
  meta.integrator = "rk4";
  meta.mapping_text = spec.mapping_text;
  trajectory::Writer w(path, meta);
  const auto n = static_cast<Eigen::Index>(spec.bodies);
  const auto frames = static_cast<int>(std::lround(spec.end_s / spec.dt_s));
  for (int k = 0; k <= frames; ++k) {
    const double t = k * spec.dt_s;
    Eigen::Matrix3Xd p(3, n), v(3, n);
    Eigen::MatrixXd s = Eigen::MatrixXd::Ones(2, n);
    for (Eigen::Index b = 0; b < n; ++b) {
      const auto i = static_cast<std::size_t>(b);
      p.col(b) = spec.position(i, t);
      v.col(b) = spec.velocity(i, t);
      s(0, b) = spec.load(i, t);
    }
    w.append_frame(t, p, v, s);
  }
  w.commit();
}

/// Frequency of a tone in interleaved stereo samples: upward zero crossings of L + R over the
/// middle three quarters.
inline double zero_crossing_hz(const std::vector<float>& interleaved, int rate_hz) {
  std::vector<float> mono(interleaved.size() / 2);
  for (std::size_t i = 0; i < mono.size(); ++i) mono[i] = interleaved[2 * i] + interleaved[2 * i + 1];
  const std::size_t from = mono.size() / 8, to = mono.size() * 7 / 8;
  std::size_t first = 0, last = 0, crossings = 0;
  for (std::size_t i = from + 1; i < to; ++i) {
    if (mono[i - 1] < 0 && mono[i] >= 0) {
      if (crossings == 0) first = i;
      last = i;
      ++crossings;
    }
  }
  if (crossings < 2) return 0;
  return static_cast<double>(crossings - 1) * rate_hz / static_cast<double>(last - first);
}

/// A valid mapping with the given [audio] text appended.
inline mapping::Mapping mapping_with_audio(const std::string& audio) {
  return mapping::parse_mapping_text("[forces.friction]\nbeta = 1\n" + audio, "m.toml");
}

}  // namespace kanoko::test
