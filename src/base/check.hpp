// Assertions for broken invariants (programmer errors). They stay on in every build type, as in
// Box2D's B2_ENABLE_ASSERT: an optimised build is where a wrong index would do the most damage.
#pragma once

namespace kanoko {
[[noreturn]] void assertion_failed(const char* expr, const char* file, int line, const char* msg);
}

#define KANOKO_ASSERT(cond, msg)                                                                  \
  do {                                                                                           \
    if (!(cond)) ::kanoko::assertion_failed(#cond, __FILE__, __LINE__, msg);                     \
  } while (false)
