#include "src/mapping/audio_section.hpp"

#include <sstream>

namespace kanoko::mapping {

const std::vector<std::string>& timbre_names() {
  static const std::vector<std::string> names{"sine", "triangle", "square", "pluck", "bell"};
  return names;
}

const char* to_string(Timbre t) { return timbre_names()[static_cast<std::size_t>(t)].c_str(); }

const char* to_string(CueEdge e) { return e == CueEdge::Enter ? "enter" : "leave"; }

const char* to_string(HrtfRequest h) {
  switch (h) {
    case HrtfRequest::Auto: return "auto";
    case HrtfRequest::On: return "on";
    case HrtfRequest::Off: return "off";
  }
  return "?";
}

std::vector<CueSpec> AudioSpec::effective_cues() const {
  if (!cues.empty()) return cues;
  return {CueSpec{}};
}

std::string check_rate_range(double low, double high) {
  if (std::isnan(low) || std::isnan(high)) return "'rate' bounds must be numbers, not nan";
  if (low >= high) {
    std::ostringstream os;
    os << "'rate' = [" << low << ", " << high
       << "] is an empty range: the low bound must be below the high bound";
    return os.str();
  }
  if (std::isinf(low) && std::isinf(high)) {
    return "'rate' = [-inf, inf] holds every rate, so the cue could never enter or leave it";
  }
  return "";
}

}  // namespace kanoko::mapping
