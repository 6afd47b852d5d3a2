// Who talks to whom, from the trajectory's per-interval traffic (section `traffic`, format 1.1):
// the springs' traffic colours, the communication flashes of the current interval, a body's top
// partners and a spring's pair traffic in the inspect panel. Pure computation over
// trajectory::Metadata (no OpenSceneGraph), so it is tested directly; shared by the desktop viewer
// (src/scene) and the web page (src/share).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "src/trajectory/trajectory.hpp"

namespace kanoko::trajectory {

/// Bytes and messages one way between two bodies.
struct Flow {
  double bytes = 0;
  double messages = 0;
};

/// A line to draw between two communicating bodies in the current interval.
struct Flash {
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  double bytes = 0;     ///< both ways, in the interval
  float intensity = 0;  ///< 0..1: the pair's bytes (both ways) relative to the interval's largest
};

/// The flashes and spring loads of one interval, recomputed only when the interval changes.
class IntervalTraffic {
 public:
  /// At most this many flashes are drawn (the largest pairs): beyond that, lines are noise.
  static constexpr std::size_t kMaxFlashes = 4096;

  explicit IntervalTraffic(const trajectory::Metadata& meta);

  /// Switches to interval `bin` (no work if it is the current one).
  void set_interval(std::size_t bin);
  [[nodiscard]] std::size_t interval() const { return bin_; }
  /// Bytes carried (both ways) between the ends of each spring in the current interval.
  [[nodiscard]] std::span<const double> spring_bytes() const { return spring_bytes_; }
  /// The largest of spring_bytes() (0 when no spring carries traffic).
  [[nodiscard]] double max_spring_bytes() const { return max_spring_bytes_; }
  /// Communicating pairs of the current interval (unordered, both ways summed), largest first.
  [[nodiscard]] std::span<const Flash> flashes() const { return flashes_; }

 private:
  const trajectory::Metadata* meta_;
  std::unordered_map<std::uint64_t, std::size_t> edge_of_pair_;
  std::size_t bin_ = static_cast<std::size_t>(-1);
  std::vector<double> spring_bytes_;
  double max_spring_bytes_ = 0;
  std::vector<Flash> flashes_;
  std::unordered_map<std::uint64_t, double> pair_bytes_;  ///< scratch, reused between intervals
};

/// Traffic between `body` and one partner.
struct Partner {
  std::uint32_t body = 0;
  Flow sent;      ///< from `body` to the partner
  Flow received;  ///< from the partner to `body`
  [[nodiscard]] double total_bytes() const { return sent.bytes + received.bytes; }
};

/// Running totals of one body's traffic with each partner through an interval. Moving forward
/// adds only the new intervals, so following a selected body during playback costs the traffic
/// of the intervals played, not of the whole run; moving back or to another body starts over.
class PartnerTotals {
 public:
  /// Every partner of `body` through interval `bin` (inclusive), by partner index.
  const std::unordered_map<std::uint32_t, Partner>& through(const trajectory::Metadata& meta, std::uint32_t body,
                                                            std::size_t bin);
  /// The partners with the most bytes (both ways), largest first, at most `limit`.
  [[nodiscard]] std::vector<Partner> top(const trajectory::Metadata& meta, std::uint32_t body, std::size_t bin,
                                         std::size_t limit);

 private:
  std::uint32_t body_ = 0;
  std::size_t through_ = 0;  ///< intervals [0, through_) are summed
  bool valid_ = false;
  std::unordered_map<std::uint32_t, Partner> partners_;
};

/// Traffic a → b and b → a in interval `bin` alone.
[[nodiscard]] std::array<Flow, 2> interval_flows(const trajectory::Metadata& meta, std::uint32_t a, std::uint32_t b,
                                                 std::size_t bin);

}  // namespace kanoko::trajectory
