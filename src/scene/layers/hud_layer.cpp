#include "src/scene/layers/hud_layer.hpp"

#include <algorithm>
#include <osgText/Font>

#include "src/scene/layers/scene_graph.hpp"

namespace kanoko::scene::layers {

namespace {
const osg::Vec4 kPanelBackground{0.0F, 0.0F, 0.0F, 0.62F};
}  // namespace

HudLayer::HudLayer() : geode_(new osg::Geode) {
  osg::ref_ptr<osgText::Font> font = osgText::readRefFontFile("DejaVuSans.ttf");
  status_ = make_label(font.get(), osgText::Text::LEFT_BASE_LINE);
  geode_->addDrawable(status_.get());
  osg::ref_ptr<osgText::Font> mono = monospace_font();
  inspect_ = make_label(mono.valid() ? mono.get() : font.get(), osgText::Text::LEFT_TOP);
  inspect_->setDrawMode(osgText::Text::TEXT | osgText::Text::FILLEDBOUNDINGBOX);
  inspect_->setBoundingBoxColor(kPanelBackground);
  geode_->addDrawable(inspect_.get());
}

void HudLayer::layout(int width_px, int height_px, const DialLayout& dial) {
  const float size = to_f(dial.label_size_px);
  status_->setCharacterSize(size);
  const float panel_size = std::max(11.0F, 0.8F * size);
  inspect_->setCharacterSize(panel_size);
  inspect_->setBoundingBoxMargin(0.4F * panel_size);
  inspect_->setPosition(osg::Vec3(panel_size, to_f(height_px) - panel_size, 0.0F));
  status_->setPosition(osg::Vec3(to_f(width_px - dial.label_x_px), to_f(dial.label_y_px), 0.0F));
}

void HudLayer::update(const FrameState& frame) {
  if (!inspect_visible_) {
    inspect_->setNodeMask(0U);
    return;
  }
  // Text layout is redone on every setText, so only when the words change.
  if (frame.inspect_text != inspect_->getText().createUTF8EncodedString()) set_text(*inspect_, frame.inspect_text);
  inspect_->setNodeMask(frame.inspect_text.empty() ? 0U : ~0U);
}

}  // namespace kanoko::scene::layers
