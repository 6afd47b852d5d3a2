// Rewriting values in a mapping's text while keeping everything else (comments, order, layout):
// used by `kanoko suggest -o` and the viewer's save; and which force parameters of a mapping the
// viewer's paused panel may tune. A hand-written scanner, no regular
// expressions: a line of any length costs its length.
#pragma once

#include <string>
#include <vector>

#include "src/mapping/mapping.hpp"

namespace kanoko::mapping {

/// Sets `section`.`key` = `value` (TOML text such as "2.5") in the mapping's text. A key that is
/// given is replaced in place (its comment stays); a missing key is added under its section's
/// header, or in a new section at the end. Returns the new text. Throws InputError if the key
/// holds a formula or an array (it is left to the user) — callers check with is_formula first.
/// `v` as TOML float text with `digits` significant digits, always with a decimal point or an
/// exponent so that it reads back as a float ("2.0", "0.015625", "1e-05").
std::string toml_float(double v, int digits = 6);

std::string set_value(const std::string& text, const Mapping& m, const std::string& section, const std::string& key,
                      const std::string& value);

/// A force parameter the paused panel can change.
struct Tunable {
  std::string section;  ///< TOML table, e.g. "forces.friction"
  std::string key;      ///< e.g. "beta"
  std::string label;    ///< short name in the panel, e.g. "friction b"
  double value = 0;
};

/// The force parameters of `mapping_text` that can be tuned (those its forces use and that are
/// plain numbers): repulsion R, spring stiffness k, friction β, communication gain.
[[nodiscard]] std::vector<Tunable> tunables(const std::string& mapping_text, const std::string& name);

}  // namespace kanoko::mapping
