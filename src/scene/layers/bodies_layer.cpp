#include "src/scene/layers/bodies_layer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <osg/BlendFunc>
#include <osg/Geode>
#include <osg/PointSprite>
#include <osg/PolygonMode>
#include <osg/Program>
#include <osg/Shader>
#include <osgDB/ReadFile>
#include <string>

#include "src/scene/layers/scene_graph.hpp"
#include "src/trajectory/body_size.hpp"

namespace kanoko::scene::layers {

namespace {

// Sphere impostors: one point per body, sized to the sphere's projected diameter, shaded with the
// same lights as the meshes from a normal rebuilt per fragment (headless.md §5: 10k sprites run
// interactively on llvmpipe where 10k meshes do not).
const char* const kImpostorVertexShader = R"(#version 120
attribute float kanoko_radius;
uniform float kanoko_viewport_height;
varying vec3 v_colour;
void main() {
  vec4 eye = gl_ModelViewMatrix * gl_Vertex;
  gl_Position = gl_ProjectionMatrix * eye;
  float depth = max(-eye.z, 1e-6);
  gl_PointSize = max(2.0, kanoko_radius * gl_ProjectionMatrix[1][1] * kanoko_viewport_height / depth);
  v_colour = gl_Color.rgb;
}
)";

const char* const kImpostorFragmentShader = R"(#version 120
varying vec3 v_colour;
void main() {
  vec2 p = gl_PointCoord * 2.0 - 1.0;
  p.y = -p.y;
  float d2 = dot(p, p);
  if (d2 > 1.0) discard;
  vec3 n = vec3(p, sqrt(1.0 - d2));
  vec3 key = normalize(vec3(-0.45, 0.60, 0.66));
  vec3 fill = normalize(vec3(0.55, -0.35, 0.40));
  float diffuse = max(dot(n, key), 0.0);
  float fill_diffuse = max(dot(n, fill), 0.0);
  float specular = pow(max(dot(n, normalize(key + vec3(0.0, 0.0, 1.0))), 0.0), 48.0);
  float rim = pow(1.0 - n.z, 3.0);
  vec3 c = v_colour * (0.20 + 0.72 * diffuse + 0.18 * fill_diffuse)
         + vec3(0.38) * specular + v_colour * 0.22 * rim;
  gl_FragColor = vec4(c, 1.0);
}
)";

constexpr unsigned kRadiusAttribute = 6;
// Cloud bodies: flat dots a few pixels wide.
constexpr float kCloudPointSize_px = 3.0F;
// Host spheres of the cloud are drawn only up to this many hosts.
constexpr std::size_t kMaxHostSpheres = 512;
const osg::Vec3 kHostSphereColour{0.45F, 0.55F, 0.75F};
// The highlight cage around a selected body is this much larger than the body.
constexpr double kHighlightScale = 1.3;

}  // namespace

BodiesLayer::BodiesLayer(const trajectory::Metadata& meta, BodyStyle style, osg::Group& world,
                         int framebuffer_height_px)
    : style_(style) {
  // One drawable shared by all bodies; per-instance state is only the transform and a colour
  // uniform (headless.md §5: unshared drawables cost memory, not speed).
  auto sphere_geode = make<osg::Geode>();
  sphere_geode->addDrawable(unit_sphere_geometry().get());

  auto bodies = make<osg::Group>();
  bodies->setName("bodies");
  if (style_ != BodyStyle::meshes) build_points(meta, world, framebuffer_height_px);
  for (std::size_t i = 0; style_ == BodyStyle::meshes && i < meta.body_count(); ++i) {
    const auto& info = meta.bodies[i];
    auto pat = make<osg::PositionAttitudeTransform>();
    pat->setName(info.name);
    pat->setUserValue("body_id", static_cast<unsigned int>(i));
    body_colours_.push_back(make_instance(*pat, *sphere_geode, to_vec3(info.colour_rgb)));
    bodies->addChild(pat.get());
    bodies_.push_back(pat);
  }
  world.addChild(bodies.get());

  // The selected body gets a wire cage (a selected spring takes the highlight colour).
  highlight_ = new osg::PositionAttitudeTransform;
  highlight_->setName("selection");
  highlight_->setDataVariance(osg::Object::DYNAMIC);
  highlight_->setNodeMask(0);
  osg::ref_ptr<osg::StateSet> cage = colour_state(kHighlight);
  cage->setAttributeAndModes(new osg::PolygonMode(osg::PolygonMode::FRONT_AND_BACK, osg::PolygonMode::LINE));
  highlight_->setStateSet(cage.get());
  highlight_->addChild(sphere_geode.get());
  world.addChild(highlight_.get());
}

void BodiesLayer::build_points(const trajectory::Metadata& meta, osg::Group& world, int framebuffer_height_px) {
  const std::size_t n = meta.body_count();
  points_ = make_dynamic(style_ == BodyStyle::cloud ? "body cloud" : "body impostors", n);
  auto* colours = static_cast<osg::Vec4Array*>(points_->getColorArray());
  for (std::size_t i = 0; i < n; ++i) {
    const auto& c = meta.bodies[i].colour_rgb;
    (*colours)[i] = osg::Vec4(c[0], c[1], c[2], 1.0F);
  }
  drawn_points_ = new osg::DrawElementsUInt(GL_POINTS);
  for (std::size_t i = 0; i < n; ++i) drawn_points_->push_back(static_cast<GLuint>(i));
  points_->addPrimitiveSet(drawn_points_.get());
  // The bound is recomputed from the vertices on dirtyBound(); culling stays correct.
  osg::StateSet* ss = points_->getOrCreateStateSet();
  if (style_ == BodyStyle::impostors) {
    points_->setVertexAttribArray(kRadiusAttribute, new osg::FloatArray(static_cast<unsigned>(n)),
                                  osg::Array::BIND_PER_VERTEX);
    auto program = make<osg::Program>();
    program->setName("kanoko impostors");
    program->addShader(new osg::Shader(osg::Shader::VERTEX, kImpostorVertexShader));
    program->addShader(new osg::Shader(osg::Shader::FRAGMENT, kImpostorFragmentShader));
    program->addBindAttribLocation("kanoko_radius", kRadiusAttribute);
    ss->setAttributeAndModes(program.get(), osg::StateAttribute::ON);
    ss->setTextureAttributeAndModes(0, new osg::PointSprite, osg::StateAttribute::ON);
    ss->setMode(GL_VERTEX_PROGRAM_POINT_SIZE, osg::StateAttribute::ON);
    viewport_height_ = new osg::Uniform("kanoko_viewport_height", to_f(framebuffer_height_px));
    ss->addUniform(viewport_height_.get());
  } else {
    ss->setAttributeAndModes(new osg::Program, osg::StateAttribute::ON);  // fixed function
    ss->setMode(GL_LIGHTING, osg::StateAttribute::OFF);
    cloud_point_ = new osg::Point(kCloudPointSize_px);
    ss->setAttributeAndModes(cloud_point_.get());
    if (n > 0) smallest_host_sphere_ = trajectory::body_radius(meta.bodies[0]);
    // One translucent sphere per host around its bodies: the aggregate the eye can read.
    std::map<std::string, std::size_t> hosts;
    host_of_body_.resize(n);
    for (std::size_t i = 0; i < n; ++i) host_of_body_[i] = hosts.emplace(meta.bodies[i].host, hosts.size()).first->second;
    if (hosts.size() <= kMaxHostSpheres) {
      auto sphere = make<osg::Geode>();
      sphere->addDrawable(unit_sphere_geometry().get());
      auto group = make<osg::Group>();
      group->setName("host spheres");
      osg::StateSet* hs = group->getOrCreateStateSet();
      hs->addUniform(new osg::Uniform("kanoko_colour", kHostSphereColour));
      hs->setMode(GL_BLEND, osg::StateAttribute::ON);
      hs->setAttributeAndModes(new osg::BlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA));
      hs->setRenderingHint(osg::StateSet::TRANSPARENT_BIN);
      hs->setAttributeAndModes(new osg::PolygonMode(osg::PolygonMode::FRONT_AND_BACK, osg::PolygonMode::LINE));
      for (std::size_t h = 0; h < hosts.size(); ++h) {
        auto pat = make<osg::PositionAttitudeTransform>();
        pat->setDataVariance(osg::Object::DYNAMIC);
        pat->addChild(sphere.get());
        group->addChild(pat.get());
        host_spheres_.push_back(pat);
      }
      world.addChild(group.get());
    }
  }
  auto geode = make<osg::Geode>();
  geode->addDrawable(points_.get());
  world.addChild(geode.get());
}

void BodiesLayer::set_framebuffer_height(int height_px, int window_height_px) {
  if (viewport_height_.valid()) viewport_height_->set(to_f(std::max(height_px, 1)));
  // Dots keep their size in window pixels when a renderer draws at a multiple of the window.
  if (cloud_point_.valid()) {
    cloud_point_->setSize(kCloudPointSize_px * to_f(std::max(height_px, 1)) / to_f(std::max(window_height_px, 1)));
  }
}

void BodiesLayer::update(const FrameState& frame) {
  if (frame.colours_version != colours_applied_) apply_colours(frame);
  if (frame.shown != shown_applied_) apply_shown(frame);
  for (std::size_t i = 0; i < bodies_.size(); ++i) {
    const auto c = frame.positions.col(static_cast<Eigen::Index>(i));
    const double r = frame.radii[i];
    bodies_[i]->setPosition(osg::Vec3d(c.x(), c.y(), c.z()));
    bodies_[i]->setScale(osg::Vec3d(r, r, r));
  }
  if (points_.valid()) update_points(frame);
  if (frame.selection && frame.selection->kind == Pick::Kind::body) {
    const std::size_t i = frame.selection->index;
    const auto c = frame.positions.col(static_cast<Eigen::Index>(i));
    const double r = kHighlightScale * frame.radii[i];
    highlight_->setPosition(osg::Vec3d(c.x(), c.y(), c.z()));
    highlight_->setScale(osg::Vec3d(r, r, r));
    highlight_->setNodeMask(~0U);
  } else {
    highlight_->setNodeMask(0);
  }
}

void BodiesLayer::apply_colours(const FrameState& frame) {
  colours_applied_ = frame.colours_version;
  for (std::size_t i = 0; i < body_colours_.size(); ++i) body_colours_[i]->set(frame.colours[i]);
  if (points_.valid()) {
    auto* colours = static_cast<osg::Vec4Array*>(points_->getColorArray());
    // Dots of isolated-away bodies take the background's colour (the cloud draws fixed-size dots).
    const osg::Vec4 hidden = background_colour();
    for (std::size_t i = 0; i < colours->size(); ++i) {
      (*colours)[i] = frame.shown[i] ? osg::Vec4(frame.colours[i], 1.0F) : hidden;
    }
    colours->dirty();
  }
}

void BodiesLayer::apply_shown(const FrameState& frame) {
  shown_applied_ = frame.shown;
  const auto shown = [&](std::size_t i) { return i >= frame.shown.size() || frame.shown[i]; };
  for (std::size_t i = 0; i < bodies_.size(); ++i) bodies_[i]->setNodeMask(shown(i) ? ~0U : 0U);
  if (!drawn_points_.valid()) return;
  drawn_points_->clear();
  for (std::size_t i = 0; i < frame.body_count(); ++i) {
    if (shown(i)) drawn_points_->push_back(static_cast<GLuint>(i));
  }
  drawn_points_->dirty();
  points_->dirtyBound();
}

void BodiesLayer::update_points(const FrameState& frame) {
  const std::size_t n = frame.body_count();
  // Every body inside a closed group (or isolated away): nothing drawn, nothing to move.
  if (drawn_points_.valid() && drawn_points_->empty() && host_spheres_.empty()) return;
  auto* v = static_cast<osg::Vec3Array*>(points_->getVertexArray());
  for (std::size_t i = 0; i < n; ++i) (*v)[i] = vertex(frame.positions, i);
  v->dirty();
  if (style_ == BodyStyle::impostors) {
    auto* radii = static_cast<osg::FloatArray*>(points_->getVertexAttribArray(kRadiusAttribute));
    for (std::size_t i = 0; i < n; ++i) (*radii)[i] = to_f(frame.radii[i]);
    radii->dirty();
  }
  points_->dirtyBound();
  if (host_spheres_.empty()) return;
  // Centre and RMS spread of each host's bodies.
  const std::size_t hosts = host_spheres_.size();
  std::vector<Eigen::Vector3d> sum(hosts, Eigen::Vector3d::Zero());
  std::vector<double> sum2(hosts, 0.0);
  std::vector<std::size_t> count(hosts, 0);
  std::vector<bool> drawn(hosts, false);  // a host whose bodies are all hidden gets no sphere
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t h = host_of_body_[i];
    if (i >= frame.shown.size() || frame.shown[i]) drawn[h] = true;
    const Eigen::Vector3d p = frame.positions.col(static_cast<Eigen::Index>(i));
    sum[h] += p;
    sum2[h] += p.squaredNorm();
    ++count[h];
  }
  for (std::size_t h = 0; h < hosts; ++h) {
    const double k = static_cast<double>(std::max<std::size_t>(count[h], 1));
    const Eigen::Vector3d centre = sum[h] / k;
    const double spread = std::sqrt(std::max(sum2[h] / k - centre.squaredNorm(), 0.0));
    const double r = std::max(spread, smallest_host_sphere_);
    host_spheres_[h]->setPosition(osg::Vec3d(centre.x(), centre.y(), centre.z()));
    host_spheres_[h]->setScale(osg::Vec3d(r, r, r));
    host_spheres_[h]->setNodeMask(drawn[h] ? ~0U : 0U);
  }
}

void BodiesLayer::set_textures(BodyTextures textures, osg::Image* image, const trajectory::Metadata& meta) {
  textures_choice_ = textures;
  texture_image_ = image;
  if (textures_choice_ != BodyTextures::none && textures_.empty() && !textures_tried_) {
    textures_tried_ = true;
    for (const auto& file : body_texture_files()) {
      osg::ref_ptr<osg::Image> loaded = osgDB::readRefImageFile(file.string());
      if (!loaded.valid()) continue;
      textures_.push_back(body_texture(loaded.get()));
    }
    if (textures_.empty()) {
      std::fprintf(stderr, "kanoko: no body textures in %s; bodies stay plain\n", body_texture_folder().string().c_str());
    }
    const auto& bodies = meta.bodies;
    std::map<std::string, std::size_t> hosts;
    host_index_.resize(bodies.size());
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      host_index_[i] = hosts.emplace(bodies[i].host.empty() ? bodies[i].name : bodies[i].host, hosts.size()).first->second;
    }
  }
  apply_textures();
}

void BodiesLayer::apply_textures() {
  const bool on = textures_choice_ != BodyTextures::none && !textures_.empty();
  // The mapping's own image, on every body while no pattern set is chosen.
  const bool image = textures_choice_ == BodyTextures::none && texture_image_.valid();
  if (image && (!image_texture_.valid() || image_texture_->getImage() != texture_image_.get())) {
    image_texture_ = body_texture(texture_image_.get());
  }
  const auto texture_of = [&](std::size_t body) {
    if (textures_choice_ == BodyTextures::body) return body % textures_.size();
    return host_index_.at(body) % textures_.size();
  };
  for (std::size_t i = 0; i < bodies_.size(); ++i) {
    osg::StateSet* ss = bodies_[i]->getOrCreateStateSet();
    if (on || image) {
      ss->setTextureAttributeAndModes(0, on ? textures_[texture_of(i)].get() : image_texture_.get(),
                                      osg::StateAttribute::ON);
      ss->addUniform(new osg::Uniform("kanoko_textured", 1.0F));
    } else {
      ss->removeTextureAttribute(0, osg::StateAttribute::TEXTURE);
      ss->removeUniform("kanoko_textured");
    }
  }
}

osg::Vec3 BodiesLayer::point(std::size_t i) const {
  return static_cast<const osg::Vec3Array*>(points_->getVertexArray())->at(i);
}

osg::Vec3 BodiesLayer::drawn_colour(std::size_t i) const {
  if (points_.valid()) {
    const osg::Vec4 c = static_cast<const osg::Vec4Array*>(points_->getColorArray())->at(i);
    return {c.r(), c.g(), c.b()};
  }
  osg::Vec3 c;
  body_colours_.at(i)->get(c);
  return c;
}

std::size_t BodiesLayer::drawn_count() const {
  if (drawn_points_.valid()) return drawn_points_->size();
  return static_cast<std::size_t>(
      std::count_if(bodies_.begin(), bodies_.end(), [](const auto& b) { return b->getNodeMask() != 0U; }));
}

const osg::PositionAttitudeTransform* BodiesLayer::cage() const {
  return highlight_->getNodeMask() != 0 ? highlight_.get() : nullptr;
}

}  // namespace kanoko::scene::layers
