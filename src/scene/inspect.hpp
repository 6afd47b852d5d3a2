// Pick and inspect: which body or spring a click hits, and what the panel says about it. Picking
// is analytic (a ray against the bodies' spheres and the springs' segments), so it does not depend
// on how the bodies are drawn and is tested without OpenSceneGraph or a display.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "src/trajectory/traffic.hpp"
#include "src/trajectory/panel_values.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::scene {

// Who talks to whom (src/trajectory/traffic.hpp, shared with the web page).
using trajectory::Flash;
using trajectory::Flow;
using trajectory::interval_flows;
using trajectory::IntervalTraffic;
using trajectory::Partner;
using trajectory::PartnerTotals;

/// A ray in world coordinates: origin + s × direction, s >= 0. The direction need not be unit.
struct Ray {
  Eigen::Vector3d origin;
  Eigen::Vector3d direction;
};

/// What a click hit.
struct Pick {
  enum class Kind { body, spring, group };
  Kind kind = Kind::body;
  /// Body index, edge index into Metadata::edges, or (group) the index of a closed group among
  /// the items of the scene's hierarchy cut (trajectory::Cut::items()).
  std::size_t index = 0;
  double distance = 0;    ///< along the ray, in units of |direction|
};

/// Nearest body whose sphere (centre = column of `positions`, radius = `radii`[i]) the ray
/// enters, or nothing.
[[nodiscard]] std::optional<Pick> pick_body(const Ray& ray, const Eigen::Matrix3Xd& positions,
                                            std::span<const double> radii);

/// Nearest spring that passes within `radius` (world units) of the ray, measured between the
/// ray and the segment of the two body centres, or nothing.
[[nodiscard]] std::optional<Pick> pick_spring(
    const Ray& ray, const Eigen::Matrix3Xd& positions,
    std::span<const std::array<std::uint32_t, 2>> edges, double radius);

/// pick_body if it hits, else pick_spring: bodies win because they are drawn over the springs'
/// ends. `spring_radius` is the picking tolerance around a spring (world units).
[[nodiscard]] std::optional<Pick> pick(const Ray& ray, const Eigen::Matrix3Xd& positions,
                                       std::span<const double> radii,
                                       std::span<const std::array<std::uint32_t, 2>> edges,
                                       double spring_radius);

/// The panel text for body `body` at trace time t: name, rank, host, every statistic the run
/// stores (load, mass, messages and bytes sent/received in the current interval and so far),
/// spring neighbours, speed (from the stored velocities, linearly interpolated) and the top
/// partners by bytes so far (from the run's traffic section). `partners` keeps running totals
/// between calls (pass the same one while a body stays selected); null uses a fresh one.
[[nodiscard]] std::string describe_body(const trajectory::Reader& reader, std::size_t body,
                                        double t_s, PartnerTotals* partners = nullptr);

/// The panel text for spring `edge` at trace time t: the pair, its length now and at the start,
/// the pair's own traffic each way in the current interval and so far (from the traffic
/// section), and each end's traffic with everyone. `partners` as for describe_body.
[[nodiscard]] std::string describe_spring(const trajectory::Reader& reader, std::size_t edge,
                                          double t_s, PartnerTotals* partners = nullptr);

/// One closed group of the hierarchy (trajectory/hierarchy.hpp) as the inspect panel shows it.
struct GroupSummary {
  std::string name;        ///< "host-3"
  std::string level;       ///< "host"
  std::string child_level; ///< the level it opens into, "" when it opens into single bodies
  std::size_t children = 0;                 ///< groups of child_level in it
  std::span<const std::uint32_t> members;   ///< its bodies
  Eigen::VectorXd stats;   ///< summed statistics (fractions averaged), rows as Metadata::stat_names
  double time_s = 0;       ///< trace time of the statistics
};

/// The panel text for a closed group: its name, level and member count, the first members'
/// names, and its summed statistics (trajectory::aggregate), the way describe_body shows a body's.
[[nodiscard]] std::string describe_group(const trajectory::Metadata& meta, const GroupSummary& g);

/// Index of the body named `name_or_index`, or with that index if no body has that name.
/// Throws InputError naming `option` and a few body names otherwise.
[[nodiscard]] std::size_t find_body(const trajectory::Reader& reader,
                                    std::string_view name_or_index, std::string_view option);

/// Speed of body `body` at trace time t (src/trajectory/panel_values.hpp).
using trajectory::body_speed;

}  // namespace kanoko::scene
