// Traces with iteration markers, for the tests of iter:K windows.
#pragma once

#include <cstdio>
#include <string>

namespace kanoko::test {

/// A Chrome JSON trace of three ranks (pids 0..2) doing five iterations: iteration k of rank r
/// starts at k + 0.01 r seconds with a 0.5 s slice "compute", marked by an instant event
/// "iteration" when `instants`; a slice "setup" at 0 fixes the time origin. Ends at 5.52 s.
inline std::string chrome_iterations_json(bool instants) {
  const auto us = [](double seconds) {
    char b[32];
    std::snprintf(b, sizeof b, "%.0f", seconds * 1e6);
    return std::string(b);
  };
  std::string out = "[{\"name\": \"setup\", \"ph\": \"X\", \"pid\": 0, \"tid\": 0, \"ts\": 0, \"dur\": 1000}";
  for (int k = 1; k <= 5; ++k) {
    for (int r = 0; r < 3; ++r) {
      const std::string at = "\"pid\": " + std::to_string(r) + ", \"tid\": 0, \"ts\": " + us(k + 0.01 * r);
      if (instants) out += ",\n{\"name\": \"iteration\", \"ph\": \"i\", \"s\": \"t\", " + at + "}";
      out += ",\n{\"name\": \"compute\", \"ph\": \"X\", " + at + ", \"dur\": 500000}";
    }
  }
  return out + "\n]\n";
}

}  // namespace kanoko::test
