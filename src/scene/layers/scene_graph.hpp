// Small scene-graph helpers every layer of the scene shares (src/scene/layers): the two meshes,
// the lit shader, flat HUD shapes, text labels, body textures and the colour constants. One place,
// so that no layer builds its own copy.
#pragma once

#include <Eigen/Core>
#include <numbers>
#include <osg/Geometry>
#include <osg/Image>
#include <osg/Program>
#include <osg/StateSet>
#include <osg/Texture2D>
#include <osg/Transform>
#include <osg/Uniform>
#include <osg/Vec3>
#include <osg/Vec4>
#include <osgText/Font>
#include <osgText/Text>
#include <utility>

#include "src/trajectory/spring_colour.hpp"

namespace kanoko::scene {

/// π, and degrees to radians, for the layers' circles and angles.
inline constexpr double kPi = std::numbers::pi;
inline constexpr double kDegToRad = kPi / 180.0;

/// Clear colour behind the scene (dark blue-grey, so dark body colours still read).
[[nodiscard]] osg::Vec4 background_colour();

/// The mesh every body shares: a unit sphere at the origin, 128 triangles wound counter-clockwise
/// seen from outside, normals equal to positions.
[[nodiscard]] osg::ref_ptr<osg::Geometry> unit_sphere_geometry();
/// The mesh every spring shares: an open cylinder of radius 1 from z = 0 to z = 1.
[[nodiscard]] osg::ref_ptr<osg::Geometry> unit_cylinder_geometry();

/// DejaVu Sans Mono for the panels (columns of label and value line up), from Debian's
/// fonts-dejavu-core; falls back to osgText's default font if it is missing.
[[nodiscard]] osg::ref_ptr<osgText::Font> monospace_font();

namespace layers {

/// A new OSG object held by a ref_ptr.
template <class T, class... A>
osg::ref_ptr<T> make(A&&... args) {
  return osg::ref_ptr<T>(new T(std::forward<A>(args)...));
}

[[nodiscard]] inline float to_f(double x) { return static_cast<float>(x); }
[[nodiscard]] inline osg::Vec3 to_vec3(const trajectory::Rgb& c) { return {c[0], c[1], c[2]}; }
/// Column i of a 3×N matrix as an OSG vertex.
[[nodiscard]] inline osg::Vec3 vertex(const Eigen::Matrix3Xd& p, std::size_t i) {
  const auto c = p.col(static_cast<Eigen::Index>(i));
  return {to_f(c.x()), to_f(c.y()), to_f(c.z())};
}

/// The springs' colours (src/trajectory/spring_colour.hpp, shared with the web page).
[[nodiscard]] inline osg::Vec3 spring_neutral() { return to_vec3(trajectory::kSpringNeutral); }
/// The busiest spring's colour; the flashes share the hue.
[[nodiscard]] inline osg::Vec3 traffic_hue() { return to_vec3(trajectory::kSpringTraffic); }
/// What a selected body's cage and a selected spring are drawn in.
inline const osg::Vec3 kHighlight{1.0F, 0.9F, 0.25F};
/// Colour of text in the scene (labels, dial time, status, inspect panel).
inline const osg::Vec4 kLabelColour{0.86F, 0.88F, 0.92F, 1.0F};

/// The lit program of the 3-D world (per-pixel Blinn-Phong, optional texture), set once on the
/// world group; each body or spring sets the `kanoko_colour` uniform (colour_state).
[[nodiscard]] osg::ref_ptr<osg::Program> lit_program();
/// A state set with the lit program's colour uniform set to `rgb`.
[[nodiscard]] osg::ref_ptr<osg::StateSet> colour_state(const osg::Vec3& rgb);
/// Makes `transform` one instance of the shared `mesh`: dynamic, with its own colour state set
/// (`rgb`) and the mesh as its child. Returns the instance's colour uniform.
osg::ref_ptr<osg::Uniform> make_instance(osg::Transform& transform, osg::Node& mesh, const osg::Vec3& rgb);
/// A flat shape of one colour (HUD shapes, grid lines), drawn in render bin `bin`.
[[nodiscard]] osg::ref_ptr<osg::Geometry> make_flat(osg::Vec3Array* vertices, GLenum mode, const osg::Vec4& colour,
                                                    int bin);
/// A geometry rewritten every frame (spring lines, point bodies, trails, flashes): `vertices`
/// vertices with a colour each, in vertex buffers, no display list, no primitive set yet.
[[nodiscard]] osg::ref_ptr<osg::Geometry> make_dynamic(const char* name, std::size_t vertices);
/// A text drawable in `font` (null: osgText's default) with glyphs rendered at `resolution`
/// pixels, in `colour`, drawn in render bin `bin`.
[[nodiscard]] osg::ref_ptr<osgText::Text> make_text(osgText::Font* font, osgText::Text::AlignmentType align,
                                                    const osg::Vec4& colour, unsigned resolution, int bin);
/// Sets `text`'s words from UTF-8 (every string Kanoko shows is UTF-8: "·", "µs", names from the
/// trace); osgText's one-argument setText would read the bytes as Latin-1 ("Â·").
void set_text(osgText::Text& text, const std::string& utf8);
/// A text drawable in the label colour, drawn after the scene (render bin 20).
[[nodiscard]] osg::ref_ptr<osgText::Text> make_label(osgText::Font* font, osgText::Text::AlignmentType align);
/// A texture wrapped around a body: u repeats around the axis, v runs from pole to pole.
[[nodiscard]] osg::ref_ptr<osg::Texture2D> body_texture(osg::Image* image);

}  // namespace layers
}  // namespace kanoko::scene
