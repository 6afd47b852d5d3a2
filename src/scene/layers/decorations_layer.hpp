// Decorations of the 3-D world that are not bodies or springs: the ground grid with its axes, and
// the communication flashes (a line between every pair of bodies that talk in the current
// interval, brighter for more bytes, fading towards the interval's end). Unlit, never picked.
#pragma once

#include <osg/BoundingSphere>
#include <osg/Geode>
#include <osg/Geometry>
#include <osg/Node>

#include "src/scene/layers/frame_state.hpp"

namespace kanoko::scene::layers {

class DecorationsLayer {
 public:
  /// Builds the grid one bound radius below the bound's centre, 2 radii wide, with x/y/z axes at
  /// its centre, and the (empty) flashes; both hidden.
  explicit DecorationsLayer(const osg::BoundingSphered& bound);

  /// The grid's node and the flashes' node (the scene places them among the other decorations).
  [[nodiscard]] osg::Node* grid() const { return grid_.get(); }
  [[nodiscard]] osg::Node* flashes() const { return flash_geode_.get(); }
  /// True while flashes are drawn (on, and the interval has some).
  [[nodiscard]] bool flashes_drawn() const { return flash_geode_->getNodeMask() != 0; }

  void set_grid(bool on) { grid_->setNodeMask(on ? ~0U : 0U); }
  /// Whether the flashes are drawn from the next update on.
  void set_flashes(bool on) { flashes_on_ = on; }
  /// Draws the frame's flashes between its positions.
  void update(const FrameState& frame);

  /// The flash lines as last drawn: 2 vertices per flash.
  [[nodiscard]] const osg::Geometry& flash_lines() const { return *flash_lines_; }

 private:
  osg::ref_ptr<osg::Geode> grid_;
  osg::ref_ptr<osg::Geode> flash_geode_;
  osg::ref_ptr<osg::Geometry> flash_lines_;
  bool flashes_on_ = false;
};

}  // namespace kanoko::scene::layers
