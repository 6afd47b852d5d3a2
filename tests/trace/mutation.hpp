// Deterministic input mutation for the readers' hostile-input tests: byte flips, random bytes,
// erased runs and inserted tokens, as a fuzzer would try them, but reproducible in the test suite.
#pragma once

#include <cstddef>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace kanoko::trace::testing {

/// Applies one random edit to `s`: flip a bit, insert a random byte, erase up to 15 bytes, or
/// insert one of `tokens`.
inline void mutate_once(std::string& s, std::mt19937_64& rng, const std::vector<std::string>& tokens) {
  const std::size_t pos = rng() % (s.size() + 1);
  switch (rng() % 4) {
    case 0:
      if (pos < s.size()) s[pos] = static_cast<char>(s[pos] ^ static_cast<char>(1U << (rng() % 8)));
      break;
    case 1: s.insert(pos, 1, static_cast<char>(rng() % 256)); break;
    case 2: s.erase(pos, rng() % 16); break;
    default: s.insert(pos, tokens[rng() % tokens.size()]); break;
  }
}

/// A Paraver trace's three files in one input, as the fuzzer and the mutation tests mutate them:
/// the .prv, then form feed + .pcf, then form feed + .row (missing parts are empty).
struct ParaverBundle {
  std::string_view prv, pcf, row;
};

/// Splits `bundle` at its first two form feeds.
inline ParaverBundle split_paraver_bundle(std::string_view bundle) {
  ParaverBundle b{bundle, {}, {}};
  if (const std::size_t a = b.prv.find('\f'); a != std::string_view::npos) {
    b.pcf = b.prv.substr(a + 1);
    b.prv = b.prv.substr(0, a);
    if (const std::size_t c = b.pcf.find('\f'); c != std::string_view::npos) {
      b.row = b.pcf.substr(c + 1);
      b.pcf = b.pcf.substr(0, c);
    }
  }
  return b;
}

}  // namespace kanoko::trace::testing
