#include "src/sim/simulate.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <vector>

#include "integrators/integrator.hpp"
#include "models/model.hpp"
#include "src/base/error.hpp"
#include "src/base/hash.hpp"
#include "src/base/interrupt.hpp"
#include "src/base/progress.hpp"
#include "src/base/suggest.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::sim {
namespace {

/// Positions beyond this many initial radii count as a blow-up even if still finite.
constexpr double kBlowUpRadii = 1e6;

std::string format_g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/// Body colours: a colour-blind-safe qualitative palette (Okabe–Ito), cycled.
std::array<float, 3> palette_colour(std::size_t i) {
  static constexpr std::array<std::array<float, 3>, 8> kOkabeIto = {{
      {0.902F, 0.624F, 0.000F},  // orange
      {0.337F, 0.706F, 0.914F},  // sky blue
      {0.000F, 0.620F, 0.451F},  // bluish green
      {0.941F, 0.894F, 0.259F},  // yellow
      {0.000F, 0.447F, 0.698F},  // blue
      {0.835F, 0.369F, 0.000F},  // vermillion
      {0.800F, 0.475F, 0.655F},  // reddish purple
      {0.850F, 0.850F, 0.850F},  // light grey
  }};
  return kOkabeIto[i % kOkabeIto.size()];
}

}  // namespace

std::uint64_t input_hash(const std::filesystem::path& trace, const mapping::Mapping& m) {
  Fnv1a64 h;
  h.update("kanoko-input-v1");
  h.update_value(trajectory::kVersionMajor);
  std::ifstream in(trace, std::ios::binary);
  if (!in) throw InputError(FileLoc{trace.string()}, "cannot open trace");
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h.update(buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  h.update(m.text);
  h.update(m.simulation.integrator);
  return h.digest();
}

trace::Timeline read_timeline(const std::filesystem::path& trace, const mapping::Mapping& m) {
  trace::TimelineOptions options;
  options.interval_s = m.simulation.interval_s;
  options.busy_states = m.mass.busy_states;
  trace::TimelineBuilder builder(options);
  trace::read_native_trace(trace, builder);
  return builder.take();
}

SimulateSummary simulate(const SimulateOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  const mapping::Mapping m = mapping::parse_mapping_file(options.mapping);
  const integrators::IntegratorInfo* integrator = integrators::find_integrator(m.simulation.integrator);
  if (integrator == nullptr) {
    throw InputError(m.where("simulation.integrator"),
                     "unknown integrator '" + m.simulation.integrator + "'" +
                         did_you_mean(m.simulation.integrator, integrators::integrator_names()) +
                         " (see 'kanoko simulate --help')");
  }
  SimulateSummary summary;
  summary.input_hash = input_hash(options.trace, m);
  std::uint64_t existing = 0;
  if (!options.force && trajectory::read_input_hash(options.output, existing) && existing == summary.input_hash) {
    summary.reused = true;
    return summary;
  }

  const trace::Timeline timeline = read_timeline(options.trace, m);
  models::Model model(m, timeline);
  const std::size_t n = model.body_count();

  // A step never straddles an interval boundary: the step is reduced until it divides the
  // interval exactly, so the forcing and masses are constant within every step.
  const double interval = m.simulation.interval_s;
  const auto steps_per_interval = static_cast<std::uint64_t>(std::ceil(interval / m.simulation.dt_s - 1e-9));
  const double dt = interval / static_cast<double>(steps_per_interval);
  const std::uint64_t forced_steps = timeline.bin_count * steps_per_interval;
  const auto settle_steps = static_cast<std::uint64_t>(std::ceil(m.simulation.settle_s / dt - 1e-9));
  const std::uint64_t total_steps = forced_steps + settle_steps;
  const std::uint32_t frame_every = m.simulation.frame_every;

  trajectory::Metadata meta;
  meta.bodies.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const trace::Entity& e = timeline.entities[i];
    meta.bodies[i].name = e.name;
    meta.bodies[i].host = e.host;
    meta.bodies[i].rank = e.rank;
    meta.bodies[i].colour_rgb = palette_colour(i);
    meta.bodies[i].radius = static_cast<float>(m.bodies.radius);
  }
  meta.edges = model.spring_edges();
  meta.stat_names = models::Model::stat_names();
  meta.dt_s = dt;
  meta.steps_per_frame = frame_every;
  meta.interval_s = interval;
  meta.trace_begin_s = timeline.begin_s;
  meta.trace_end_s = timeline.end_s;
  meta.input_hash = summary.input_hash;
  meta.integrator = integrator->name;
  meta.source_trace = options.trace.string();
  meta.source_mapping = options.mapping.string();
  meta.mapping_text = m.text;

  trajectory::Writer writer(options.output, meta);
  Eigen::VectorXd y = model.initial_state();
  auto stepper = integrator->create(
      [&model](double t, const Eigen::VectorXd& state, Eigen::VectorXd& dydt) { model.derivative(t, state, dydt); },
      y.size());
  const auto cols = static_cast<Eigen::Index>(n);
  Eigen::MatrixXd stats;
  auto write_frame = [&](std::uint64_t step) {
    model.current_stats(stats);
    summary.max_speed = std::max(summary.max_speed,
                                 Eigen::Map<const Eigen::Matrix3Xd>(y.data() + 3 * cols, 3, cols).colwise().norm().maxCoeff());
    writer.append_frame(static_cast<double>(step) * dt, Eigen::Map<const Eigen::Matrix3Xd>(y.data(), 3, cols),
                        Eigen::Map<const Eigen::Matrix3Xd>(y.data() + 3 * cols, 3, cols), stats);
  };
  write_frame(0);

  const double start_radius = std::max(1e-300, (model.initial_positions().colwise() -
                                                model.initial_positions().rowwise().mean())
                                                   .colwise()
                                                   .norm()
                                                   .maxCoeff());
  ProgressBar bar("simulate", total_steps, "steps", options.progress);
  for (std::uint64_t step = 0; step < total_steps; ++step) {
    const std::size_t bin = static_cast<std::size_t>(step / steps_per_interval);
    if (bin != model.current_interval()) model.set_interval(bin);
    stepper->step(static_cast<double>(step) * dt, dt, y);
    const Eigen::Map<const Eigen::Matrix3Xd> x(y.data(), 3, cols);
    if (!y.allFinite() || x.array().abs().maxCoeff() > kBlowUpRadii * start_radius) {
      Eigen::Index body = 0;
      for (Eigen::Index i = 0; i < cols; ++i) {
        if (!x.col(i).allFinite() || !y.segment(3 * cols + 3 * i, 3).allFinite() ||
            x.col(i).cwiseAbs().maxCoeff() > kBlowUpRadii * start_radius) {
          body = i;
          break;
        }
      }
      throw RunError("numerical blow-up at step " + std::to_string(step + 1) + " (t = " +
                     format_g(static_cast<double>(step + 1) * dt) + " s): body " + std::to_string(body) + " '" +
                     meta.bodies[static_cast<std::size_t>(body)].name + "' " +
                     (x.col(body).allFinite() ? "flew off" : "has a non-finite position") +
                     ". The step dt = " + format_g(dt) +
                     " s is probably too large for these forces: lower 'dt' in [simulation] of " +
                     options.mapping.string() + ", or raise the friction 'beta', or lower the force gains");
    }
    if ((step + 1) % frame_every == 0 || step + 1 == total_steps) {
      const std::size_t frame_bin = static_cast<std::size_t>((step + 1) / steps_per_interval);
      if (frame_bin != model.current_interval() && (step + 1) < total_steps) model.set_interval(frame_bin);
      write_frame(step + 1);
    }
    if (step % 256 == 0) {
      bar.update(step);
      check_interrupt();
    }
  }
  bar.finish();
  writer.commit();

  summary.steps = total_steps;
  summary.evaluations = stepper->evaluations();
  summary.frames = writer.frame_count();
  summary.bodies = n;
  summary.springs = model.spring_edges().size();
  summary.dt_s = dt;
  summary.simulated_s = static_cast<double>(total_steps) * dt;
  summary.final_energy = model.energy(y);
  summary.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return summary;
}

}  // namespace kanoko::sim
