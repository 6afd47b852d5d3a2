#include "src/scene/layers/springs_layer.hpp"

#include <algorithm>
#include <cmath>
#include <osg/Geode>
#include <osg/Program>

#include "src/scene/layers/scene_graph.hpp"
#include "src/trajectory/body_size.hpp"

namespace kanoko::scene::layers {

SpringsLayer::SpringsLayer(const trajectory::Metadata& meta, const Eigen::Matrix3Xd& initial_positions,
                           BodyStyle style, osg::Group& world)
    : edges_(meta.edges), colours_(meta.edges.size(), spring_neutral()) {
  for (const auto& [a, b] : edges_) {
    length0_.push_back((initial_positions.col(a) - initial_positions.col(b)).norm());
    radius_.push_back(kSpringRadiusFraction *
                      std::min(trajectory::body_radius(meta.bodies[a]), trajectory::body_radius(meta.bodies[b])));
  }
  const std::size_t m = edges_.size();
  const bool cylinders = style == BodyStyle::meshes && m <= kCylinderSpringLimit;
  // A cloud of tens of thousands of bodies shows no readable springs; they stay pickable.
  if (!cylinders && style != BodyStyle::cloud) {
    lines_ = make_dynamic("spring lines", 2 * m);
    lines_->addPrimitiveSet(new osg::DrawArrays(GL_LINES, 0, static_cast<GLsizei>(2 * m)));
    osg::StateSet* ss = lines_->getOrCreateStateSet();
    ss->setAttributeAndModes(new osg::Program, osg::StateAttribute::ON);  // fixed function
    ss->setMode(GL_LIGHTING, osg::StateAttribute::OFF);
    auto geode = make<osg::Geode>();
    geode->addDrawable(lines_.get());
    world.addChild(geode.get());
  }
  // One drawable shared by all springs; per-instance state is only the transform and a colour.
  auto cylinder_geode = make<osg::Geode>();
  cylinder_geode->addDrawable(unit_cylinder_geometry().get());
  auto group = make<osg::Group>();
  group->setName("springs");
  for (std::size_t e = 0; cylinders && e < m; ++e) {
    auto xf = make<osg::MatrixTransform>();
    cylinder_colours_.push_back(make_instance(*xf, *cylinder_geode, spring_neutral()));
    group->addChild(xf.get());
    cylinders_.push_back(xf);
  }
  world.addChild(group.get());
}

const osg::Vec3* SpringsLayer::line_ends(std::size_t e) const {
  if (!lines_.valid()) return nullptr;
  return &static_cast<const osg::Vec3Array*>(lines_->getVertexArray())->at(2 * e);
}

void SpringsLayer::update(const FrameState& frame) {
  // A cloud draws no springs: nothing to place or colour every frame (100k ranks: 200k springs),
  // only the selected one (still pickable) takes the highlight.
  if (!lines_.valid() && cylinders_.empty()) {
    std::fill(colours_.begin(), colours_.end(), spring_neutral());
    if (frame.selection && frame.selection->kind == Pick::Kind::spring && frame.selection->index < colours_.size()) {
      colours_[frame.selection->index] = kHighlight;
    }
    return;
  }
  const auto& p = frame.positions;
  if (lines_.valid()) {
    auto* v = static_cast<osg::Vec3Array*>(lines_->getVertexArray());
    for (std::size_t e = 0; e < edges_.size(); ++e) {
      // A spring to an isolated-away body collapses onto its first end.
      const bool shown = frame.shown[edges_[e][0]] && frame.shown[edges_[e][1]];
      for (std::size_t end = 0; end < 2; ++end) (*v)[2 * e + end] = vertex(p, edges_[e][shown ? end : 0]);
    }
    v->dirty();
    lines_->dirtyBound();
  }
  for (std::size_t e = 0; e < cylinders_.size(); ++e) {
    const auto [a, b] = edges_[e];
    const auto pa = p.col(static_cast<Eigen::Index>(a));
    const auto pb = p.col(static_cast<Eigen::Index>(b));
    const osg::Vec3d from(pa.x(), pa.y(), pa.z());
    osg::Vec3d along = osg::Vec3d(pb.x(), pb.y(), pb.z()) - from;
    const double length = along.normalize();
    if (!(length > 0) || !std::isfinite(length) || !frame.shown[a] || !frame.shown[b]) {
      cylinders_[e]->setNodeMask(0);  // coincident bodies: nothing to draw between them
      continue;
    }
    const double r = radius_[e];
    cylinders_[e]->setNodeMask(~0U);
    cylinders_[e]->setMatrix(osg::Matrixd::scale(r, r, length) * osg::Matrixd::rotate(osg::Vec3d(0, 0, 1), along) *
                             osg::Matrixd::translate(from));
  }

  auto* line_colours = lines_.valid() ? static_cast<osg::Vec4Array*>(lines_->getColorArray()) : nullptr;
  const bool traffic = colouring_ == SpringColours::traffic && frame.spring_bytes.size() == edges_.size();
  for (std::size_t e = 0; e < edges_.size(); ++e) {
    osg::Vec3 colour = spring_neutral();
    if (frame.selection && frame.selection->kind == Pick::Kind::spring && frame.selection->index == e) {
      colour = kHighlight;
    } else if (colouring_ == SpringColours::tension) {
      const auto [a, b] = edges_[e];
      colour = tension_colour((p.col(a) - p.col(b)).norm(), length0_[e]);
    } else if (traffic) {
      colour = traffic_colour(frame.spring_bytes[e], frame.max_spring_bytes);
    }
    colours_[e] = colour;
    if (e < cylinder_colours_.size()) cylinder_colours_[e]->set(colour);
    if (line_colours != nullptr) (*line_colours)[2 * e] = (*line_colours)[2 * e + 1] = osg::Vec4(colour, 1.0F);
  }
  if (line_colours != nullptr) line_colours->dirty();
}

}  // namespace kanoko::scene::layers
