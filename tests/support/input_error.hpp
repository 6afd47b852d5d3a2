// The message of the InputError a piece of code throws, for tests of located errors.
#pragma once

#include <string>

#include "src/base/error.hpp"

namespace kanoko::test {

/// What `f()` throws as InputError (all its diagnostics, one per line), or "" when it throws none.
template <typename F>
std::string input_error_of(const F& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace kanoko::test
