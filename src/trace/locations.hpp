// The code location table of one trace, as readers build it: each distinct (file, line, function,
// caller) gets the next index and is announced to the sink once (TraceSink::on_location); events
// then carry the index alone, so a location costs a few bytes per event.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "src/trace/event.hpp"

namespace kanoko::trace {

class LocationTable {
 public:
  /// Locations a trace may define; past it intern() returns 0 (no location) and full() is true.
  static constexpr std::size_t kMaxLocations = std::size_t{1} << 22U;
  /// Bytes of a file or function name kept; a longer name is cut there (a hostile trace's
  /// megabyte-long name is no use to anyone reading a profile).
  static constexpr std::size_t kMaxNameBytes = 1024;

  explicit LocationTable(TraceSink& sink) : sink_(sink) {}

  /// The index of the location, announcing it to the sink when it is new; 0 when every part is
  /// unknown (no file, line and function) or the table is full. `caller` must be 0 or an index
  /// this table returned.
  LocationIndex intern(std::string_view file, std::int64_t line, std::string_view function, LocationIndex caller = 0);

  [[nodiscard]] std::size_t size() const { return index_.size(); }
  [[nodiscard]] bool full() const { return full_; }

 private:
  TraceSink& sink_;
  std::unordered_map<std::string, LocationIndex> index_;
  std::string key_;
  bool full_ = false;
};

}  // namespace kanoko::trace
