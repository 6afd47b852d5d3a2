#include "src/base/units.hpp"

#include <cstdio>

namespace kanoko {

std::string format_percent(double fraction) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100 * fraction);
  return buf;
}

}  // namespace kanoko
