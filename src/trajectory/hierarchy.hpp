// Levels of detail over a rank-level run (issue 15, point 4): ranks grouped per host, hosts per
// rack or switch, each group drawable as one aggregate body at its members' centroid with their
// summed statistics. The simulation stays at rank level; a Cut says which groups are drawn whole
// and which are opened into their members, so opening a host into its ranks (and closing it
// again) needs no re-simulation.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>

namespace kanoko::trajectory {

struct Metadata;
struct FrameView;

/// A level above the hosts: the name of the group a group of the level below belongs to ("" for
/// none: the group stays on its own at that level, under its own name).
struct LevelSpec {
  std::string name;  ///< "rack", "switch", "cluster", ...
  std::function<std::string(std::string_view child)> parent;
};

class Hierarchy {
 public:
  /// Level 0, "rank": one group per body. Level 1, "host": the bodies' BodyInfo::host (a body
  /// without one is its own host); left out when no body has a host. Then the trace's containers
  /// above the hosts (BodyInfo::above_host), one level per container type, the deepest below the
  /// root first, named after the type in lower case (SimGrid's zone types "L1", "L2" ... are
  /// "zone1", "zone2", or "zone" when there is one); a group with no container of a level's type
  /// stays on its own at that level. Only when the run keeps
  /// no container above the hosts, "cluster", from the host names as the last resort: hosts
  /// numbered alike ("graphene-3.nancy", "graphene-12.nancy") form the cluster
  /// "graphene-*.nancy"; kept only when there are at least two clusters and fewer than the hosts.
  /// Then `above`,
  /// in order, each from the level below it; a level that groups nothing (each group alone) is
  /// kept, so that the levels a mapping names always exist.
  explicit Hierarchy(const Metadata& meta, std::vector<LevelSpec> above = {});

  [[nodiscard]] std::size_t level_count() const { return levels_.size(); }
  [[nodiscard]] const std::string& level_name(std::size_t level) const { return levels_.at(level).name; }
  /// The level called `name`; an InputError at `where` listing the levels when there is none.
  [[nodiscard]] std::size_t level_index(std::string_view name, const std::string& where) const;
  [[nodiscard]] std::size_t group_count(std::size_t level) const { return levels_.at(level).names.size(); }
  [[nodiscard]] const std::string& group_name(std::size_t level, std::size_t group) const {
    return levels_.at(level).names.at(group);
  }
  /// The group of level + 1 that group `group` of `level` belongs to (level + 1 < level_count()).
  [[nodiscard]] std::uint32_t parent(std::size_t level, std::size_t group) const;
  /// The groups of level - 1 in group `group` of `level` (level >= 1), in order.
  [[nodiscard]] std::span<const std::uint32_t> children(std::size_t level, std::size_t group) const;
  /// The bodies in group `group` of `level`, in increasing order.
  [[nodiscard]] std::span<const std::uint32_t> bodies(std::size_t level, std::size_t group) const;
  /// The group of `level` that body `body` is in.
  [[nodiscard]] std::uint32_t group_of(std::size_t level, std::size_t body) const;
  /// The finest level with at most `budget` groups (0 when every body fits), or the top level
  /// when none does: the level a viewer draws to stay interactive.
  [[nodiscard]] std::size_t level_that_fits(std::size_t budget) const;

 private:
  struct Level {
    std::string name;
    std::vector<std::string> names;        ///< per group
    std::vector<std::uint32_t> of_body;    ///< per body: its group
    std::vector<std::uint32_t> parent;     ///< per group: its group one level up (empty at the top)
    std::vector<std::uint32_t> child_begin;  ///< CSR over `children`: groups of the level below
    std::vector<std::uint32_t> children;
    std::vector<std::uint32_t> body_begin;   ///< CSR over `members`: bodies
    std::vector<std::uint32_t> members;
  };
  /// Groups the level below's groups by `parent_of` (index per group of the level below).
  void add_level(std::string name, const std::vector<std::string>& parent_names);
  std::vector<Level> levels_;
};

/// What is drawn: every body in exactly one item, an item being a group of some level. Starts
/// with every group of one level; open() replaces an item by its children, close() replaces the
/// items under a group by the group.
class Cut {
 public:
  struct Item {
    std::uint32_t level = 0;
    std::uint32_t group = 0;
    friend bool operator==(const Item&, const Item&) = default;
  };
  /// `h` must outlive the cut.
  Cut(const Hierarchy& h, std::size_t level);

  [[nodiscard]] const std::vector<Item>& items() const { return items_; }
  /// The item that draws body `body`.
  [[nodiscard]] std::size_t item_of_body(std::size_t body) const;
  /// Opens item `item` into the groups of the level below (false for a single rank: level 0).
  bool open(std::size_t item);
  /// Closes the group of level + 1 holding item `item` back into one item (false at the top).
  bool close(std::size_t item);
  /// The bodies item `item` stands for.
  [[nodiscard]] std::span<const std::uint32_t> bodies(std::size_t item) const;

 private:
  void reindex();
  [[nodiscard]] std::span<const std::uint32_t> bodies_of(const Item& it) const;
  const Hierarchy* h_;
  std::vector<Item> items_;  ///< ordered by their first body
  std::vector<std::uint32_t> item_of_body_;
};

/// The drawn items of `cut` at frame `f`: each at its bodies' centroid, moving with their mean
/// velocity; statistics that are fractions of the interval (busy, communicating, idle) averaged
/// over the bodies, every other statistic (bytes, messages, mass, load) summed. `positions` and
/// `velocities` are 3 × items, `stats` S × items.
struct AggregateFrame {
  Eigen::Matrix3Xd positions;
  Eigen::Matrix3Xd velocities;
  Eigen::MatrixXd stats;
};
void aggregate(const Cut& cut, const Metadata& meta, const FrameView& f, AggregateFrame& out);

}  // namespace kanoko::trajectory
