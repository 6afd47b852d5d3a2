// The closed groups of the run's hierarchy (src/trajectory/hierarchy.hpp): each drawn as ONE
// body at its members' centroid, its volume the sum of theirs (so its size follows the summed
// mass), its colour a palette colour of its own at its level (or, when the mapping colours by
// formula, the formula on its summed statistics), its trail through its members' centroids; the springs of the run summed into one spring per pair of
// drawn items where at least one end is a closed group, coloured by the summed traffic. The
// members themselves are hidden by the scene (FrameState::shown), so a host of 32 ranks costs
// one body to draw; the communication flashes are summed per pair of drawn items too. Rebuilt whenever the cut changes (a group opened or closed); nothing is
// re-simulated.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <osg/Group>
#include <vector>

#include "src/scene/layers/frame_state.hpp"
#include "src/scene/layers/visual_options.hpp"
#include "src/trajectory/hierarchy.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::scene::layers {

class BodiesLayer;
class SpringsLayer;
class LabelsLayer;
class TrailsLayer;

class GroupsLayer {
 public:
  /// Adds nothing yet: rebuild() adds the groups under `world` and their labels under `labels`.
  GroupsLayer(osg::Group& world, osg::Group& labels);
  ~GroupsLayer();
  GroupsLayer(const GroupsLayer&) = delete;
  GroupsLayer& operator=(const GroupsLayer&) = delete;

  /// Builds the drawables for the closed groups of `cut` (items of level >= 1). `first` is the
  /// run's first frame (the summed springs' rest lengths).
  void rebuild(const trajectory::Hierarchy& h, const trajectory::Cut& cut, const trajectory::Metadata& meta,
               const trajectory::FrameView& first, int framebuffer_height_px);
  /// Moves the groups to the bodies' frame (`bodies.stats` must hold every statistic of `meta`
  /// when there are groups), highlights `selected_item` (an item of the cut) if it is a group.
  void update(const trajectory::Cut& cut, const trajectory::Metadata& meta, const FrameState& bodies,
              std::optional<std::size_t> selected_item);
  void set_colouring(SpringColours colouring);
  /// How a group is coloured. Null (the default): group g of a level takes palette colour g
  /// (trajectory::palette_colour), so neighbouring groups differ. Otherwise this function of the
  /// group's statistics now (trajectory::aggregate's: sums, and means of the fractions) and its
  /// first member (the colour formula evaluated on the summed statistics).
  using ColourRule = std::function<osg::Vec3(const Eigen::Ref<const Eigen::VectorXd>& stats, std::size_t first_body)>;
  void set_colour_rule(ColourRule rule) { colour_rule_ = std::move(rule); }
  /// Trails of the groups through their members' centroids over the last `trail_s` trace seconds
  /// (0: none). The members' samples come in the frame state given to update().
  void set_trail_length(double trail_s);
  /// True when the groups' trails want the members' trail samples in the next update.
  [[nodiscard]] bool trails_wanted() const;
  /// Group labels (their names) on or off.
  void set_labels(bool on);
  void set_framebuffer_height(int height_px, int window_height_px);

  /// Closed groups drawn.
  [[nodiscard]] std::size_t count() const { return items_.size(); }
  /// The cut item group k stands for.
  [[nodiscard]] std::size_t item(std::size_t k) const { return items_.at(k); }
  /// The groups now: positions, drawn radii, colours (column / entry k is group k).
  [[nodiscard]] const FrameState& frame() const { return groups_frame_; }
  /// Every item of the cut now: centroids and summed statistics (trajectory::aggregate).
  [[nodiscard]] const trajectory::AggregateFrame& items_now() const { return now_; }
  /// The interval's communicating pairs summed per pair of cut items (items, not bodies, at the
  /// ends; pairs inside one group dropped), largest first: the flashes drawn while grouped.
  [[nodiscard]] const std::vector<Flash>& flashes() const { return flashes_; }
  /// Summed springs drawn (between items, at least one end a group).
  [[nodiscard]] std::size_t spring_count() const { return edges_.size(); }
  /// The group bodies' layer (tests read the drawn colours and positions), null without groups.
  [[nodiscard]] const BodiesLayer* bodies() const { return bodies_.get(); }
  /// The groups drawn as bodies: names, the group above as host, their colours (palette), radii.
  [[nodiscard]] const std::vector<trajectory::BodyInfo>& group_bodies() const { return groups_meta_.bodies; }
  /// The groups' trails (tests read the polylines), null without groups.
  [[nodiscard]] const TrailsLayer* trails() const { return trails_.get(); }

 private:
  void clear();

  osg::Group& world_;
  osg::Group& labels_parent_;
  osg::ref_ptr<osg::Group> node_;
  std::vector<std::size_t> items_;                  ///< cut items that are groups, in item order
  std::vector<std::array<std::uint32_t, 2>> edges_; ///< summed springs, item index pairs
  std::vector<std::int64_t> edge_of_spring_;        ///< per run spring: its summed spring, or -1
  trajectory::Metadata groups_meta_;                ///< one body per group (names for the labels)
  std::unique_ptr<SpringsLayer> springs_;
  std::unique_ptr<BodiesLayer> bodies_;
  std::unique_ptr<LabelsLayer> labels_;
  std::unique_ptr<TrailsLayer> trails_;
  ColourRule colour_rule_;
  double trail_s_ = 0;
  SpringColours colouring_ = SpringColours::tension;
  bool labels_on_ = false;
  int framebuffer_height_px_ = 720;
  int window_height_px_ = 720;

  Eigen::Matrix3Xd zero_velocities_;
  trajectory::AggregateFrame now_;
  FrameState items_frame_;   ///< every item (the springs' ends)
  FrameState groups_frame_;  ///< the groups only (bodies and labels)
  std::vector<double> spring_bytes_;
  std::vector<Flash> flashes_;
};

}  // namespace kanoko::scene::layers
