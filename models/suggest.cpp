#include "models/suggest.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "models/model.hpp"
#include "src/mapping/edit.hpp"

namespace kanoko::models {

namespace {

std::string fmt(double x) {
  std::ostringstream os;
  os.precision(3);
  os << x;
  return os.str();
}

}  // namespace

double mean_spacing(const Eigen::Matrix3Xd& x, double fallback) {
  const Eigen::Index n = x.cols();
  if (n < 2) return fallback;
  const Eigen::Index step = std::max<Eigen::Index>(1, n / 4000);
  // The bodies in order of x: a body's nearest neighbour is found by walking out from it both ways
  // until the x gap alone, squared, passes the best squared distance so far. A squared norm is
  // never below its x term's square (rounding is monotonic and the other terms are not negative),
  // so this is exactly the all-pairs minimum, in O(n^(2/3)) a body for a layout in space instead
  // of O(n): calibration measures the spacing several times, 0.3 s at 10,000 bodies with all pairs.
  std::vector<Eigen::Index> order(static_cast<std::size_t>(n)), place(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  const bool sortable = x.row(0).allFinite();  // (a NaN would break the order: then all pairs)
  if (sortable) {
    std::sort(order.begin(), order.end(), [&x](Eigen::Index a, Eigen::Index b) { return x(0, a) < x(0, b); });
  }
  for (std::size_t k = 0; k < order.size(); ++k) place[static_cast<std::size_t>(order[k])] = static_cast<Eigen::Index>(k);
  double sum = 0;
  Eigen::Index count = 0;
  for (Eigen::Index i = 0; i < n; i += step) {
    double best = std::numeric_limits<double>::infinity();
    const auto visit = [&](Eigen::Index k) {
      const Eigen::Index j = order[static_cast<std::size_t>(k)];
      const double dx = x(0, j) - x(0, i);
      if (sortable && dx * dx > best) return false;
      best = std::min(best, (x.col(i) - x.col(j)).squaredNorm());
      return true;
    };
    const Eigen::Index at = place[static_cast<std::size_t>(i)];
    for (Eigen::Index k = at + 1; k < n && visit(k); ++k) {
    }
    for (Eigen::Index k = at - 1; k >= 0 && visit(k); --k) {
    }
    sum += std::sqrt(best);
    ++count;
  }
  return sum / static_cast<double>(count);
}

Suggestion suggest_parameters(const mapping::Mapping& original, const trace::Timeline& tl,
                              std::optional<double> reference_mass, const Layout* layout) {
  Suggestion s;
  auto say = [&](const std::string& line) { s.reasoning.push_back(line); };
  // Measure with gain 1 so that the gain can be scaled afterwards.
  mapping::Mapping m = original;
  const bool weight_formula = m.communication && m.communication->weight;
  if (m.communication && !weight_formula) m.communication->gain = 1.0;
  Model model(m, tl, layout);
  model.skip_traffic_statistics();
  const std::size_t n = model.body_count();
  const double interval = tl.interval_s;
  const double spacing = mean_spacing(model.initial_positions(), m.bodies.size);
  const bool symmetric = m.communication && m.communication->mode == mapping::CommunicationMode::Symmetric;

  double mass_sum = 0, mass_min = std::numeric_limits<double>::infinity(), force_sum = 0, force_peak = 0, pull_peak = 0;
  std::size_t active = 0;
  std::vector<double> force(n);
  const std::size_t bins = std::max<std::size_t>(tl.bin_count, 1);
  for (std::size_t bin = 0; bin < tl.bin_count; ++bin) {
    model.set_interval(bin);
    mass_sum += model.masses().sum();
    mass_min = std::min(mass_min, model.masses().minCoeff());
    std::fill(force.begin(), force.end(), 0.0);
    for (const integrators::Pull& p : model.pulls()) {
      pull_peak = std::max(pull_peak, p.weight);
      force[p.from] += p.weight;
      if (symmetric) force[p.to] += p.weight;
    }
    for (double f : force) {
      force_sum += f;
      force_peak = std::max(force_peak, f);
      active += f > 0 ? 1 : 0;
    }
  }
  if (!std::isfinite(mass_min)) mass_min = m.mass.base;
  double mass = tl.bin_count > 0 ? mass_sum / static_cast<double>(bins * n) : m.mass.base;
  const double measured_mass = mass;
  if (reference_mass) {
    // Calibration: the constants must not undo the masses, or a loaded program would look as
    // light as an idle one. They are set for the reference mass; the step stays stable for the
    // lightest body the run has.
    mass = *reference_mass;
    mass_min = std::min(mass_min, *reference_mass);
  }
  const double force_mean = force_sum / static_cast<double>(bins * n);
  double degree_sum = 0, degree_max = 0;
  {
    std::vector<double> degree(n, 0.0);
    for (const auto& e : model.spring_edges()) {
      degree[e[0]] += 1;
      degree[e[1]] += 1;
    }
    for (double d : degree) {
      degree_sum += d;
      degree_max = std::max(degree_max, d);
    }
  }
  const double degree_mean = degree_sum / static_cast<double>(n);

  say("trace: " + std::to_string(n) + " bodies, " + std::to_string(tl.bin_count) + " intervals of " + fmt(interval) +
      " s; mean spacing of the initial placement s = " + fmt(spacing) + "; mean mass " + fmt(measured_mass) +
      " (smallest " + fmt(mass_min) + ")" +
      (reference_mass ? "; constants set for the reference mass m = " + fmt(mass) + " (an idle body), so heavier "
                        "bodies move less" : "; m = the mean mass"));
  s.beta = 1.0 / (5.0 * interval);
  const double tau = 1.0 / s.beta;
  say("friction: beta = 1 / (5 × interval) = " + fmt(s.beta) + " /s, so a body settles to a change of forcing within "
      "about 5 intervals (1/beta = " + fmt(tau) + " s): the picture follows the trace's phases without flickering at "
      "every interval");
  const double speed = 0.1 * spacing * s.beta;
  say("comfortable mean speed: v = s / 10 per relaxation time = " + fmt(speed) + " per second of trace");
  double f_mean = force_mean, f_peak = force_peak, pull_max = pull_peak;
  if (!m.communication) {
    say("communication: no [forces.communication], so no forcing gain to suggest");
  } else if (weight_formula) {
    say("communication: 'weight' is a formula; its forcing was measured as written (mean " + fmt(force_mean) +
        ", peak " + fmt(force_peak) + " per body and interval) and is left as it is");
  } else if (force_mean <= 0) {
    say("communication: the trace has no traffic between bodies, so no forcing gain to suggest");
  } else {
    // Dissipation β m v² must exceed the mean forcing input F v at the comfortable speed, with a
    // 25 % margin: F = 0.8 β m v. And the strongest pull may move the lightest body at most half
    // a spacing per relaxation time: F_peak / (m_min β²) ≤ s / 2.
    const double by_energy = 0.8 * s.beta * mass * speed / force_mean;
    const double by_peak = 0.5 * spacing * mass_min * s.beta * s.beta / force_peak;
    s.gain = std::min(by_energy, by_peak);
    f_mean = *s.gain * force_mean;
    f_peak = *s.gain * force_peak;
    pull_max = *s.gain * pull_peak;
    say("forcing with gain 1: mean " + fmt(force_mean) + " per body and interval (" +
        fmt(100.0 * static_cast<double>(active) / static_cast<double>(bins * n)) + " % of body-intervals pulled), peak " +
        fmt(force_peak));
    say("energy: friction dissipates beta m v² = " + fmt(s.beta * mass * speed * speed) +
        " per second at speed v, the mean forcing puts in F v; dissipation ≥ 1.25 × input needs gain ≤ " +
        fmt(by_energy));
    say("peak: the strongest pull moves the lightest body F_peak / (m_min beta²) per relaxation time; at most s / 2 "
        "needs gain ≤ " + fmt(by_peak));
    say("gain = " + fmt(*s.gain) + (by_peak < by_energy ? " (limited by the peak)" : " (limited by the energy balance)") +
        "; dissipation / input at the comfortable speed = " +
        fmt(s.beta * mass * speed * speed / std::max(1e-300, f_mean * speed)));
  }
  if (!model.spring_edges().empty()) {
    s.length = spacing;
    say("springs: natural length L = s = " + fmt(spacing) + " (the initial neighbour distance)");
    if (m.springs.k_expression) {
      say("springs: 'k' is a formula; left as it is");
    } else {
      // The mean pull stretches a spring by at most s / 10, the peak pull by at most s / 2.
      const double k_mean = 10 * f_mean / spacing;
      const double k_peak = 2 * f_peak / spacing;
      // The floor (no pull at all) is relative to the friction's scale m beta², not an absolute
      // number: an absolute floor set the step of a trace stretched to 10^9 s (one corrupted
      // timestamp) to 100 s, 10^7 steps for two bodies.
      s.k = std::max({k_mean, k_peak, 1e-6 * mass * s.beta * s.beta});
      const double omega = std::sqrt(*s.k * std::max(degree_mean, 1.0) / mass);
      say("springs: k = max(10 F_mean / s, 2 F_peak / s) = " + fmt(*s.k) +
          ", so the mean pull deforms the shape by at most s / 10 and the peak by at most s / 2; damping ratio beta / (2 ω) = " +
          fmt(s.beta / (2 * omega)) + (s.beta / (2 * omega) < 0.3 ? " (springs will ring visibly)" : ""));
    }
  }
  const double k_used = s.k.value_or(model.spring_edges().empty() ? 0.0 : m.springs.k);
  if (!model.spring_edges().empty()) {
    s.repulsion = 0.0125 * k_used * spacing * spacing * spacing;
    say("repulsion: R = k s³ / 80 = " + fmt(*s.repulsion) +
        ": weak, it only keeps the mesh from shearing flat (R / s² is 1/80 of a spring's force at a stretch of s)");
  } else if (pull_max > 0) {
    s.repulsion = pull_max * 0.25 * spacing * spacing;
    say("repulsion: R = w_max (s/2)² = " + fmt(*s.repulsion) + ", so the strongest single pull (w_max = " + fmt(pull_max) +
        ") cannot bring a sender closer than half the spacing to its receiver");
  }
  // Stability of the explicit step: the fastest oscillation (springs, repulsion at s/2, friction).
  double omega2 = s.beta * s.beta;
  omega2 = std::max(omega2, k_used * std::max(degree_max, 1.0) / mass_min);
  if (s.repulsion) omega2 = std::max(omega2, 2 * *s.repulsion / (mass_min * std::pow(0.5 * spacing, 3)));
  const double dt_max = 0.1 / std::sqrt(omega2);
  s.dt = interval / std::ceil(interval / std::min(dt_max, interval) - 1e-9);
  say("step: the fastest oscillation has ω = " + fmt(std::sqrt(omega2)) + " /s; ten steps per radian (dt ≤ 0.1 / ω), dividing the interval: dt = " +
      fmt(s.dt));
  return s;
}

std::vector<SuggestedValue> suggested_values(const Suggestion& s) {
  std::vector<SuggestedValue> out;
  auto add = [&out](const char* section, const char* key, std::optional<double> v) {
    if (v) out.push_back({section, key, *v});
  };
  add("forces.friction", "beta", s.beta);
  add("forces.communication", "gain", s.gain);
  add("springs", "k", s.k);
  add("springs", "length", s.length);
  add("forces.repulsion", "strength", s.repulsion);
  add("simulation", "dt", s.dt);
  return out;
}

std::string write_values(const mapping::Mapping& m, const std::vector<SuggestedValue>& values, int digits) {
  std::string text = m.text;
  mapping::Mapping current = m;
  for (const auto& v : values) {
    text = mapping::set_value(text, current, v.section, v.key, mapping::toml_float(v.value, digits));
    current = mapping::parse_mapping_text(text, m.path);  // locations of the edited text
  }
  return text;
}

Calibration calibrate(const mapping::Mapping& m, const trace::Timeline& tl, const Layout* layout) {
  Calibration out;
  const Suggestion s = suggest_parameters(m, tl, m.mass.base, layout);
  std::vector<SuggestedValue> values;
  std::vector<SuggestedValue> suggested = suggested_values(s);
  // Springs critically damped for an idle body (k = m β² / 4): a light body follows a change of
  // forcing within a few relaxation times, a body ten times heavier is heavily overdamped and
  // lags far behind, so load shows as inertia. The repulsion keeps its ratio to the stiffness.
  const double reference_mass = m.mass.base;
  double k_ratio = 1;
  for (auto& v : suggested) {
    if (v.key == "k" && v.value > 0) {
      const double k = reference_mass * s.beta * s.beta / 4;
      k_ratio = k / v.value;
      v.value = k;
    }
  }
  for (auto& v : suggested) {
    if (v.key == "strength" && !m.springs.k_expression && m.springs.topology != mapping::SpringTopology::None) {
      v.value *= k_ratio;
    }
  }
  for (const SuggestedValue& v : suggested) {
    if (v.key == "length") continue;  // springs keep their initial lengths: the layout starts at rest
    if (m.locations.count(v.section + "." + v.key) != 0) continue;  // written by the user: kept
    if (v.section == "forces.repulsion" && !m.repulsion) continue;
    if (v.section == "forces.friction" && !m.friction) continue;
    values.push_back(v);
  }
  // An absolute gain (per unit of traffic and second) instead of a fraction of this trace's peak,
  // so that --calibrate-like can give another trace the same force per byte.
  bool absolute = false;
  if (m.communication && !m.communication->weight && m.communication->normalize &&
      m.locations.count("forces.communication.normalize") == 0) {
    const bool bytes = m.communication->quantity == mapping::CommunicationQuantity::Bytes;
    double peak = 0;
    for (const auto& p : tl.pairs) peak = std::max(peak, bytes ? p.bytes : static_cast<double>(p.messages));
    for (auto& v : values) {
      if (v.key == "gain" && peak > 0) {
        v.value = v.value * tl.interval_s / peak;
        absolute = true;
      }
    }
  }
  for (const auto& v : values) {
    out.notes.push_back("[" + v.section + "] " + v.key + " = " + fmt(v.value) + " (calibrated)");
  }
  out.text = write_values(m, values);
  if (absolute) {
    const mapping::Mapping current = mapping::parse_mapping_text(out.text, m.path);
    out.text = mapping::set_value(out.text, current, "forces.communication", "normalize", "\"none\"");
  }
  return out;
}

std::vector<SuggestedValue> calibration_of(const std::string& reference_text, double interval_s,
                                           const std::string& run_name) {
  const mapping::Mapping ref = mapping::parse_mapping_text(reference_text, run_name);
  std::vector<SuggestedValue> out;
  out.push_back({"simulation", "interval", interval_s});
  out.push_back({"simulation", "dt", ref.simulation.dt_s});
  if (ref.friction) out.push_back({"forces.friction", "beta", ref.friction->beta});
  if (ref.communication && !ref.communication->weight) {
    if (ref.communication->normalize) {
      throw InputError(FileLoc{run_name}, "its communication gain is relative to its own trace's peak traffic "
                                          "(normalize = \"max\"), so it cannot calibrate another run; simulate it "
                                          "with calibrate = \"auto\" and without 'normalize'");
    }
    out.push_back({"forces.communication", "gain", ref.communication->gain});
  }
  if (!ref.springs.k_expression && ref.springs.topology != mapping::SpringTopology::None) {
    out.push_back({"springs", "k", ref.springs.k});
  }
  if (ref.repulsion) out.push_back({"forces.repulsion", "strength", ref.repulsion->strength});
  return out;
}

}  // namespace kanoko::models
