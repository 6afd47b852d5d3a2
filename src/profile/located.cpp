#include "src/profile/located.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "src/profile/profile.hpp"

namespace kanoko::profile {

namespace {
constexpr std::size_t kExamples = 3;  ///< labels kept per quantity for messages
}  // namespace

LocatedTime::LocatedTime(LocatedOptions options)
    : options_(std::move(options)),
      classifier_(options_.computing, options_.communicating, options_.idle, options_.mpi_call_table) {
  if (options_.matchers.size() > kMaxQuantities) {
    throw std::invalid_argument("at most " + std::to_string(kMaxQuantities) + " named code locations");
  }
  if (!(options_.interval_s > 0) || !std::isfinite(options_.interval_s)) {
    throw std::invalid_argument("the interval of located time must be > 0");
  }
  result_.quantities = options_.matchers.size();
  result_.matched_locations.assign(result_.quantities, 0);
  result_.examples.resize(result_.quantities);
  mask_.push_back(0);  // index 0: no location
}

void LocatedTime::on_location(trace::LocationIndex index, const trace::CodeLocation& l) {
  if (index == 0) return;
  if (mask_.size() <= index) mask_.resize(std::size_t{index} + 1, 0);
  ++result_.locations;
  const std::string label = site_label(l.file, l.line, l.function);
  std::uint64_t mask = 0;
  for (std::size_t q = 0; q < options_.matchers.size(); ++q) {
    if (!options_.matchers[q](l, label)) continue;
    mask |= std::uint64_t{1} << q;
    ++result_.matched_locations[q];
    if (result_.examples[q].size() < kExamples) result_.examples[q].push_back(printable(label));
  }
  mask_[index] = mask;
}

void LocatedTime::on_state(const trace::StateInterval& s) {
  if (s.location == 0 || s.location >= mask_.size() || mask_[s.location] == 0) return;
  if (!(s.end_s > s.begin_s)) return;  // no time to count
  std::uint8_t cls = 0;
  switch (classifier_.classify(s.name)) {
    case trace::StateCategory::Computing: cls = LocatedSeconds::kComputing; break;
    case trace::StateCategory::Communicating: cls = LocatedSeconds::kCommunicating; break;
    case trace::StateCategory::Idle: cls = LocatedSeconds::kWaiting; break;
    case trace::StateCategory::None: return;
  }
  pieces_.push_back(Piece{s.begin_s, s.end_s, mask_[s.location], s.entity, cls});
}

LocatedSeconds LocatedTime::take(std::size_t bins, std::size_t entities) {
  LocatedSeconds r = std::move(result_);
  r.bins = bins;
  r.entities = entities;
  r.seconds.assign(r.quantities * bins * entities * LocatedSeconds::kClasses, 0.0);
  const double width = options_.interval_s;
  for (const Piece& p : pieces_) {
    if (p.entity >= entities || bins == 0) continue;
    trace::StateInterval s;
    s.begin_s = p.begin_s;
    s.end_s = p.end_s;
    s.entity = p.entity;
    // The bins the state overlaps, each counted by the profile's rule for that range.
    const double first = std::floor(std::max(p.begin_s, 0.0) / width);
    for (auto b = static_cast<std::size_t>(std::min(first, static_cast<double>(bins))); b < bins; ++b) {
      const double from = static_cast<double>(b) * width;
      if (from >= p.end_s) break;
      const double part = state_part(s, from, from + width);
      if (part <= 0) continue;
      for (std::uint64_t mask = p.quantities; mask != 0; mask &= mask - 1) {
        const auto q = static_cast<std::size_t>(__builtin_ctzll(mask));
        r.seconds[((q * bins + b) * entities + p.entity) * LocatedSeconds::kClasses + p.cls] += part;
      }
    }
  }
  pieces_.clear();
  pieces_.shrink_to_fit();
  return r;
}

}  // namespace kanoko::profile
