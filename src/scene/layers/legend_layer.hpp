// The colour key in the HUD of pictures and videos (`kanoko render`): the legend model
// (src/scene/legend.hpp) drawn as a small boxed key in the top-right corner, in the top half of
// the picture (so above the dial) and away from the caption in the bottom-left corner: gradient bars as quads with a colour per sample,
// swatches as squares, text at 0.8 of the dial label's size (the inspect panel's rule, about
// 14 px at 1280×720). The viewer shows the same model in its ImGui side panel instead.
#pragma once

#include <osg/Geode>
#include <osgText/Font>

#include "src/scene/dial.hpp"
#include "src/scene/legend.hpp"

namespace kanoko::scene::layers {

class LegendLayer {
 public:
  /// Builds the (hidden, empty) key.
  LegendLayer();

  [[nodiscard]] osg::Node* node() const { return geode_.get(); }
  /// Draws `legend` for a window of this size with the dial at `dial`, or hides it (`on` false).
  void set(const Legend& legend, bool on, int width_px, int height_px, const DialLayout& dial);
  /// Where the parts of the key are (an empty box when hidden).
  [[nodiscard]] const LegendLayout& layout() const { return layout_; }
  /// Width of `text` at `size_px` in this layer's font (osgText's measure).
  [[nodiscard]] double text_width(const std::string& text, double size_px) const;

 private:
  osg::ref_ptr<osg::Geode> geode_;
  osg::ref_ptr<osgText::Font> font_;
  LegendLayout layout_;
};

}  // namespace kanoko::scene::layers
