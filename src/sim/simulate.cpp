#include "src/sim/simulate.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "integrators/forces/repulsion.hpp"
#include "integrators/steppers/steppers.hpp"
#include "models/layout.hpp"
#include "models/model.hpp"
#include "models/suggest.hpp"
#include "src/ingest/checks.hpp"
#include "src/mapping/edit.hpp"
#include "src/base/error.hpp"
#include "src/base/hash.hpp"
#include "src/base/interrupt.hpp"
#include "src/base/output_target.hpp"
#include "src/base/progress.hpp"
#include "src/base/suggest.hpp"
#include "src/ingest/schema.hpp"
#include "src/sim/trace_hash.hpp"
#include "src/trace/readers.hpp"
#include "src/trajectory/palette.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::sim {
namespace {

/// A run whose median body moves less than this many neighbour spacings looks still, and one
/// whose median body moves more than kFlyingSpacings has lost its shape (docs/zero-configuration.md).
constexpr double kStillSpacings = 0.02;
constexpr double kFlyingSpacings = 5.0;
/// Where calibration puts the median body's largest excursion, in neighbour spacings.
constexpr double kTargetSpacings = 0.3;
/// Share of the energy that flowed through a run above which its unaccounted energy means an
/// integration that went wrong (the quadrature of the flows leaves 0.1 to 1.2 % on the programs of
/// traces/smpi and the paper examples; a diverging one leaves the order of the whole).
constexpr double kUnaccountedEnergyShare = 0.1;

/// Positions beyond this many initial radii count as a blow-up even if still finite.
constexpr double kBlowUpRadii = 1e6;

std::string format_g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/// The value of `values` whose name (integrators::to_string) is `value`; else an InputError for
/// `option` listing the valid names.
template <class Enum, std::size_t N>
Enum parse_name(const std::string& value, const std::array<Enum, N>& values, const std::string& option) {
  std::vector<std::string> names;
  for (Enum e : values) {
    if (value == integrators::to_string(e)) return e;
    names.emplace_back(integrators::to_string(e));
  }
  std::string valid;
  for (const auto& n : names) valid += (valid.empty() ? "" : ", ") + n;
  throw InputError(FileLoc{"kanoko simulate " + option},
                   "'" + value + "' is not valid" + did_you_mean(value, names) + "; valid: " + valid);
}

}  // namespace

void apply_overrides(const SimulateOptions& options, mapping::Mapping& m) {
  if (options.format) {
    std::vector<std::string> names = trace::reader_names();
    if (*options.format != "auto" && std::find(names.begin(), names.end(), *options.format) == names.end()) {
      names.insert(names.begin(), "auto");
      std::string valid;
      for (const std::string& n : names) valid += (valid.empty() ? "" : ", ") + n;
      throw InputError(FileLoc{"kanoko simulate --format"}, "unknown trace format '" + *options.format + "'" +
                                                                did_you_mean(*options.format, names) + "; valid formats: " + valid);
    }
    m.trace.format = *options.format;
  }
  if (options.from_s && options.to_s && !(*options.to_s > *options.from_s)) {
    throw InputError(FileLoc{"kanoko simulate --to"}, "the window is empty: --to must be later than --from");
  }
  if (options.integrator) {
    if (integrators::find_integrator(*options.integrator) == nullptr) {
      throw InputError(FileLoc{"kanoko simulate --integrator"},
                       "unknown integrator '" + *options.integrator + "'" +
                           did_you_mean(*options.integrator, integrators::integrator_names()) +
                           " (see 'kanoko simulate --help')");
    }
    m.simulation.integrator = *options.integrator;
  }
  const bool repulsion_override = options.evaluator || options.theta || options.multipole;
  if (repulsion_override && !m.repulsion) {
    throw InputError(FileLoc{"kanoko simulate"},
                     "--evaluator, --theta and --multipole choose how the repulsion is computed, but " +
                         m.path + " has no [forces.repulsion]");
  }
  if (options.evaluator) {
    m.repulsion->evaluator = parse_name(*options.evaluator, integrators::kUserEvaluators, "--evaluator");
  }
  if (options.theta) {
    if (!(*options.theta >= 0.0 && *options.theta <= 1.0)) {
      throw InputError(FileLoc{"kanoko simulate --theta"},
                       "theta = " + format_g(*options.theta) + " is out of range: expected 0 to 1");
    }
    m.repulsion->theta = *options.theta;
  }
  if (options.multipole) {
    m.repulsion->multipole = parse_name(*options.multipole, integrators::kMultipoles, "--multipole");
  }
}

namespace {

/// The input hash and two of its parts: the trace files alone, and the mapping with the effective
/// settings alone (what the processes of a run compare, to say which input differs).
struct InputHashes {
  std::uint64_t all = 0;
  std::uint64_t trace = 0;
  std::uint64_t settings = 0;
};

/// The version of what the input hash covers. v3: readers changed what they deliver (Paraver's
/// default computing state, Pajé value aliases), so runs cached by older versions are recomputed.
/// v4: the repulsion's fast kernels and the tree reused within a step (issue 15) changed the
/// trajectories' last bits.
/// v5: the calibration probe steps kProbeStepFactor times coarser than the run.
/// v6: the hash is XXH3-64 (was FNV-1a), and the trace's bytes are read once; a calibrated
/// layout relaxes once, at the probe's coarse step, for the probe and the run.
/// v7: a step restarted where the last ended takes that evaluation's repulsion and builds a tree
/// for its next one (velocity Verlet across intervals, the calibration's probe).
/// v8: the calibration probe holds the repulsion at its resting value where springs dominate it.
/// v9: a timeline whose end a survey told adds states as they arrive (TimelineOptions::known_end_s):
/// overlapping states of one entity add in another order, so their bins can change in the last bit.
/// v10: the monopole far field is summed in float, and groups hold up to 384 bodies.
/// v11: the near bodies are summed in float too, and groups hold up to 768 bodies.
constexpr const char* kInputVersion = "kanoko-input-v11";

InputHashes input_hashes(const std::filesystem::path& trace, const mapping::Mapping& m) {
  // The trace's files, each by name and bytes, length-prefixed so that no two lists hash alike
  // (perhaps computed already while the inference read the trace).
  const std::vector<std::filesystem::path> files = ingest::body_trace_files(trace, m);
  for (const std::filesystem::path& file : files) note_command_input(file);  // the run must not replace them
  const std::uint64_t trace_digest = trace_files_hash(files);
  // The mapping and the effective settings, after command-line overrides. Each string is
  // length-prefixed so that no two different lists hash alike.
  Xxh3_64 settings_h;
  auto update_string = [&settings_h](const std::string& s) {
    settings_h.update_value(static_cast<std::uint64_t>(s.size()));
    settings_h.update(s);
  };
  update_string(m.text);
  update_string(m.simulation.integrator);
  update_string(m.trace.format);  // --format may override the mapping's
  settings_h.update_value(m.simulation.tolerance);
  if (m.repulsion) {
    update_string(integrators::to_string(m.repulsion->evaluator));
    settings_h.update_value(m.repulsion->theta);
    update_string(integrators::to_string(m.repulsion->multipole));
  }
  InputHashes out{0, trace_digest, settings_h.digest()};
  Xxh3_64 all;  // the cache key: the version, then both parts
  all.update(kInputVersion);
  all.update_value(trajectory::kVersionMajor);
  all.update_value(out.trace);
  all.update_value(out.settings);
  out.all = all.digest();
  return out;
}

/// Values the processes of a RunGroup bring to a checkpoint: whether they failed, then what they
/// compare or share.
enum CheckpointValue : std::size_t { kFailed, kTraceHash, kSettingsHash, kVersionHash, kBodies, kReused, kValueCount };

/// The processes of `group` meet. Each brings `values` (values[kFailed] = 1 with the line it would
/// print for its failure). Throws the same GroupError, a line to print, on every process if one
/// failed (the first failure's line, naming its rank) or if a value named in `compared` differs
/// from the first process's.
/// Returns every process's values, kValueCount per process.
std::vector<std::uint64_t> checkpoint(RunGroup& group, const std::vector<std::uint64_t>& values,
                                      const std::string& message,
                                      const std::vector<std::pair<CheckpointValue, const char*>>& compared) {
  const std::vector<std::uint64_t> all = group.gather(values);
  const std::vector<std::string> messages = group.gather_text(message);
  const auto parts = static_cast<std::size_t>(group.parts());
  for (std::size_t p = 0; p < parts; ++p) {
    if (all[p * kValueCount + kFailed] != 0) {
      if (p == 0) throw GroupError(messages[p]);
      constexpr std::string_view kPrefix = "kanoko simulate: ";
      const std::string_view line = messages[p];
      throw GroupError(std::string(kPrefix) + "rank " + std::to_string(p) + " of the MPI run failed: " +
                       std::string(line.starts_with(kPrefix) ? line.substr(kPrefix.size()) : line));
    }
  }
  for (std::size_t p = 1; p < parts; ++p) {
    for (const auto& [value, what] : compared) {
      if (all[p * kValueCount + value] != all[value]) {
        throw GroupError("kanoko simulate: error: the ranks of the MPI run disagree about their inputs: rank " +
                         std::to_string(p) +
                         " has a different " + what + " from rank 0's (every rank must run the same kanoko "
                         "build on the same trace, mapping and options)");
      }
    }
  }
  return all;
}

}  // namespace

void fail_in_group(RunGroup& group, const std::string& message) {
  std::vector<std::uint64_t> values(kValueCount, 0);
  values[kFailed] = 1;
  checkpoint(group, values, message, {});
  throw GroupError(message);  // not reached: the checkpoint throws, having seen this failure
}

std::uint64_t input_hash(const std::filesystem::path& trace, const mapping::Mapping& m) {
  return input_hashes(trace, m).all;
}

/// Each body's largest distance from its start over a run, sampled at chosen states: what the
/// motion check and the calibration probe measure.
class Excursions {
 public:
  explicit Excursions(const models::Model& model) : model_(model), largest_(model.body_count(), 0.0) {}
  /// Takes the positions of the state vector y = [x; v].
  void sample(const Eigen::VectorXd& y) {
    for (std::size_t i = 0; i < largest_.size(); ++i) {
      const auto c = static_cast<Eigen::Index>(i);
      const double d = (Eigen::Map<const Eigen::Vector3d>(y.data() + 3 * c) - model_.initial_positions().col(c)).norm();
      largest_[i] = std::max(largest_[i], d);
    }
  }
  /// The median over bodies, in mean neighbour spacings of the starting layout (0 for < 2 bodies).
  [[nodiscard]] double median_spacings() const {
    if (largest_.size() < 2) return 0;
    std::vector<double> sorted = largest_;
    const auto mid = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
    std::nth_element(sorted.begin(), mid, sorted.end());
    return *mid / models::mean_spacing(model_.initial_positions(), 1.0);
  }

 private:
  const models::Model& model_;
  std::vector<double> largest_;
};

/// What relax_layout did.
struct Relaxation {
  std::uint64_t steps = 0;  ///< 0: nothing to relax
  bool diverged = false;    ///< the step was too long: the start is kept
};

/// Relaxes the starting layout under springs and repulsion alone (no communication) for ten
/// relaxation times 1/beta, then makes it the model's resting start: a calibrated run starts at
/// rest, so that what moves afterwards is the program. With no forcing, friction can only take
/// energy out, so a relaxation that ends with more mechanical energy than it started with has
/// diverged (a step too long for the stiffest body, which may still leave every number finite):
/// the start is then kept.
Relaxation relax_layout(const mapping::Mapping& m, models::Model& model, integrators::Stepper& stepper,
                        Eigen::VectorXd& y, double dt) {
  const double beta = m.friction ? m.friction->beta : 0.0;
  if (!(beta > 0) || (model.spring_edges().empty() && !m.repulsion)) return {};
  const auto cols = static_cast<Eigen::Index>(model.body_count());
  model.set_interval(model.timeline().bin_count);
  stepper.restart();
  const double e0 = model.energy(y);
  const auto steps = static_cast<std::uint64_t>(std::ceil(10.0 / beta / dt));
  for (std::uint64_t k = 0; k < steps; ++k) {
    model.begin_step();
    stepper.step(static_cast<double>(k) * dt, dt, y);
    check_interrupt();
  }
  const double e1 = y.allFinite() ? model.energy(y) : std::numeric_limits<double>::infinity();
  // Friction takes most of the energy out at a stable step; the slack only covers rounding.
  const bool diverged = !(e1 <= e0 + 1e-6 * std::abs(e0) + std::numeric_limits<double>::min());
  if (!diverged) model.rest_at(Eigen::Map<const Eigen::Matrix3Xd>(y.data(), 3, cols));
  y = model.initial_state();  // the rest positions, at rest
  model.set_interval(0);
  stepper.restart();
  return {steps, diverged};
}

/// The calibration's coarse step: `per` steps of `dt` in each group of `group` intervals.
struct CoarseStep {
  std::uint64_t per = 1;
  std::size_t group = 1;
  double dt = 0;
};

/// The step of a run of `m` on `tl` taken `step_factor` times coarser: fewer steps per interval
/// (never fewer than one) and, when an interval has fewer steps than `step_factor`, one step
/// across several intervals (their forcing averaged, Model::set_interval_mean), so that the step
/// is at most step_factor times the run's.
CoarseStep coarse_step(const mapping::Mapping& m, const trace::Timeline& tl, std::uint64_t step_factor) {
  const StepPlan plan = plan_steps(m, tl.interval_s, tl.bin_count);
  CoarseStep c;
  if (plan.steps_per_interval >= step_factor) {
    c.per = (plan.steps_per_interval + step_factor - 1) / step_factor;
    c.dt = c.per == plan.steps_per_interval ? plan.dt_s : tl.interval_s / static_cast<double>(c.per);
  } else {
    // One step per group of intervals, at most step_factor of the run's steps long.
    c.group = static_cast<std::size_t>(std::max<std::uint64_t>(1, step_factor / std::max<std::uint64_t>(plan.steps_per_interval, 1)));
    c.dt = tl.interval_s * static_cast<double>(c.group);
  }
  return c;
}

/// The integrator of the calibration's relaxation and probe: the run's at the run's own step
/// (step_factor 1); at a coarser step, velocity Verlet, one force evaluation per step instead of
/// RK4's four. Its stability, ω dt < 2, usually holds at the coarse step (the calibrated step
/// bounds ω dt by 0.1 for the stiffest spring it estimates); where a body is stiffer than that
/// estimate (crowded neighbours), relax_layout's energy check sends the calibration back to the
/// run's step.
const integrators::IntegratorInfo& coarse_integrator(const integrators::IntegratorInfo& run, std::uint64_t step_factor) {
  const integrators::IntegratorInfo* verlet = integrators::find_integrator("verlet");
  return step_factor > 1 && verlet != nullptr ? *verlet : run;
}

/// A stepper of `model`'s state (`size` values) for the calibration at `step_factor`.
auto coarse_stepper(models::Model& model, const mapping::Mapping& m, const integrators::IntegratorInfo& integrator,
                    std::uint64_t step_factor, Eigen::Index size) {
  integrators::StepperOptions so;
  so.tolerance = m.simulation.tolerance;
  return coarse_integrator(integrator, step_factor)
      .create([&model](double t, const Eigen::VectorXd& state, Eigen::VectorXd& dydt) { model.derivative(t, state, dydt); },
              size, so);
}

/// The resting start of a calibrated run of `m` on `tl` (relax_layout) and the steps it took, or
/// nullopt when there is nothing to relax or the relaxation diverged (`*diverged` says which). It
/// relaxes at a step `step_factor` times coarser than the run's: where it ends matters, not the
/// way there.
std::optional<std::pair<Eigen::Matrix3Xd, std::uint64_t>> relaxed_rest(const mapping::Mapping& m,
                                                                        const trace::Timeline& tl,
                                                                        const models::Layout& layout,
                                                                        const integrators::IntegratorInfo& integrator,
                                                                        int threads, std::uint64_t step_factor,
                                                                        bool* diverged) {
  models::Model model(m, tl, &layout);
  model.set_threads(threads);
  model.skip_traffic_statistics();
  Eigen::VectorXd y = model.initial_state();
  auto stepper = coarse_stepper(model, m, integrator, step_factor, y.size());
  const Eigen::Matrix3Xd start = model.initial_positions();
  const Relaxation r = relax_layout(m, model, *stepper, y, coarse_step(m, tl, step_factor).dt);
  *diverged = r.diverged;
  if (r.steps == 0 || r.diverged || model.initial_positions() == start) {
    return std::nullopt;  // nothing to relax, or it diverged (relax_layout then keeps the start)
  }
  return std::make_pair(model.initial_positions(), r.steps);
}

/// Whether the springs of `model` (built from `m`) dominate its repulsion's stiffness: three
/// bodies in four or more have springs whose stiffness sums to at least 20 times the repulsion's
/// at one mean spacing s, 2R/s³ (the calibrated repulsion, R = k s³/80, makes a single spring 40
/// times that). Stiffness given by a formula varies from interval to interval: never then.
bool springs_dominate_repulsion(const models::Model& model, const mapping::Mapping& m) {
  const integrators::ForceTerms& terms = model.terms();
  if (!(terms.repulsion.strength > 0) || m.springs.k_expression || terms.spring_edges.empty()) return false;
  const double s = models::mean_spacing(model.initial_positions(), 0.0);
  if (!(s > 0)) return false;
  const double repulsion_stiffness = 2 * terms.repulsion.strength / (s * s * s);
  std::vector<double> stiffness(model.body_count(), 0.0);
  for (std::size_t e = 0; e < terms.spring_edges.size(); ++e) {
    stiffness[terms.spring_edges[e][0]] += terms.spring_k[e];
    stiffness[terms.spring_edges[e][1]] += terms.spring_k[e];
  }
  const auto stiff = std::count_if(stiffness.begin(), stiffness.end(),
                                   [&](double k) { return k >= 20 * repulsion_stiffness; });
  return 4 * static_cast<std::size_t>(stiff) >= 3 * stiffness.size();
}

/// Median over bodies of each body's largest distance from its start, in neighbour spacings, for
/// a run of `m` on `tl` from `rest` (the relaxed start, if any) with every mass at its base and
/// nothing written: what calibration scales the gain by. Masses are left out so that a loaded
/// program still moves less than an idle one. The probe takes `step_factor` of the run's steps as
/// one (fewer when the interval has fewer steps). Where the springs dominate the repulsion's
/// stiffness, the probe holds the repulsion at its resting value (Model::hold_repulsion): its
/// bodies stay within a fraction of a spacing of rest, and the probe then costs the springs and
/// pulls alone instead of a Barnes–Hut sum per step (docs/zero-configuration.md).
/// `may_hold`: whether it may hold the repulsion (SimulateOptions::probe_holds_repulsion); `*held`
/// says whether it did.
double probe_motion(mapping::Mapping m, const trace::Timeline& tl, const models::Layout& layout,
                    const integrators::IntegratorInfo& integrator, int threads, std::uint64_t step_factor,
                    const Eigen::Matrix3Xd* rest, bool may_hold, bool* held) {
  m.mass.load_gain = 0;
  m.mass.expression.reset();
  models::Model model(m, tl, &layout);
  model.set_threads(threads);
  model.skip_traffic_statistics();
  const std::size_t n = model.body_count();
  if (n < 2) return 0;
  if (rest != nullptr) model.rest_at(*rest);
  *held = may_hold && springs_dominate_repulsion(model, m);
  if (*held) model.hold_repulsion();
  Eigen::VectorXd y = model.initial_state();
  auto stepper = coarse_stepper(model, m, integrator, step_factor, y.size());
  const CoarseStep c = coarse_step(m, tl, step_factor);
  Excursions excursions(model);
  double t = 0;
  for (std::size_t bin = 0; bin < tl.bin_count; bin += c.group) {
    const std::size_t count = std::min(c.group, tl.bin_count - bin);
    model.set_interval_mean(bin, count);
    stepper->restart();
    // The last group may hold fewer intervals: its one step is as much shorter.
    const double dt = count == c.group ? c.dt : tl.interval_s * static_cast<double>(count);
    for (std::uint64_t k = 0; k < c.per; ++k) {
      model.begin_step();
      stepper->step(t, dt, y);
      t += dt;
    }
    if (!y.allFinite()) return std::numeric_limits<double>::infinity();
    excursions.sample(y);
    check_interrupt();
  }
  return excursions.median_spacings();
}

namespace {

/// The traffic of `tl` per interval, as the trajectory's traffic section holds it.
trajectory::TrafficSource traffic_source(const trace::Timeline& tl) {
  trajectory::TrafficSource source;
  source.begin.reserve(tl.bin_count + 1);
  source.begin.push_back(0);
  for (std::size_t bin = 0; bin < tl.bin_count; ++bin) source.begin.push_back(source.begin.back() + tl.traffic(bin).size());
  const trace::PairTraffic* const pairs = tl.bin_count > 0 ? tl.traffic(0).data() : nullptr;
  source.fill = [pairs](std::uint64_t first, std::span<trajectory::PairTraffic> out) {
    for (std::size_t k = 0; k < out.size(); ++k) {
      const trace::PairTraffic& p = pairs[first + k];
      out[k] = {static_cast<std::uint32_t>(p.src), static_cast<std::uint32_t>(p.dst), p.bytes, static_cast<double>(p.messages)};
    }
  };
  return source;
}

}  // namespace

/// Copies frames 0..frame of `from` into `writer` and sets y to the state of that frame; returns
/// the step the integration continues from. `meta` describes the new run.
std::uint64_t resume(const trajectory::Reader& from, std::size_t frame, const trajectory::Metadata& meta,
                     std::uint64_t total_steps, trajectory::Writer& writer, Eigen::VectorXd& y) {
  const trajectory::Metadata& old = from.meta();
  const FileLoc loc{old.source_trace.empty() ? std::string("the run to continue") : old.source_trace};
  if (old.body_count() != meta.body_count() || old.stat_names != meta.stat_names) {
    throw InputError(loc, "the run to continue has other bodies or statistics than this mapping makes");
  }
  if (old.dt_s != meta.dt_s || old.steps_per_frame != meta.steps_per_frame || old.trace_begin_s != meta.trace_begin_s) {
    throw InputError(loc, "the run to continue has another step, frame interval or start; re-simulate it whole");
  }
  if (frame >= from.frame_count()) throw InputError(loc, "no frame " + std::to_string(frame) + " to continue from");
  for (std::size_t k = 0; k <= frame; ++k) {
    const trajectory::FrameView f = from.frame(k);
    writer.append_frame(f.time_s, f.positions, f.velocities, f.stats);
  }
  const trajectory::FrameView f = from.frame(frame);
  const auto n = static_cast<Eigen::Index>(meta.body_count());
  y.head(3 * n) = Eigen::Map<const Eigen::VectorXd>(f.positions.data(), 3 * n);
  y.tail(3 * n) = Eigen::Map<const Eigen::VectorXd>(f.velocities.data(), 3 * n);
  return std::min(static_cast<std::uint64_t>(frame) * meta.steps_per_frame, total_steps);
}

namespace {

/// The mapping with the command line's window and --calibrate-like written into its text (so that
/// they are hashed and stay with the run), parsed, with the other overrides applied.
mapping::Mapping effective_mapping(const SimulateOptions& options) {
  const std::string name = options.mapping.empty() ? options.mapping_label : options.mapping.string();
  mapping::Mapping m = options.mapping_text ? mapping::parse_mapping_text(*options.mapping_text, name)
                                             : mapping::parse_mapping_file(options.mapping);
  std::vector<models::SuggestedValue> values;
  if (options.from_s) values.push_back({"trace", "from", *options.from_s});
  if (options.to_s) values.push_back({"trace", "to", *options.to_s});
  if (!options.calibrate_like.empty()) {
    const trajectory::Reader ref(options.calibrate_like);
    const std::string ref_name = options.calibrate_like.string();
    if (m.simulation.intervals > 0) {
      throw InputError(m.where("simulation.intervals"),
                       "--calibrate-like " + ref_name + " sets the interval; remove 'intervals' to share its calibration");
    }
    for (const auto& v : models::calibration_of(ref.meta().mapping_text, ref.meta().interval_s, ref_name)) {
      values.push_back(v);
    }
  }
  if (!values.empty()) {
    std::string text = models::write_values(m, values, 17);
    if (!options.calibrate_like.empty()) {
      // The reference's gain is absolute: this run must not rescale it by its own peak.
      mapping::Mapping current = mapping::parse_mapping_text(text, m.path);
      if (current.communication) {
        text = mapping::set_value(text, current, "forces.communication", "normalize", "\"none\"");
      }
    }
    const std::string path = m.path;
    m = mapping::parse_mapping_text(text, path);
  }
  apply_overrides(options, m);
  return m;
}

}  // namespace

SimulateSummary simulate(const SimulateOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  mapping::Mapping m = effective_mapping(options);
  const CurrentInput simulating("simulating", options.trace.string() + " with mapping " + m.path + " into " +
                                                  options.output.string());
  const integrators::IntegratorInfo* integrator = integrators::find_integrator(m.simulation.integrator);
  if (integrator == nullptr) {
    throw InputError(m.where("simulation.integrator"),
                     "unknown integrator '" + m.simulation.integrator + "'" +
                         did_you_mean(m.simulation.integrator, integrators::integrator_names()) +
                         " (see 'kanoko simulate --help')");
  }
  RunGroup* const group = options.group;
  const bool writes = group == nullptr || group->part() == 0;  // only the first process writes
  if (group != nullptr && options.resume_from != nullptr) {
    throw InputError(FileLoc{options.output.string()}, "a continued run cannot be shared among MPI processes");
  }
  SimulateSummary summary;
  const InputHashes hashes = input_hashes(options.trace, m);
  summary.input_hash = hashes.all;
  if (options.probe_step_factor != 0 && options.probe_step_factor != kProbeStepFactor) {
    Fnv1a64 h;  // another probe step gives another calibration
    h.update_value(summary.input_hash);
    h.update_value(options.probe_step_factor);
    summary.input_hash = h.digest();
  }
  if (!options.probe_holds_repulsion) {
    Fnv1a64 h;  // a probe that sums the repulsion gives another calibration
    h.update_value(summary.input_hash);
    h.update("probe sums the repulsion");
    summary.input_hash = h.digest();
  }
  if (options.resume_from != nullptr) {
    // A continued run differs from a whole one: its early frames come from the earlier run.
    Fnv1a64 h;
    h.update_value(summary.input_hash);
    h.update_value(options.resume_from->meta().input_hash);
    h.update_value(static_cast<std::uint64_t>(options.resume_frame));
    summary.input_hash = h.digest();
  }
  std::uint64_t existing = 0;
  std::error_code exists_error;
  if (writes && !options.force && std::filesystem::exists(options.output, exists_error)) {
    // Reused only whole and verified: an unfinished or damaged run (or one whose header cannot
    // say what it was made from) is recomputed, saying why.
    const bool readable = trajectory::read_input_hash(options.output, existing);
    if (!readable || existing == summary.input_hash) summary.recompute_reason = trajectory::reuse_problem(options.output);
    if (readable && existing == summary.input_hash && summary.recompute_reason.empty()) {
      summary.reused = true;
    } else if (options.progress && !summary.recompute_reason.empty()) {
      std::cerr << "kanoko simulate: " << options.output.string() << " " << summary.recompute_reason << "; recomputing\n";
    }
  }
  if (group != nullptr) {
    // The processes compare their inputs, and all follow the first's decision to reuse its output.
    std::vector<std::uint64_t> values(kValueCount, 0);
    values[kTraceHash] = hashes.trace;
    values[kSettingsHash] = hashes.settings;
    Fnv1a64 version;
    version.update(group->version());
    version.update(kInputVersion);
    version.update_value(trajectory::kVersionMajor);
    values[kVersionHash] = version.digest();
    values[kReused] = summary.reused ? 1 : 0;
    const std::vector<std::uint64_t> all = checkpoint(
        *group, values, "",
        {{kVersionHash, "kanoko version"}, {kTraceHash, "trace"}, {kSettingsHash, "mapping or options"}});
    summary.reused = all[kReused] != 0;
  }
  if (summary.reused) {
    ingest::forget_survey_events();  // the inference's recorded stream: nothing reads the trace again
    return summary;
  }

  ingest::SelectionReport selection;
  const trace::Timeline timeline = ingest::read_body_timeline(options.trace, m, &selection);
  if (selection.entities.empty()) throw InputError(FileLoc{options.trace.string()}, trace::no_entities_message(selection.format));
  summary.notes = selection.notes;
  summary.warnings = ingest::prepare_run(m, timeline, selection);
  apply_overrides(options, m);  // prepare_run may have parsed the mapping again
  // Bounded before any work, as check bounds it (with calibration, a lower bound: see bound_run).
  const Budget budget = options.budget ? *options.budget : default_budget(options.output);
  bound_run(m, timeline, selection, budget);
  // The traffic section (hundreds of MB for a long run of thousands of bodies; the same whatever
  // the calibration decides) is written on a thread of its own while the model is calibrated.
  std::optional<trajectory::Writer> writer;
  if (writes) writer.emplace(options.output, traffic_source(timeline));
  std::optional<std::pair<Eigen::Matrix3Xd, std::uint64_t>> rest;  // the relaxed start and its steps
  // A calibrated run's models share one layout: calibration writes no key the layout reads.
  std::optional<models::Layout> layout;
  if (m.simulation.calibrate) {
    const bool gain_given = m.locations.count("forces.communication.gain") != 0;
    layout = models::build_layout(m, timeline.entity_count(), &timeline);
    const models::Calibration cal = models::calibrate(m, timeline, &*layout);
    const std::string path = m.path;
    m = mapping::parse_mapping_text(cal.text, path);
    apply_overrides(options, m);
    m.simulation.interval_s = timeline.interval_s;
    summary.notes.insert(summary.notes.end(), cal.notes.begin(), cal.notes.end());
    // The energy argument bounds the forcing; the gain is then scaled so that the median body
    // moves kTargetSpacings (a linear response: displacement is proportional to the gain).
    // The layout relaxes once, at the probe's coarse step (at the run's own if that diverges),
    // for the probe and the run alike: the relaxation has no communication, so the gain the
    // probe sets does not change it.
    // A step the relaxation diverges at is too long for the probe as well: both then take the run's.
    std::uint64_t coarse = options.probe_step_factor != 0 ? options.probe_step_factor : kProbeStepFactor;
    const int threads = options.calibration_threads >= 0 ? options.calibration_threads : options.threads;
    if (options.resume_from == nullptr || (m.communication && !m.communication->weight && !gain_given &&
                                           options.calibrate_like.empty())) {
      bool diverged = false;
      rest = relaxed_rest(m, timeline, *layout, *integrator, threads, coarse, &diverged);
      if (diverged && coarse > 1) {
        coarse = 1;
        rest = relaxed_rest(m, timeline, *layout, *integrator, threads, coarse, &diverged);
      }
    }
    if (m.communication && !m.communication->weight && !gain_given && options.calibrate_like.empty()) {
      const Eigen::Matrix3Xd* at = rest ? &rest->first : nullptr;
      // A probe that moves the median body a thousand times the target has most likely diverged
      // (finite but wrong, as a relaxation can): it is measured again at the run's step.
      const auto suspect = [](double mo) { return !std::isfinite(mo) || mo > 1e3 * kTargetSpacings; };
      bool held = false;
      double motion =
          probe_motion(m, timeline, *layout, *integrator, threads, coarse, at, options.probe_holds_repulsion, &held);
      if (suspect(motion) && coarse > 1) {
        motion = probe_motion(m, timeline, *layout, *integrator, threads, 1, at, options.probe_holds_repulsion, &held);
      }
      if (motion > 0 && std::isfinite(motion)) {
        const double factor = std::clamp(kTargetSpacings / motion, 1e-3, 1e3);
        m = mapping::parse_mapping_text(
            mapping::set_value(m.text, m, "forces.communication", "gain", mapping::toml_float(m.communication->gain * factor, 6)),
            path);
        apply_overrides(options, m);
        m.simulation.interval_s = timeline.interval_s;
        char text[240];
        std::snprintf(text, sizeof text, "[forces.communication] gain scaled by %.3g so that the median body moves "
                                         "about %.2g neighbour spacings (a probe run moved it %.3g%s)",
                      factor, kTargetSpacings, motion, held ? ", the repulsion held at its resting value" : "");
        summary.notes.emplace_back(text);
      }
    }
  }
  const RunEstimate estimate = estimate_run(m, timeline);
  enforce_budget(estimate, budget, m, trace_end(m, timeline, selection));
  if (options.progress && estimate.long_run()) std::cerr << "kanoko simulate: estimate: " << estimate.str() << '\n';
  models::Model model(m, timeline, layout ? &*layout : nullptr);
  model.set_threads(options.threads);
  const std::size_t n = model.body_count();
  if (group != nullptr && static_cast<std::size_t>(group->parts()) > n) {
    throw InputError(FileLoc{options.trace.string()},
                     std::to_string(group->parts()) + " MPI ranks for " + std::to_string(n) +
                         " bodies: each rank needs at least one body; run with mpirun -np " + std::to_string(n) +
                         " or fewer");
  }

  // A step never straddles an interval boundary: the step is reduced until it divides the
  // interval exactly, so the forcing and masses are constant within every step. Adaptive
  // integrators take substeps inside each step and land exactly on its end.
  const double interval = timeline.interval_s;
  summary.interval_s = interval;
  summary.intervals = timeline.bin_count;
  const double dt = estimate.plan.dt_s;
  const std::uint64_t steps_per_interval = estimate.plan.steps_per_interval;
  const std::uint64_t total_steps = estimate.plan.total_steps;
  const std::uint32_t frame_every = m.simulation.frame_every;

  trajectory::Metadata meta;
  meta.bodies.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const trace::Entity& e = timeline.entities[i];
    meta.bodies[i].name = e.name;
    meta.bodies[i].host = e.host;
    meta.bodies[i].above_host = e.above_host;
    meta.bodies[i].rank = e.rank;
    meta.bodies[i].colour_rgb = trajectory::palette_colour(i);
    meta.bodies[i].radius = static_cast<float>(m.bodies.radius);
  }
  meta.edges = model.spring_edges();
  meta.stat_names = models::Model::stat_names(m);
  meta.dt_s = dt;
  meta.steps_per_frame = frame_every;
  meta.interval_s = interval;
  meta.trace_begin_s = timeline.begin_s;
  meta.trace_end_s = timeline.end_s;
  meta.input_hash = summary.input_hash;
  meta.integrator = integrator->name;
  meta.source_trace = options.trace.empty() ? std::string() : std::filesystem::absolute(options.trace).lexically_normal().string();
  // Both absolute, so that the viewer re-simulates, finds the mapping's texture and saves tuned
  // copies beside the mapping from any working folder.
  meta.source_mapping = options.mapping.empty() ? std::string() : std::filesystem::absolute(options.mapping).lexically_normal().string();
  meta.mapping_text = m.text;
  meta.planned_frames = estimate.plan.frames;
  if (writer) writer->start(meta);  // its traffic: the writer's own, from the timeline
  if (writer && options.on_writing) options.on_writing(writer->temporary_path());
  if (group != nullptr) {
    // The last checkpoint: from here on the processes share every force evaluation.
    std::vector<std::uint64_t> values(kValueCount, 0);
    values[kBodies] = n;
    checkpoint(*group, values, "", {{kBodies, "body count"}});
    model.set_partition(group);
    group->set_running(true);
  }
  Eigen::VectorXd y = model.initial_state();
  integrators::StepperOptions stepper_options;
  stepper_options.tolerance = m.simulation.tolerance;
  auto stepper = integrator->create(
      [&model](double t, const Eigen::VectorXd& state, Eigen::VectorXd& dydt) { model.derivative(t, state, dydt); },
      y.size(), stepper_options);
  const auto cols = static_cast<Eigen::Index>(n);
  if (rest && options.resume_from == nullptr) {
    model.rest_at(rest->first);
    y = model.initial_state();
    summary.notes.push_back("the layout relaxed under springs and repulsion for " + std::to_string(rest->second) +
                            " steps before the run, so that it starts at rest");
  }
  Eigen::MatrixXd stats;
  // write_wall_s: gathering the statistics and writing each frame, and the final commit.
  // Motion check: each body's largest distance from where it started, sampled at every frame.
  Excursions excursions(model);
  auto write_frame = [&](std::uint64_t step) {
    if (!writes) return;
    const auto write_start = std::chrono::steady_clock::now();
    excursions.sample(y);
    model.current_stats(stats);
    writer->append_frame(timeline.begin_s + static_cast<double>(step) * dt,
                        Eigen::Map<const Eigen::Matrix3Xd>(y.data(), 3, cols),
                        Eigen::Map<const Eigen::Matrix3Xd>(y.data() + 3 * cols, 3, cols), stats);
    summary.write_wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - write_start).count();
  };
  std::uint64_t first_step = 0;
  if (options.resume_from != nullptr) {
    first_step = resume(*options.resume_from, options.resume_frame, meta, total_steps, *writer, y);
  } else {
    write_frame(0);
  }
  check_interrupt();  // a frame of a million bodies takes a while

  // Energy account: the powers of forcing and friction at the start of the current step, and the
  // kinetic energy that a change of masses adds or removes (velocities are kept across it).
  summary.initial_energy = model.energy(y);
  double forcing_power = model.forcing_power(y);
  double friction_power = model.friction_power(y);
  double max_speed2 = Eigen::Map<const Eigen::Matrix3Xd>(y.data() + 3 * cols, 3, cols).colwise().squaredNorm().maxCoeff();
  check_interrupt();
  auto enter_interval = [&](std::size_t bin) {
    const double kinetic_before = model.kinetic_energy(y);
    model.set_interval(bin);
    stepper->restart();  // the derivative changed: cached stages are stale
    summary.energy_from_mass_changes += model.kinetic_energy(y) - kinetic_before;
    forcing_power = model.forcing_power(y);
    friction_power = model.friction_power(y);
  };

  // The centroid is evaluated once: inside the column-wise expression Eigen would recompute it for
  // every column, O(N²).
  const Eigen::Vector3d start_centroid = model.initial_positions().rowwise().mean();
  const double start_radius =
      std::max(1e-300, (model.initial_positions().colwise() - start_centroid).colwise().norm().maxCoeff());
  ProgressBar bar("simulate", total_steps, "steps", options.progress);
  for (std::uint64_t step = first_step; step < total_steps; ++step) {
    const std::size_t bin = static_cast<std::size_t>(step / steps_per_interval);
    if (bin != model.current_interval()) enter_interval(bin);
    model.begin_step();
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
                     " s is probably too large for these forces: lower 'dt' in [simulation] (" +
                     m.where("simulation.dt").str() + "), or raise the friction 'beta', or lower the force gains");
    }
    {
      const double forcing_after = model.forcing_power(y);
      const double friction_after = model.friction_power(y);
      summary.energy_from_forcing += 0.5 * dt * (forcing_power + forcing_after);
      summary.energy_to_friction += 0.5 * dt * (friction_power + friction_after);
      forcing_power = forcing_after;
      friction_power = friction_after;
      max_speed2 = std::max(max_speed2, Eigen::Map<const Eigen::Matrix3Xd>(y.data() + 3 * cols, 3, cols)
                                            .colwise()
                                            .squaredNorm()
                                            .maxCoeff());
    }
    if ((step + 1) % frame_every == 0 || step + 1 == total_steps) {
      const std::size_t frame_bin = static_cast<std::size_t>((step + 1) / steps_per_interval);
      if (frame_bin != model.current_interval() && (step + 1) < total_steps) enter_interval(frame_bin);
      write_frame(step + 1);
    }
    check_interrupt();  // one relaxed load: a step of a large model can take seconds
    if (options.cancel != nullptr && options.cancel->load()) throw RunError("simulation cancelled");
    // Every step (a clock read): a step of a large model takes seconds, so a bar updated every
    // 256 steps would sit still for minutes.
    bar.update(step + 1);
    if (options.on_progress) options.on_progress(static_cast<double>(step + 1) / static_cast<double>(total_steps));
  }
  bar.finish();
  if (options.on_progress) options.on_progress(1.0);
  const auto commit_start = std::chrono::steady_clock::now();
  if (writes) writer->commit();
  summary.write_wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - commit_start).count();

  if (writes && n >= 2 && first_step == 0) {
    const double median = excursions.median_spacings();
    char text[320];
    if (median < kStillSpacings) {
      std::snprintf(text, sizeof text,
                    "the median body moves at most %.2g %% of the spacing between neighbours: the picture is almost "
                    "still; raise the communication gain (or use calibrate = \"auto\" in [simulation])",
                    100 * median);
      summary.warnings.emplace_back(text);
    } else if (median > kFlyingSpacings) {
      std::snprintf(text, sizeof text,
                    "the median body moves %.3g neighbour spacings away from its start: the shape is lost; lower the "
                    "communication gain, raise the friction (or use calibrate = \"auto\" in [simulation])",
                    median);
      summary.warnings.emplace_back(text);
    }
    summary.median_motion = median;
  }
  summary.steps = total_steps - first_step;
  summary.evaluations = stepper->evaluations();
  summary.substeps = stepper->substeps();
  summary.rejected_substeps = stepper->rejected_substeps();
  summary.integrator = integrator->name;
  summary.max_speed = std::sqrt(max_speed2);
  if (model.repulsion_params().strength > 0) {
    summary.evaluator = integrators::to_string(integrators::resolve_evaluator(model.repulsion_params().evaluator, n));
    summary.simd = integrators::to_string(model.force_stats().simd);
    summary.threads = model.force_stats().threads;
  }
  summary.frames = writes ? writer->frame_count() : 0;
  summary.bodies = n;
  summary.springs = model.spring_edges().size();
  summary.dt_s = dt;
  summary.simulated_s = static_cast<double>(total_steps - first_step) * dt;
  summary.final_energy = model.energy(y);
  if (first_step == 0) {
    // Friction, forcing and mass changes account for every change of the mechanical energy of an
    // accurate integration; a large remainder means the step was too long for the run's fastest
    // motion (an error that grows as dt² with Verlet, or a divergence with every number finite).
    const double balance = summary.final_energy - summary.initial_energy -
                           (summary.energy_from_forcing - summary.energy_to_friction + summary.energy_from_mass_changes);
    const double flowed = std::max({std::abs(summary.initial_energy), std::abs(summary.final_energy),
                                    std::abs(summary.energy_from_forcing), summary.energy_to_friction,
                                    std::abs(summary.energy_from_mass_changes)});
    if (!(std::abs(balance) <= kUnaccountedEnergyShare * flowed)) {
      char text[480];
      std::snprintf(text, sizeof text,
                    "the energy does not balance: %.3g of the %.3g that flowed through the run (%.0f %%) is not "
                    "accounted for by friction, forcing and mass changes: the step (dt = %.3g s) is too long for the "
                    "run's fastest motion, so the motion is inaccurate; lower [simulation] dt, or let calibrate = "
                    "\"auto\" choose it",
                    balance, flowed, 100 * std::abs(balance) / flowed, dt);
      summary.warnings.emplace_back(text);
    }
  }
  summary.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return summary;
}

}  // namespace kanoko::sim
