#include "src/scene/scene.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numbers>
#include <osg/BlendFunc>
#include <osg/Geode>
#include <osg/Geometry>
#include <osg/LineWidth>
#include <osg/Point>
#include <osg/PointSprite>
#include <osg/PolygonMode>
#include <osg/Program>
#include <osg/Shader>
#include <osg/Uniform>
#include <osg/Viewport>
#include <osgDB/ReadFile>
#include <osgText/Font>
#include <utility>

#include "src/base/check.hpp"
#include "src/base/error.hpp"
#include "src/scene/mapping_visual.hpp"
#include "src/trajectory/body_size.hpp"
#include "src/trajectory/spring_colour.hpp"

namespace kanoko::scene {

namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kDegToRad = kPi / 180.0;

// Low-poly sphere, 128 triangles: llvmpipe's cost grows with triangles (headless.md §5), and
// per-pixel lighting keeps the spheres looking round anyway.
constexpr unsigned kSphereDivisions = 4;
constexpr unsigned kCylinderSides = 10;
// At most this many stored frames are read to bound the run for the home view.
constexpr std::size_t kBoundSampleFrames = 64;
// Spring cylinders are this fraction of the smaller end sphere's radius.
constexpr double kSpringRadiusFraction = 0.22;

osg::Vec3 to_vec3(const trajectory::Rgb& c) { return {c[0], c[1], c[2]}; }
// The springs' colours (src/trajectory/spring_colour.hpp, shared with the web page).
const osg::Vec4 kSpringColour{to_vec3(trajectory::kSpringNeutral), 1.0F};
const osg::Vec4 kDialFace{0.11F, 0.12F, 0.15F, 0.88F};
const osg::Vec4 kDialElapsed{0.24F, 0.31F, 0.44F, 0.95F};
const osg::Vec4 kDialRim{0.78F, 0.80F, 0.84F, 1.0F};
const osg::Vec4 kDialTick{0.62F, 0.65F, 0.70F, 1.0F};
const osg::Vec4 kDialTickNoon{0.95F, 0.96F, 0.98F, 1.0F};
const osg::Vec4 kDialHand{1.0F, 0.62F, 0.12F, 1.0F};
const osg::Vec4 kLabelColour{0.86F, 0.88F, 0.92F, 1.0F};
const osg::Vec3 kHighlight{1.0F, 0.9F, 0.25F};
const osg::Vec3 kTrafficColour = to_vec3(trajectory::kSpringTraffic);  ///< busiest spring; flashes share the hue
const osg::Vec3 kSpringNeutral = to_vec3(trajectory::kSpringNeutral);
const osg::Vec4 kGridColour{0.5F, 0.55F, 0.65F, 0.35F};
// Trails are polylines through this many samples of the last trail_s seconds.
constexpr int kTrailSamples = 24;
const osg::Vec4 kPanelBackground{0.0F, 0.0F, 0.0F, 0.62F};
// The highlight cage around a selected body is this much larger than the body.
constexpr double kHighlightScale = 1.3;

// Per-pixel Blinn-Phong with a key light from the upper left, a weak fill from the lower right
// and a faint rim, in eye space. GLSL 1.20 with the compatibility built-ins (OSG is a GL2 build).
// Textured bodies take (u, v) from the unit sphere's object coordinates: u around the z axis,
// v from pole to pole; the texture's colour multiplies the body colour (the shipped patterns are
// grey, so their grey level scales it).
const char* const kVertexShader = R"(#version 120
varying vec3 v_normal;
varying vec3 v_eye_pos;
varying vec2 v_uv;
void main() {
  v_normal = gl_NormalMatrix * gl_Normal;
  v_eye_pos = vec3(gl_ModelViewMatrix * gl_Vertex);
  vec3 p = normalize(gl_Vertex.xyz + vec3(0.0, 0.0, 1e-9));
  v_uv = vec2(atan(p.y, p.x) / 6.2831853 + 0.5, acos(clamp(p.z, -1.0, 1.0)) / 3.1415927);
  gl_Position = ftransform();
}
)";

const char* const kFragmentShader = R"(#version 120
uniform vec3 kanoko_colour;
uniform sampler2D kanoko_texture;
uniform float kanoko_textured;
varying vec3 v_normal;
varying vec3 v_eye_pos;
varying vec2 v_uv;
void main() {
  vec3 n = normalize(v_normal);
  if (!gl_FrontFacing) n = -n;
  vec3 v = normalize(-v_eye_pos);
  vec3 key = normalize(vec3(-0.45, 0.60, 0.66));
  vec3 fill = normalize(vec3(0.55, -0.35, 0.40));
  float diffuse = max(dot(n, key), 0.0);
  float fill_diffuse = max(dot(n, fill), 0.0);
  float specular = pow(max(dot(n, normalize(key + v)), 0.0), 48.0);
  float rim = pow(1.0 - max(dot(n, v), 0.0), 3.0);
  vec3 base = kanoko_colour * mix(vec3(1.0), texture2D(kanoko_texture, v_uv).rgb, kanoko_textured);
  vec3 c = base * (0.20 + 0.72 * diffuse + 0.18 * fill_diffuse)
         + vec3(0.38) * specular + base * 0.22 * rim;
  gl_FragColor = vec4(c, 1.0);
}
)";

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

// Cloud bodies: flat dots a few pixels wide.
constexpr float kCloudPointSize_px = 3.0F;
// Host spheres of the cloud are drawn only up to this many hosts.
constexpr std::size_t kMaxHostSpheres = 512;
const osg::Vec3 kHostSphereColour{0.45F, 0.55F, 0.75F};

float to_f(double x) { return static_cast<float>(x); }

template <class T, class... A>
osg::ref_ptr<T> make(A&&... args) {
  return osg::ref_ptr<T>(new T(std::forward<A>(args)...));
}

// Each octant face of an octahedron split into kSphereDivisions² triangles and pushed out onto
// the unit sphere: 8 × 4² = 128 triangles with an evenly round outline from every side, which
// a latitude/longitude sphere of the same budget does not have at its poles.
osg::ref_ptr<osg::Geometry> build_unit_sphere() {
  auto vertices = make<osg::Vec3Array>();
  osg::ref_ptr<osg::DrawElementsUShort> indices = new osg::DrawElementsUShort(GL_TRIANGLES);
  constexpr unsigned n = kSphereDivisions;
  for (const int sx : {-1, 1}) {
    for (const int sy : {-1, 1}) {
      for (const int sz : {-1, 1}) {
        const osg::Vec3 a(static_cast<float>(sx), 0.0F, 0.0F);
        osg::Vec3 b(0.0F, static_cast<float>(sy), 0.0F);
        osg::Vec3 c(0.0F, 0.0F, static_cast<float>(sz));
        if (sx * sy * sz < 0) std::swap(b, c);  // keep the winding counter-clockwise from outside
        const auto base = static_cast<unsigned>(vertices->size());
        // Vertex (i, j) of the face grid, i + j <= n, row by row.
        std::vector<unsigned> row_start(n + 2, 0);
        for (unsigned i = 0; i <= n; ++i) {
          row_start[i + 1] = row_start[i] + (n + 1 - i);
          for (unsigned j = 0; i + j <= n; ++j) {
            osg::Vec3 p =
                a + (b - a) * (static_cast<float>(i) / n) + (c - a) * (static_cast<float>(j) / n);
            p.normalize();
            vertices->push_back(p);
          }
        }
        const auto at = [&](unsigned i, unsigned j) {
          return static_cast<unsigned short>(base + row_start[i] + j);
        };
        for (unsigned i = 0; i < n; ++i) {
          for (unsigned j = 0; i + j < n; ++j) {
            for (const unsigned short v : {at(i, j), at(i + 1, j), at(i, j + 1)})
              indices->push_back(v);
            if (i + j + 1 < n) {
              for (const unsigned short v : {at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)}) {
                indices->push_back(v);
              }
            }
          }
        }
      }
    }
  }
  auto geom = make<osg::Geometry>();
  geom->setVertexArray(vertices.get());
  geom->setNormalArray(vertices.get(),
                       osg::Array::BIND_PER_VERTEX);  // unit sphere: normal = position
  geom->addPrimitiveSet(indices.get());
  geom->setUseVertexBufferObjects(true);
  return geom;
}

// Radius 1, from z = 0 to z = 1, open ends (they sit inside the spheres).
osg::ref_ptr<osg::Geometry> build_unit_cylinder() {
  auto vertices = make<osg::Vec3Array>();
  auto normals = make<osg::Vec3Array>();
  for (unsigned k = 0; k <= kCylinderSides; ++k) {
    const double a = 2.0 * kPi * k / kCylinderSides;
    const osg::Vec3 n(to_f(std::cos(a)), to_f(std::sin(a)), 0.0F);
    vertices->push_back(n);
    vertices->push_back(n + osg::Vec3(0.0F, 0.0F, 1.0F));
    normals->push_back(n);
    normals->push_back(n);
  }
  auto geom = make<osg::Geometry>();
  geom->setVertexArray(vertices.get());
  geom->setNormalArray(normals.get(), osg::Array::BIND_PER_VERTEX);
  geom->addPrimitiveSet(
      new osg::DrawArrays(GL_TRIANGLE_STRIP, 0, static_cast<GLsizei>(vertices->size())));
  geom->setUseVertexBufferObjects(true);
  return geom;
}

osg::ref_ptr<osg::StateSet> colour_state(const osg::Vec3& rgb) {
  auto ss = make<osg::StateSet>();
  ss->addUniform(new osg::Uniform("kanoko_colour", rgb));
  return ss;
}

// A flat 2-D shape in the HUD, one colour, drawn in a fixed order (depth test is off there).
osg::ref_ptr<osg::Geometry> make_flat(osg::Vec3Array* vertices, GLenum mode,
                                      const osg::Vec4& colour, int bin) {
  auto geom = make<osg::Geometry>();
  geom->setVertexArray(vertices);
  auto colours = make<osg::Vec4Array>();
  colours->push_back(colour);
  geom->setColorArray(colours.get(), osg::Array::BIND_OVERALL);
  geom->addPrimitiveSet(new osg::DrawArrays(mode, 0, static_cast<GLsizei>(vertices->size())));
  geom->getOrCreateStateSet()->setRenderBinDetails(bin, "RenderBin");
  return geom;
}

osg::Vec3 on_circle(double angle_from_noon_rad, double radius) {
  // Clockwise from 12 o'clock, y up.
  return {to_f(radius * std::sin(angle_from_noon_rad)),
          to_f(radius * std::cos(angle_from_noon_rad)), 0.0F};
}

osg::ref_ptr<osg::Vec3Array> disc_vertices(double radius, unsigned segments) {
  auto v = make<osg::Vec3Array>();
  v->push_back(osg::Vec3(0.0F, 0.0F, 0.0F));
  for (unsigned k = 0; k <= segments; ++k)
    v->push_back(on_circle(2.0 * kPi * k / segments, radius));
  return v;
}

osg::ref_ptr<osg::Vec3Array> ring_vertices(double inner, double outer, unsigned segments) {
  auto v = make<osg::Vec3Array>();
  for (unsigned k = 0; k <= segments; ++k) {
    const double a = 2.0 * kPi * k / segments;
    v->push_back(on_circle(a, outer));
    v->push_back(on_circle(a, inner));
  }
  return v;
}

// A quad along the radius at `angle`, from r0 to r1, `half_width` wide on each side (GL_TRIANGLES).
void add_radial_quad(osg::Vec3Array& v, double angle, double r0, double r1, double half_width0,
                     double half_width1) {
  const osg::Vec3 along = on_circle(angle, 1.0);
  const osg::Vec3 across = on_circle(angle + 0.5 * kPi, 1.0);
  const osg::Vec3 a = along * to_f(r0) - across * to_f(half_width0);
  const osg::Vec3 b = along * to_f(r0) + across * to_f(half_width0);
  const osg::Vec3 c = along * to_f(r1) + across * to_f(half_width1);
  const osg::Vec3 d = along * to_f(r1) - across * to_f(half_width1);
  for (const osg::Vec3& p : {a, b, c, a, c, d}) v.push_back(p);
}

// The body's size (src/trajectory/body_size.hpp, shared with the glTF export and the web page).
using trajectory::body_radius;
using trajectory::mass_ratio_scale;

// A texture wrapped around a body: u repeats around the axis, v runs from pole to pole.
osg::ref_ptr<osg::Texture2D> body_texture(osg::Image* image) {
  auto texture = make<osg::Texture2D>(image);
  texture->setWrap(osg::Texture::WRAP_S, osg::Texture::REPEAT);
  texture->setWrap(osg::Texture::WRAP_T, osg::Texture::CLAMP_TO_EDGE);
  texture->setFilter(osg::Texture::MIN_FILTER, osg::Texture::LINEAR_MIPMAP_LINEAR);
  texture->setFilter(osg::Texture::MAG_FILTER, osg::Texture::LINEAR);
  return texture;
}

osg::ref_ptr<osgText::Text> make_label(osgText::Font* font, osgText::Text::AlignmentType align) {
  auto text = make<osgText::Text>();
  if (font != nullptr) text->setFont(font);
  text->setFontResolution(48, 48);
  text->setColor(kLabelColour);
  text->setAlignment(align);
  text->setDataVariance(osg::Object::DYNAMIC);
  text->getOrCreateStateSet()->setRenderBinDetails(20, "RenderBin");
  return text;
}

}  // namespace

osg::ref_ptr<osg::Geometry> unit_sphere_geometry() { return build_unit_sphere(); }

void check_has_bodies(const trajectory::Reader& reader, const std::string& file) {
  if (reader.meta().body_count() == 0) {
    throw InputError(FileLoc{file},
                     "the run has no bodies, so there is nothing to draw; check that the "
                     "mapping's bodies match ranks in the trace");
  }
}

osg::ref_ptr<osgText::Font> monospace_font() {
  // osgText resolves a bare file name through its own search path only, and then silently falls
  // back to a proportional face; the Debian path comes first for that reason.
  for (const char* name :
       {"/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", "DejaVuSansMono.ttf"}) {
    if (osg::ref_ptr<osgText::Font> font = osgText::readRefFontFile(name); font.valid()) {
      return font;
    }
  }
  return nullptr;
}
osg::ref_ptr<osg::Geometry> unit_cylinder_geometry() { return build_unit_cylinder(); }

osg::Vec4 background_colour() { return {0.035F, 0.04F, 0.06F, 1.0F}; }

osg::BoundingSphered run_bound(const trajectory::Reader& reader) {
  const auto& meta = reader.meta();
  const std::size_t frames = reader.frame_count();
  const std::size_t n = meta.body_count();
  if (frames == 0 || n == 0) return osg::BoundingSphered(osg::Vec3d(0, 0, 0), 1.0);

  std::vector<std::size_t> sample;
  const std::size_t count = std::min(frames, kBoundSampleFrames);
  for (std::size_t i = 0; i < count; ++i) {
    sample.push_back(count == 1 ? 0 : (i * (frames - 1) + (count - 1) / 2) / (count - 1));
  }
  sample.back() = frames - 1;

  const int mass_stat = meta.stat_index(trajectory::stat::kMass);
  const auto scale_at = [&](const trajectory::FrameView& f, const trajectory::FrameView& f0,
                            std::size_t j) {
    if (mass_stat < 0) return 1.0;
    const auto s = static_cast<Eigen::Index>(mass_stat);
    const auto jj = static_cast<Eigen::Index>(j);
    return mass_ratio_scale(f.stats(s, jj), f0.stats(s, jj));
  };

  osg::BoundingBoxd box;
  for (std::size_t k : sample) {
    if (!reader.frame_readable(k)) continue;  // a damaged block: playback stops before it
    const auto f = reader.frame(k);
    for (Eigen::Index j = 0; j < f.positions.cols(); ++j) {
      box.expandBy(osg::Vec3d(f.positions(0, j), f.positions(1, j), f.positions(2, j)));
    }
  }
  const osg::Vec3d centre = box.center();
  const auto f0 = reader.frame(0);
  double radius = 0;
  double largest_body = 0;
  for (std::size_t k : sample) {
    if (!reader.frame_readable(k)) continue;
    const auto f = reader.frame(k);
    for (std::size_t j = 0; j < n && static_cast<Eigen::Index>(j) < f.positions.cols(); ++j) {
      const auto jj = static_cast<Eigen::Index>(j);
      const osg::Vec3d p(f.positions(0, jj), f.positions(1, jj), f.positions(2, jj));
      const double r = body_radius(meta.bodies[j]) * scale_at(f, f0, j);
      largest_body = std::max(largest_body, r);
      radius = std::max(radius, (p - centre).length() + r);
    }
  }
  if (!(radius > 0) || !std::isfinite(radius)) radius = largest_body > 0 ? largest_body : 1.0;
  return osg::BoundingSphered(centre, radius);
}

HomeView home_view(const osg::BoundingSphered& bound, double aspect) {
  HomeView h;
  const double half_v = 0.5 * h.fovy_deg * kDegToRad;
  const double half_h = std::atan(std::tan(half_v) * (aspect > 0 ? aspect : 1.0));
  const double half = std::min(half_v, half_h);
  const double radius = bound.radius() > 0 ? bound.radius() : 1.0;
  // A little slack so the outermost spheres do not touch the image border.
  const double distance = 1.06 * radius / std::sin(half);
  const double azimuth = 35.0 * kDegToRad;
  const double elevation = 25.0 * kDegToRad;
  const osg::Vec3d from_centre(std::cos(elevation) * std::sin(azimuth),
                               -std::cos(elevation) * std::cos(azimuth), std::sin(elevation));
  h.centre = bound.center();
  h.eye = h.centre + from_centre * distance;
  h.up = osg::Vec3d(0, 0, 1);
  h.near_m = std::max(distance - 1.1 * radius, 1e-3 * distance);
  h.far_m = distance + 1.1 * radius;
  return h;
}

osg::Vec3d CameraMatrices::to_window(const osg::Vec3d& world) const {
  const osg::ref_ptr<osg::Viewport> viewport = new osg::Viewport(0, 0, width_px, height_px);
  return world * view * projection * viewport->computeWindowMatrix();
}

CameraMatrices render_camera(const trajectory::Reader& reader, int width_px, int height_px) {
  return render_camera(run_bound(reader), width_px, height_px);
}

CameraMatrices render_camera(const osg::BoundingSphered& bound, int width_px, int height_px) {
  const double aspect = static_cast<double>(width_px) / std::max(height_px, 1);
  const HomeView h = home_view(bound, aspect);
  CameraMatrices c;
  c.view = osg::Matrixd::lookAt(h.eye, h.centre, h.up);
  c.projection = osg::Matrixd::perspective(h.fovy_deg, aspect, h.near_m, h.far_m);
  c.width_px = width_px;
  c.height_px = height_px;
  return c;
}

BodyStyle body_style_for(std::size_t bodies) {
  if (bodies > kCloudThreshold) return BodyStyle::cloud;
  if (bodies > kImpostorThreshold) return BodyStyle::impostors;
  return BodyStyle::meshes;
}

TrajectoryScene::TrajectoryScene(const trajectory::Reader& reader, int width_px, int height_px,
                                 std::optional<BodyStyle> style)
    : reader_(&reader),
      width_px_(width_px),
      height_px_(height_px),
      style_(style.value_or(body_style_for(reader.meta().body_count()))),
      traffic_(reader.meta()) {
  const auto& meta = reader_->meta();
  // The reader refuses files without frames or with edges to missing bodies.
  KANOKO_ASSERT(reader_->frame_count() > 0, "a trajectory has at least one frame");
  for (const auto& [a, b] : meta.edges) {
    KANOKO_ASSERT(a < meta.body_count() && b < meta.body_count(), "edge names a missing body");
  }
  bound_ = run_bound(*reader_);
  mass_stat_ = meta.stat_index(trajectory::stat::kMass);
  if (mass_stat_ >= 0) {
    const auto f0 = reader_->frame(0);
    mass0_.resize(meta.body_count(), 0.0);
    for (std::size_t j = 0; j < meta.body_count(); ++j) {
      mass0_[j] = f0.stats(mass_stat_, static_cast<Eigen::Index>(j));
    }
  }
  root_ = new osg::Group;
  build_world();
  build_hud();
  set_window_size(width_px, height_px);
  set_time(reader_->begin_time());
}

TrajectoryScene::~TrajectoryScene() = default;

void TrajectoryScene::use_mapping_formulas(const mapping::Mapping& m, const std::string& run) {
  if (!mapping_colours_bodies(m) && !m.visual.scale) return;
  formulas_ = std::make_unique<BodyFormulas>(m, *reader_, run);
  if (formulas_->has_scale() && formulas_->max_scale() > 1.0) {
    // Room for the largest body in the home view.
    double largest = 0;
    for (const auto& b : reader_->meta().bodies) largest = std::max(largest, body_radius(b));
    bound_.radius() += (formulas_->max_scale() - 1.0) * largest;
  }
  (void)formulas_->update(*reader_, time_s_);
  apply_body_colours();
  set_time(time_s_);
}

osg::Vec3 TrajectoryScene::body_colour(std::size_t i) const {
  // Highlighting dims the bodies that were not found.
  const float dim = filter_ == BodyFilter::highlight && i < found_.size() && !found_[i] ? 0.25F : 1.0F;
  if (formulas_ && formulas_->has_colour()) {
    const auto& c = formulas_->colours().at(i);
    return osg::Vec3(c[0], c[1], c[2]) * dim;
  }
  const auto& c = reader_->meta().bodies.at(i).colour_rgb;
  return osg::Vec3(c[0], c[1], c[2]) * dim;
}

void TrajectoryScene::set_body_filter(BodyFilter mode, std::vector<bool> found) {
  filter_ = found.size() == reader_->meta().body_count() ? mode : BodyFilter::none;
  found_ = filter_ == BodyFilter::none ? std::vector<bool>{} : std::move(found);
  if (selection_ && selection_->kind == Pick::Kind::body && !body_shown(selection_->index)) selection_.reset();
  apply_body_colours();
  set_time(time_s_);
}

void TrajectoryScene::apply_body_colours() {
  for (std::size_t i = 0; i < body_colours_.size(); ++i) body_colours_[i]->set(body_colour(i));
  if (points_.valid()) {
    auto* colours = static_cast<osg::Vec4Array*>(points_->getColorArray());
    // Dots of isolated-away bodies take the background's colour (the cloud draws fixed-size dots).
    const osg::Vec4 hidden = background_colour();
    for (std::size_t i = 0; i < colours->size(); ++i) {
      (*colours)[i] = body_shown(i) ? osg::Vec4(body_colour(i), 1.0F) : hidden;
    }
    colours->dirty();
  }
}

void TrajectoryScene::build_world() {
  const auto& meta = reader_->meta();
  world_ = new osg::Group;
  world_->setName("kanoko world");
  auto program = make<osg::Program>();
  program->setName("kanoko lit");
  program->addShader(new osg::Shader(osg::Shader::VERTEX, kVertexShader));
  program->addShader(new osg::Shader(osg::Shader::FRAGMENT, kFragmentShader));
  world_->getOrCreateStateSet()->setAttributeAndModes(program.get(), osg::StateAttribute::ON);
  world_->getOrCreateStateSet()->addUniform(new osg::Uniform("kanoko_texture", 0));
  world_->getOrCreateStateSet()->addUniform(new osg::Uniform("kanoko_textured", 0.0F));

  // One drawable shared by all bodies, one by all springs; per-instance state is only the
  // transform and a colour uniform (headless.md §5: unshared drawables cost memory, not speed).
  auto sphere_geode = make<osg::Geode>();
  sphere_geode->addDrawable(unit_sphere_geometry().get());
  auto cylinder_geode = make<osg::Geode>();
  cylinder_geode->addDrawable(unit_cylinder_geometry().get());

  auto springs = make<osg::Group>();
  springs->setName("springs");
  const auto f0 = reader_->frame(0);
  spring_colour_values_.assign(meta.edges.size(), kSpringNeutral);
  for (std::size_t e = 0; e < meta.edges.size(); ++e) {
    const auto [a, b] = meta.edges[e];
    spring_length0_.push_back((f0.positions.col(a) - f0.positions.col(b)).norm());
  }
  const bool cylinders = style_ == BodyStyle::meshes && meta.edges.size() <= kCylinderSpringLimit;
  // A cloud of tens of thousands of bodies shows no readable springs; they stay pickable.
  if (!cylinders && style_ != BodyStyle::cloud) build_spring_lines();
  for (std::size_t e = 0; cylinders && e < meta.edges.size(); ++e) {
    auto xf = make<osg::MatrixTransform>();
    xf->setDataVariance(osg::Object::DYNAMIC);
    osg::ref_ptr<osg::StateSet> state = colour_state(kSpringNeutral);
    spring_colours_.emplace_back(state->getUniform("kanoko_colour"));
    xf->setStateSet(state.get());
    xf->addChild(cylinder_geode.get());
    springs->addChild(xf.get());
    springs_.push_back(xf);
  }
  world_->addChild(springs.get());

  auto bodies = make<osg::Group>();
  bodies->setName("bodies");
  if (style_ != BodyStyle::meshes) build_point_bodies();
  for (std::size_t i = 0; style_ == BodyStyle::meshes && i < meta.body_count(); ++i) {
    const auto& info = meta.bodies[i];
    auto pat = make<osg::PositionAttitudeTransform>();
    pat->setName(info.name);
    pat->setUserValue("body_id", static_cast<unsigned int>(i));
    pat->setDataVariance(osg::Object::DYNAMIC);
    osg::ref_ptr<osg::StateSet> state =
        colour_state(osg::Vec3(info.colour_rgb[0], info.colour_rgb[1], info.colour_rgb[2]));
    body_colours_.emplace_back(state->getUniform("kanoko_colour"));
    pat->setStateSet(state.get());
    pat->addChild(sphere_geode.get());
    bodies->addChild(pat.get());
    bodies_.push_back(pat);
  }
  world_->addChild(bodies.get());

  // The selected body gets a wire cage; a selected spring takes the highlight colour.
  body_highlight_ = new osg::PositionAttitudeTransform;
  body_highlight_->setName("selection");
  body_highlight_->setDataVariance(osg::Object::DYNAMIC);
  body_highlight_->setNodeMask(0);
  osg::ref_ptr<osg::StateSet> cage = colour_state(kHighlight);
  cage->setAttributeAndModes(
      new osg::PolygonMode(osg::PolygonMode::FRONT_AND_BACK, osg::PolygonMode::LINE));
  body_highlight_->setStateSet(cage.get());
  body_highlight_->addChild(sphere_geode.get());
  world_->addChild(body_highlight_.get());
  root_->addChild(world_.get());
  build_decorations();
}

void TrajectoryScene::build_spring_lines() {
  const std::size_t m = reader_->meta().edges.size();
  spring_lines_ = make<osg::Geometry>();
  spring_lines_->setName("spring lines");
  spring_lines_->setDataVariance(osg::Object::DYNAMIC);
  spring_lines_->setUseDisplayList(false);
  spring_lines_->setUseVertexBufferObjects(true);
  spring_lines_->setVertexArray(new osg::Vec3Array(static_cast<unsigned>(2 * m)));
  spring_lines_->setColorArray(new osg::Vec4Array(static_cast<unsigned>(2 * m)),
                               osg::Array::BIND_PER_VERTEX);
  spring_lines_->addPrimitiveSet(new osg::DrawArrays(GL_LINES, 0, static_cast<GLsizei>(2 * m)));
  osg::StateSet* ss = spring_lines_->getOrCreateStateSet();
  ss->setAttributeAndModes(new osg::Program, osg::StateAttribute::ON);  // fixed function
  ss->setMode(GL_LIGHTING, osg::StateAttribute::OFF);
  auto geode = make<osg::Geode>();
  geode->addDrawable(spring_lines_.get());
  world_->addChild(geode.get());
}

void TrajectoryScene::build_point_bodies() {
  const auto& meta = reader_->meta();
  const std::size_t n = meta.body_count();
  points_ = make<osg::Geometry>();
  points_->setName(style_ == BodyStyle::cloud ? "body cloud" : "body impostors");
  points_->setDataVariance(osg::Object::DYNAMIC);
  points_->setUseDisplayList(false);
  points_->setUseVertexBufferObjects(true);
  points_->setVertexArray(new osg::Vec3Array(static_cast<unsigned>(n)));
  auto colours = make<osg::Vec4Array>();
  for (const auto& b : meta.bodies) {
    colours->push_back(osg::Vec4(b.colour_rgb[0], b.colour_rgb[1], b.colour_rgb[2], 1.0F));
  }
  points_->setColorArray(colours.get(), osg::Array::BIND_PER_VERTEX);
  points_->addPrimitiveSet(new osg::DrawArrays(GL_POINTS, 0, static_cast<GLsizei>(n)));
  // The bound is recomputed from the vertices on dirtyBound(); culling stays correct.
  osg::StateSet* ss = points_->getOrCreateStateSet();
  if (style_ == BodyStyle::impostors) {
    constexpr unsigned kRadiusAttribute = 6;
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
    viewport_height_ = new osg::Uniform("kanoko_viewport_height", to_f(height_px_));
    ss->addUniform(viewport_height_.get());
  } else {
    ss->setAttributeAndModes(new osg::Program, osg::StateAttribute::ON);  // fixed function
    ss->setMode(GL_LIGHTING, osg::StateAttribute::OFF);
    cloud_point_ = new osg::Point(kCloudPointSize_px);
    ss->setAttributeAndModes(cloud_point_.get());
    // One translucent sphere per host around its bodies: the aggregate the eye can read.
    std::map<std::string, std::size_t> hosts;
    host_of_body_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      host_of_body_[i] = hosts.emplace(meta.bodies[i].host, hosts.size()).first->second;
    }
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
      hs->setAttributeAndModes(
          new osg::PolygonMode(osg::PolygonMode::FRONT_AND_BACK, osg::PolygonMode::LINE));
      for (std::size_t h = 0; h < hosts.size(); ++h) {
        auto pat = make<osg::PositionAttitudeTransform>();
        pat->setDataVariance(osg::Object::DYNAMIC);
        pat->addChild(sphere.get());
        group->addChild(pat.get());
        host_spheres_.push_back(pat);
      }
      world_->addChild(group.get());
    }
  }
  auto geode = make<osg::Geode>();
  geode->addDrawable(points_.get());
  world_->addChild(geode.get());
}

void TrajectoryScene::set_framebuffer_height(int height_px) {
  if (viewport_height_.valid()) viewport_height_->set(to_f(std::max(height_px, 1)));
  // Labels are 14 output pixels high (legible at 1280x720), also when a renderer draws at a
  // multiple of the output size and scales down.
  label_px_ = 14.0F * to_f(std::max(height_px, 1)) / to_f(std::max(height_px_, 1));
  for (unsigned i = 0; labels_.valid() && i < labels_->getNumDrawables(); ++i) {
    static_cast<osgText::Text*>(labels_->getDrawable(i))->setCharacterSize(label_px_);
  }
  // Dots keep their size in window pixels when a renderer draws at a multiple of the window.
  if (cloud_point_.valid()) {
    cloud_point_->setSize(kCloudPointSize_px * to_f(std::max(height_px, 1)) /
                          to_f(std::max(height_px_, 1)));
  }
}

void TrajectoryScene::update_point_bodies() {
  const std::size_t n = reader_->meta().body_count();
  auto* v = static_cast<osg::Vec3Array*>(points_->getVertexArray());
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = positions_.col(static_cast<Eigen::Index>(i));
    (*v)[i] = osg::Vec3(to_f(c.x()), to_f(c.y()), to_f(c.z()));
  }
  v->dirty();
  if (style_ == BodyStyle::impostors) {
    auto* radii = static_cast<osg::FloatArray*>(points_->getVertexAttribArray(6));
    for (std::size_t i = 0; i < n; ++i) (*radii)[i] = to_f(drawn_radius(i));
    radii->dirty();
  }
  points_->dirtyBound();
  if (host_spheres_.empty()) return;
  // Centre and RMS spread of each host's bodies.
  const std::size_t hosts = host_spheres_.size();
  std::vector<Eigen::Vector3d> sum(hosts, Eigen::Vector3d::Zero());
  std::vector<double> sum2(hosts, 0.0);
  std::vector<std::size_t> count(hosts, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t h = host_of_body_[i];
    const Eigen::Vector3d p = positions_.col(static_cast<Eigen::Index>(i));
    sum[h] += p;
    sum2[h] += p.squaredNorm();
    ++count[h];
  }
  for (std::size_t h = 0; h < hosts; ++h) {
    const double k = static_cast<double>(std::max<std::size_t>(count[h], 1));
    const Eigen::Vector3d centre = sum[h] / k;
    const double spread = std::sqrt(std::max(sum2[h] / k - centre.squaredNorm(), 0.0));
    const double r = std::max(spread, body_radius(reader_->meta().bodies[0]));
    host_spheres_[h]->setPosition(osg::Vec3d(centre.x(), centre.y(), centre.z()));
    host_spheres_[h]->setScale(osg::Vec3d(r, r, r));
  }
}

void TrajectoryScene::build_decorations() {
  // Fixed-function, unlit, outside world_ so its shader does not apply.
  decorations_ = new osg::Group;
  decorations_->setName("decorations");
  osg::StateSet* ss = decorations_->getOrCreateStateSet();
  ss->setMode(GL_LIGHTING, osg::StateAttribute::OFF);
  ss->setMode(GL_BLEND, osg::StateAttribute::ON);
  ss->setAttributeAndModes(new osg::BlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA));

  // Ground grid one bound radius below the centre, 2 radii wide, and axes from its centre.
  const osg::Vec3d c = bound_.center();
  const double r = bound_.radius();
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
  auto grid = make<osg::Geode>();
  grid->addDrawable(make_flat(grid_vertices.get(), GL_LINES, kGridColour, 0).get());
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
    grid->addDrawable(make_flat(v.get(), GL_LINES, colour, 0).get());
  }
  grid->getOrCreateStateSet()->setAttributeAndModes(new osg::LineWidth(1.5F));
  grid_ = grid;
  grid_->setNodeMask(0);
  decorations_->addChild(grid_.get());

  trails_ = make<osg::Geometry>();
  trails_->setName("trails");
  trails_->setDataVariance(osg::Object::DYNAMIC);
  trails_->setUseDisplayList(false);
  trails_->setUseVertexBufferObjects(true);
  trails_->setVertexArray(new osg::Vec3Array);
  trails_->setColorArray(new osg::Vec4Array, osg::Array::BIND_PER_VERTEX);
  auto trail_geode = make<osg::Geode>();
  trail_geode->addDrawable(trails_.get());
  trail_geode->setNodeMask(0);
  decorations_->addChild(trail_geode.get());

  flashes_ = make<osg::Geometry>();
  flashes_->setName("flashes");
  flashes_->setDataVariance(osg::Object::DYNAMIC);
  flashes_->setUseDisplayList(false);
  flashes_->setUseVertexBufferObjects(true);
  flashes_->setVertexArray(new osg::Vec3Array);
  flashes_->setColorArray(new osg::Vec4Array, osg::Array::BIND_PER_VERTEX);
  flashes_->addPrimitiveSet(new osg::DrawArrays(GL_LINES, 0, 0));
  auto flash_geode = make<osg::Geode>();
  flash_geode->addDrawable(flashes_.get());
  flash_geode->getOrCreateStateSet()->setAttributeAndModes(new osg::LineWidth(2.5F));
  flash_geode->setNodeMask(0);
  decorations_->addChild(flash_geode.get());

  labels_ = new osg::Geode;
  labels_->setName("labels");
  labels_->setNodeMask(0);
  decorations_->addChild(labels_.get());
  root_->addChild(decorations_.get());
}

void TrajectoryScene::build_hud() {
  hud_ = new osg::Camera;
  hud_->setName("kanoko hud");
  hud_->setReferenceFrame(osg::Transform::ABSOLUTE_RF);
  hud_->setRenderOrder(osg::Camera::POST_RENDER);
  hud_->setClearMask(GL_DEPTH_BUFFER_BIT);
  hud_->setAllowEventFocus(false);
  hud_->setViewMatrix(osg::Matrixd::identity());
  osg::StateSet* ss = hud_->getOrCreateStateSet();
  ss->setMode(GL_LIGHTING, osg::StateAttribute::OFF);
  ss->setMode(GL_DEPTH_TEST, osg::StateAttribute::OFF);
  ss->setMode(GL_CULL_FACE, osg::StateAttribute::OFF);
  ss->setMode(GL_BLEND, osg::StateAttribute::ON);
  ss->setAttributeAndModes(new osg::BlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA));

  constexpr unsigned kSegments = 96;
  dial_xform_ = new osg::MatrixTransform;
  dial_xform_->setDataVariance(osg::Object::DYNAMIC);
  auto dial = make<osg::Geode>();
  dial->addDrawable(
      make_flat(disc_vertices(1.0, kSegments).get(), GL_TRIANGLE_FAN, kDialFace, 10).get());

  // The elapsed part of the run as a tinted sector from 12 o'clock to the hand; it also tells the
  // start (empty) from the end (full), where the hand alone looks the same.
  auto wedge_vertices = make<osg::Vec3Array>();
  elapsed_wedge_ = make_flat(wedge_vertices.get(), GL_TRIANGLE_FAN, kDialElapsed, 11);
  elapsed_wedge_->setDataVariance(osg::Object::DYNAMIC);
  elapsed_wedge_->setUseDisplayList(false);
  elapsed_wedge_->setUseVertexBufferObjects(true);
  dial->addDrawable(elapsed_wedge_.get());

  dial->addDrawable(
      make_flat(ring_vertices(0.93, 1.0, kSegments).get(), GL_TRIANGLE_STRIP, kDialRim, 12).get());
  auto ticks = make<osg::Vec3Array>();
  for (int hour = 1; hour < 12; ++hour) {
    const bool quarter = hour % 3 == 0;
    add_radial_quad(*ticks, 2.0 * kPi * hour / 12.0, quarter ? 0.68 : 0.76, 0.88,
                    quarter ? 0.035 : 0.022, quarter ? 0.035 : 0.022);
  }
  dial->addDrawable(make_flat(ticks.get(), GL_TRIANGLES, kDialTick, 13).get());
  auto noon = make<osg::Vec3Array>();
  add_radial_quad(*noon, 0.0, 0.62, 0.90, 0.05, 0.05);
  dial->addDrawable(make_flat(noon.get(), GL_TRIANGLES, kDialTickNoon, 13).get());
  dial_xform_->addChild(dial.get());

  hand_xform_ = new osg::MatrixTransform;
  hand_xform_->setDataVariance(osg::Object::DYNAMIC);
  auto hand = make<osg::Geode>();
  auto hand_vertices = make<osg::Vec3Array>();
  add_radial_quad(*hand_vertices, 0.0, -0.16, 0.84, 0.10, 0.035);
  hand->addDrawable(make_flat(hand_vertices.get(), GL_TRIANGLES, kDialHand, 14).get());
  hand->addDrawable(make_flat(disc_vertices(0.11, 24).get(), GL_TRIANGLE_FAN, kDialHand, 15).get());
  hand_xform_->addChild(hand.get());
  dial_xform_->addChild(hand_xform_.get());
  hud_->addChild(dial_xform_.get());

  osg::ref_ptr<osgText::Font> font = osgText::readRefFontFile("DejaVuSans.ttf");
  auto labels = make<osg::Geode>();
  time_label_ = make_label(font.get(), osgText::Text::RIGHT_BASE_LINE);
  status_label_ = make_label(font.get(), osgText::Text::LEFT_BASE_LINE);
  labels->addDrawable(time_label_.get());
  labels->addDrawable(status_label_.get());
  osg::ref_ptr<osgText::Font> mono = monospace_font();
  inspect_panel_ = make_label(mono.valid() ? mono.get() : font.get(), osgText::Text::LEFT_TOP);
  inspect_panel_->setDrawMode(osgText::Text::TEXT | osgText::Text::FILLEDBOUNDINGBOX);
  inspect_panel_->setBoundingBoxColor(kPanelBackground);
  labels->addDrawable(inspect_panel_.get());
  hud_->addChild(labels.get());
  root_->addChild(hud_.get());
}

void TrajectoryScene::set_window_size(int width_px, int height_px) {
  width_px_ = std::max(width_px, 1);
  height_px_ = std::max(height_px, 1);
  dial_ = dial_layout(width_px_, height_px_);
  set_framebuffer_height(height_px_);
  hud_->setProjectionMatrixAsOrtho2D(0.0, width_px_, 0.0, height_px_);
  dial_xform_->setMatrix(osg::Matrixd::scale(dial_.radius_px, dial_.radius_px, 1.0) *
                         osg::Matrixd::translate(dial_.centre_x_px, dial_.centre_y_px, 0.0));
  const float size = to_f(dial_.label_size_px);
  time_label_->setCharacterSize(size);
  time_label_->setPosition(osg::Vec3(to_f(dial_.label_x_px), to_f(dial_.label_y_px), 0.0F));
  status_label_->setCharacterSize(size);
  const float panel_size = std::max(11.0F, 0.8F * size);
  inspect_panel_->setCharacterSize(panel_size);
  inspect_panel_->setBoundingBoxMargin(0.4F * panel_size);
  inspect_panel_->setPosition(osg::Vec3(panel_size, to_f(height_px_) - panel_size, 0.0F));
  status_label_->setPosition(
      osg::Vec3(to_f(width_px_ - dial_.label_x_px), to_f(dial_.label_y_px), 0.0F));
}

void TrajectoryScene::set_status(const std::string& text) { status_label_->setText(text); }

double TrajectoryScene::mass_scale(std::size_t i) const {
  if (mass_stat_ < 0) return 1.0;
  return mass_ratio_scale(stats_(mass_stat_, static_cast<Eigen::Index>(i)), mass0_[i]);
}

double TrajectoryScene::drawn_radius(std::size_t i) const {
  if (!body_shown(i)) return 0.0;  // isolated away: not drawn, not picked
  const double formula = formulas_ && formulas_->has_scale() ? formulas_->scales().at(i) : 1.0;
  return body_radius(reader_->meta().bodies.at(i)) * mass_scale(i) * formula * visual_.body_scale;
}

void TrajectoryScene::set_reader(const trajectory::Reader& reader) {
  KANOKO_ASSERT(reader.meta().body_count() == reader_->meta().body_count() &&
                    reader.meta().edges == reader_->meta().edges && reader.frame_count() == reader_->frame_count(),
                "set_reader needs a run of the same bodies, springs and frames");
  reader_ = &reader;
  traffic_ = IntervalTraffic(reader.meta());
  partners_ = PartnerTotals{};
  set_time(time_s_);
}

void TrajectoryScene::set_time(double t_s) {
  const auto& meta = reader_->meta();
  time_s_ = std::clamp(t_s, reader_->begin_time(), reader_->end_time());
  reader_->positions_at(time_s_, positions_);
  if (mass_stat_ >= 0) reader_->stats_at(time_s_, stats_);
  // The formulas' values change with the stored frame only; the colours are set only then.
  if (formulas_ && formulas_->update(*reader_, time_s_) && formulas_->has_colour()) apply_body_colours();

  for (std::size_t i = 0; i < bodies_.size(); ++i) {
    const auto c = positions_.col(static_cast<Eigen::Index>(i));
    const double r = drawn_radius(i);
    bodies_[i]->setPosition(osg::Vec3d(c.x(), c.y(), c.z()));
    bodies_[i]->setScale(osg::Vec3d(r, r, r));
  }
  if (points_.valid()) update_point_bodies();
  if (spring_lines_.valid()) {
    auto* v = static_cast<osg::Vec3Array*>(spring_lines_->getVertexArray());
    for (std::size_t e = 0; e < meta.edges.size(); ++e) {
      // A spring to an isolated-away body collapses onto its first end.
      const bool shown = body_shown(meta.edges[e][0]) && body_shown(meta.edges[e][1]);
      for (std::size_t end = 0; end < 2; ++end) {
        const auto c = positions_.col(static_cast<Eigen::Index>(meta.edges[e][shown ? end : 0]));
        (*v)[2 * e + end] = osg::Vec3(to_f(c.x()), to_f(c.y()), to_f(c.z()));
      }
    }
    v->dirty();
    spring_lines_->dirtyBound();
  }
  for (std::size_t e = 0; e < springs_.size(); ++e) {
    const auto [a, b] = meta.edges[e];
    const auto pa = positions_.col(static_cast<Eigen::Index>(a));
    const auto pb = positions_.col(static_cast<Eigen::Index>(b));
    const osg::Vec3d from(pa.x(), pa.y(), pa.z());
    osg::Vec3d along = osg::Vec3d(pb.x(), pb.y(), pb.z()) - from;
    const double length = along.normalize();
    if (!(length > 0) || !std::isfinite(length) || !body_shown(a) || !body_shown(b)) {
      springs_[e]->setNodeMask(0);  // coincident bodies: nothing to draw between them
      continue;
    }
    const double r =
        kSpringRadiusFraction * std::min(body_radius(meta.bodies[a]), body_radius(meta.bodies[b]));
    springs_[e]->setNodeMask(~0U);
    springs_[e]->setMatrix(osg::Matrixd::scale(r, r, length) *
                           osg::Matrixd::rotate(osg::Vec3d(0, 0, 1), along) *
                           osg::Matrixd::translate(from));
  }
  traffic_.set_interval(meta.interval_of(time_s_));
  update_springs();
  update_dial();
  update_selection();
  update_labels();
  update_trails();
  update_flashes();
}

void TrajectoryScene::update_flashes() {
  osg::Node* geode = flashes_->getParent(0);
  const auto flashes = traffic_.flashes();
  if (!visual_.flashes || flashes.empty()) {
    geode->setNodeMask(0);
    return;
  }
  geode->setNodeMask(~0U);
  auto* vertices = static_cast<osg::Vec3Array*>(flashes_->getVertexArray());
  auto* colours = static_cast<osg::Vec4Array*>(flashes_->getColorArray());
  vertices->resize(2 * flashes.size());
  colours->resize(2 * flashes.size());
  // Flashes fade within their interval: bright when it starts, dimmer towards its end.
  const auto& meta = reader_->meta();
  const double into = meta.interval_s > 0 ? (time_s_ - meta.trace_begin_s) / meta.interval_s -
                                                static_cast<double>(traffic_.interval())
                                          : 0.0;
  const auto fade = static_cast<float>(1.0 - 0.6 * std::clamp(into, 0.0, 1.0));
  for (std::size_t k = 0; k < flashes.size(); ++k) {
    const Flash& f = flashes[k];
    for (const auto& [end, body] : {std::pair{0U, f.a}, std::pair{1U, f.b}}) {
      const auto c = positions_.col(static_cast<Eigen::Index>(body));
      (*vertices)[2 * k + end] = osg::Vec3(to_f(c.x()), to_f(c.y()), to_f(c.z()));
      (*colours)[2 * k + end] = osg::Vec4(kTrafficColour, (0.15F + 0.85F * f.intensity) * fade);
    }
  }
  vertices->dirty();
  colours->dirty();
  auto* lines = static_cast<osg::DrawArrays*>(flashes_->getPrimitiveSet(0));
  lines->setCount(static_cast<GLsizei>(2 * flashes.size()));
  lines->dirty();
  flashes_->dirtyBound();
}

namespace {

// Names of the visual choices, in the order the key and the panel cycle through them.
constexpr std::array<std::pair<SpringColours, const char*>, 3> kSpringColourNames{
    {{SpringColours::tension, "tension"}, {SpringColours::traffic, "traffic"}, {SpringColours::off, "off"}}};
constexpr std::array<std::pair<BodyTextures, const char*>, 3> kBodyTextureNames{
    {{BodyTextures::none, "none"}, {BodyTextures::host, "host"}, {BodyTextures::body, "body"}}};

template <class E, std::size_t N>
const char* name_in(const std::array<std::pair<E, const char*>, N>& names, E value) {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return names.front().second;
}

template <class E, std::size_t N>
E parse_name_in(const std::array<std::pair<E, const char*>, N>& names, std::string_view text, std::string_view option,
                std::string_view what) {
  std::string expected;
  for (const auto& [v, name] : names) {
    if (text == name) return v;
    expected += (expected.empty() ? "" : ", ") + std::string(name);
  }
  throw InputError(FileLoc{std::string(option)},
                   "unknown " + std::string(what) + " '" + std::string(text) + "'; expected one of " + expected);
}

}  // namespace

SpringColours next_spring_colours(SpringColours c) {
  for (std::size_t k = 0; k < kSpringColourNames.size(); ++k) {
    if (kSpringColourNames[k].first == c) return kSpringColourNames[(k + 1) % kSpringColourNames.size()].first;
  }
  return SpringColours::tension;
}

const char* to_string(SpringColours c) { return name_in(kSpringColourNames, c); }
const char* to_string(BodyTextures t) { return name_in(kBodyTextureNames, t); }

BodyTextures parse_body_textures(std::string_view text, std::string_view option) {
  return parse_name_in(kBodyTextureNames, text, option, "body textures");
}

SpringColours parse_spring_colours(std::string_view text, std::string_view option) {
  return parse_name_in(kSpringColourNames, text, option, "spring colouring");
}

osg::Vec3 traffic_colour(double bytes, double max_bytes) {
  return to_vec3(trajectory::traffic_colour(bytes, max_bytes));
}

osg::Vec3 tension_colour(double length, double length0) {
  return to_vec3(trajectory::tension_colour(length, length0));
}

osg::Vec3 TrajectoryScene::spring_colour(std::size_t e) const {
  return spring_colour_values_.at(e);
}

void TrajectoryScene::update_springs() {
  const auto& edges = reader_->meta().edges;
  auto* line_colours =
      spring_lines_.valid() ? static_cast<osg::Vec4Array*>(spring_lines_->getColorArray()) : nullptr;
  for (std::size_t e = 0; e < edges.size(); ++e) {
    osg::Vec3 colour = kSpringNeutral;
    if (selection_ && selection_->kind == Pick::Kind::spring && selection_->index == e) {
      colour = kHighlight;
    } else if (visual_.spring_colours == SpringColours::tension) {
      const auto [a, b] = edges[e];
      colour = tension_colour((positions_.col(a) - positions_.col(b)).norm(), spring_length0_[e]);
    } else if (visual_.spring_colours == SpringColours::traffic) {
      colour = traffic_colour(traffic_.spring_bytes()[e], traffic_.max_spring_bytes());
    }
    spring_colour_values_[e] = colour;
    if (e < spring_colours_.size()) spring_colours_[e]->set(colour);
    if (line_colours != nullptr) {
      (*line_colours)[2 * e] = (*line_colours)[2 * e + 1] = osg::Vec4(colour, 1.0F);
    }
  }
  if (line_colours != nullptr) line_colours->dirty();
}

std::filesystem::path body_texture_folder() {
  if (const char* env = std::getenv("KANOKO_ASSETS"); env != nullptr && *env != '\0') {
    return std::filesystem::path(env) / "textures";
  }
  return std::filesystem::path(KANOKO_ASSETS_DIR) / "textures";
}

std::vector<std::filesystem::path> body_texture_files() {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(body_texture_folder(), ec)) {
    if (entry.path().extension() == ".png") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::size_t TrajectoryScene::texture_of(std::size_t body) const {
  if (visual_.textures == BodyTextures::body || textures_.empty()) return textures_.empty() ? 0 : body % textures_.size();
  return host_index_.at(body) % textures_.size();
}

void TrajectoryScene::apply_textures() {
  if (visual_.textures != BodyTextures::none && textures_.empty() && !textures_tried_) {
    textures_tried_ = true;
    for (const auto& file : body_texture_files()) {
      osg::ref_ptr<osg::Image> image = osgDB::readRefImageFile(file.string());
      if (!image.valid()) continue;
      textures_.push_back(body_texture(image.get()));
    }
    if (textures_.empty()) {
      std::fprintf(stderr, "kanoko: no body textures in %s; bodies stay plain\n",
                   body_texture_folder().string().c_str());
    }
    const auto& bodies = reader_->meta().bodies;
    std::map<std::string, std::size_t> hosts;
    host_index_.resize(bodies.size());
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      host_index_[i] = hosts.emplace(bodies[i].host.empty() ? bodies[i].name : bodies[i].host, hosts.size()).first->second;
    }
  }
  const bool on = visual_.textures != BodyTextures::none && !textures_.empty();
  // The mapping's own image, on every body while no pattern set is chosen.
  const bool image = visual_.textures == BodyTextures::none && visual_.texture_image.valid();
  if (image && (!image_texture_.valid() || image_texture_->getImage() != visual_.texture_image.get())) {
    image_texture_ = body_texture(visual_.texture_image.get());
  }
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

void TrajectoryScene::build_labels() {
  // Built on first use: thousands of text drawables cost memory nobody asked for.
  const auto& bodies = reader_->meta().bodies;
  if (labels_->getNumDrawables() == 0) {
    osg::ref_ptr<osgText::Font> font = osgText::readRefFontFile("DejaVuSans.ttf");
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      auto text = make_label(font.get(), osgText::Text::LEFT_BOTTOM);
      text->setAutoRotateToScreen(true);
      text->setCharacterSizeMode(osgText::Text::SCREEN_COORDS);
      text->setCharacterSize(label_px_);
      text->setText(label_text(bodies[i], i, visual_.label_text));
      labels_->addDrawable(text.get());
    }
  } else if (labels_built_for_ != visual_.label_text) {
    for (unsigned i = 0; i < labels_->getNumDrawables(); ++i) {
      static_cast<osgText::Text*>(labels_->getDrawable(i))->setText(label_text(bodies[i], i, visual_.label_text));
    }
  }
  labels_built_for_ = visual_.label_text;
}

void TrajectoryScene::set_visual(const VisualOptions& options) {
  const bool labels_changed = options.labels != visual_.labels || options.label_text != visual_.label_text;
  const bool textures_changed =
      options.textures != visual_.textures || options.texture_image.get() != visual_.texture_image.get();
  visual_ = options;
  visual_.body_scale = std::clamp(options.body_scale, 0.25, 4.0);
  visual_.trail_s = std::isfinite(options.trail_s) ? std::max(options.trail_s, 0.0) : 0.0;
  grid_->setNodeMask(visual_.grid ? ~0U : 0U);
  if (labels_changed && visual_.labels) build_labels();
  labels_->setNodeMask(visual_.labels ? ~0U : 0U);
  if (textures_changed) apply_textures();
  set_time(time_s_);
}

void TrajectoryScene::update_labels() {
  if (!visual_.labels) return;
  for (unsigned i = 0; i < labels_->getNumDrawables(); ++i) {
    auto* text = static_cast<osgText::Text*>(labels_->getDrawable(i));
    const auto c = positions_.col(static_cast<Eigen::Index>(i));
    const double r = drawn_radius(i);
    text->setPosition(osg::Vec3(to_f(c.x() + 0.8 * r), to_f(c.y()), to_f(c.z() + 0.8 * r)));
  }
}

void TrajectoryScene::update_trails() {
  osg::Node* geode = trails_->getParent(0);
  const std::size_t n = reader_->meta().body_count();
  if (!(visual_.trail_s > 0) || n > kMaxTrailBodies) {
    geode->setNodeMask(0);
    return;
  }
  geode->setNodeMask(~0U);
  auto* vertices = static_cast<osg::Vec3Array*>(trails_->getVertexArray());
  auto* colours = static_cast<osg::Vec4Array*>(trails_->getColorArray());
  vertices->resize(n * kTrailSamples);
  colours->resize(n * kTrailSamples);
  Eigen::Matrix3Xd p;
  for (int k = 0; k < kTrailSamples; ++k) {
    // Oldest sample first; the last one is now.
    const double age = visual_.trail_s * (kTrailSamples - 1 - k) / (kTrailSamples - 1);
    reader_->positions_at(std::max(time_s_ - age, reader_->begin_time()), p);
    const float alpha = 0.85F * static_cast<float>(k + 1) / kTrailSamples;
    for (std::size_t i = 0; i < n; ++i) {
      const auto c = p.col(static_cast<Eigen::Index>(i));
      const std::size_t v = i * kTrailSamples + static_cast<std::size_t>(k);
      (*vertices)[v] = osg::Vec3(to_f(c.x()), to_f(c.y()), to_f(c.z()));
      (*colours)[v] = osg::Vec4(body_colour(i), alpha);
    }
  }
  vertices->dirty();
  colours->dirty();
  if (trails_->getNumPrimitiveSets() != n) {
    trails_->removePrimitiveSet(0, trails_->getNumPrimitiveSets());
    for (std::size_t i = 0; i < n; ++i) {
      trails_->addPrimitiveSet(new osg::DrawArrays(
          GL_LINE_STRIP, static_cast<GLint>(i * kTrailSamples), kTrailSamples));
    }
  }
  trails_->dirtyBound();
}

std::optional<Pick> TrajectoryScene::pick_at(const osg::Matrixd& view,
                                             const osg::Matrixd& projection, double x_normalised,
                                             double y_normalised) const {
  const osg::Matrixd window_from_world = view * projection;
  const osg::Matrixd world_from_window = osg::Matrixd::inverse(window_from_world);
  const osg::Vec3d near_point = osg::Vec3d(x_normalised, y_normalised, -1.0) * world_from_window;
  const osg::Vec3d far_point = osg::Vec3d(x_normalised, y_normalised, 1.0) * world_from_window;
  Ray ray;
  ray.origin = Eigen::Vector3d(near_point.x(), near_point.y(), near_point.z());
  ray.direction = Eigen::Vector3d(far_point.x(), far_point.y(), far_point.z()) - ray.origin;
  std::vector<double> radii(reader_->meta().body_count());
  double smallest = 0;
  for (std::size_t i = 0; i < radii.size(); ++i) {
    radii[i] = drawn_radius(i);
    smallest = i == 0 ? radii[i] : std::min(smallest, radii[i]);
  }
  // Springs are thin; accept clicks within two of their drawn radii.
  const double spring_tolerance = 2.0 * kSpringRadiusFraction * (smallest > 0 ? smallest : 0.1);
  return pick(ray, positions_, radii, reader_->meta().edges, spring_tolerance);
}

void TrajectoryScene::select(const std::optional<Pick>& pick) {
  selection_ = pick;
  if (selection_) {
    const std::size_t limit =
        selection_->kind == Pick::Kind::body ? reader_->meta().body_count() : reader_->meta().edges.size();
    KANOKO_ASSERT(selection_->index < limit, "selection of a missing body or spring");
  }
  update_springs();
  update_selection();
}

std::string TrajectoryScene::inspect_text() const {
  if (!selection_) return {};
  std::string text = selection_->kind == Pick::Kind::body
                         ? describe_body(*reader_, selection_->index, time_s_, &partners_)
                         : describe_spring(*reader_, selection_->index, time_s_, &partners_);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

void TrajectoryScene::update_selection() {
  if (selection_ && selection_->kind == Pick::Kind::body) {
    const std::size_t i = selection_->index;
    const auto c = positions_.col(static_cast<Eigen::Index>(i));
    const double r = kHighlightScale * drawn_radius(i);
    body_highlight_->setPosition(osg::Vec3d(c.x(), c.y(), c.z()));
    body_highlight_->setScale(osg::Vec3d(r, r, r));
    body_highlight_->setNodeMask(~0U);
  } else {
    body_highlight_->setNodeMask(0);
  }
  const std::string text = inspect_text();
  // Text layout is redone on every setText, so only when the words change.
  if (!inspect_panel_visible_) {
    inspect_panel_->setNodeMask(0U);
    return;
  }
  if (text != inspect_panel_->getText().createUTF8EncodedString()) inspect_panel_->setText(text);
  inspect_panel_->setNodeMask(text.empty() ? 0U : ~0U);
}

void TrajectoryScene::set_inspect_panel_visible(bool on) {
  inspect_panel_visible_ = on;
  update_selection();
}

std::string run_caption(const trajectory::Reader& reader) {
  const auto& m = reader.meta();
  std::string caption;
  if (!m.source_trace.empty()) caption = "trace " + std::filesystem::path(m.source_trace).filename().string();
  if (!m.source_mapping.empty()) {
    caption += (caption.empty() ? "" : "  ·  ") + std::string("mapping ") +
               std::filesystem::path(m.source_mapping).filename().string();
  }
  if (caption.empty()) caption = std::to_string(m.body_count()) + " bodies";
  return caption;
}

void TrajectoryScene::update_dial() {
  // The dial spans the traced run, as in the paper (6 o'clock is half of the program's run);
  // frames stored after the trace ends (the settling phase) show a full dial.
  const auto& meta = reader_->meta();
  const double begin = meta.trace_end_s > meta.trace_begin_s ? meta.trace_begin_s : reader_->begin_time();
  const double end = meta.trace_end_s > meta.trace_begin_s ? meta.trace_end_s : reader_->end_time();
  const double fraction = dial_fraction(time_s_, begin, end);
  const double angle = dial_hand_angle_deg(fraction) * kDegToRad;
  // Positive rotation about +z is counter-clockwise on screen; the hand turns clockwise.
  hand_xform_->setMatrix(osg::Matrixd::rotate(-angle, osg::Vec3d(0, 0, 1)));

  auto* v = static_cast<osg::Vec3Array*>(elapsed_wedge_->getVertexArray());
  v->clear();
  if (angle > 0) {
    const auto steps = static_cast<unsigned>(std::ceil(angle / (2.0 * kPi) * 96.0));
    v->push_back(osg::Vec3(0.0F, 0.0F, 0.0F));
    for (unsigned k = 0; k <= steps; ++k) v->push_back(on_circle(angle * k / steps, 0.93));
  }
  v->dirty();
  auto* draw = static_cast<osg::DrawArrays*>(elapsed_wedge_->getPrimitiveSet(0));
  draw->setCount(static_cast<GLsizei>(v->size()));
  draw->dirty();
  elapsed_wedge_->dirtyBound();

  time_label_->setText(format_dial_time(time_s_, begin, end));
}

}  // namespace kanoko::scene
