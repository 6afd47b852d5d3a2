#include "src/scene/replay_clock.hpp"

#include <algorithm>
#include <cmath>

#include "src/base/check.hpp"

namespace kanoko::scene {

namespace {
// Wall seconds one playback of the whole run takes at the default speed.
constexpr double kDefaultPlaybackWall_s = 20.0;

double effective_duration(double begin_s, double end_s) {
  const double d = end_s - begin_s;
  return d > 0 ? d : 1.0;
}
}  // namespace

double ReplayClock::default_speed(double begin_s, double end_s) {
  const double d = end_s - begin_s;
  return d > 0 ? d / kDefaultPlaybackWall_s : 1.0;
}

ReplayClock::ReplayClock(double begin_s, double end_s, double speed)
    : begin_s_(begin_s), end_s_(end_s), time_s_(begin_s), speed_(1.0), frontier_s_(end_s) {
  KANOKO_ASSERT(std::isfinite(begin_s) && std::isfinite(end_s) && end_s >= begin_s,
                "replay clock needs a finite run with end >= begin");
  set_speed(speed);
}

double ReplayClock::min_speed() const { return effective_duration(begin_s_, end_s_) * 1e-6; }
double ReplayClock::max_speed() const { return effective_duration(begin_s_, end_s_) * 10.0; }

void ReplayClock::advance(double wall_dt_s) {
  if (paused_ || !(wall_dt_s > 0)) return;
  const double step = speed_ * wall_dt_s;
  const double span = end_s_ - begin_s_;
  if (reversed_) {
    time_s_ -= step;
    if (time_s_ <= begin_s_) {
      // Looping wraps to the other end (by what is left over, unless that is a whole run).
      if (loop_ && span > 0) {
        time_s_ = end_s_ - std::fmod(begin_s_ - time_s_, span);
      } else {
        time_s_ = begin_s_;
        paused_ = true;
      }
    }
  } else {
    time_s_ += step;
    if (time_s_ >= frontier_s_ && frontier_s_ < end_s_) {
      time_s_ = frontier_s_;  // held until more frames are there
    } else if (time_s_ >= end_s_) {
      if (loop_ && span > 0) {
        time_s_ = begin_s_ + std::fmod(time_s_ - end_s_, span);
      } else {
        time_s_ = end_s_;
        paused_ = true;
      }
    }
  }
}

void ReplayClock::play() {
  if (!reversed_ && time_s_ >= end_s_ && frontier_s_ >= end_s_) time_s_ = begin_s_;
  if (reversed_ && time_s_ <= begin_s_) time_s_ = end_s_;
  paused_ = false;
}

void ReplayClock::pause() { paused_ = true; }

void ReplayClock::limit_end(double end_s) {
  KANOKO_ASSERT(std::isfinite(end_s), "the end of a run is a finite time");
  end_s_ = std::clamp(end_s, begin_s_, end_s_);
  frontier_s_ = std::min(frontier_s_, end_s_);
  if (pending_seek_ && *pending_seek_ > end_s_) pending_seek_.reset();
  if (time_s_ >= end_s_) {
    time_s_ = end_s_;
    if (!reversed_) paused_ = true;
  }
}

void ReplayClock::toggle_pause() {
  if (paused_) {
    play();
  } else {
    pause();
  }
}

void ReplayClock::set_speed(double speed) {
  KANOKO_ASSERT(std::isfinite(speed) && speed > 0, "playback speed must be finite and positive");
  speed_ = std::clamp(speed, min_speed(), max_speed());
}

void ReplayClock::faster() { speed_ = std::min(speed_ * 2.0, max_speed()); }
void ReplayClock::slower() { speed_ = std::max(speed_ * 0.5, min_speed()); }
void ReplayClock::reverse() { reversed_ = !reversed_; }

void ReplayClock::seek(double t_s) {
  if (std::isnan(t_s)) return;
  time_s_ = std::clamp(t_s, begin_s_, end_s_);
  pending_seek_.reset();
  if (time_s_ > frontier_s_) {
    pending_seek_ = time_s_;
    time_s_ = frontier_s_;
  }
}

void ReplayClock::set_frontier(double frontier_s) {
  KANOKO_ASSERT(std::isfinite(frontier_s), "the frontier of a run is a finite time");
  frontier_s_ = std::clamp(frontier_s, begin_s_, end_s_);
  time_s_ = std::min(time_s_, frontier_s_);
  if (pending_seek_ && *pending_seek_ <= frontier_s_) {
    time_s_ = *pending_seek_;
    pending_seek_.reset();
  } else if (pending_seek_) {
    time_s_ = frontier_s_;  // held at the edge, which moves on towards the target
  }
}

bool ReplayClock::waiting() const {
  if (pending_seek_) return true;
  return frontier_s_ < end_s_ && time_s_ >= frontier_s_ && !paused_ && !reversed_;
}

void ReplayClock::set_end(double end_s) {
  KANOKO_ASSERT(std::isfinite(end_s) && end_s >= begin_s_, "the end of a run is a finite time after its start");
  end_s_ = end_s;
  frontier_s_ = end_s;
  time_s_ = std::min(time_s_, end_s_);
  if (pending_seek_) {
    time_s_ = std::min(*pending_seek_, end_s_);
    pending_seek_.reset();
  }
}

void ReplayClock::restart() {
  time_s_ = begin_s_;
  pending_seek_.reset();
  reversed_ = false;
}

void ReplayClock::step_frames(int delta, std::span<const double> frame_times_s) {
  paused_ = true;
  if (delta == 0 || frame_times_s.empty()) return;
  // Times within this tolerance of a frame count as being on it, so repeated steps never stall on
  // rounding.
  const double tol = 1e-9 * effective_duration(begin_s_, end_s_);
  const auto n = static_cast<std::ptrdiff_t>(frame_times_s.size());
  std::ptrdiff_t target = 0;
  if (delta > 0) {
    const auto first_after =
        std::upper_bound(frame_times_s.begin(), frame_times_s.end(), time_s_ + tol);
    target = (first_after - frame_times_s.begin()) + (delta - 1);
  } else {
    const auto first_not_before =
        std::lower_bound(frame_times_s.begin(), frame_times_s.end(), time_s_ - tol);
    target = (first_not_before - frame_times_s.begin()) - 1 + (delta + 1);
  }
  target = std::clamp<std::ptrdiff_t>(target, 0, n - 1);
  seek(frame_times_s[static_cast<std::size_t>(target)]);
}

}  // namespace kanoko::scene
