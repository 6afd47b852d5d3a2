#include "src/base/json.hpp"

#include <cstdio>

namespace kanoko {

std::string json_string(std::string_view s, bool for_html) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || (for_html && (c == '<' || c == '>' || c == '&'))) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(u));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + '"';
}

}  // namespace kanoko
