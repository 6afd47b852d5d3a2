// Labels beside the bodies (name, rank, host or index), facing the screen at a fixed pixel height.
// The text drawables are built on first use: thousands of them cost memory nobody asked for.
#pragma once

#include <cstddef>
#include <osg/Geode>
#include <osgText/Text>

#include "src/mapping/mapping.hpp"
#include "src/scene/layers/frame_state.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::scene::layers {

class LabelsLayer {
 public:
  /// Builds the (hidden, empty) labels node.
  LabelsLayer();

  [[nodiscard]] osg::Node* node() const { return geode_.get(); }
  /// Shows or hides the labels; when shown, saying `kind` about each body of `meta`.
  void set_labels(bool on, mapping::LabelKind kind, const trajectory::Metadata& meta);
  /// Character height in framebuffer pixels.
  void set_size(float px);
  /// Places each shown label beside its body (up and to the right by 0.8 drawn radii).
  void update(const FrameState& frame);

  /// Label i (null before the labels are first shown).
  [[nodiscard]] const osgText::Text* label(std::size_t i) const;
  [[nodiscard]] bool shown() const { return on_; }

 private:
  osg::ref_ptr<osg::Geode> geode_;
  bool on_ = false;
  mapping::LabelKind kind_ = mapping::LabelKind::Name;  ///< what the built labels say
  float size_px_ = 14.0F;
};

}  // namespace kanoko::scene::layers
