#include "src/profile/located.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "src/base/error.hpp"
#include "src/base/progress.hpp"
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
  if (!(s.end_s > s.begin_s) || !(s.end_s > 0)) return;  // no time to count in the bins from 0
  std::size_t cls = 0;
  switch (classifier_.classify(s.name)) {
    case trace::StateCategory::Computing: cls = LocatedSeconds::kComputing; break;
    case trace::StateCategory::Communicating: cls = LocatedSeconds::kCommunicating; break;
    case trace::StateCategory::Idle: cls = LocatedSeconds::kWaiting; break;
    case trace::StateCategory::None: return;
  }
  const double width = options_.interval_s;
  const std::size_t per_bin = result_.quantities * LocatedSeconds::kClasses;
  // The bins the state overlaps (the last one holds its end), each counted by the profile's rule
  // for that range.
  const double first = std::floor(std::max(s.begin_s, 0.0) / width);
  const double last = std::floor(s.end_s / width);
  if (!(last < static_cast<double>(kMaxValues / per_bin))) {
    throw InputError(FileLoc{}, "[locations]: a state ends at " + format_seconds(s.end_s) + ", which with " +
                                    std::to_string(result_.quantities) + " names and intervals of " + format_seconds(width) +
                                    " needs more than " + std::to_string(kMaxValues) +
                                    " values; name fewer call sites or use a larger interval");
  }
  if (seconds_.size() <= s.entity) seconds_.resize(std::size_t{s.entity} + 1);
  std::vector<double>& mine = seconds_[s.entity];
  const std::size_t size = (static_cast<std::size_t>(last) + 1) * per_bin;
  if (mine.size() < size) {
    values_ += size - mine.size();
    if (values_ > kMaxValues) {
      throw InputError(FileLoc{}, "[locations]: " + std::to_string(result_.quantities) + " names over " +
                                      std::to_string(seconds_.size()) + "+ entities and intervals of " +
                                      format_seconds(width) + " need more than " + std::to_string(kMaxValues) +
                                      " values; name fewer call sites or use a larger interval");
    }
    mine.resize(std::max(size, std::min(2 * mine.size(), size + 64 * per_bin)), 0.0);
    values_ += mine.size() - size;
  }
  const std::uint64_t quantities = mask_[s.location];
  for (auto b = static_cast<std::size_t>(first); b <= static_cast<std::size_t>(last); ++b) {
    const double from = static_cast<double>(b) * width;
    const double part = state_part(s, from, from + width);
    if (part <= 0) continue;
    for (std::uint64_t mask = quantities; mask != 0; mask &= mask - 1) {
      const auto q = static_cast<std::size_t>(__builtin_ctzll(mask));
      mine[(b * result_.quantities + q) * LocatedSeconds::kClasses + cls] += part;
    }
  }
}

LocatedSeconds LocatedTime::take(std::size_t bins, std::size_t entities) {
  LocatedSeconds r = std::move(result_);
  r.bins = bins;
  r.entities = entities;
  r.seconds.assign(r.quantities * bins * entities * LocatedSeconds::kClasses, 0.0);
  for (std::size_t e = 0; e < std::min(entities, seconds_.size()); ++e) {
    const std::vector<double>& mine = seconds_[e];
    const std::size_t per_bin = r.quantities * LocatedSeconds::kClasses;
    for (std::size_t b = 0; b < std::min(bins, mine.size() / std::max<std::size_t>(per_bin, 1)); ++b) {
      for (std::size_t q = 0; q < r.quantities; ++q) {
        for (std::size_t c = 0; c < LocatedSeconds::kClasses; ++c) {
          r.seconds[((q * bins + b) * entities + e) * LocatedSeconds::kClasses + c] =
              mine[(b * r.quantities + q) * LocatedSeconds::kClasses + c];
        }
      }
    }
  }
  seconds_.clear();
  values_ = 0;
  return r;
}

}  // namespace kanoko::profile
