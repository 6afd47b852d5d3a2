// `kanoko suggest`: parameters from the paper's energy argument. On average friction must
// dissipate more energy than the communication forcing puts in (else the system heats up), and
// bodies should move at a comfortable mean speed: a tenth of the body spacing per relaxation
// time 1/β. Springs then hold the shape against the forcing and the repulsion keeps bodies apart.
#pragma once

#include <Eigen/Core>
#include <optional>
#include <string>
#include <vector>

#include "models/layout.hpp"
#include "src/mapping/mapping.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::models {

struct Suggestion {
  double beta = 0;                  ///< [forces.friction] beta
  std::optional<double> gain;       ///< [forces.communication] gain (none: no traffic, or a weight formula)
  std::optional<double> k;          ///< [springs] k (none: no springs, or a stiffness formula)
  std::optional<double> length;     ///< [springs] length (none: no springs)
  std::optional<double> repulsion;  ///< [forces.repulsion] strength
  double dt = 0;                    ///< [simulation] dt
  std::vector<std::string> reasoning;  ///< the argument, one line each, with the trace's figures
};

/// Mean distance from each body to its nearest other body (sampled above 4000 bodies);
/// `fallback` for fewer than two bodies.
double mean_spacing(const Eigen::Matrix3Xd& x, double fallback);

/// One value of a suggestion, as `kanoko suggest -o` and calibration write it.
struct SuggestedValue {
  std::string section;  ///< "forces.friction"
  std::string key;      ///< "beta"
  double value = 0;
};
/// The values of a suggestion that it has, in a fixed order: beta, gain, k, length, repulsion, dt.
std::vector<SuggestedValue> suggested_values(const Suggestion& s);

/// Writes `values` into the mapping's text (mapping::set_value: comments and layout kept) and
/// returns the new text, each value with `digits` significant digits.
std::string write_values(const mapping::Mapping& m, const std::vector<SuggestedValue>& values, int digits = 6);

/// A mapping with `[simulation] calibrate = "auto"` made concrete for one timeline.
struct Calibration {
  std::string text;                 ///< the mapping's text with every calibrated value written
  std::vector<std::string> notes;   ///< one line per calibrated value, and why
};
/// Calibrates `m` for `tl` by the energy argument (suggest_parameters): friction, gain, stiffness,
/// repulsion and dt, relative to the interval and the body spacing. Keys the mapping writes keep
/// their values; spring lengths stay the initial ones (the starting layout is at rest). Unless the
/// mapping writes `normalize`, the gain is written as an absolute scale (`normalize = "none"`, per
/// unit of traffic and second), so that another run can share this calibration.
/// `layout`: as Model's, when the caller has it.
Calibration calibrate(const mapping::Mapping& m, const trace::Timeline& tl, const Layout* layout = nullptr);

/// The values of a calibrated run that make it a reference for others: its interval in trace
/// seconds (`interval_s`, from the run's metadata), and from its mapping text dt, friction, gain
/// (absolute, `normalize = "none"`), stiffness and repulsion. `run_name` is used in messages.
/// Throws InputError when the reference's gain is relative to its own trace's peak.
std::vector<SuggestedValue> calibration_of(const std::string& reference_text, double interval_s,
                                           const std::string& run_name);

/// Measures the trace under the mapping (masses, forcing per body, spacing, degrees) and
/// proposes parameters for the mean mass, or for `reference_mass` when given (calibration uses
/// the idle mass, so that constants never undo the masses). Throws InputError when the mapping
/// does not fit the trace. `layout`: as Model's, when the caller has it.
Suggestion suggest_parameters(const mapping::Mapping& m, const trace::Timeline& tl,
                              std::optional<double> reference_mass = std::nullopt, const Layout* layout = nullptr);

}  // namespace kanoko::models
