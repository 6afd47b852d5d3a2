#include "src/trace/markers.hpp"

#include <algorithm>
#include <cctype>

namespace kanoko::trace {

bool names_iteration(std::string_view name) {
  const auto lower_equal = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  };
  return std::any_of(std::begin(kIterationWords), std::end(kIterationWords), [&](std::string_view word) {
    return std::search(name.begin(), name.end(), word.begin(), word.end(), lower_equal) != name.end();
  });
}

}  // namespace kanoko::trace
