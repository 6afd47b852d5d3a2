// Sound cues from trajectory data: a cue fires for a body when the rate of change of a watched
// quantity enters (or leaves) a range. Pure computation over the stored frames, no OpenAL, so it
// is tested without audio hardware. Playback (engine.hpp) and the offline renderer (offline.hpp)
// only consume the cue lists made here.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "src/mapping/audio_section.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::sonify {

/// A mapping cue resolved against one run: the quantity is a statistic row or the speed.
struct CueRule {
  std::string quantity;  ///< as written in the mapping ("load", "speed", ...)
  int stat_row = -1;     ///< row in the frame's statistics; -1 means the body's speed |v|
  double rate_min = 0;   ///< quantity units per trace second
  double rate_max = std::numeric_limits<double>::infinity();
  mapping::CueEdge edge = mapping::CueEdge::Enter;
  double refractory_s = 0;  ///< trace seconds
  double gain = 1;
  /// The mapping's formulas for the bounds (Scope::Cue), replacing rate_min / rate_max.
  std::optional<mapping::ExpressionSpec> rate_min_formula, rate_max_formula;
  /// Per-body bounds, one per body, when a bound is a formula (resolve_cue_thresholds).
  std::vector<double> body_min, body_max;
};

/// One cue: body `body` fired rule `rule` at trace time `time_s`.
struct Cue {
  double time_s = 0;
  std::uint32_t body = 0;
  std::uint32_t rule = 0;
  float gain = 1;     ///< the rule's gain
  double rate = 0;    ///< the rate of change that crossed the range edge
};

/// The [audio] section of the mapping stored in the run (defaults if the run stores none);
/// `run` names the run file in error locations.
[[nodiscard]] mapping::AudioSpec stored_audio_section(const trajectory::Reader& reader,
                                                      const std::string& run);

/// The quantities a cue can watch in this run: every per-body statistic, and "speed".
[[nodiscard]] std::vector<std::string> watchable_quantities(const trajectory::Metadata& meta);

/// Resolves the mapping's cues (AudioSpec::effective_cues) against the run. Throws InputError at
/// the cue's location in the mapping for a quantity the run does not store (with a suggestion).
[[nodiscard]] std::vector<CueRule> resolve_cue_rules(const mapping::AudioSpec& audio,
                                                     const trajectory::Metadata& meta);

/// Evaluates the rules' bound formulas for every body of the run: their variables are the
/// statistics of each body's rate of the watched quantity over the stored frames (mean, standard
/// deviation, largest absolute value; and the same over all bodies). Fills body_min / body_max.
/// Throws InputError at the formula for a bound that is not a number or a range that is empty for
/// some body (naming the body).
void resolve_cue_thresholds(std::vector<CueRule>& rules, const trajectory::Reader& reader);

/// Detects cues frame by frame. The rate of frame k is (q_k − q_{k−1}) / (t_k − t_{k−1}); a cue
/// fires at t_k when that rate is inside [rate_min, rate_max] and the previous one was not (Enter),
/// or the reverse (Leave). Before the first rate a body counts as outside the range. After firing,
/// the same body and rule stay silent for the refractory time (crossings in it are dropped).
class CueDetector {
 public:
  CueDetector(std::vector<CueRule> rules, std::size_t body_count);

  /// Feeds the next frame (times increasing): `values` is rules × bodies, the watched quantity of
  /// each rule for each body. New cues are appended to `out` in body order.
  void feed(double time_s, const Eigen::MatrixXd& values, std::vector<Cue>& out);

  /// The watched quantities of one frame, rules × bodies, as feed() wants them.
  void values_of(const trajectory::FrameView& frame, Eigen::MatrixXd& out) const;

  [[nodiscard]] const std::vector<CueRule>& rules() const { return rules_; }

 private:
  std::vector<CueRule> rules_;
  std::size_t body_count_;
  bool have_previous_ = false;
  double previous_time_s_ = 0;
  Eigen::MatrixXd previous_;
  std::vector<std::uint8_t> inside_;         ///< rules × bodies, rule-major
  std::vector<double> last_fire_s_;          ///< rules × bodies
};

/// The smallest and largest rate of a rule's quantity over all bodies and stored frames.
struct RateRange {
  double min = 0, max = 0;
  std::size_t count = 0;  ///< rates seen (0: the run has fewer than two distinct frame times)
};
/// The observed rate range of each rule (one pass over the frames).
[[nodiscard]] std::vector<RateRange> observed_rates(const trajectory::Reader& reader,
                                                    const std::vector<CueRule>& rules);

/// Why the rules fire no cue on this run, one clause per rule: what it watches and the range the
/// rate actually covers ("cue 1 watches the rate of 'load' entering [1, inf] per trace second, but
/// over the run it stays within [-0.5, 0.4]"). For the warning of a silent render.
[[nodiscard]] std::string why_no_cues(const trajectory::Reader& reader, const std::vector<CueRule>& rules);

/// Every cue of the run, sorted by time, then body, then rule (bound formulas resolved first).
[[nodiscard]] std::vector<Cue> detect_cues(const trajectory::Reader& reader,
                                           const std::vector<CueRule>& rules);

/// Merges the cues of one body that fall inside the same frame of the grid origin_s + k·period_s
/// (k = floor((t − origin) / period)): one cue at the earliest time with the largest gain.
[[nodiscard]] std::vector<Cue> merge_cues_per_frame(const std::vector<Cue>& sorted_cues,
                                                    double origin_s, double period_s);

/// Applies the global voice cap: each cue sounds for `duration_s` (trace seconds) and at most
/// `max_voices` sound at once; a cue that would exceed the cap is dropped. Among cues starting at
/// the same time the loudest (then lowest body index) are kept. Input and output sorted by time.
[[nodiscard]] std::vector<Cue> cap_voices(const std::vector<Cue>& sorted_cues,
                                          std::uint32_t max_voices, double duration_s);

/// Live playback: the cues crossed when the replay clock moved from `from_s` to `to_s` in one
/// continuous step (either direction; the time at `from_s` itself was handled by the previous
/// step). One cue per body (merged: earliest crossed, largest gain). Nothing when from == to.
void cues_crossed(const std::vector<Cue>& sorted_cues, double from_s, double to_s,
                  std::vector<Cue>& out);

}  // namespace kanoko::sonify
