#include "src/scene/layers/trails_layer.hpp"

#include <algorithm>

#include "src/scene/layers/scene_graph.hpp"
#include "src/scene/layers/visual_options.hpp"

namespace kanoko::scene::layers {

TrailsLayer::TrailsLayer(std::size_t bodies) : bodies_(bodies) {
  lines_ = make_dynamic("trails", 0);
  geode_ = new osg::Geode;
  geode_->addDrawable(lines_.get());
  geode_->setNodeMask(0);
}

bool TrailsLayer::wanted() const { return trail_s_ > 0 && bodies_ <= kMaxTrailBodies; }

double TrailsLayer::sample_time(int k, double now_s, double begin_s) const {
  // Oldest sample first; the last one is now.
  const double age = trail_s_ * (kSamples - 1 - k) / (kSamples - 1);
  return std::max(now_s - age, begin_s);
}

void TrailsLayer::update(const FrameState& frame) {
  const std::size_t n = bodies_;
  if (!wanted() || frame.trail.size() != static_cast<std::size_t>(kSamples)) {
    geode_->setNodeMask(0);
    return;
  }
  geode_->setNodeMask(~0U);
  auto* vertices = static_cast<osg::Vec3Array*>(lines_->getVertexArray());
  auto* colours = static_cast<osg::Vec4Array*>(lines_->getColorArray());
  vertices->resize(n * kSamples);
  colours->resize(n * kSamples);
  for (int k = 0; k < kSamples; ++k) {
    const float alpha = 0.85F * static_cast<float>(k + 1) / kSamples;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t v = i * kSamples + static_cast<std::size_t>(k);
      (*vertices)[v] = vertex(frame.trail[static_cast<std::size_t>(k)], i);
      (*colours)[v] = osg::Vec4(frame.colours[i], alpha);
    }
  }
  vertices->dirty();
  colours->dirty();
  if (lines_->getNumPrimitiveSets() != n) {
    lines_->removePrimitiveSet(0, lines_->getNumPrimitiveSets());
    for (std::size_t i = 0; i < n; ++i) {
      lines_->addPrimitiveSet(new osg::DrawArrays(GL_LINE_STRIP, static_cast<GLint>(i * kSamples), kSamples));
    }
  }
  // Trails for what is drawn: none for a body hidden by the filter or inside a closed group.
  for (std::size_t i = 0; i < n; ++i) {
    auto* strip = static_cast<osg::DrawArrays*>(lines_->getPrimitiveSet(static_cast<unsigned>(i)));
    const GLsizei count = i < frame.shown.size() && !frame.shown[i] ? 0 : kSamples;
    if (strip->getCount() != count) {
      strip->setCount(count);
      strip->dirty();
    }
  }
  lines_->dirtyBound();
}

}  // namespace kanoko::scene::layers
