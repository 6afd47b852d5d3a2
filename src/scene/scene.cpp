#include "src/scene/scene.hpp"

#include <algorithm>
#include <cmath>
#include <osg/BlendFunc>
#include <osg/Geode>
#include <osg/Uniform>
#include <osg/Viewport>
#include <utility>

#include "src/base/check.hpp"
#include "src/base/error.hpp"
#include "src/scene/layers/bodies_layer.hpp"
#include "src/scene/layers/decorations_layer.hpp"
#include "src/scene/layers/dial_layer.hpp"
#include "src/scene/layers/groups_layer.hpp"
#include "src/scene/layers/hud_layer.hpp"
#include "src/scene/layers/labels_layer.hpp"
#include "src/scene/layers/legend_layer.hpp"
#include "src/scene/layers/scene_graph.hpp"
#include "src/scene/layers/springs_layer.hpp"
#include "src/scene/layers/trails_layer.hpp"
#include "src/scene/mapping_visual.hpp"
#include "src/trajectory/body_size.hpp"

namespace kanoko::scene {

namespace {

// At most this many stored frames are read to bound the run for the home view.
constexpr std::size_t kBoundSampleFrames = 64;

// The body's size (src/trajectory/body_size.hpp, shared with the glTF export and the web page).
using trajectory::body_radius;
using trajectory::mass_ratio_scale;

/// The cut item of a selected group, if a group is selected.
std::optional<std::size_t> selected_group(const std::optional<Pick>& p) {
  if (p && p->kind == Pick::Kind::group) return p->index;
  return std::nullopt;
}

}  // namespace

void check_has_bodies(const trajectory::Reader& reader, const std::string& file) {
  if (reader.meta().body_count() == 0) {
    throw InputError(FileLoc{file},
                     "the run has no bodies, so there is nothing to draw; check that the "
                     "mapping's bodies match ranks in the trace");
  }
}

osg::BoundingSphered run_bound(const trajectory::Reader& reader) {
  const auto& meta = reader.meta();
  const std::size_t frames = reader.frame_count();
  const std::size_t n = meta.body_count();
  if (frames == 0 || n == 0) return osg::BoundingSphered(osg::Vec3d(0, 0, 0), 1.0);

  std::vector<std::size_t> sample;
  const std::size_t count = std::min(frames, kBoundSampleFrames);
  for (std::size_t i = 0; i < count; ++i) {
    sample.push_back(count == 1 ? 0 : (i * (frames - 1) + (count - 1) / 2) / (count - 1));
  }
  sample.back() = frames - 1;

  const int mass_stat = meta.stat_index(trajectory::stat::kMass);
  const auto scale_at = [&](const trajectory::FrameView& f, const trajectory::FrameView& f0,
                            std::size_t j) {
    if (mass_stat < 0) return 1.0;
    const auto s = static_cast<Eigen::Index>(mass_stat);
    const auto jj = static_cast<Eigen::Index>(j);
    return mass_ratio_scale(f.stats(s, jj), f0.stats(s, jj));
  };

  osg::BoundingBoxd box;
  for (std::size_t k : sample) {
    if (!reader.frame_readable(k)) continue;  // a damaged block: playback stops before it
    const auto f = reader.frame(k);
    for (Eigen::Index j = 0; j < f.positions.cols(); ++j) {
      box.expandBy(osg::Vec3d(f.positions(0, j), f.positions(1, j), f.positions(2, j)));
    }
  }
  const osg::Vec3d centre = box.center();
  const auto f0 = reader.frame(0);
  double radius = 0;
  double largest_body = 0;
  for (std::size_t k : sample) {
    if (!reader.frame_readable(k)) continue;
    const auto f = reader.frame(k);
    for (std::size_t j = 0; j < n && static_cast<Eigen::Index>(j) < f.positions.cols(); ++j) {
      const auto jj = static_cast<Eigen::Index>(j);
      const osg::Vec3d p(f.positions(0, jj), f.positions(1, jj), f.positions(2, jj));
      const double r = body_radius(meta.bodies[j]) * scale_at(f, f0, j);
      largest_body = std::max(largest_body, r);
      radius = std::max(radius, (p - centre).length() + r);
    }
  }
  if (!(radius > 0) || !std::isfinite(radius)) radius = largest_body > 0 ? largest_body : 1.0;
  return osg::BoundingSphered(centre, radius);
}

HomeView home_view(const osg::BoundingSphered& bound, double aspect) {
  HomeView h;
  const double half_v = 0.5 * h.fovy_deg * kDegToRad;
  const double half_h = std::atan(std::tan(half_v) * (aspect > 0 ? aspect : 1.0));
  const double half = std::min(half_v, half_h);
  const double radius = bound.radius() > 0 ? bound.radius() : 1.0;
  // A little slack so the outermost spheres do not touch the image border.
  const double distance = 1.06 * radius / std::sin(half);
  const double azimuth = 35.0 * kDegToRad;
  const double elevation = 25.0 * kDegToRad;
  const osg::Vec3d from_centre(std::cos(elevation) * std::sin(azimuth),
                               -std::cos(elevation) * std::cos(azimuth), std::sin(elevation));
  h.centre = bound.center();
  h.eye = h.centre + from_centre * distance;
  h.up = osg::Vec3d(0, 0, 1);
  h.near_m = std::max(distance - 1.1 * radius, 1e-3 * distance);
  h.far_m = distance + 1.1 * radius;
  return h;
}

osg::Vec3d CameraMatrices::to_window(const osg::Vec3d& world) const {
  const osg::ref_ptr<osg::Viewport> viewport = new osg::Viewport(0, 0, width_px, height_px);
  return world * view * projection * viewport->computeWindowMatrix();
}

CameraMatrices render_camera(const trajectory::Reader& reader, int width_px, int height_px) {
  return render_camera(run_bound(reader), width_px, height_px);
}

CameraMatrices render_camera(const osg::BoundingSphered& bound, int width_px, int height_px) {
  const double aspect = static_cast<double>(width_px) / std::max(height_px, 1);
  const HomeView h = home_view(bound, aspect);
  CameraMatrices c;
  c.view = osg::Matrixd::lookAt(h.eye, h.centre, h.up);
  c.projection = osg::Matrixd::perspective(h.fovy_deg, aspect, h.near_m, h.far_m);
  c.width_px = width_px;
  c.height_px = height_px;
  return c;
}

std::size_t default_level(const trajectory::Hierarchy& h) {
  if (h.group_count(0) <= kCloudThreshold) return 0;
  const std::size_t level = h.level_that_fits(kCloudThreshold);
  return h.group_count(level) <= kCloudThreshold ? level : 0;
}

std::string run_caption(const trajectory::Reader& reader) {
  const auto& m = reader.meta();
  std::string caption;
  if (!m.source_trace.empty()) caption = "trace " + std::filesystem::path(m.source_trace).filename().string();
  if (!m.source_mapping.empty()) {
    caption += (caption.empty() ? "" : "  ·  ") + std::string("mapping ") +
               std::filesystem::path(m.source_mapping).filename().string();
  }
  if (caption.empty()) caption = std::to_string(m.body_count()) + " bodies";
  return caption;
}

TrajectoryScene::TrajectoryScene(const trajectory::Reader& reader, int width_px, int height_px,
                                 std::optional<BodyStyle> style)
    : reader_(&reader),
      width_px_(width_px),
      height_px_(height_px),
      style_(style.value_or(body_style_for(reader.meta().body_count()))),
      traffic_(reader.meta()) {
  const auto& meta = reader_->meta();
  // The reader refuses files without frames or with edges to missing bodies.
  KANOKO_ASSERT(reader_->frame_count() > 0, "a trajectory has at least one frame");
  for (const auto& [a, b] : meta.edges) {
    KANOKO_ASSERT(a < meta.body_count() && b < meta.body_count(), "edge names a missing body");
  }
  bound_ = run_bound(*reader_);
  mass_stat_ = meta.stat_index(trajectory::stat::kMass);
  if (mass_stat_ >= 0) {
    const auto f0 = reader_->frame(0);
    mass0_.resize(meta.body_count(), 0.0);
    for (std::size_t j = 0; j < meta.body_count(); ++j) {
      mass0_[j] = f0.stats(mass_stat_, static_cast<Eigen::Index>(j));
    }
  }
  root_ = new osg::Group;

  // The 3-D world: lit springs and bodies (the order of the children is the drawing order within
  // a render bin).
  world_ = new osg::Group;
  world_->setName("kanoko world");
  osg::StateSet* lit = world_->getOrCreateStateSet();
  lit->setAttributeAndModes(layers::lit_program().get(), osg::StateAttribute::ON);
  lit->addUniform(new osg::Uniform("kanoko_texture", 0));
  lit->addUniform(new osg::Uniform("kanoko_textured", 0.0F));
  springs_ = std::make_unique<layers::SpringsLayer>(meta, reader_->frame(0).positions, style_, *world_);
  bodies_ = std::make_unique<layers::BodiesLayer>(meta, style_, *world_, height_px_);
  root_->addChild(world_.get());

  // Decorations: fixed-function, unlit, outside world_ so its shader does not apply.
  decorations_ = new osg::Group;
  decorations_->setName("decorations");
  osg::StateSet* ss = decorations_->getOrCreateStateSet();
  ss->setMode(GL_LIGHTING, osg::StateAttribute::OFF);
  ss->setMode(GL_BLEND, osg::StateAttribute::ON);
  ss->setAttributeAndModes(new osg::BlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA));
  decorations_layer_ = std::make_unique<layers::DecorationsLayer>(bound_);
  trails_ = std::make_unique<layers::TrailsLayer>(meta.body_count());
  labels_ = std::make_unique<layers::LabelsLayer>();
  decorations_->addChild(decorations_layer_->grid());
  decorations_->addChild(trails_->node());
  decorations_->addChild(decorations_layer_->flashes());
  decorations_->addChild(labels_->node());
  root_->addChild(decorations_.get());

  // The HUD: pixels, y up, drawn over the world.
  hud_ = new osg::Camera;
  hud_->setName("kanoko hud");
  hud_->setReferenceFrame(osg::Transform::ABSOLUTE_RF);
  hud_->setRenderOrder(osg::Camera::POST_RENDER);
  hud_->setClearMask(GL_DEPTH_BUFFER_BIT);
  hud_->setAllowEventFocus(false);
  hud_->setViewMatrix(osg::Matrixd::identity());
  osg::StateSet* hs = hud_->getOrCreateStateSet();
  hs->setMode(GL_LIGHTING, osg::StateAttribute::OFF);
  hs->setMode(GL_DEPTH_TEST, osg::StateAttribute::OFF);
  hs->setMode(GL_CULL_FACE, osg::StateAttribute::OFF);
  hs->setMode(GL_BLEND, osg::StateAttribute::ON);
  hs->setAttributeAndModes(new osg::BlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA));
  dial_layer_ = std::make_unique<layers::DialLayer>();
  hud_text_ = std::make_unique<layers::HudLayer>();
  hud_->addChild(dial_layer_->node());
  hud_->addChild(hud_text_->node());
  legend_layer_ = std::make_unique<layers::LegendLayer>();
  hud_->addChild(legend_layer_->node());
  root_->addChild(hud_.get());

  // Levels of detail: closed groups drawn as one body each (issue 15, point 4).
  hierarchy_ = std::make_unique<trajectory::Hierarchy>(meta);
  cut_ = std::make_unique<trajectory::Cut>(*hierarchy_, default_level(*hierarchy_));
  groups_ = std::make_unique<layers::GroupsLayer>(*world_, *decorations_);

  compute_colours();
  set_window_size(width_px, height_px);
  groups_->rebuild(*hierarchy_, *cut_, meta, reader_->frame(0), height_px_);
  refresh_legend();
  set_time(reader_->begin_time());
}

TrajectoryScene::~TrajectoryScene() = default;

void TrajectoryScene::use_mapping_formulas(const mapping::Mapping& m, const std::string& run) {
  if (!mapping_colours_bodies(m) && !m.visual.scale) return;
  formulas_ = std::make_unique<BodyFormulas>(m, *reader_, run);
  if (formulas_->has_scale() && formulas_->max_scale() > 1.0) {
    // Room for the largest body in the home view.
    double largest = 0;
    for (const auto& b : reader_->meta().bodies) largest = std::max(largest, body_radius(b));
    bound_.radius() += (formulas_->max_scale() - 1.0) * largest;
  }
  (void)formulas_->update(*reader_, frame_.time_s);
  if (formulas_->has_colour()) {
    groups_->set_colour_rule([f = formulas_.get()](const Eigen::Ref<const Eigen::VectorXd>& stats, std::size_t first) {
      const auto c = f->aggregate_colour(stats, first);
      return osg::Vec3(c[0], c[1], c[2]);
    });
  }
  compute_colours();
  refresh_legend();
  set_time(frame_.time_s);
}

void TrajectoryScene::refresh_legend() {
  const auto& meta = reader_->meta();
  LegendInputs in;
  in.bodies = &meta.bodies;
  if (groups_) in.groups = &groups_->group_bodies();
  if (formulas_ && formulas_->has_colour()) {
    in.body_scale = BodyColourScale{formulas_->colour_map(), formulas_->colour_range(), formulas_->colour_text()};
  }
  // Cloud-drawn runs draw no springs.
  in.springs = style_ == BodyStyle::cloud ? 0 : meta.edges.size();
  in.spring_colours = visual_.spring_colours;
  in.flashes = visual_.flashes;
  legend_ = make_legend(in);
  legend_layer_->set(legend_, visual_.legend, width_px_, height_px_, dial_);
}

const LegendLayout& TrajectoryScene::legend_layout() const { return legend_layer_->layout(); }

osg::Vec3 TrajectoryScene::body_colour(std::size_t i) const {
  // Highlighting dims the bodies that were not found.
  const float dim = filter_ == BodyFilter::highlight && i < found_.size() && !found_[i] ? 0.25F : 1.0F;
  if (formulas_ && formulas_->has_colour()) {
    const auto& c = formulas_->colours().at(i);
    return osg::Vec3(c[0], c[1], c[2]) * dim;
  }
  const auto& c = reader_->meta().bodies.at(i).colour_rgb;
  return osg::Vec3(c[0], c[1], c[2]) * dim;
}

void TrajectoryScene::compute_colours() {
  const std::size_t n = reader_->meta().body_count();
  frame_.colours.resize(n);
  for (std::size_t i = 0; i < n; ++i) frame_.colours[i] = body_colour(i);
  ++frame_.colours_version;
}

void TrajectoryScene::set_body_filter(BodyFilter mode, std::vector<bool> found) {
  filter_ = found.size() == reader_->meta().body_count() ? mode : BodyFilter::none;
  found_ = filter_ == BodyFilter::none ? std::vector<bool>{} : std::move(found);
  if (selection_ && selection_->kind == Pick::Kind::body && !body_shown(selection_->index)) selection_.reset();
  compute_colours();
  set_time(frame_.time_s);
}

void TrajectoryScene::set_framebuffer_height(int height_px) {
  bodies_->set_framebuffer_height(height_px, height_px_);
  if (groups_) groups_->set_framebuffer_height(height_px, height_px_);
  // Labels are 14 output pixels high (legible at 1280x720), also when a renderer draws at a
  // multiple of the output size and scales down.
  labels_->set_size(14.0F * layers::to_f(std::max(height_px, 1)) / layers::to_f(std::max(height_px_, 1)));
}

void TrajectoryScene::set_window_size(int width_px, int height_px) {
  width_px_ = std::max(width_px, 1);
  height_px_ = std::max(height_px, 1);
  dial_ = dial_layout(width_px_, height_px_);
  set_framebuffer_height(height_px_);
  hud_->setProjectionMatrixAsOrtho2D(0.0, width_px_, 0.0, height_px_);
  dial_layer_->layout(dial_);
  hud_text_->layout(width_px_, height_px_, dial_);
  refresh_legend();
}

void TrajectoryScene::set_status(const std::string& text) { hud_text_->set_status(text); }

double TrajectoryScene::mass_scale(std::size_t i) const {
  if (mass_stat_ < 0) return 1.0;
  return mass_ratio_scale(frame_.stats(mass_stat_, static_cast<Eigen::Index>(i)), mass0_[i]);
}

double TrajectoryScene::drawn_radius(std::size_t i) const { return frame_.radii.at(i); }

void TrajectoryScene::compute_radii() {
  const auto& bodies = reader_->meta().bodies;
  frame_.radii.resize(bodies.size());
  frame_.shown.resize(bodies.size());
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    // A member of a closed group is drawn by its group, which sums its radius (kept).
    const bool kept = body_shown(i);
    frame_.shown[i] = kept && cut_->items()[cut_->item_of_body(i)].level == 0;
    if (!kept) {
      frame_.radii[i] = 0.0;  // isolated away: not drawn, not picked
      continue;
    }
    const double formula = formulas_ && formulas_->has_scale() ? formulas_->scales().at(i) : 1.0;
    frame_.radii[i] = body_radius(bodies[i]) * mass_scale(i) * formula * visual_.body_scale;
  }
}

void TrajectoryScene::set_reader(const trajectory::Reader& reader) {
  KANOKO_ASSERT(reader.meta().body_count() == reader_->meta().body_count() &&
                    reader.meta().edges == reader_->meta().edges && reader.frame_count() == reader_->frame_count(),
                "set_reader needs a run of the same bodies, springs and frames");
  reader_ = &reader;
  traffic_ = IntervalTraffic(reader.meta());
  partners_ = PartnerTotals{};
  set_time(frame_.time_s);
}

void TrajectoryScene::compute_frame() {
  const auto& meta = reader_->meta();
  const double t = frame_.time_s;
  reader_->positions_at(t, frame_.positions);
  if (mass_stat_ >= 0 || grouped()) reader_->stats_at(t, frame_.stats);
  // The formulas' values change with the stored frame only; the colours are set only then.
  if (formulas_ && formulas_->update(*reader_, t) && formulas_->has_colour()) compute_colours();
  compute_radii();

  // The dial spans the traced run, as in the paper; without a traced span, the stored frames.
  const bool traced = meta.trace_end_s > meta.trace_begin_s;
  frame_.span_begin_s = traced ? meta.trace_begin_s : reader_->begin_time();
  frame_.span_end_s = traced ? meta.trace_end_s : reader_->end_time();
  traffic_.set_interval(meta.interval_of(t));
  frame_.interval = traffic_.interval();
  frame_.into_interval =
      meta.interval_s > 0 ? (t - meta.trace_begin_s) / meta.interval_s - static_cast<double>(frame_.interval) : 0.0;
  frame_.spring_bytes = traffic_.spring_bytes();
  frame_.max_spring_bytes = traffic_.max_spring_bytes();
  frame_.flashes = traffic_.flashes();

  if (trails_->wanted() || groups_->trails_wanted()) {
    frame_.trail.resize(layers::TrailsLayer::kSamples);
    for (int k = 0; k < layers::TrailsLayer::kSamples; ++k) {
      reader_->positions_at(trails_->sample_time(k, t, reader_->begin_time()), frame_.trail[static_cast<std::size_t>(k)]);
    }
  } else {
    frame_.trail.clear();
  }
  frame_.selection = selection_;
  // The groups first: a group's inspect text reads their sums.
  groups_->update(*cut_, meta, frame_, selected_group(selection_));
  frame_.inspect_text = inspect_text_now();
}

void TrajectoryScene::update_layers() {
  springs_->update(frame_);
  bodies_->update(frame_);
  if (grouped()) {
    // Flashes between what is drawn: groups' centroids and ranks on their own.
    flash_frame_.time_s = frame_.time_s;
    flash_frame_.interval = frame_.interval;
    flash_frame_.into_interval = frame_.into_interval;
    flash_frame_.positions = groups_->items_now().positions;
    flash_frame_.flashes = groups_->flashes();
    decorations_layer_->update(flash_frame_);
  } else {
    decorations_layer_->update(frame_);
  }
  trails_->update(frame_);
  labels_->update(frame_);
  dial_layer_->update(frame_);
  hud_text_->update(frame_);
}

void TrajectoryScene::set_time(double t_s) {
  frame_.time_s = std::clamp(t_s, reader_->begin_time(), reader_->end_time());
  compute_frame();
  update_layers();
}

osg::Vec3 TrajectoryScene::spring_colour(std::size_t e) const { return springs_->colour(e); }

void TrajectoryScene::set_visual(const VisualOptions& options) {
  const bool textures_changed =
      options.textures != visual_.textures || options.texture_image.get() != visual_.texture_image.get();
  visual_ = options;
  visual_.body_scale = std::clamp(options.body_scale, 0.25, 4.0);
  visual_.trail_s = std::isfinite(options.trail_s) ? std::max(options.trail_s, 0.0) : 0.0;
  decorations_layer_->set_grid(visual_.grid);
  decorations_layer_->set_flashes(visual_.flashes);
  springs_->set_colouring(visual_.spring_colours);
  groups_->set_colouring(visual_.spring_colours);
  groups_->set_labels(visual_.labels);
  trails_->set_length(visual_.trail_s);
  groups_->set_trail_length(visual_.trail_s);
  labels_->set_labels(visual_.labels, visual_.label_text, reader_->meta());
  if (textures_changed) bodies_->set_textures(visual_.textures, visual_.texture_image.get(), reader_->meta());
  refresh_legend();
  set_time(frame_.time_s);
}

std::optional<Pick> TrajectoryScene::pick_at(const osg::Matrixd& view, const osg::Matrixd& projection,
                                             double x_normalised, double y_normalised) const {
  const osg::Matrixd window_from_world = view * projection;
  const osg::Matrixd world_from_window = osg::Matrixd::inverse(window_from_world);
  const osg::Vec3d near_point = osg::Vec3d(x_normalised, y_normalised, -1.0) * world_from_window;
  const osg::Vec3d far_point = osg::Vec3d(x_normalised, y_normalised, 1.0) * world_from_window;
  Ray ray;
  ray.origin = Eigen::Vector3d(near_point.x(), near_point.y(), near_point.z());
  ray.direction = Eigen::Vector3d(far_point.x(), far_point.y(), far_point.z()) - ray.origin;
  // Only what is drawn is picked: a body inside a closed group (or isolated away) counts as
  // radius 0, and a spring only when both its ends are drawn.
  std::vector<double> radii = frame_.radii;
  for (std::size_t i = 0; i < radii.size(); ++i) {
    if (!frame_.shown[i]) radii[i] = 0.0;
  }
  // The smallest drawn body.
  double smallest = 0;
  for (const double r : radii) {
    if (r > 0 && (smallest == 0 || r < smallest)) smallest = r;
  }
  // Springs are thin; accept clicks within two of their drawn radii.
  const double spring_tolerance = 2.0 * layers::kSpringRadiusFraction * (smallest > 0 ? smallest : 0.1);
  const auto& edges = reader_->meta().edges;
  std::vector<std::array<std::uint32_t, 2>> drawn;
  std::vector<std::size_t> index;  // each drawn spring's edge
  for (std::size_t e = 0; e < edges.size(); ++e) {
    if (!frame_.shown[edges[e][0]] || !frame_.shown[edges[e][1]]) continue;
    drawn.push_back(edges[e]);
    index.push_back(e);
  }
  std::optional<Pick> hit = pick(ray, frame_.positions, radii, drawn, spring_tolerance);
  if (hit && hit->kind == Pick::Kind::spring) hit->index = index[hit->index];
  // A closed group nearer than the body (or instead of a spring) is what the click hits.
  const auto& g = groups_->frame();
  if (const auto group = pick_body(ray, g.positions, g.radii)) {
    if (!hit || hit->kind == Pick::Kind::spring || group->distance < hit->distance) {
      hit = Pick{Pick::Kind::group, groups_->item(group->index), group->distance};
    }
  }
  return hit;
}

bool TrajectoryScene::grouped() const { return groups_ && groups_->count() > 0; }

void TrajectoryScene::cut_changed(std::optional<trajectory::Cut::Item> selected) {
  if (selection_ && selection_->kind == Pick::Kind::group) {
    selection_.reset();
    const auto& items = cut_->items();
    for (std::size_t k = 0; selected && k < items.size(); ++k) {
      if (items[k] == *selected) selection_ = Pick{Pick::Kind::group, k, 0.0};
    }
  }
  groups_->rebuild(*hierarchy_, *cut_, reader_->meta(), reader_->frame(0), height_px_);
  refresh_legend();  // the groups' colours
  // A selected body inside a group that closed is no longer drawn on its own.
  if (selection_ && selection_->kind == Pick::Kind::body &&
      cut_->items()[cut_->item_of_body(selection_->index)].level > 0) {
    selection_.reset();
  }
  set_time(frame_.time_s);
}

void TrajectoryScene::set_level(std::size_t level) {
  KANOKO_ASSERT(level < hierarchy_->level_count(), "a level of the run's hierarchy");
  *cut_ = trajectory::Cut(*hierarchy_, level);
  cut_changed(std::nullopt);
}

bool TrajectoryScene::open_group(std::size_t item) {
  if (item >= cut_->items().size()) return false;
  const auto selected = selected_group(selection_);
  const std::optional<trajectory::Cut::Item> kept =
      selected && *selected != item ? std::optional(cut_->items()[*selected]) : std::nullopt;
  if (!cut_->open(item)) return false;
  cut_changed(kept);
  return true;
}

bool TrajectoryScene::close_group(std::size_t item) {
  if (item >= cut_->items().size()) return false;
  const trajectory::Cut::Item it = cut_->items()[item];
  if (!cut_->close(item)) return false;
  const trajectory::Cut::Item up{it.level + 1, hierarchy_->parent(it.level, it.group)};
  // The group just closed stays selected when its member was.
  if (selection_ && selection_->kind == Pick::Kind::body) selection_ = Pick{Pick::Kind::group, 0, 0.0};
  cut_changed(selection_ ? std::optional(up) : std::nullopt);
  return true;
}

std::optional<std::size_t> TrajectoryScene::item_named(std::string_view name) const {
  const auto& items = cut_->items();
  for (std::size_t k = 0; k < items.size(); ++k) {
    if (hierarchy_->group_name(items[k].level, items[k].group) == name) return k;
  }
  return std::nullopt;
}

Eigen::Vector3d TrajectoryScene::item_position(std::size_t item) const {
  const trajectory::Cut::Item it = cut_->items().at(item);
  if (it.level == 0) return frame_.positions.col(static_cast<Eigen::Index>(cut_->bodies(item).front()));
  return groups_->items_now().positions.col(static_cast<Eigen::Index>(item));
}

void TrajectoryScene::select(const std::optional<Pick>& pick) {
  // A body inside a closed group: its groups open so that it is drawn on its own.
  if (pick && pick->kind == Pick::Kind::body && pick->index < reader_->meta().body_count() &&
      cut_->items()[cut_->item_of_body(pick->index)].level > 0) {
    while (cut_->open(cut_->item_of_body(pick->index))) {
    }
    selection_.reset();
    cut_changed(std::nullopt);
  }
  selection_ = pick;
  if (selection_) {
    const std::size_t limit = selection_->kind == Pick::Kind::body   ? reader_->meta().body_count()
                              : selection_->kind == Pick::Kind::group ? cut_->items().size()
                                                                      : reader_->meta().edges.size();
    KANOKO_ASSERT(selection_->index < limit, "selection of a missing body, spring or group");
  }
  frame_.selection = selection_;
  groups_->update(*cut_, reader_->meta(), frame_, selected_group(selection_));
  frame_.inspect_text = inspect_text_now();
  springs_->update(frame_);
  bodies_->update(frame_);
  hud_text_->update(frame_);
}

std::string TrajectoryScene::inspect_text() const { return frame_.inspect_text; }

std::string TrajectoryScene::inspect_text_now() const {
  if (!selection_) return {};
  const double t = frame_.time_s;
  if (selection_->kind == Pick::Kind::group) {
    const trajectory::Cut::Item it = cut_->items().at(selection_->index);
    GroupSummary g;
    g.name = hierarchy_->group_name(it.level, it.group);
    g.level = hierarchy_->level_name(it.level);
    if (it.level > 1) g.child_level = hierarchy_->level_name(it.level - 1);
    g.children = hierarchy_->children(it.level, it.group).size();
    g.members = cut_->bodies(selection_->index);
    if (groups_->items_now().stats.cols() > static_cast<Eigen::Index>(selection_->index)) {
      g.stats = groups_->items_now().stats.col(static_cast<Eigen::Index>(selection_->index));
    }
    g.time_s = t;
    std::string text = describe_group(reader_->meta(), g);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }
  std::string text = selection_->kind == Pick::Kind::body ? describe_body(*reader_, selection_->index, t, &partners_)
                                                          : describe_spring(*reader_, selection_->index, t, &partners_);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

void TrajectoryScene::set_inspect_panel_visible(bool on) {
  hud_text_->set_inspect_visible(on);
  hud_text_->update(frame_);
}

}  // namespace kanoko::scene
