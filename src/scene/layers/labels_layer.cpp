#include "src/scene/layers/labels_layer.hpp"

#include <osgText/Text>

#include "src/scene/layers/scene_graph.hpp"
#include "src/scene/mapping_visual.hpp"

namespace kanoko::scene::layers {

LabelsLayer::LabelsLayer() : geode_(new osg::Geode) {
  geode_->setName("labels");
  geode_->setNodeMask(0);
}

void LabelsLayer::set_labels(bool on, mapping::LabelKind kind, const trajectory::Metadata& meta) {
  const bool changed = on != on_ || kind != kind_;
  on_ = on;
  geode_->setNodeMask(on ? ~0U : 0U);
  if (!changed || !on) return;
  const auto& bodies = meta.bodies;
  if (geode_->getNumDrawables() == 0) {
    osg::ref_ptr<osgText::Font> font = osgText::readRefFontFile("DejaVuSans.ttf");
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      auto text = make_label(font.get(), osgText::Text::LEFT_BOTTOM);
      text->setAutoRotateToScreen(true);
      text->setCharacterSizeMode(osgText::Text::SCREEN_COORDS);
      text->setCharacterSize(size_px_);
      set_text(*text, label_text(bodies[i], i, kind));
      geode_->addDrawable(text.get());
    }
  } else if (kind_ != kind) {
    for (unsigned i = 0; i < geode_->getNumDrawables(); ++i) {
      set_text(*static_cast<osgText::Text*>(geode_->getDrawable(i)), label_text(bodies[i], i, kind));
    }
  }
  kind_ = kind;
}

void LabelsLayer::set_size(float px) {
  size_px_ = px;
  for (unsigned i = 0; i < geode_->getNumDrawables(); ++i) {
    static_cast<osgText::Text*>(geode_->getDrawable(i))->setCharacterSize(size_px_);
  }
}

void LabelsLayer::update(const FrameState& frame) {
  if (!on_) return;
  for (unsigned i = 0; i < geode_->getNumDrawables(); ++i) {
    auto* text = static_cast<osgText::Text*>(geode_->getDrawable(i));
    const auto c = frame.positions.col(static_cast<Eigen::Index>(i));
    const double r = frame.radii[i];
    text->setNodeMask(i >= frame.shown.size() || frame.shown[i] ? ~0U : 0U);
    text->setPosition(osg::Vec3(to_f(c.x() + 0.8 * r), to_f(c.y()), to_f(c.z() + 0.8 * r)));
  }
}

const osgText::Text* LabelsLayer::label(std::size_t i) const {
  return i < geode_->getNumDrawables() ? static_cast<const osgText::Text*>(geode_->getDrawable(static_cast<unsigned>(i)))
                                       : nullptr;
}

}  // namespace kanoko::scene::layers
