// Fuzz target run_mapping (libFuzzer, and the replay test): any bytes as a mapping file. Accepting
// or throwing kanoko::InputError are the only allowed outcomes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "tests/fuzz/targets.hpp"
#include "src/mapping/mapping.hpp"

void kanoko::fuzz::run_mapping(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const kanoko::mapping::Mapping m = kanoko::mapping::parse_mapping_text(text, "fuzz.toml");
    g_count_sink = m.bodies.positions.size() + m.springs.edges.size() + m.locations.size() + m.where("bodies.placement").str().size();
    // Every accepted formula compiles and evaluates (a non-finite value is the caller's to report).
    std::vector<double> values(std::size_t{kanoko::mapping::kBodyVarCount} + std::size_t{kanoko::mapping::kPairVarCount}, 0.5);
    for (const auto* spec : kanoko::mapping::expressions(m)) {
      const kanoko::mapping::Expression e(*spec, values.data());
      g_count_sink = g_count_sink + (e.eval() > 0 ? 1U : 0U);
    }
  } catch (const kanoko::InputError&) {
  }
}
