// The HUD's text: the status line in the bottom-left corner (playback state in the viewer, the
// run's caption in renders) and the inspect panel at the top left (the selection's statistics,
// on a translucent backdrop). The viewer draws its own inspect window and hides this panel.
#pragma once

#include <osg/Geode>
#include <osgText/Text>
#include <string>

#include "src/scene/dial.hpp"
#include "src/scene/layers/frame_state.hpp"
#include "src/scene/layers/scene_graph.hpp"

namespace kanoko::scene::layers {

class HudLayer {
 public:
  /// Builds the (empty) status line and inspect panel.
  HudLayer();

  [[nodiscard]] osg::Node* node() const { return geode_.get(); }
  /// Lays the text out for a window `height_px` high with the dial at `dial` (the status line
  /// sits on the dial label's baseline, mirrored to the left; the panel's text is 0.8 of its size).
  void layout(int width_px, int height_px, const DialLayout& dial);
  void set_status(const std::string& text) { set_text(*status_, text); }
  /// Whether the inspect panel is drawn (from the next update on).
  void set_inspect_visible(bool on) { inspect_visible_ = on; }
  /// Shows the frame's inspect text (hidden when empty or not visible).
  void update(const FrameState& frame);

  [[nodiscard]] const osgText::Text& inspect_panel() const { return *inspect_; }
  [[nodiscard]] const osgText::Text& status() const { return *status_; }

 private:
  osg::ref_ptr<osg::Geode> geode_;
  osg::ref_ptr<osgText::Text> status_;
  osg::ref_ptr<osgText::Text> inspect_;
  bool inspect_visible_ = true;
};

}  // namespace kanoko::scene::layers
