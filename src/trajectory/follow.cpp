#include "src/trajectory/follow.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "src/base/error.hpp"
#include "src/base/progress.hpp"

namespace kanoko::trajectory {

Follower::Follower(Reader& reader, double stall_timeout_s, std::function<std::string()> writer_problem)
    : reader_(reader),
      stall_timeout_s_(stall_timeout_s),
      writer_problem_(std::move(writer_problem)),
      state_(reader.complete() ? State::complete : State::growing),
      bytes_(reader.file_bytes()),
      last_growth_(Clock::now()) {}

bool Follower::poll(Clock::time_point now) {
  if (state_ == State::complete || state_ == State::damaged) return false;
  if (now - last_poll_ < poll_period) return false;
  last_poll_ = now;
  // Asked before the file is looked at: a writer that ended before this look wrote all it will.
  const std::string gone = writer_problem_ ? writer_problem_() : std::string();
  const std::size_t frames_before = reader_.frame_count();
  try {
    reader_.refresh();
  } catch (const InputError& e) {
    state_ = State::damaged;
    why_ = e.what();
    return false;
  }
  const bool grew = reader_.file_bytes() != bytes_;
  bytes_ = reader_.file_bytes();
  if (reader_.complete()) {
    state_ = State::complete;
    return true;
  }
  if (grew) {
    last_growth_ = now;
    state_ = State::growing;
  }
  if (!grew && !gone.empty()) {
    state_ = State::stalled;
    why_ = gone;
  } else if (std::chrono::duration<double>(now - last_growth_).count() >= stall_timeout_s_) {
    state_ = State::stalled;
    why_ = "no new frames for " + format_duration(stall_timeout_s_) + "; its writer may have died";
  }
  return reader_.frame_count() != frames_before;
}

double Follower::frontier_s() const {
  return reader_.frame_count() == 0 ? reader_.meta().trace_begin_s : reader_.end_time();
}

double Follower::planned_end_s() const {
  if (reader_.complete()) return reader_.end_time();
  const Metadata& m = reader_.meta();
  double end = std::max(m.trace_end_s, frontier_s());
  if (m.planned_frames > 1) {
    end = std::max(end, m.trace_begin_s + static_cast<double>(m.planned_frames - 1) *
                                              static_cast<double>(m.steps_per_frame) * m.dt_s);
  }
  return end;
}

double Follower::fraction() const {
  if (reader_.complete()) return 1.0;
  const std::uint64_t planned = reader_.meta().planned_frames;
  if (planned == 0) return 0.0;
  return std::min(1.0, static_cast<double>(reader_.frame_count()) / static_cast<double>(planned));
}

double Follower::idle_s(Clock::time_point now) const {
  if (state_ == State::complete) return 0;
  return std::max(0.0, std::chrono::duration<double>(now - last_growth_).count());
}

std::string Follower::status() const {
  if (state_ == State::complete) return {};
  const std::uint64_t planned = reader_.meta().planned_frames;
  std::string at = "frame " + std::to_string(reader_.frame_count());
  if (planned > 0) at += " of " + std::to_string(planned);
  at += ", t = " + format_seconds(frontier_s());
  switch (state_) {
    case State::growing: {
      const int percent = static_cast<int>(std::floor(100.0 * fraction()));
      return "simulating: " + std::to_string(percent) + " % (" + at + " of " + format_seconds(planned_end_s()) + ")";
    }
    case State::stalled:
      return "the run is incomplete and stopped growing at " + at + ": " + why_ +
             " (the frames so far play; re-simulate to finish it)";
    case State::damaged:
      return "the run is damaged after " + at + ": " + why_;
    case State::complete:
      break;
  }
  return {};
}

}  // namespace kanoko::trajectory
