// Live playback for the viewer: each frame, the cues the replay clock crossed since the last frame
// start at their bodies, sounding voices follow their bodies, and the listener follows the camera.
// Pause, reverse, seek and speed changes behave sensibly:
// - paused: sounding voices pause, nothing new starts; play resumes them;
// - a jump (seek, restart, frame step) stops every voice and fires nothing for the skipped span,
//   so there is never a backlog of stale cues;
// - reversed: cues fire as the clock crosses them backwards, velocities are reversed (Doppler);
// - speed: Doppler uses trace-time velocities, so pitch does not follow the playback speed unless
//   the mapping asks for it (pitch_follows_speed).
#pragma once

#include <vector>

#include "sonify/cues.hpp"
#include "sonify/engine.hpp"
#include "sonify/voices.hpp"

namespace kanoko::sonify {

/// What the replay clock did, as LivePlayer needs it (no dependency on the scene).
struct ReplayState {
  double time_s = 0;
  double speed = 1;  ///< trace seconds per wall second
  bool paused = false;
  bool reversed = false;
};

class LivePlayer {
 public:
  /// Detects the run's cues for `audio` (throws InputError if [audio] does not fit the run) and
  /// plays them on `engine` (which may be silent), which must outlive the player.
  LivePlayer(const trajectory::Reader& reader, const mapping::AudioSpec& audio, Engine& engine);

  /// One viewer frame: the clock now reads `state` after `wall_dt_s` wall seconds.
  void update(const ReplayState& state, double wall_dt_s, const ListenerState& listener);

  /// The voices of the bodies (for the legend).
  [[nodiscard]] const std::vector<Voice>& voices() const { return voices_; }
  /// Cues of the whole run.
  [[nodiscard]] const std::vector<Cue>& cues() const { return cues_; }
  /// Cues started so far (after the voice cap).
  [[nodiscard]] std::size_t started() const { return started_; }
  /// Jumps detected so far (each stopped every voice).
  [[nodiscard]] std::size_t jumps() const { return jumps_; }

 private:
  const trajectory::Reader& reader_;
  Engine& engine_;
  std::vector<Voice> voices_;
  std::vector<Cue> cues_;
  bool pitch_follows_speed_;
  bool first_ = true;
  double last_time_s_ = 0;
  double first_speed_ = 1;
  std::size_t started_ = 0;
  std::size_t jumps_ = 0;
  Eigen::Matrix3Xd positions_;
  Eigen::Matrix3Xd velocities_;
  std::vector<Cue> crossed_;
};

}  // namespace kanoko::sonify
