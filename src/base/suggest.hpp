// "Did you mean ...?" for misspelt keys and names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kanoko {

/// Levenshtein distance between two strings.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The closest candidate within a distance that scales with the word's length, or "" if none.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// " (did you mean 'x'?)" or "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace kanoko
