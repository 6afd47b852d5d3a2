// The paper's clock dial in the HUD (pixels, y up): a disc with hour ticks, the elapsed part of
// the run as a tinted sector, one hand (12 o'clock = start, clockwise) and the time label below.
// The geometry is src/scene/dial.hpp's.
#pragma once

#include <osg/Geometry>
#include <osg/Group>
#include <osg/MatrixTransform>
#include <osgText/Text>

#include "src/scene/dial.hpp"
#include "src/scene/layers/frame_state.hpp"

namespace kanoko::scene::layers {

class DialLayer {
 public:
  /// Builds the dial (placed by layout()).
  DialLayer();

  /// The dial's node: the disc and hand, then the time label.
  [[nodiscard]] osg::Node* node() const { return group_.get(); }
  /// Places the dial and sizes its label.
  void layout(const DialLayout& dial);
  /// Turns the hand, fills the elapsed sector and writes the time for the frame's time within
  /// its span.
  void update(const FrameState& frame);

  /// Where the hand points as drawn: the unit vector from the centre (y up).
  [[nodiscard]] Direction2 hand_direction() const;
  /// Vertices of the elapsed sector (a fan from the centre; empty at the start).
  [[nodiscard]] std::size_t elapsed_vertices() const;
  [[nodiscard]] const osgText::Text& time_label() const { return *time_label_; }

 private:
  osg::ref_ptr<osg::Group> group_;
  osg::ref_ptr<osg::MatrixTransform> dial_xform_;
  osg::ref_ptr<osg::MatrixTransform> hand_xform_;
  osg::ref_ptr<osg::Geometry> elapsed_wedge_;
  osg::ref_ptr<osgText::Text> time_label_;
};

}  // namespace kanoko::scene::layers
