// The springs of the scene: cylinders between the bodies (lines above kCylinderSpringLimit springs
// or with point bodies; none in a cloud), coloured by tension, by the interval's traffic, or
// neutral; a selected spring takes the highlight colour.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <osg/Geometry>
#include <osg/Group>
#include <osg/MatrixTransform>
#include <osg/Uniform>
#include <vector>

#include "src/scene/layers/frame_state.hpp"
#include "src/scene/layers/visual_options.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::scene::layers {

/// Spring cylinders are this fraction of the smaller end sphere's radius (also the picking
/// tolerance's scale).
inline constexpr double kSpringRadiusFraction = 0.22;

class SpringsLayer {
 public:
  /// Builds the springs of `meta` for bodies drawn as `style` and adds them to `world`.
  /// `initial_positions` (frame 0) give each spring's rest length for the tension colours.
  SpringsLayer(const trajectory::Metadata& meta, const Eigen::Matrix3Xd& initial_positions, BodyStyle style,
               osg::Group& world);

  /// How the springs are coloured from the next update on.
  void set_colouring(SpringColours colouring) { colouring_ = colouring; }
  /// Places each spring between its ends' positions (hidden when an end is hidden or both
  /// coincide) and colours it.
  void update(const FrameState& frame);

  /// Current colour of spring e (in a cloud, which draws no springs: neutral or the highlight).
  [[nodiscard]] osg::Vec3 colour(std::size_t e) const { return colours_.at(e); }
  /// Cylinders: the transform of spring e (null when springs are lines).
  [[nodiscard]] const osg::MatrixTransform* cylinder(std::size_t e) const {
    return e < cylinders_.size() ? cylinders_[e].get() : nullptr;
  }
  /// Lines: the two ends of spring e as drawn (null when springs are cylinders or not drawn).
  [[nodiscard]] const osg::Vec3* line_ends(std::size_t e) const;

 private:
  std::vector<std::array<std::uint32_t, 2>> edges_;
  std::vector<double> radius_;   ///< drawn cylinder radius of each spring
  std::vector<double> length0_;  ///< length of each spring in frame 0
  SpringColours colouring_ = SpringColours::tension;
  std::vector<osg::Vec3> colours_;
  std::vector<osg::ref_ptr<osg::MatrixTransform>> cylinders_;
  std::vector<osg::ref_ptr<osg::Uniform>> cylinder_colours_;
  osg::ref_ptr<osg::Geometry> lines_;
};

}  // namespace kanoko::scene::layers
