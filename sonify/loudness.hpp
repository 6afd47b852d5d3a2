// Loudness of a rendered sound track (EBU R128 / ITU-R BS.1770, measured by Debian's libebur128):
// the integrated loudness and the true peak of a stereo signal, and the gain that brings it to a
// target loudness without its true peak passing a ceiling. `kanoko render --audio` normalises its
// track with it (docs/sound.md).
#pragma once

#include <memory>
#include <span>
#include <string>

namespace kanoko::sonify {

/// Loudness target of a rendered sound track: -16 LUFS integrated (a common target for speech and
/// music on the web and in reports), never above -1 dBTP true peak.
inline constexpr double kTargetLoudness_lufs = -16.0;
inline constexpr double kTruePeakCeiling_dbtp = -1.0;

/// Measures interleaved stereo samples fed in blocks (EBU R128 integrated loudness, true peak).
class LoudnessMeter {
 public:
  explicit LoudnessMeter(int sample_rate_hz);
  ~LoudnessMeter();
  LoudnessMeter(const LoudnessMeter&) = delete;
  LoudnessMeter& operator=(const LoudnessMeter&) = delete;
  void add(std::span<const float> interleaved_stereo);
  /// Integrated loudness in LUFS; -inf for silence (nothing above the absolute gate, -70 LUFS).
  [[nodiscard]] double integrated_lufs() const;
  /// Largest true peak of both channels, in dBTP (-inf for silence).
  [[nodiscard]] double true_peak_dbtp() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The gain for a track of `integrated_lufs` and `true_peak_dbtp`.
struct LoudnessGain {
  double gain_db = 0;            ///< to apply (0 for silence)
  double loudness_lufs = 0;      ///< after the gain (-inf for silence)
  double true_peak_dbtp = 0;     ///< after the gain
  bool peak_limited = false;     ///< the ceiling kept the track below the target
  [[nodiscard]] double linear() const;
};
/// Brings the track to `target_lufs` unless its true peak would pass `ceiling_dbtp`; then only up
/// to the ceiling (peak_limited).
[[nodiscard]] LoudnessGain loudness_gain(double integrated_lufs, double true_peak_dbtp,
                                         double target_lufs = kTargetLoudness_lufs,
                                         double ceiling_dbtp = kTruePeakCeiling_dbtp);

}  // namespace kanoko::sonify
