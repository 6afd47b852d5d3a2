#include "src/scene/layers/legend_layer.hpp"

#include <algorithm>
#include <osgText/Text>

#include "src/scene/layers/scene_graph.hpp"

namespace kanoko::scene::layers {

namespace {
const osg::Vec4 kBackdrop{0.02F, 0.02F, 0.03F, 0.85F};  // what it covers hardly shows through
const osg::Vec4 kFrame{0.55F, 0.58F, 0.64F, 0.9F};     // a thin line around bars and swatches

osg::ref_ptr<osg::Vec3Array> rect_vertices(const LegendRect& r) {
  auto v = make<osg::Vec3Array>();
  v->push_back(osg::Vec3(to_f(r.x), to_f(r.y), 0.0F));
  v->push_back(osg::Vec3(to_f(r.right()), to_f(r.y), 0.0F));
  v->push_back(osg::Vec3(to_f(r.right()), to_f(r.top()), 0.0F));
  v->push_back(osg::Vec3(to_f(r.x), to_f(r.top()), 0.0F));
  return v;
}

osg::ref_ptr<osg::Geometry> outline(const LegendRect& r) {
  return make_flat(rect_vertices(LegendRect{r.x - 0.5, r.y - 0.5, r.w + 1.0, r.h + 1.0}).get(), GL_LINE_LOOP, kFrame, 17);
}

// A gradient bar: a strip of quads, one colour per sample edge (OpenGL interpolates between).
osg::ref_ptr<osg::Geometry> gradient_bar(const LegendLayout::Bar& bar) {
  auto geom = make<osg::Geometry>();
  auto v = make<osg::Vec3Array>();
  auto c = make<osg::Vec4Array>();
  const std::size_t n = bar.samples.size();
  for (std::size_t k = 0; k < n; ++k) {
    const double x = bar.rect.x + bar.rect.w * static_cast<double>(k) / static_cast<double>(std::max<std::size_t>(n - 1, 1));
    const LegendRgb& rgb = bar.samples[k];
    for (const double y : {bar.rect.y, bar.rect.top()}) {
      v->push_back(osg::Vec3(to_f(x), to_f(y), 0.0F));
      c->push_back(osg::Vec4(rgb[0], rgb[1], rgb[2], 1.0F));
    }
  }
  geom->setVertexArray(v.get());
  geom->setColorArray(c.get(), osg::Array::BIND_PER_VERTEX);
  geom->addPrimitiveSet(new osg::DrawArrays(GL_TRIANGLE_STRIP, 0, static_cast<GLsizei>(v->size())));
  geom->getOrCreateStateSet()->setRenderBinDetails(17, "RenderBin");
  return geom;
}
}  // namespace

LegendLayer::LegendLayer() : geode_(new osg::Geode), font_(osgText::readRefFontFile("DejaVuSans.ttf")) {
  geode_->setName("legend");
  geode_->setNodeMask(0U);
}

double LegendLayer::text_width(const std::string& text, double size_px) const {
  if (text.empty()) return 0.0;
  osg::ref_ptr<osgText::Text> t = make_label(font_.get(), osgText::Text::LEFT_BASE_LINE);
  t->setCharacterSize(to_f(size_px));
  set_text(*t, text);
  const osg::BoundingBox& b = t->getBoundingBox();
  return b.valid() ? static_cast<double>(b.xMax() - b.xMin()) : 0.0;
}

void LegendLayer::set(const Legend& legend, bool on, int width_px, int height_px, const DialLayout& dial) {
  geode_->removeDrawables(0, geode_->getNumDrawables());
  layout_ = LegendLayout{};
  if (!on || legend.entries.empty()) {
    geode_->setNodeMask(0U);
    return;
  }
  // The panels' text size (HudLayer: 0.8 of the dial label, at least 11 px); the key stays in the
  // top half of the picture (the run is in the middle) and above the dial with half a line to spare.
  const double text_px = std::max(11.0, 0.8 * dial.label_size_px);
  const double floor_px = std::max(dial.centre_y_px + dial.radius_px + 0.5 * text_px, 0.5 * height_px);
  layout_ = layout_legend(legend, width_px, height_px, text_px, floor_px,
                          [this](const std::string& s, double size) { return text_width(s, size); });
  geode_->addDrawable(make_flat(rect_vertices(layout_.box).get(), GL_TRIANGLE_FAN, kBackdrop, 16).get());
  for (const LegendLayout::Bar& bar : layout_.bars) {
    geode_->addDrawable(gradient_bar(bar).get());
    geode_->addDrawable(outline(bar.rect).get());
  }
  for (const LegendLayout::Swatch& w : layout_.swatches) {
    geode_->addDrawable(make_flat(rect_vertices(w.rect).get(), GL_TRIANGLE_FAN, osg::Vec4(w.rgb[0], w.rgb[1], w.rgb[2], 1.0F), 17).get());
    geode_->addDrawable(outline(w.rect).get());
  }
  for (const LegendLayout::Text& t : layout_.texts) {
    osg::ref_ptr<osgText::Text> text =
        make_label(font_.get(), t.right_aligned ? osgText::Text::RIGHT_BASE_LINE : osgText::Text::LEFT_BASE_LINE);
    text->setCharacterSize(to_f(layout_.text_px));
    text->setPosition(osg::Vec3(to_f(t.x), to_f(t.baseline), 0.0F));
    set_text(*text, t.text);
    geode_->addDrawable(text.get());
  }
  geode_->setNodeMask(~0U);
}

}  // namespace kanoko::scene::layers
