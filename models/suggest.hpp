// `kanoko suggest`: parameters from the paper's energy argument. On average friction must
// dissipate more energy than the communication forcing puts in (else the system heats up), and
// bodies should move at a comfortable mean speed: a tenth of the body spacing per relaxation
// time 1/β. Springs then hold the shape against the forcing and the repulsion keeps bodies apart.
#pragma once

#include <optional>
#include <string>
#include <vector>

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

/// Measures the trace under the mapping (masses, forcing per body, spacing, degrees) and
/// proposes parameters. Throws InputError when the mapping does not fit the trace.
Suggestion suggest_parameters(const mapping::Mapping& m, const trace::Timeline& tl);

}  // namespace kanoko::models
