#include "src/scene/layers/scene_graph.hpp"

#include <cmath>
#include <osg/Shader>
#include <osg/Uniform>
#include <osgText/Font>
#include <vector>

namespace kanoko::scene {

namespace {

using layers::make;
using layers::to_f;

// Low-poly sphere, 128 triangles: llvmpipe's cost grows with triangles (headless.md §5), and
// per-pixel lighting keeps the spheres looking round anyway.
constexpr unsigned kSphereDivisions = 4;
constexpr unsigned kCylinderSides = 10;

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

}  // namespace

osg::ref_ptr<osg::Geometry> unit_sphere_geometry() { return build_unit_sphere(); }
osg::ref_ptr<osg::Geometry> unit_cylinder_geometry() { return build_unit_cylinder(); }

osg::Vec4 background_colour() { return {0.035F, 0.04F, 0.06F, 1.0F}; }

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
namespace layers {

osg::ref_ptr<osg::Program> lit_program() {
  auto program = make<osg::Program>();
  program->setName("kanoko lit");
  program->addShader(new osg::Shader(osg::Shader::VERTEX, kVertexShader));
  program->addShader(new osg::Shader(osg::Shader::FRAGMENT, kFragmentShader));
  return program;
}

osg::ref_ptr<osg::StateSet> colour_state(const osg::Vec3& rgb) {
  auto ss = make<osg::StateSet>();
  ss->addUniform(new osg::Uniform("kanoko_colour", rgb));
  return ss;
}

osg::ref_ptr<osg::Uniform> make_instance(osg::Transform& transform, osg::Node& mesh, const osg::Vec3& rgb) {
  transform.setDataVariance(osg::Object::DYNAMIC);
  osg::ref_ptr<osg::StateSet> state = colour_state(rgb);
  osg::ref_ptr<osg::Uniform> colour = state->getUniform("kanoko_colour");
  transform.setStateSet(state.get());
  transform.addChild(&mesh);
  return colour;
}

osg::ref_ptr<osg::Geometry> make_flat(osg::Vec3Array* vertices, GLenum mode, const osg::Vec4& colour, int bin) {
  auto geom = make<osg::Geometry>();
  geom->setVertexArray(vertices);
  auto colours = make<osg::Vec4Array>();
  colours->push_back(colour);
  geom->setColorArray(colours.get(), osg::Array::BIND_OVERALL);
  geom->addPrimitiveSet(new osg::DrawArrays(mode, 0, static_cast<GLsizei>(vertices->size())));
  geom->getOrCreateStateSet()->setRenderBinDetails(bin, "RenderBin");
  return geom;
}

osg::ref_ptr<osg::Geometry> make_dynamic(const char* name, std::size_t vertices) {
  auto geom = make<osg::Geometry>();
  geom->setName(name);
  geom->setDataVariance(osg::Object::DYNAMIC);
  geom->setUseDisplayList(false);
  geom->setUseVertexBufferObjects(true);
  geom->setVertexArray(new osg::Vec3Array(static_cast<unsigned>(vertices)));
  geom->setColorArray(new osg::Vec4Array(static_cast<unsigned>(vertices)), osg::Array::BIND_PER_VERTEX);
  return geom;
}

osg::ref_ptr<osgText::Text> make_text(osgText::Font* font, osgText::Text::AlignmentType align,
                                      const osg::Vec4& colour, unsigned resolution, int bin) {
  auto text = make<osgText::Text>();
  if (font != nullptr) text->setFont(font);
  text->setFontResolution(resolution, resolution);
  text->setColor(colour);
  text->setAlignment(align);
  text->setDataVariance(osg::Object::DYNAMIC);
  text->getOrCreateStateSet()->setRenderBinDetails(bin, "RenderBin");
  return text;
}

osg::ref_ptr<osgText::Text> make_label(osgText::Font* font, osgText::Text::AlignmentType align) {
  return make_text(font, align, kLabelColour, 48, 20);
}

osg::ref_ptr<osg::Texture2D> body_texture(osg::Image* image) {
  auto texture = make<osg::Texture2D>(image);
  texture->setWrap(osg::Texture::WRAP_S, osg::Texture::REPEAT);
  texture->setWrap(osg::Texture::WRAP_T, osg::Texture::CLAMP_TO_EDGE);
  texture->setFilter(osg::Texture::MIN_FILTER, osg::Texture::LINEAR_MIPMAP_LINEAR);
  texture->setFilter(osg::Texture::MAG_FILTER, osg::Texture::LINEAR);
  return texture;
}

void set_text(osgText::Text& text, const std::string& utf8) { text.setText(utf8, osgText::String::ENCODING_UTF8); }

}  // namespace layers
}  // namespace kanoko::scene
