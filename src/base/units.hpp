// Numbers with their units, as every statistic's text shows them (docs/statistics.md).
#pragma once

#include <string>

namespace kanoko {

/// A fraction as a percentage with one decimal: 0.55 → "55.0 %".
[[nodiscard]] std::string format_percent(double fraction);

}  // namespace kanoko
