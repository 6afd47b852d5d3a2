#include "src/scene/layers/groups_layer.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "src/base/check.hpp"
#include "src/scene/layers/bodies_layer.hpp"
#include "src/scene/layers/labels_layer.hpp"
#include "src/scene/layers/scene_graph.hpp"
#include "src/scene/layers/springs_layer.hpp"
#include "src/scene/layers/trails_layer.hpp"
#include "src/trajectory/body_size.hpp"
#include "src/trajectory/palette.hpp"

namespace kanoko::scene::layers {

namespace {

/// The radius of a sphere holding the volume of spheres of radii r: cbrt(sum r^3).
double summed_volume_radius(double sum_cubes) { return std::cbrt(std::max(sum_cubes, 0.0)); }

}  // namespace

GroupsLayer::GroupsLayer(osg::Group& world, osg::Group& labels) : world_(world), labels_parent_(labels) {}

GroupsLayer::~GroupsLayer() { clear(); }

void GroupsLayer::clear() {
  if (node_.valid()) world_.removeChild(node_.get());
  if (labels_) labels_parent_.removeChild(labels_->node());
  if (trails_) labels_parent_.removeChild(trails_->node());
  node_ = nullptr;
  trails_.reset();
  springs_.reset();
  bodies_.reset();
  labels_.reset();
  items_.clear();
  edges_.clear();
  edge_of_spring_.clear();
  groups_meta_ = trajectory::Metadata{};
}

void GroupsLayer::rebuild(const trajectory::Hierarchy& h, const trajectory::Cut& cut, const trajectory::Metadata& meta,
                          const trajectory::FrameView& first, int framebuffer_height_px) {
  clear();
  framebuffer_height_px_ = framebuffer_height_px;
  const auto& items = cut.items();
  for (std::size_t k = 0; k < items.size(); ++k) {
    if (items[k].level > 0) items_.push_back(k);
  }
  if (items_.empty()) return;

  // Every item as a body: a rank as itself, a group named after it, holding its members' volume.
  trajectory::Metadata all;
  all.bodies.resize(items.size());
  for (std::size_t k = 0; k < items.size(); ++k) {
    const auto members = cut.bodies(k);
    if (items[k].level == 0) {
      all.bodies[k] = meta.bodies.at(members.front());
      continue;
    }
    trajectory::BodyInfo& g = all.bodies[k];
    g.name = h.group_name(items[k].level, items[k].group);
    if (items[k].level + 1 < h.level_count()) g.host = h.group_name(items[k].level + 1, h.parent(items[k].level, items[k].group));
    double cubes = 0;
    for (const std::uint32_t b : members) {
      const double r = trajectory::body_radius(meta.bodies[b]);
      cubes += r * r * r;
    }
    g.colour_rgb = trajectory::palette_colour(items[k].group);
    g.radius = static_cast<float>(summed_volume_radius(cubes));
  }
  // The run's springs summed per pair of items; those between two ranks stay the scene's own.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> index;
  edge_of_spring_.assign(meta.edges.size(), -1);
  for (std::size_t e = 0; e < meta.edges.size(); ++e) {
    const auto a = static_cast<std::uint32_t>(cut.item_of_body(meta.edges[e][0]));
    const auto b = static_cast<std::uint32_t>(cut.item_of_body(meta.edges[e][1]));
    if (a == b || (items[a].level == 0 && items[b].level == 0)) continue;
    const auto key = std::minmax(a, b);
    const auto [it, added] = index.emplace(key, static_cast<std::uint32_t>(edges_.size()));
    if (added) edges_.push_back({key.first, key.second});
    edge_of_spring_[e] = it->second;
  }
  all.edges = edges_;
  for (const std::size_t k : items_) groups_meta_.bodies.push_back(all.bodies[k]);

  trajectory::AggregateFrame at_start;
  trajectory::aggregate(cut, meta, first, at_start);
  const BodyStyle style = body_style_for(items_.size());
  node_ = new osg::Group;
  node_->setName("groups");
  springs_ = std::make_unique<SpringsLayer>(all, at_start.positions, style, *node_);
  springs_->set_colouring(colouring_);
  bodies_ = std::make_unique<BodiesLayer>(groups_meta_, style, *node_, framebuffer_height_px_);
  labels_ = std::make_unique<LabelsLayer>();
  labels_->set_size(14.0F * to_f(std::max(framebuffer_height_px_, 1)) / to_f(std::max(window_height_px_, 1)));
  labels_->set_labels(labels_on_, mapping::LabelKind::Name, groups_meta_);
  trails_ = std::make_unique<TrailsLayer>(items_.size());
  trails_->set_length(trail_s_);
  world_.addChild(node_.get());
  labels_parent_.addChild(labels_->node());
  labels_parent_.addChild(trails_->node());
}

void GroupsLayer::set_trail_length(double trail_s) {
  trail_s_ = trail_s;
  if (trails_) trails_->set_length(trail_s);
}

bool GroupsLayer::trails_wanted() const { return trails_ && trails_->wanted(); }

void GroupsLayer::update(const trajectory::Cut& cut, const trajectory::Metadata& meta, const FrameState& bodies,
                         std::optional<std::size_t> selected_item) {
  if (items_.empty()) return;
  const auto n = static_cast<Eigen::Index>(bodies.body_count());
  KANOKO_ASSERT(bodies.stats.rows() == static_cast<Eigen::Index>(meta.stat_count()) && bodies.stats.cols() == n,
                "the groups sum every statistic of every body");
  if (zero_velocities_.cols() != n) zero_velocities_.setZero(3, n);
  const trajectory::FrameView f{bodies.time_s,
                                Eigen::Map<const Eigen::Matrix3Xd>(bodies.positions.data(), 3, n),
                                Eigen::Map<const Eigen::Matrix3Xd>(zero_velocities_.data(), 3, n),
                                Eigen::Map<const Eigen::MatrixXd>(bodies.stats.data(), bodies.stats.rows(), n)};
  trajectory::aggregate(cut, meta, f, now_);

  // Sizes and colours from the members as drawn now (mass, formulas, filter, body scale).
  const std::size_t items = cut.items().size();
  std::vector<double> cubes(items, 0.0);
  std::vector<double> drawn(items, 0.0);
  for (std::size_t b = 0; b < bodies.body_count(); ++b) {
    const std::size_t k = cut.item_of_body(b);
    const double r = bodies.radii[b];
    cubes[k] += r * r * r;
    if (r > 0) drawn[k] += 1;
  }
  items_frame_.time_s = bodies.time_s;
  items_frame_.positions = now_.positions;
  items_frame_.radii.resize(items);
  items_frame_.shown.assign(items, true);
  for (std::size_t k = 0; k < items; ++k) {
    items_frame_.radii[k] = summed_volume_radius(cubes[k]);
    items_frame_.shown[k] = items_frame_.radii[k] > 0;
  }
  spring_bytes_.assign(edges_.size(), 0.0);
  double max_bytes = 0;
  if (bodies.spring_bytes.size() == edge_of_spring_.size()) {
    for (std::size_t e = 0; e < edge_of_spring_.size(); ++e) {
      if (edge_of_spring_[e] >= 0) spring_bytes_[static_cast<std::size_t>(edge_of_spring_[e])] += bodies.spring_bytes[e];
    }
    for (const double v : spring_bytes_) max_bytes = std::max(max_bytes, v);
  }
  // The interval's flashes between drawn items.
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> pairs;
  for (const Flash& fl : bodies.flashes) {
    const auto a = static_cast<std::uint32_t>(cut.item_of_body(fl.a));
    const auto b = static_cast<std::uint32_t>(cut.item_of_body(fl.b));
    if (a != b) pairs[std::minmax(a, b)] += fl.bytes;
  }
  flashes_.clear();
  double largest = 0;
  for (const auto& [ends, bytes] : pairs) {
    flashes_.push_back({ends.first, ends.second, bytes, 0.0F});
    largest = std::max(largest, bytes);
  }
  for (Flash& fl : flashes_) fl.intensity = largest > 0 ? static_cast<float>(fl.bytes / largest) : 0.0F;
  std::stable_sort(flashes_.begin(), flashes_.end(), [](const Flash& x, const Flash& y) { return x.bytes > y.bytes; });
  items_frame_.spring_bytes = spring_bytes_;
  items_frame_.max_spring_bytes = max_bytes;
  springs_->update(items_frame_);

  const std::size_t g = items_.size();
  groups_frame_.time_s = bodies.time_s;
  groups_frame_.positions.resize(3, static_cast<Eigen::Index>(g));
  groups_frame_.radii.resize(g);
  groups_frame_.shown.resize(g);
  groups_frame_.colours.resize(g);
  groups_frame_.selection.reset();
  for (std::size_t j = 0; j < g; ++j) {
    const std::size_t k = items_[j];
    groups_frame_.positions.col(static_cast<Eigen::Index>(j)) = now_.positions.col(static_cast<Eigen::Index>(k));
    groups_frame_.radii[j] = items_frame_.radii[k];
    groups_frame_.shown[j] = items_frame_.shown[k];
    const auto& own = groups_meta_.bodies[j].colour_rgb;
    groups_frame_.colours[j] = drawn[k] == 0 ? osg::Vec3(0.5F, 0.5F, 0.5F)  // every member filtered out
                               : colour_rule_ ? colour_rule_(now_.stats.col(static_cast<Eigen::Index>(k)), cut.bodies(k).front())
                                              : osg::Vec3(own[0], own[1], own[2]);
    if (selected_item && *selected_item == k) groups_frame_.selection = Pick{Pick::Kind::body, j, 0.0};
  }
  ++groups_frame_.colours_version;
  // The groups' trails: at each of the members' trail samples, their centroids.
  groups_frame_.trail.resize(bodies.trail.size());
  for (std::size_t s = 0; s < bodies.trail.size(); ++s) {
    Eigen::Matrix3Xd& at = groups_frame_.trail[s];
    at.setZero(3, static_cast<Eigen::Index>(g));
    for (std::size_t j = 0; j < g; ++j) {
      const auto members = cut.bodies(items_[j]);
      for (const std::uint32_t b : members) at.col(static_cast<Eigen::Index>(j)) += bodies.trail[s].col(b);
      at.col(static_cast<Eigen::Index>(j)) /= static_cast<double>(members.size());
    }
  }
  bodies_->update(groups_frame_);
  labels_->update(groups_frame_);
  trails_->update(groups_frame_);
}

void GroupsLayer::set_colouring(SpringColours colouring) {
  colouring_ = colouring;
  if (springs_) springs_->set_colouring(colouring);
}

void GroupsLayer::set_labels(bool on) {
  labels_on_ = on;
  if (labels_) labels_->set_labels(on, mapping::LabelKind::Name, groups_meta_);
}

void GroupsLayer::set_framebuffer_height(int height_px, int window_height_px) {
  framebuffer_height_px_ = height_px;
  window_height_px_ = window_height_px;
  if (bodies_) bodies_->set_framebuffer_height(height_px, window_height_px);
  if (labels_) labels_->set_size(14.0F * to_f(std::max(height_px, 1)) / to_f(std::max(window_height_px, 1)));
}

}  // namespace kanoko::scene::layers
