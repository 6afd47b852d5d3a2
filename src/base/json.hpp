// Writing JSON by hand (the few places that emit it: `kanoko info --json`, the shared page).
#pragma once

#include <string>
#include <string_view>

namespace kanoko {

/// `s` as a JSON string literal, quotes included: " and \ escaped, control characters as \u00XX.
/// With `for_html`, also < > & (as \u003c …), so the text can sit inside an HTML <script> block
/// without ending it.
[[nodiscard]] std::string json_string(std::string_view s, bool for_html = false);

}  // namespace kanoko
