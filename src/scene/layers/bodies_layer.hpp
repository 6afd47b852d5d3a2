// The bodies of the scene: lit spheres (one shared mesh, a transform each), sphere impostors, or
// a cloud of dots with a wire sphere per host; their colours and textures; the wire cage around
// the selected body.
#pragma once

#include <cstddef>
#include <cstdint>
#include <osg/Geometry>
#include <osg/Group>
#include <osg/Image>
#include <osg/Point>
#include <osg/PositionAttitudeTransform>
#include <osg/Texture2D>
#include <osg/Uniform>
#include <vector>

#include "src/scene/layers/frame_state.hpp"
#include "src/scene/layers/visual_options.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::scene::layers {

class BodiesLayer {
 public:
  /// Builds the bodies of `meta` drawn as `style` and adds them to `world` (host spheres, point
  /// bodies, the group of mesh bodies, the selection cage, in this order). `framebuffer_height_px`
  /// sizes the impostors.
  BodiesLayer(const trajectory::Metadata& meta, BodyStyle style, osg::Group& world, int framebuffer_height_px);

  /// Moves and sizes the bodies to the frame's positions and radii, re-applies the colours when
  /// they changed, and places the selection cage.
  void update(const FrameState& frame);
  /// Patterns on the mesh bodies: `textures` from the shipped set (loaded on first use; hosts
  /// from `meta`), else `image` on every body (may be null: none).
  void set_textures(BodyTextures textures, osg::Image* image, const trajectory::Metadata& meta);
  /// Impostor sizes and cloud dots for a framebuffer `height_px` high when the window is
  /// `window_height_px` high (renderers draw at a multiple of the window).
  void set_framebuffer_height(int height_px, int window_height_px);

  /// Meshes only: the transform of body i (position and scale = drawn radius).
  [[nodiscard]] const osg::PositionAttitudeTransform* mesh(std::size_t i) const { return bodies_.at(i).get(); }
  /// Impostors and cloud: the vertex (position) of body i.
  [[nodiscard]] osg::Vec3 point(std::size_t i) const;
  /// The colour body i is drawn in (its uniform, or its point's colour).
  [[nodiscard]] osg::Vec3 drawn_colour(std::size_t i) const;
  /// Bodies drawn now: the shown ones (meshes unmasked, points indexed).
  [[nodiscard]] std::size_t drawn_count() const;
  /// The selection cage, or null when hidden.
  [[nodiscard]] const osg::PositionAttitudeTransform* cage() const;

 private:
  void build_points(const trajectory::Metadata& meta, osg::Group& world, int framebuffer_height_px);
  void update_points(const FrameState& frame);
  void apply_colours(const FrameState& frame);
  void apply_textures();
  /// Draws only the shown bodies (FrameState::shown): mesh bodies masked, points indexed. A body
  /// inside a closed group of the hierarchy, or isolated away, costs nothing to draw.
  void apply_shown(const FrameState& frame);

  BodyStyle style_;
  double smallest_host_sphere_ = 0;  ///< cloud: the first body's radius, the least host sphere radius
  std::vector<osg::ref_ptr<osg::PositionAttitudeTransform>> bodies_;  ///< meshes
  std::vector<osg::ref_ptr<osg::Uniform>> body_colours_;              ///< meshes' colour uniforms
  osg::ref_ptr<osg::Geometry> points_;           ///< impostor or cloud bodies
  osg::ref_ptr<osg::Uniform> viewport_height_;   ///< impostors: framebuffer height in pixels
  osg::ref_ptr<osg::Point> cloud_point_;         ///< cloud: dot size
  std::vector<std::size_t> host_of_body_;        ///< cloud: host index of each body
  std::vector<osg::ref_ptr<osg::PositionAttitudeTransform>> host_spheres_;
  osg::ref_ptr<osg::PositionAttitudeTransform> highlight_;  ///< cage around the selected body
  std::uint64_t colours_applied_ = 0;
  std::vector<bool> shown_applied_;               ///< the `shown` the drawables were last set for
  osg::ref_ptr<osg::DrawElementsUInt> drawn_points_;  ///< points: the shown bodies' indices

  BodyTextures textures_choice_ = BodyTextures::none;
  osg::ref_ptr<osg::Image> texture_image_;
  std::vector<osg::ref_ptr<osg::Texture2D>> textures_;  ///< loaded on first use
  osg::ref_ptr<osg::Texture2D> image_texture_;          ///< of texture_image_
  bool textures_tried_ = false;
  std::vector<std::size_t> host_index_;  ///< textures by host: each body's host number
};

}  // namespace kanoko::scene::layers
