#include "sonify/live.hpp"

#include <algorithm>
#include <cmath>

namespace kanoko::sonify {

LivePlayer::LivePlayer(const trajectory::Reader& reader, const mapping::AudioSpec& audio, Engine& engine)
    : reader_(reader),
      engine_(engine),
      voices_(assign_voices(audio, reader.meta())),
      cues_(detect_cues(reader, resolve_cue_rules(audio, reader.meta()))),
      pitch_follows_speed_(audio.pitch_follows_speed) {}

void LivePlayer::update(const ReplayState& state, double wall_dt_s, const ListenerState& listener) {
  if (first_) {
    first_ = false;
    last_time_s_ = state.time_s;
    first_speed_ = state.speed;
  }
  const double moved = state.time_s - last_time_s_;
  // A continuous step moves at most about speed × wall time in the playing direction; anything
  // else (a seek, a restart, frame stepping) is a jump.
  const double expected = std::max(wall_dt_s, 0.0) * state.speed;
  const double slack = 0.5 * expected + 1e-9 * std::max(1.0, std::abs(state.time_s));
  const bool direction_ok = moved == 0 || ((moved > 0) != state.reversed);
  const bool jump = !direction_ok || std::abs(moved) > expected + slack;

  reader_.positions_at(state.time_s, positions_);
  velocities_ = reader_.frame(reader_.frame_at_or_before(state.time_s)).velocities;
  if (state.paused) velocities_.setZero();
  if (state.reversed) velocities_ = -velocities_;

  engine_.begin_frame();
  engine_.set_listener(listener);
  if (jump) {
    ++jumps_;
    engine_.stop_all();
  }
  engine_.set_paused(state.paused);
  engine_.set_pitch_scale(pitch_follows_speed_ ? state.speed / first_speed_ : 1.0);
  engine_.follow_bodies(positions_, velocities_);
  if (!jump && !state.paused) {
    crossed_.clear();
    cues_crossed(cues_, last_time_s_, state.time_s, crossed_);
    for (const Cue& c : crossed_) {
      const auto b = static_cast<Eigen::Index>(c.body);
      if (b >= positions_.cols()) continue;
      if (!engine_.start(c, positions_.col(b), velocities_.col(b))) break;  // every voice busy
      ++started_;
    }
  }
  engine_.end_frame();
  last_time_s_ = state.time_s;
}

}  // namespace kanoko::sonify
