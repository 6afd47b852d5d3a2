// The scene's visual choices and body styles: how springs are coloured, patterns on the bodies,
// the options the viewer's panel changes, the body filter and the style chosen by body count.
// Shared by the layers (src/scene/layers) and TrajectoryScene (src/scene/scene.hpp, which
// includes this header).
#pragma once

#include <cstddef>
#include <filesystem>
#include <osg/Image>
#include <osg/Vec3>
#include <string_view>
#include <vector>

#include "src/mapping/mapping.hpp"

namespace kanoko::scene {

/// How springs are coloured.
enum class SpringColours {
  off,      ///< all neutral grey
  tension,  ///< blue when shorter than at the start, red when longer
  traffic,  ///< grey to orange with the bytes the pair exchanges in the current interval
};
/// The next mode in the order tension, traffic, off (the key and the panel button cycle).
[[nodiscard]] SpringColours next_spring_colours(SpringColours c);
/// "tension", "traffic" or "off".
[[nodiscard]] const char* to_string(SpringColours c);
/// The mode named `text`; throws InputError naming `option` otherwise.
[[nodiscard]] SpringColours parse_spring_colours(std::string_view text, std::string_view option);

/// Patterns on the bodies (mesh style only), from the textures in assets/textures: none, one
/// per host (bodies of a host share a pattern; colours still tell them apart) or one per body
/// (cycling through the set).
enum class BodyTextures { none, host, body };
/// "none", "host", "body".
[[nodiscard]] const char* to_string(BodyTextures t);
/// The choice named `text`; throws InputError naming `option` otherwise.
[[nodiscard]] BodyTextures parse_body_textures(std::string_view text, std::string_view option);

/// Visual parameters of the scene (the viewer's paused panel changes them).
struct VisualOptions {
  double body_scale = 1.0;  ///< multiplies every drawn body radius; clamped to 0.25..4
  bool labels = false;      ///< labels beside the bodies
  /// What the labels say ([visual] labels, --labels=KIND): name, rank, host or index.
  mapping::LabelKind label_text = mapping::LabelKind::Name;
  bool grid = false;        ///< a ground grid under the run and x/y/z axes at its centre
  SpringColours spring_colours = SpringColours::tension;
  bool flashes = false;     ///< lines between the bodies that communicate in the current interval
  double trail_s = 0;       ///< trails of the last trail_s trace seconds; 0 draws none
  BodyTextures textures = BodyTextures::none;
  /// One image on every body (the mapping's [visual] texture), used while `textures` is none;
  /// mesh-drawn bodies only. Null: none.
  osg::ref_ptr<osg::Image> texture_image;
  /// The colour key (src/scene/legend.hpp) boxed in the top-right corner of the HUD: pictures and
  /// videos draw it (`kanoko render`, off with --no-legend); the viewer shows the key in its side
  /// panel instead.
  bool legend = false;
};

/// The folder of the shipped body textures: $KANOKO_ASSETS/textures, else the source tree's
/// assets/textures.
[[nodiscard]] std::filesystem::path body_texture_folder();
/// Its PNG files, sorted by name (the order in which bodies or hosts get them).
[[nodiscard]] std::vector<std::filesystem::path> body_texture_files();

/// Colour of a spring that carries `bytes` in the current interval when the busiest spring
/// carries `max_bytes`: neutral grey without traffic, towards orange (square-root scale).
[[nodiscard]] osg::Vec3 traffic_colour(double bytes, double max_bytes);

/// Colour of a spring whose length is `length` and was `length0` at the start: grey when
/// unchanged, towards blue when compressed and red when stretched (saturating at ±25%).
[[nodiscard]] osg::Vec3 tension_colour(double length, double length0);
/// What a set of found bodies does to the others: nothing, dimmed (the found ones stand out), or
/// hidden with their springs (only the found ones remain, and only they can be picked).
enum class BodyFilter { none, highlight, isolate };

/// How bodies are drawn. Picking is analytic, so it works the same for all three.
enum class BodyStyle {
  meshes,     ///< a lit low-poly sphere per body (one shared mesh, a transform each)
  impostors,  ///< one point sprite per body, shaded as a sphere in the fragment shader
  cloud,      ///< small points, no springs, a wire sphere per host (up to 512 hosts) around
              ///< its bodies' centre with their RMS spread as radius
};
/// Above this many bodies the scene uses impostors (llvmpipe's cost follows triangles).
inline constexpr std::size_t kImpostorThreshold = 2000;
/// Above this many bodies the scene draws a cloud aggregated by host (the paper's suggestion).
inline constexpr std::size_t kCloudThreshold = 50000;
/// Above this many springs (or with impostor bodies), springs are lines, not cylinders.
inline constexpr std::size_t kCylinderSpringLimit = 4000;
/// The style used for a run with this many bodies.
[[nodiscard]] BodyStyle body_style_for(std::size_t bodies);

/// Trails are drawn only for runs with at most this many bodies (each costs a polyline).
inline constexpr std::size_t kMaxTrailBodies = 2000;

}  // namespace kanoko::scene
