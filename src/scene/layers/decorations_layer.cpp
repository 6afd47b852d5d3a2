#include "src/scene/layers/decorations_layer.hpp"

#include <algorithm>
#include <array>
#include <osg/LineWidth>
#include <utility>

#include "src/scene/layers/scene_graph.hpp"

namespace kanoko::scene::layers {

namespace {
const osg::Vec4 kGridColour{0.5F, 0.55F, 0.65F, 0.35F};
}  // namespace

DecorationsLayer::DecorationsLayer(const osg::BoundingSphered& bound) {
  // Ground grid one bound radius below the centre, 2 radii wide, and axes from its centre.
  const osg::Vec3d c = bound.center();
  const double r = bound.radius();
  const double ground = c.z() - r;
  constexpr int kLines = 10;
  auto grid_vertices = make<osg::Vec3Array>();
  for (int k = 0; k <= kLines; ++k) {
    const double u = -r + 2.0 * r * k / kLines;
    grid_vertices->push_back(osg::Vec3(to_f(c.x() + u), to_f(c.y() - r), to_f(ground)));
    grid_vertices->push_back(osg::Vec3(to_f(c.x() + u), to_f(c.y() + r), to_f(ground)));
    grid_vertices->push_back(osg::Vec3(to_f(c.x() - r), to_f(c.y() + u), to_f(ground)));
    grid_vertices->push_back(osg::Vec3(to_f(c.x() + r), to_f(c.y() + u), to_f(ground)));
  }
  grid_ = new osg::Geode;
  grid_->addDrawable(make_flat(grid_vertices.get(), GL_LINES, kGridColour, 0).get());
  const osg::Vec3 origin(to_f(c.x()), to_f(c.y()), to_f(ground));
  const float axis = to_f(0.5 * r);
  const std::array<std::pair<osg::Vec3, osg::Vec4>, 3> axes{{
      {osg::Vec3(axis, 0.0F, 0.0F), osg::Vec4(0.9F, 0.3F, 0.3F, 1.0F)},
      {osg::Vec3(0.0F, axis, 0.0F), osg::Vec4(0.3F, 0.85F, 0.3F, 1.0F)},
      {osg::Vec3(0.0F, 0.0F, axis), osg::Vec4(0.35F, 0.5F, 1.0F, 1.0F)},
  }};
  for (const auto& [direction, colour] : axes) {
    auto v = make<osg::Vec3Array>();
    v->push_back(origin);
    v->push_back(origin + direction);
    grid_->addDrawable(make_flat(v.get(), GL_LINES, colour, 0).get());
  }
  grid_->getOrCreateStateSet()->setAttributeAndModes(new osg::LineWidth(1.5F));
  grid_->setNodeMask(0);

  flash_lines_ = make_dynamic("flashes", 0);
  flash_lines_->addPrimitiveSet(new osg::DrawArrays(GL_LINES, 0, 0));
  flash_geode_ = new osg::Geode;
  flash_geode_->addDrawable(flash_lines_.get());
  flash_geode_->getOrCreateStateSet()->setAttributeAndModes(new osg::LineWidth(2.5F));
  flash_geode_->setNodeMask(0);
}

void DecorationsLayer::update(const FrameState& frame) {
  const auto& flashes = frame.flashes;
  auto* vertices = static_cast<osg::Vec3Array*>(flash_lines_->getVertexArray());
  auto* colours = static_cast<osg::Vec4Array*>(flash_lines_->getColorArray());
  if (!flashes_on_ || flashes.empty()) {
    flash_geode_->setNodeMask(0);
    return;
  }
  flash_geode_->setNodeMask(~0U);
  vertices->resize(2 * flashes.size());
  colours->resize(2 * flashes.size());
  // Flashes fade within their interval: bright when it starts, dimmer towards its end.
  const auto fade = static_cast<float>(1.0 - 0.6 * std::clamp(frame.into_interval, 0.0, 1.0));
  const osg::Vec3 hue = traffic_hue();
  for (std::size_t k = 0; k < flashes.size(); ++k) {
    const Flash& f = flashes[k];
    for (const auto& [end, body] : {std::pair{0U, f.a}, std::pair{1U, f.b}}) {
      (*vertices)[2 * k + end] = vertex(frame.positions, body);
      (*colours)[2 * k + end] = osg::Vec4(hue, (0.15F + 0.85F * f.intensity) * fade);
    }
  }
  vertices->dirty();
  colours->dirty();
  auto* lines = static_cast<osg::DrawArrays*>(flash_lines_->getPrimitiveSet(0));
  lines->setCount(static_cast<GLsizei>(2 * flashes.size()));
  lines->dirty();
  flash_lines_->dirtyBound();
}

}  // namespace kanoko::scene::layers
