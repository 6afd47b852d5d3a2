#include "src/sim/budget.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "integrators/forces/repulsion.hpp"
#include "integrators/steppers/steppers.hpp"
#include "models/model.hpp"
#include "src/base/memory.hpp"
#include "src/base/progress.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::sim {
namespace {

/// Counts are computed in double and converted only below 2^53, where every integer is exact.
constexpr double kMaxCount = 9007199254740992.0;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30U;
constexpr std::uint64_t kMaxU64 = std::numeric_limits<std::uint64_t>::max();

std::string g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kMaxU64 : r;
}

std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kMaxU64 : r;
}

/// The key that set the interval: `intervals`, or `interval` (written or not).
std::string interval_key(const mapping::Mapping& m) {
  return m.simulation.intervals > 0 ? "simulation.intervals" : "simulation.interval";
}

}  // namespace

StepPlan plan_steps(const mapping::Mapping& m, double interval_s, std::uint64_t intervals) {
  const double dt = m.simulation.dt_s;
  if (!(std::isfinite(interval_s) && std::isnormal(interval_s) && interval_s > 0)) {
    throw InputError(m.where(interval_key(m)), "the binning interval is " + g(interval_s) +
                                                   " s: it must be a positive, finite number of seconds");
  }
  if (!(std::isfinite(dt) && dt > 0)) {
    throw InputError(m.where("simulation.dt"), "dt = " + g(dt) + " s: the step must be a positive, finite number of seconds");
  }
  StepPlan p;
  const double per = std::max(1.0, std::ceil(interval_s / dt - 1e-9));
  if (!(per <= kMaxCount)) {
    throw InputError(m.where("simulation.dt"), "dt = " + g(dt) + " s makes " + g(per) + " steps per interval of " +
                                                   format_seconds(interval_s) + ", too many to count (2^53 at most); "
                                                   "a step is normally 1/10 to 1/1000 of the interval");
  }
  p.steps_per_interval = static_cast<std::uint64_t>(per);
  p.dt_s = interval_s / per;
  if (!std::isnormal(p.dt_s)) {
    throw InputError(m.where("simulation.dt"), "dt = " + g(dt) + " s underflows: the step used, interval / " + g(per) +
                                                   ", is not a normal number");
  }
  const double forced = per * static_cast<double>(intervals);
  if (!(forced <= kMaxCount)) {
    throw InputError(m.where(static_cast<double>(intervals) > per ? interval_key(m) : "simulation.dt"),
                     std::to_string(intervals) + " intervals of " + g(per) + " steps (dt = " + g(p.dt_s) +
                         " s) make " + g(forced) + " steps, too many to count (2^53 at most)");
  }
  p.forced_steps = static_cast<std::uint64_t>(forced);
  const double settle = m.simulation.settle_s;
  if (!(std::isfinite(settle) && settle >= 0)) {
    throw InputError(m.where("simulation.settle"), "settle = " + g(settle) + " s: expected a finite time ≥ 0");
  }
  const double settle_steps = std::max(0.0, std::ceil(settle / p.dt_s - 1e-9));
  if (!(settle_steps <= kMaxCount)) {
    throw InputError(m.where("simulation.settle"), "settle = " + g(settle) + " s makes " + g(settle_steps) +
                                                       " steps of dt = " + g(p.dt_s) + " s, too many to count (2^53 at most)");
  }
  p.settle_steps = static_cast<std::uint64_t>(settle_steps);
  p.total_steps = p.forced_steps + p.settle_steps;  // both below 2^53: no overflow
  const std::uint64_t every = std::max<std::uint32_t>(1, m.simulation.frame_every);
  p.frames = 1 + (p.total_steps + every - 1) / every;  // frame 0, then every k steps and the last
  return p;
}

RunEstimate estimate_run(const mapping::Mapping& m, const trace::Timeline& tl) {
  RunEstimate e;
  e.plan = plan_steps(m, tl.interval_s, tl.bin_count);
  e.bodies = tl.entities.size();
  e.intervals = tl.bin_count;
  e.interval_s = tl.interval_s;
  e.trace_s = static_cast<double>(tl.bin_count) * tl.interval_s;
  const std::uint64_t n = e.bodies;
  const std::uint64_t bins = tl.bin_count;
  const std::uint64_t stats = models::Model::stat_names(m).size();
  // Sections: per body its names and fields, the springs (a handful per body), the traffic and
  // its per-interval offsets, the mapping text.
  std::uint64_t sections = add_sat(mul_sat(n, 128), mul_sat(n, 8 * 8));
  sections = add_sat(sections, mul_sat(tl.pairs.size(), 24));
  sections = add_sat(sections, mul_sat(add_sat(bins, 1), 8));
  sections = add_sat(sections, m.text.size() + 4096);
  e.output_bytes = trajectory::file_size_for(n, stats, e.plan.frames, sections);
  // Memory: the timeline (per-interval arrays of every entity, traffic), the trajectory's copy of
  // the traffic, the model's per-interval load sums, per-body state, and the writer's block.
  const std::uint64_t cells = mul_sat(bins, n);
  std::uint64_t memory = mul_sat(cells, 4 * sizeof(double));                         // load, busy, comm, idle
  memory = add_sat(memory, mul_sat(tl.pairs.size(), sizeof(trace::PairTraffic) + 24));  // timeline + run copy
  memory = add_sat(memory, mul_sat(tl.located_s.size(), sizeof(double)));              // [locations] seconds
  memory = add_sat(memory, mul_sat(add_sat(bins, 1), 2 * sizeof(std::size_t)));
  memory = add_sat(memory, mul_sat(add_sat(cells, n), sizeof(double)));                // load prefix sums
  memory = add_sat(memory, mul_sat(n, 4096));                                          // state, forces, stats, layout
  memory = add_sat(memory, std::uint64_t{64} << 20U);                                  // code, block buffer, reader
  e.memory_bytes = memory;
  // Wall time: body evaluations per step, times all pairs for a direct repulsion.
  const integrators::IntegratorInfo* info = integrators::find_integrator(m.simulation.integrator);
  const double evaluations = info != nullptr ? info->evaluations_per_step : 4.0;
  double per_body = 1;
  if (m.repulsion && m.repulsion->strength > 0) {
    const double nd = static_cast<double>(std::max<std::uint64_t>(n, 1));
    const bool direct = integrators::resolve_evaluator(m.repulsion->evaluator, n) == integrators::Evaluator::Direct;
    per_body += direct ? nd / 8 : 4 * std::log2(nd + 1);
  }
  e.wall_s = static_cast<double>(e.plan.total_steps) * evaluations * static_cast<double>(n) * per_body /
             kBodyEvaluationsPerSecond;
  return e;
}

std::string RunEstimate::str() const {
  return std::to_string(plan.total_steps) + " steps of dt = " + g(plan.dt_s) + " s, " + std::to_string(plan.frames) +
         " frames of " + std::to_string(bodies) + " bodies, " + format_bytes(output_bytes) + " of output, " +
         format_bytes(memory_bytes) + " of memory, about " + format_duration(wall_s);
}

bool RunEstimate::long_run() const { return wall_s > 10 || output_bytes > kGiB || memory_bytes > kGiB; }

Budget default_budget(const std::filesystem::path& output) {
  Budget b;
  b.max_steps = kDefaultMaxSteps;
  std::filesystem::path folder = output.parent_path();
  if (folder.empty()) folder = ".";
  std::error_code ec;
  const std::filesystem::space_info space = std::filesystem::space(folder, ec);
  b.max_output_bytes = 16 * kGiB;
  b.output_reason = "16 GiB";
  if (!ec && space.available < b.max_output_bytes + kGiB) {
    b.max_output_bytes = space.available > kGiB ? space.available - kGiB : 0;
    b.output_reason = "the free space of " + folder.string() + " (" + format_bytes(space.available) + ") − 1 GiB";
  }
  if (const std::optional<std::uint64_t> ram = physical_memory_bytes()) {
    b.max_memory_bytes = *ram / 2;
    b.memory_reason = "half the RAM";
  } else {
    b.max_memory_bytes = 4 * kGiB;
    b.memory_reason = "4 GiB (the RAM size is unknown)";
  }
  return b;
}

std::uint64_t parse_size(const std::string& text, const std::string& option) {
  const auto bad = [&] {
    return InputError(FileLoc{option}, "'" + text + "' is not a size: expected a number with an optional unit, "
                                                    "e.g. 20G, 512M, 64k or 1000 (bytes)");
  };
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw bad();
  }
  std::string unit = text.substr(used);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.ends_with("IB")) unit.erase(unit.size() - 2);
  else if (unit.ends_with("B")) unit.erase(unit.size() - 1);
  static constexpr std::string_view kUnits = "KMGTPE";
  double scale = 1;
  if (unit.size() == 1 && kUnits.find(unit[0]) != std::string_view::npos) {
    scale = std::ldexp(1.0, 10 * (static_cast<int>(kUnits.find(unit[0])) + 1));
  } else if (!unit.empty()) {
    throw bad();
  }
  const double bytes = value * scale;
  if (!(std::isfinite(bytes) && bytes >= 0)) throw bad();
  if (!(bytes < 18446744073709551616.0)) throw InputError(FileLoc{option}, "'" + text + "' is beyond 2^64 bytes");
  return static_cast<std::uint64_t>(bytes);
}

std::string format_bytes(std::uint64_t bytes) {
  if (bytes == kMaxU64) return "more than 16 EiB";
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double x = static_cast<double>(bytes);
  std::size_t u = 0;
  while (x >= 1024 && u + 1 < std::size(kUnits)) {
    x /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.3g %s", x, kUnits[u]);
  return buf;
}

void enforce_budget(const RunEstimate& e, const Budget& b, const mapping::Mapping& m, const TraceEnd& end) {
  std::string what, fix;
  if (e.plan.total_steps > b.max_steps) {
    what = "would take " + std::to_string(e.plan.total_steps) + " steps (limit " + std::to_string(b.max_steps) + ")";
    fix = "--max-steps N";
  } else if (e.output_bytes > b.max_output_bytes) {
    what = "would write " + format_bytes(e.output_bytes) + " (limit " + format_bytes(b.max_output_bytes) +
           (b.output_reason.empty() ? "" : ": " + b.output_reason) + ")";
    fix = "--max-output SIZE";
  } else if (e.memory_bytes > b.max_memory_bytes) {
    what = "would need " + format_bytes(e.memory_bytes) + " of memory (limit " + format_bytes(b.max_memory_bytes) +
           (b.memory_reason.empty() ? "" : ": " + b.memory_reason) + ")";
    fix = "--max-memory SIZE";
  } else {
    return;
  }
  const std::string estimate = "the run " + what + ": " + e.str() + "; ";
  // The cause: a step far below the interval (one the mapping chose: a calibrated step follows the
  // physics, and the trace's length is then the cause), settling longer than the trace, or the
  // trace's length.
  const bool fine_step = !m.simulation.calibrate && e.plan.steps_per_interval > 1000;
  const bool settle = !fine_step && e.plan.settle_steps > e.plan.forced_steps;
  if (settle || fine_step) {
    const std::string key = settle ? "simulation.settle" : "simulation.dt";
    throw InputError(m.where(key),
                     estimate + (settle ? "settle = " + g(m.simulation.settle_s) + " s adds " + std::to_string(e.plan.settle_steps) + " steps"
                                        : "dt = " + g(m.simulation.dt_s) + " s makes " + std::to_string(e.plan.steps_per_interval) +
                                              " steps per interval of " + format_seconds(e.interval_s)) +
                         "; lower it, or raise the limit with " + fix);
  }
  const std::string span = std::to_string(e.intervals) + " intervals of " + format_seconds(e.interval_s) + " cover " +
                           format_seconds(e.trace_s) + " of trace";
  if (!end.at.file.empty()) {
    throw InputError(end.at, estimate + span + ", whose end (t = " + g(end.time_s) +
                                 " s) is set by this record; fix the trace, restrict the run with --to T (or [trace] "
                                 "to), or raise the limit with " + fix);
  }
  throw InputError(m.where(interval_key(m)), estimate + span + "; restrict the run with --to T (or [trace] to), use "
                                                               "fewer intervals, or raise the limit with " + fix);
}

TraceEnd trace_end(const mapping::Mapping& m, const trace::Timeline& tl, const ingest::SelectionReport& r) {
  TraceEnd end;
  end.time_s = tl.end_s;
  if (std::isinf(ingest::trace_window(m).to_s)) end.at = r.survey.read.end_at;
  return end;
}

RunEstimate bound_run(const mapping::Mapping& m, const trace::Timeline& tl, const ingest::SelectionReport& r,
                      const Budget& b) {
  if (!m.simulation.calibrate) {
    RunEstimate e = estimate_run(m, tl);
    enforce_budget(e, b, m, trace_end(m, tl, r));
    return e;
  }
  mapping::Mapping lower = m;
  lower.simulation.dt_s = tl.interval_s;
  RunEstimate e = estimate_run(lower, tl);
  enforce_budget(e, b, lower, trace_end(m, tl, r));
  return e;
}

RunEstimate bound_mapping(const mapping::Mapping& m, const Budget& b) {
  const bool interval_known = !m.simulation.interval_auto && m.simulation.intervals == 0;
  trace::Timeline one;
  one.interval_s = interval_known ? m.simulation.interval_s : m.simulation.dt_s;
  one.bin_count = 1;
  one.end_s = one.interval_s;
  RunEstimate e = estimate_run(m, one);
  enforce_budget(e, b, m, TraceEnd{});
  return e;
}

}  // namespace kanoko::sim
