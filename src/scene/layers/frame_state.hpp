// What the scene shows at one trace time, computed once per TrajectoryScene::set_time (and kept
// up to date by select(), the body filter and the visual options): every layer's per-frame
// update reads this and nothing else, so no layer reads the trajectory on its own while the run
// plays. Plain data (no OpenSceneGraph besides colours), so a test can make one by hand.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <osg/Vec3>
#include <span>
#include <string>
#include <vector>

#include "src/scene/inspect.hpp"

namespace kanoko::scene::layers {

struct FrameState {
  double time_s = 0;          ///< trace time shown (clamped to the stored frames)
  double span_begin_s = 0;    ///< the span the dial shows: the traced run (else the stored frames)
  double span_end_s = 0;
  std::size_t interval = 0;   ///< binning interval of time_s (Metadata::interval_of)
  double into_interval = 0;   ///< how far time_s is into that interval, 0..1

  Eigen::Matrix3Xd positions;  ///< body positions now, 3×N
  Eigen::MatrixXd stats;       ///< statistics now (rows as Metadata::stat_names); empty unless the run stores a mass
  std::vector<double> radii;   ///< drawn sphere radius of each body now; 0 for a body the filter hides
  std::vector<bool> shown;     ///< false for a body the filter hides (with its springs)
  std::vector<osg::Vec3> colours;  ///< each body's colour now (formula or palette, dimmed by highlighting)
  std::uint64_t colours_version = 0;  ///< changes whenever `colours` do (layers re-apply them only then)

  std::optional<Pick> selection;  ///< the selected body or spring
  std::string inspect_text;       ///< the inspect panel's text for the selection (empty without one)

  std::span<const double> spring_bytes;  ///< bytes each spring carries in the interval (may be empty)
  double max_spring_bytes = 0;           ///< the largest of spring_bytes
  std::span<const Flash> flashes;        ///< communicating pairs of the interval, largest first

  /// Positions at the trail's sample times, oldest first, the last one now (TrailsLayer); empty
  /// when no trail is drawn.
  std::vector<Eigen::Matrix3Xd> trail;

  [[nodiscard]] std::size_t body_count() const { return static_cast<std::size_t>(positions.cols()); }
};

}  // namespace kanoko::scene::layers
