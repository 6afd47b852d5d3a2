// The timeline: a trace binned into fixed intervals (the paper sampled every 0.1 s). It is what
// the model reads: per interval, traffic per ordered pair and load per entity. Built in one
// streaming pass; memory grows with entities × intervals and active pairs, not with events.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "src/trace/event.hpp"

namespace kanoko::trace {

/// Traffic from one entity to another within one interval.
struct PairTraffic {
  EntityIndex src = 0;
  EntityIndex dst = 0;
  double bytes = 0;
  std::uint32_t messages = 0;
};

/// What a binned trace holds.
struct Timeline {
  double begin_s = 0;     ///< trace time of the start of bin 0
  double interval_s = 0;  ///< bin width
  double end_s = 0;       ///< end of the traced run
  std::vector<Entity> entities;
  std::vector<Link> links;
  std::size_t bin_count = 0;
  /// Time-mean of the sampled load over each bin, [bin * entity_count + entity].
  std::vector<double> load;
  /// Seconds spent in a busy state during each bin, [bin * entity_count + entity].
  std::vector<double> busy_s;
  /// Traffic of bin b is pairs[pair_begin[b] .. pair_begin[b+1]), sorted by (src, dst).
  std::vector<std::size_t> pair_begin;
  std::vector<PairTraffic> pairs;
  std::uint64_t message_count = 0;
  std::uint64_t load_sample_count = 0;
  std::uint64_t state_count = 0;

  [[nodiscard]] std::size_t entity_count() const { return entities.size(); }
  [[nodiscard]] std::span<const PairTraffic> traffic(std::size_t bin) const {
    return {pairs.data() + pair_begin[bin], pair_begin[bin + 1] - pair_begin[bin]};
  }
  [[nodiscard]] double load_at(std::size_t bin, EntityIndex e) const { return load[bin * entity_count() + e]; }
  [[nodiscard]] double busy_fraction(std::size_t bin, EntityIndex e) const {
    return busy_s[bin * entity_count() + e] / interval_s;
  }
  /// Bin holding time t (clamped to [0, bin_count - 1]).
  [[nodiscard]] std::size_t bin_of(double t) const;
};

/// Options of the binning.
struct TimelineOptions {
  double interval_s = 0.1;
  /// State names counted as busy in busy_s.
  std::vector<std::string> busy_states{"compute"};
};

/// A TraceSink that bins the stream into a Timeline.
class TimelineBuilder final : public TraceSink {
 public:
  explicit TimelineBuilder(TimelineOptions options);

  void on_entity(const Entity& e) override;
  void on_link(const Link& l) override;
  void on_message(const Message& m) override;
  void on_load(const LoadSample& s) override;
  void on_state(const StateInterval& s) override;
  void on_end(double end_s) override;

  /// The finished timeline (after on_end). Moves it out.
  Timeline take();

 private:
  void ensure_bins(std::size_t count);
  void flush_traffic_until(std::size_t bin);
  void integrate_load(EntityIndex e, double until_s);
  void add_interval(std::vector<double>& per_bin, EntityIndex e, double begin_s, double end_s, double weight);

  TimelineOptions options_;
  Timeline tl_;
  bool ended_ = false;
  // Traffic of the bin being filled, keyed by (src << 32 | dst); flushed in sorted order.
  std::size_t open_bin_ = 0;
  std::vector<std::pair<std::uint64_t, PairTraffic>> open_pairs_;
  std::vector<double> last_load_time_s_;
  std::vector<double> last_load_value_;
};

}  // namespace kanoko::trace
