// Trails: a polyline per body through its positions over the last `trail_s` trace seconds,
// fading towards the past, in the body's colour. The positions come with the frame state
// (FrameState::trail, sampled at sample_time()); runs above kMaxTrailBodies bodies get none.
#pragma once

#include <cstddef>
#include <osg/Geode>
#include <osg/Geometry>

#include "src/scene/layers/frame_state.hpp"

namespace kanoko::scene::layers {

class TrailsLayer {
 public:
  /// Trails are polylines through this many samples, the last one now.
  static constexpr int kSamples = 24;

  /// Builds the (hidden) trails of a run of `bodies` bodies.
  explicit TrailsLayer(std::size_t bodies);

  [[nodiscard]] osg::Node* node() const { return geode_.get(); }
  /// Trails of the last `trail_s` trace seconds from the next update on; 0 draws none.
  void set_length(double trail_s) { trail_s_ = trail_s; }
  /// True when the next update draws trails, so the frame state must carry kSamples samples.
  [[nodiscard]] bool wanted() const;
  /// Trace time of sample k (0 oldest .. kSamples − 1 now) at trace time `now_s` of a run that
  /// starts at `begin_s`.
  [[nodiscard]] double sample_time(int k, double now_s, double begin_s) const;
  /// Draws the frame's trail samples in the frame's body colours (hidden when not wanted or
  /// the frame carries no samples), none for a body the frame does not show (FrameState::shown).
  void update(const FrameState& frame);

  /// The polylines as last drawn: body i's samples are vertices i × kSamples ... + kSamples − 1,
  /// primitive set i their strip (of no vertex when body i is not shown).
  [[nodiscard]] const osg::Geometry& lines() const { return *lines_; }
  [[nodiscard]] bool drawn() const { return geode_->getNodeMask() != 0; }

 private:
  std::size_t bodies_;
  double trail_s_ = 0;
  osg::ref_ptr<osg::Geometry> lines_;
  osg::ref_ptr<osg::Geode> geode_;
};

}  // namespace kanoko::scene::layers
