#include "src/trace/locations.hpp"

#include <algorithm>
#include <charconv>

namespace kanoko::trace {

LocationIndex LocationTable::intern(std::string_view file, std::int64_t line, std::string_view function, LocationIndex caller) {
  file = file.substr(0, std::min(file.size(), kMaxNameBytes));
  function = function.substr(0, std::min(function.size(), kMaxNameBytes));
  if (line < 0) line = 0;
  if (file.empty() && line == 0 && function.empty()) return 0;
  // Names may hold any byte, so the key carries the file's length instead of a separator:
  // "<file size>:<file><line>:<function>:<caller>".
  char number[24];
  key_.clear();
  key_.append(number, std::to_chars(number, number + sizeof number, file.size()).ptr);
  key_ += ':';
  key_ += file;
  key_.append(number, std::to_chars(number, number + sizeof number, line).ptr);
  key_ += ':';
  key_ += function;
  key_ += ':';
  key_.append(number, std::to_chars(number, number + sizeof number, caller).ptr);
  const auto found = index_.find(key_);
  if (found != index_.end()) return found->second;
  if (index_.size() >= kMaxLocations) {
    full_ = true;
    return 0;
  }
  const auto index = static_cast<LocationIndex>(index_.size() + 1);
  index_.emplace(key_, index);
  sink_.on_location(index, CodeLocation{file, line, function, caller});
  return index;
}

}  // namespace kanoko::trace
