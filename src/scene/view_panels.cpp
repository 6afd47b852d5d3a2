#include "src/scene/view_panels.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <osg/Depth>
#include <osg/LineWidth>

#include "src/base/error.hpp"
#include "src/views/draw.hpp"

namespace kanoko::scene {

namespace {

constexpr double kRedrawPeriod_s = 0.1;  // panels follow a playing clock at most this often

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool same_pick(const std::optional<Pick>& a, const std::optional<Pick>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->kind == b->kind && a->index == b->index);
}

}  // namespace

ViewPanels::ViewPanels(const trajectory::Reader& reader, TrajectoryScene& scene, ReplayClock& clock,
                       views::TraceIndex index, const std::vector<std::string>& view_names)
    : ViewPanels(reader, scene, clock, PendingIndex{}, view_names, "") {
  index_ = std::move(index);
  start();
}

ViewPanels::ViewPanels(const trajectory::Reader& reader, TrajectoryScene& scene, ReplayClock& clock,
                       PendingIndex index, const std::vector<std::string>& view_names, std::string trace_name)
    : reader_(&reader),
      scene_(scene),
      clock_(clock),
      names_(view_names),
      pending_(std::move(index)),
      trace_name_(std::move(trace_name)),
      index_started_wall_s_(wall_seconds()) {
  // Unknown names fail here, before any window opens.
  for (const auto& name : names_) views_.push_back(views::make_view(name, "--views"));
  const std::size_t n = names_.size();
  jobs_.resize(n);
  rects_.resize(n);
  images_.resize(n);
  draws_.assign(n, 0);
  drawn_time_s_.assign(n, std::numeric_limits<double>::quiet_NaN());
  dirty_.assign(n, 1);
  started_wall_s_.assign(n, -1.0);
  drawn_selection_.resize(n);

  // The line that marks a selected pair without a spring: in the 3-D world, always on top.
  pair_line_ = new osg::Geometry;
  auto* vertices = new osg::Vec3Array(2);
  pair_line_->setVertexArray(vertices);
  auto* colours = new osg::Vec4Array(1);
  (*colours)[0] = osg::Vec4(0.10F, 0.35F, 0.95F, 1.0F);
  pair_line_->setColorArray(colours, osg::Array::BIND_OVERALL);
  pair_line_->addPrimitiveSet(new osg::DrawArrays(GL_LINES, 0, 2));
  pair_line_->setUseDisplayList(false);
  pair_line_->setUseVertexBufferObjects(true);
  pair_geode_ = new osg::Geode;
  pair_geode_->setName("kanoko selected pair");
  pair_geode_->addDrawable(pair_line_.get());
  osg::StateSet* ps = pair_geode_->getOrCreateStateSet();
  ps->setMode(GL_LIGHTING, osg::StateAttribute::OFF | osg::StateAttribute::OVERRIDE);
  ps->setMode(GL_DEPTH_TEST, osg::StateAttribute::OFF);
  ps->setAttributeAndModes(new osg::LineWidth(4.0F));
  ps->setRenderBinDetails(100, "RenderBin");
  pair_geode_->setNodeMask(0);
  scene_.root()->addChild(pair_geode_.get());

  hub_.subscribe([this](const views::Selection& s) {
    if (!following_scene_) apply_to_scene(s);
  });
  default_layout(scene_.width_px(), scene_.height_px());
}

void ViewPanels::start() {
  // The run's current interval (docs/statistics.md).
  views::ViewState whole = views::default_view_state(*index_, reader_->meta().interval_s, reader_->meta().trace_begin_s);
  whole.location_colours = location_colours_;
  states_.assign(names_.size(), whole);
  match_bodies();
  // last_scene_selection_ starts empty, so that a body selected before (--select) reaches the
  // panels at the first refresh.
  last_scene_selection_.reset();
}

bool ViewPanels::ready() {
  if (index_) return true;
  if (!failure_.empty() || !pending_.ready || !pending_.ready()) return false;
  try {
    index_ = pending_.take();
  } catch (const std::exception& e) {
    failure_ = e.what();
    std::fprintf(stderr, "kanoko view: the companion views are off: %s\n", e.what());
    return false;
  }
  start();
  return true;
}

std::string ViewPanels::status() const {
  if (index_) return "";
  if (!failure_.empty()) return "The companion views are off: " + failure_;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f s", wall_seconds() - index_started_wall_s_);
  const std::string how = pending_.text ? pending_.text() : "indexing";
  return "Companion views: " + how + " of " + trace_name_ + " (" + buf + ")";
}

double ViewPanels::progress() const {
  if (index_) return 1.0;
  const double f = pending_.fraction ? pending_.fraction() : -1.0;
  return f < 0 ? -1.0 : std::min(f, 1.0);
}

void ViewPanels::match_bodies() {
  // Bodies and entities match by name (simulate names bodies after entities), else by order.
  const auto& bodies = reader_->meta().bodies;
  body_of_entity_.assign(index_->entity_count(), -1);
  for (std::size_t e = 0; e < index_->entity_count(); ++e) {
    for (std::size_t b = 0; b < bodies.size(); ++b) {
      if (bodies[b].name == index_->entities[e].name) {
        body_of_entity_[e] = static_cast<std::int64_t>(b);
        break;
      }
    }
    if (body_of_entity_[e] < 0 && bodies.size() == index_->entity_count()) body_of_entity_[e] = static_cast<std::int64_t>(e);
  }
}

void ViewPanels::set_run(const trajectory::Reader& run) {
  if (&run == reader_) return;
  reader_ = &run;
  if (index_) match_bodies();
  // Redrawn at the next refresh, whatever the throttle says.
  std::fill(dirty_.begin(), dirty_.end(), 1);
  update_pair_line();
}

ViewPanels::~ViewPanels() {
  if (!index_ && pending_.cancel) pending_.cancel();
  for (auto& job : jobs_) {
    if (job.valid()) job.wait();  // they read the index and the views
  }
  scene_.root()->removeChild(pair_geode_.get());
}

void ViewPanels::default_layout(int width_px, int height_px) {
  // A column on the left, below the top edge and above the bottom one.
  const double w = width_px;
  const double h = height_px;
  const double margin = 8;
  const double pw = std::floor(std::clamp(0.34 * w, 120.0, 560.0));
  const double top = std::min(0.32 * h, h - 100);
  const double bottom = h - 36;
  const std::size_t n = std::max<std::size_t>(1, names_.size());
  const double gap = 6;
  const double ph = std::floor(std::max(40.0, (bottom - top - gap * static_cast<double>(n - 1)) / static_cast<double>(n)));
  for (std::size_t i = 0; i < names_.size(); ++i) {
    set_panel_rect(i, views::Rect{margin, top + static_cast<double>(i) * (ph + gap), pw, ph});
  }
}

void ViewPanels::set_panel_rect(std::size_t i, const views::Rect& r) {
  if (i >= rects_.size()) return;
  const views::Rect rounded{std::floor(r.x), std::floor(r.y), std::floor(std::max(0.0, r.w)), std::floor(std::max(0.0, r.h))};
  const bool resized = rounded.w != rects_[i].w || rounded.h != rects_[i].h;
  rects_[i] = rounded;
  if (resized) dirty_[i] = 1;  // redraw at the new size
}

void ViewPanels::collect(bool wait) {
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    std::future<Drawn>& job = jobs_[i];
    if (!job.valid()) continue;
    if (!wait && job.wait_for(std::chrono::seconds(0)) != std::future_status::ready) continue;
    Drawn d = job.get();
    const std::uint64_t version = images_[i].version + 1;
    images_[i] = std::move(d.image);
    images_[i].version = version;
    ++draws_[i];
    drawn_time_s_[i] = d.state.time_s;
    drawn_selection_[i] = d.state.selection;
    // A resize while it was drawing: draw again at the new size.
    if (images_[i].width != static_cast<int>(rects_[i].w) || images_[i].height != static_cast<int>(rects_[i].h)) {
      dirty_[i] = 1;
    }
  }
}

void ViewPanels::finish_drawing() {
  if (!ready()) return;
  collect(true);
  while (visible_ && start_next()) collect(true);
}

void ViewPanels::refresh() {
  if (!ready()) return;
  collect(false);
  if (!visible_) return;
  follow_scene_selection();
  (void)start_next();
  update_pair_line();
}

bool ViewPanels::start_next() {
  for (std::size_t i = 0; i < views_.size(); ++i) {
    states_[i].time_s = clock_.time_s();
    states_[i].selection = hub_.current();
  }
  // One picture is drawn at a time (the frame loop keeps the other core), starting after the
  // panel drawn last, so that every panel gets its turn.
  for (const auto& job : jobs_) {
    if (job.valid()) return false;
  }
  const double now = wall_seconds();
  for (std::size_t k = 0; k < views_.size(); ++k) {
    const std::size_t i = (next_panel_ + k) % views_.size();
    const views::ViewState& st = states_[i];
    const bool selection_changed = !(drawn_selection_[i] == st.selection);
    // Time moves the picture only when it moves by about a pixel of what the panel shows, and at
    // most every kRedrawPeriod_s while playing.
    const double shown_s = st.window_t1_s > st.window_t0_s ? st.window_t1_s - st.window_t0_s : index_->span_s();
    const double pixel_s = shown_s / std::max(1.0, rects_[i].w);
    const bool time_changed = !std::isnan(drawn_time_s_[i]) && std::abs(st.time_s - drawn_time_s_[i]) > pixel_s &&
                              !(started_wall_s_[i] >= 0 && now - started_wall_s_[i] < kRedrawPeriod_s);
    const int w = static_cast<int>(rects_[i].w);
    const int h = static_cast<int>(rects_[i].h);
    if (w < 16 || h < 16 || !(dirty_[i] != 0 || selection_changed || time_changed)) continue;
    dirty_[i] = 0;
    next_panel_ = i + 1;
    started_wall_s_[i] = now;
    // The job reads the index and the view (both const while the panels live) and its own copy
    // of the state; cairo draws into its own surface.
    jobs_[i] = std::async(std::launch::async, [view = views_[i].get(), index = &*index_, state = st, w, h] {
      views::ViewImage img = views::render_view_image(*view, *index, state, w, h);
      Drawn d;
      d.state = state;
      d.image.width = w;
      d.image.height = h;
      const auto row_bytes = static_cast<std::size_t>(w) * 4;
      d.image.bgra.resize(row_bytes * static_cast<std::size_t>(h));
      for (int y = 0; y < h; ++y) {
        std::memcpy(d.image.bgra.data() + static_cast<std::size_t>(y) * row_bytes,
                    img.pixels.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(img.stride), row_bytes);
      }
      return d;
    });
    return true;
  }
  return false;
}

int ViewPanels::panel_at(double x_px, double y_px) const {
  if (!visible_ || !index_) return -1;
  for (std::size_t i = 0; i < rects_.size(); ++i) {
    if (rects_[i].contains(x_px, y_px)) return static_cast<int>(i);
  }
  return -1;
}

bool ViewPanels::click(double x_px, double y_px) {
  const int i = panel_at(x_px, y_px);
  if (i < 0) return false;
  const auto k = static_cast<std::size_t>(i);
  const views::Rect& r = rects_[k];
  const views::Selection picked =
      views_[k]->pick(x_px - r.x, y_px - r.y, views::Rect{0, 0, r.w, r.h}, *index_, states_[k]);
  if (picked.empty()) return true;
  if (picked.has_time()) clock_.seek(std::clamp(picked.time_s, clock_.begin_s(), clock_.end_s()));
  hub_.set(views::apply_pick(hub_.current(), picked));
  return true;
}

void ViewPanels::zoom(std::size_t i, double x_px, double y_px, double factor) {
  if (!index_ || i >= states_.size()) return;
  const views::Rect& r = rects_[i];
  if (views::zoom_at(states_[i], *views_[i], views::Rect{0, 0, r.w, r.h}, *index_, x_px - r.x, y_px - r.y, factor)) {
    dirty_[i] = 1;
  }
}

void ViewPanels::pan(std::size_t i, double dx_px, double dy_px) {
  if (!index_ || i >= states_.size()) return;
  const views::Rect& r = rects_[i];
  if (views::pan(states_[i], *views_[i], views::Rect{0, 0, r.w, r.h}, *index_, dx_px, dy_px)) dirty_[i] = 1;
}

void ViewPanels::reset_zoom(std::size_t i) {
  if (!index_ || i >= states_.size()) return;
  views::reset_zoom(states_[i], *index_);
  dirty_[i] = 1;
}

bool ViewPanels::zoomed(std::size_t i) const { return index_ && i < states_.size() && views::zoomed(states_[i], *index_); }

void ViewPanels::apply_to_scene(const views::Selection& s) {
  const auto body = [&](std::int64_t e) -> std::int64_t {
    return e >= 0 && static_cast<std::size_t>(e) < body_of_entity_.size() ? body_of_entity_[static_cast<std::size_t>(e)] : -1;
  };
  std::optional<Pick> pick;
  bool line = false;
  if (s.has_pair()) {
    const std::int64_t a = body(s.pair_src);
    const std::int64_t b = body(s.pair_dst);
    const auto& edges = reader_->meta().edges;
    for (std::size_t e = 0; e < edges.size() && a >= 0 && b >= 0; ++e) {
      const auto ea = static_cast<std::int64_t>(edges[e][0]);
      const auto eb = static_cast<std::int64_t>(edges[e][1]);
      if ((ea == a && eb == b) || (ea == b && eb == a)) {
        pick = Pick{Pick::Kind::spring, e, 0.0};
        break;
      }
    }
    if (!pick && a >= 0) {
      pick = Pick{Pick::Kind::body, static_cast<std::size_t>(a), 0.0};
      line = b >= 0 && a != b;
    }
  } else if (body(s.entity) >= 0) {
    pick = Pick{Pick::Kind::body, static_cast<std::size_t>(body(s.entity)), 0.0};
  }
  scene_.select(pick);
  last_scene_selection_ = scene_.selection();
  pair_geode_->setNodeMask(line ? ~0U : 0U);
  update_pair_line();
}

std::int64_t ViewPanels::entity_of_body(std::size_t body) const {
  for (std::size_t e = 0; e < body_of_entity_.size(); ++e) {
    if (body_of_entity_[e] == static_cast<std::int64_t>(body)) return static_cast<std::int64_t>(e);
  }
  return -1;
}

void ViewPanels::follow_scene_selection() {
  const std::optional<Pick>& now = scene_.selection();
  if (same_pick(now, last_scene_selection_)) return;
  last_scene_selection_ = now;
  views::Selection s = hub_.current();
  s.entity = -1;
  s.pair_src = -1;
  s.pair_dst = -1;
  s.message = -1;
  if (now && now->kind == Pick::Kind::body) {
    s.entity = entity_of_body(now->index);
  } else if (now && now->kind == Pick::Kind::spring && now->index < reader_->meta().edges.size()) {
    const auto& edge = reader_->meta().edges[now->index];
    s.pair_src = entity_of_body(edge[0]);
    s.pair_dst = entity_of_body(edge[1]);
    s.entity = s.pair_src;
  }
  // The scene already shows this selection; only the panels follow.
  pair_geode_->setNodeMask(0U);
  following_scene_ = true;
  hub_.set(s);
  following_scene_ = false;
}

bool ViewPanels::pair_line_visible() const { return pair_geode_->getNodeMask() != 0U; }

void ViewPanels::update_pair_line() {
  if (!pair_line_visible()) return;
  const views::Selection& s = hub_.current();
  const auto& pos = scene_.positions();
  const auto body = [&](std::int64_t e) -> std::int64_t {
    return e >= 0 && static_cast<std::size_t>(e) < body_of_entity_.size() ? body_of_entity_[static_cast<std::size_t>(e)] : -1;
  };
  const std::int64_t a = body(s.pair_src);
  const std::int64_t b = body(s.pair_dst);
  if (a < 0 || b < 0 || a >= pos.cols() || b >= pos.cols()) return;
  auto* v = static_cast<osg::Vec3Array*>(pair_line_->getVertexArray());
  const auto at = [&](std::int64_t k) {
    return osg::Vec3(static_cast<float>(pos(0, k)), static_cast<float>(pos(1, k)), static_cast<float>(pos(2, k)));
  };
  (*v)[0] = at(a);
  (*v)[1] = at(b);
  v->dirty();
  pair_line_->dirtyBound();
}

PendingIndex pending_index(std::shared_ptr<views::IndexBuildJob> job) {
  PendingIndex p;
  p.ready = [job] { return job->ready(); };
  p.take = [job] { return job->take(); };
  p.fraction = [job] { return job->progress().fraction(); };
  p.text = [job] { return job->progress().text(); };
  p.cancel = [job] { job->cancel(); };
  return p;
}

std::unique_ptr<ViewPanels> make_view_panels(const trajectory::Reader& reader, TrajectoryScene& scene,
                                             ReplayClock& clock, const ViewPanelOptions& options) {
  if (options.views.empty()) return nullptr;
  // The run knows the trace's end, so the build can say how far it has got.
  auto job = std::make_shared<views::IndexBuildJob>(options.trace, options.index, options.format,
                                                    reader.meta().trace_end_s);
  return std::make_unique<ViewPanels>(reader, scene, clock, pending_index(std::move(job)), options.views,
                                      options.trace.filename().string());
}

}  // namespace kanoko::scene
