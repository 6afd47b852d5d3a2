#include "src/scene/view_panels.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <osg/Depth>
#include <osg/LineWidth>
#include <osg/Texture2D>

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

// Routes left clicks on panels to the panels. The playback handler sees the same click and picks
// in the 3-D scene (usually nothing); the click is therefore applied at the next refresh(), after
// the event traversal, so that the panel's selection wins.
class PanelEvents final : public osgGA::GUIEventHandler {
 public:
  explicit PanelEvents(ViewPanels& panels, const TrajectoryScene& scene) : panels_(panels), scene_(scene) {}
  using osgGA::GUIEventHandler::handle;
  bool handle(const osgGA::GUIEventAdapter& ea, osgGA::GUIActionAdapter& /*aa*/) override {
    using GEA = osgGA::GUIEventAdapter;
    const double x = 0.5 * (static_cast<double>(ea.getXnormalized()) + 1.0) * scene_.width_px();
    const double y = 0.5 * (static_cast<double>(ea.getYnormalized()) + 1.0) * scene_.height_px();
    switch (ea.getEventType()) {
      case GEA::PUSH:
        if (ea.getButton() != GEA::LEFT_MOUSE_BUTTON || panels_.panel_at(x, y) < 0) return false;
        pressed_ = true;
        return true;
      case GEA::DRAG:
        return pressed_;
      case GEA::RELEASE:
        if (ea.getButton() != GEA::LEFT_MOUSE_BUTTON || !pressed_) return false;
        pressed_ = false;
        panels_.queue_click(x, y);
        return true;
      default:
        return false;
    }
  }

 private:
  ViewPanels& panels_;
  const TrajectoryScene& scene_;
  bool pressed_ = false;
};

}  // namespace

ViewPanels::ViewPanels(const trajectory::Reader& reader, TrajectoryScene& scene, ReplayClock& clock,
                       views::TraceIndex index, const std::vector<std::string>& view_names)
    : reader_(&reader), scene_(scene), clock_(clock), index_(std::move(index)) {
  for (const auto& name : view_names) views_.push_back(views::make_view(name, "--views"));
  // The run's current interval (docs/statistics.md).
  state_ = views::default_view_state(index_, reader.meta().interval_s, reader.meta().trace_begin_s);
  match_bodies();

  const std::size_t n = views_.size();
  rects_.resize(n);
  images_.resize(n);
  quads_.resize(n);
  draws_.assign(n, 0);
  drawn_time_s_.assign(n, std::numeric_limits<double>::quiet_NaN());
  drawn_selection_.resize(n);
  geode_ = new osg::Geode;
  geode_->setName("kanoko view panels");
  osg::StateSet* ss = geode_->getOrCreateStateSet();
  ss->setMode(GL_LIGHTING, osg::StateAttribute::OFF | osg::StateAttribute::OVERRIDE);
  ss->setMode(GL_BLEND, osg::StateAttribute::OFF);
  ss->setMode(GL_DEPTH_TEST, osg::StateAttribute::OFF);
  for (std::size_t i = 0; i < n; ++i) {
    images_[i] = new osg::Image;
    auto* texture = new osg::Texture2D(images_[i].get());
    texture->setResizeNonPowerOfTwoHint(false);
    texture->setFilter(osg::Texture::MIN_FILTER, osg::Texture::NEAREST);
    texture->setFilter(osg::Texture::MAG_FILTER, osg::Texture::NEAREST);
    texture->setWrap(osg::Texture::WRAP_S, osg::Texture::CLAMP_TO_EDGE);
    texture->setWrap(osg::Texture::WRAP_T, osg::Texture::CLAMP_TO_EDGE);
    // The image's first row is the top of the view: texture t = 0 at the top of the quad.
    quads_[i] = osg::createTexturedQuadGeometry(osg::Vec3(), osg::Vec3(1, 0, 0), osg::Vec3(0, 1, 0), 0, 1, 1, 0);
    quads_[i]->getOrCreateStateSet()->setTextureAttributeAndModes(0, texture, osg::StateAttribute::ON);
    quads_[i]->setUseDisplayList(false);
    quads_[i]->setUseVertexBufferObjects(true);
    geode_->addDrawable(quads_[i].get());
  }
  scene_.hud()->addChild(geode_.get());

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

  handler_ = new PanelEvents(*this, scene_);
  hub_.subscribe([this](const views::Selection& s) {
    if (!following_scene_) apply_to_scene(s);
  });
  // last_scene_selection_ starts empty, so that a body selected before (--select) reaches the
  // panels at the first refresh.
  layout();
}

void ViewPanels::match_bodies() {
  // Bodies and entities match by name (simulate names bodies after entities), else by order.
  const auto& bodies = reader_->meta().bodies;
  body_of_entity_.assign(index_.entity_count(), -1);
  for (std::size_t e = 0; e < index_.entity_count(); ++e) {
    for (std::size_t b = 0; b < bodies.size(); ++b) {
      if (bodies[b].name == index_.entities[e].name) {
        body_of_entity_[e] = static_cast<std::int64_t>(b);
        break;
      }
    }
    if (body_of_entity_[e] < 0 && bodies.size() == index_.entity_count()) body_of_entity_[e] = static_cast<std::int64_t>(e);
  }
}

void ViewPanels::set_run(const trajectory::Reader& run) {
  if (&run == reader_) return;
  reader_ = &run;
  match_bodies();
  // Redrawn at the next refresh, whatever the throttle says.
  std::fill(drawn_time_s_.begin(), drawn_time_s_.end(), std::numeric_limits<double>::quiet_NaN());
  last_draw_wall_s_ = -1;
  update_pair_line();
}

ViewPanels::~ViewPanels() {
  scene_.hud()->removeChild(geode_.get());
  scene_.root()->removeChild(pair_geode_.get());
}

void ViewPanels::layout() {
  const int w = scene_.width_px();
  const int h = scene_.height_px();
  laid_out_width_px_ = w;
  laid_out_height_px_ = h;
  // A column on the left, above the status line and below the inspect panel.
  const double margin = 8;
  const double pw = std::clamp(0.34 * w, 120.0, 560.0);
  const double bottom = 36;
  const double top = std::max(bottom + 60, 0.68 * h);
  const std::size_t n = views_.size();
  const double gap = 6;
  const double ph = std::max(40.0, (top - bottom - gap * static_cast<double>(n - 1)) / static_cast<double>(n));
  for (std::size_t i = 0; i < n; ++i) {
    const double y1 = top - static_cast<double>(i) * (ph + gap);
    rects_[i] = views::Rect{margin, y1 - ph, std::floor(pw), std::floor(ph)};
    auto* v = static_cast<osg::Vec3Array*>(quads_[i]->getVertexArray());
    const auto x0 = static_cast<float>(rects_[i].x);
    const auto y0 = static_cast<float>(rects_[i].y);
    const auto x1 = static_cast<float>(rects_[i].x + rects_[i].w);
    const auto yt = static_cast<float>(rects_[i].y + rects_[i].h);
    // createTexturedQuadGeometry's order: corner, corner+height, corner+width+height, corner+width.
    (*v)[0] = osg::Vec3(x0, yt, 0);
    (*v)[1] = osg::Vec3(x0, y0, 0);
    (*v)[2] = osg::Vec3(x1, y0, 0);
    (*v)[3] = osg::Vec3(x1, yt, 0);
    v->dirty();
    quads_[i]->dirtyBound();
    drawn_time_s_[i] = std::numeric_limits<double>::quiet_NaN();  // force a redraw at the new size
  }
}

void ViewPanels::redraw(std::size_t i) {
  const int w = static_cast<int>(rects_[i].w);
  const int h = static_cast<int>(rects_[i].h);
  if (w < 16 || h < 16) return;
  const views::ViewImage img = views::render_view_image(*views_[i], index_, state_, w, h);
  osg::Image& image = *images_[i];
  if (image.s() != w || image.t() != h) {
    image.allocateImage(w, h, 1, GL_BGRA, GL_UNSIGNED_BYTE);
    image.setInternalTextureFormat(GL_RGBA);
  }
  const auto row_bytes = static_cast<std::size_t>(w) * 4;
  for (int y = 0; y < h; ++y) {
    std::memcpy(image.data(0, static_cast<unsigned>(y)), img.pixels.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(img.stride), row_bytes);
  }
  image.dirty();
  ++draws_[i];
  drawn_time_s_[i] = state_.time_s;
  drawn_selection_[i] = state_.selection;
}

void ViewPanels::refresh() {
  if (scene_.width_px() != laid_out_width_px_ || scene_.height_px() != laid_out_height_px_) layout();
  if (pending_click_) {
    const auto [x, y] = *pending_click_;
    pending_click_.reset();
    (void)click(x, y);
  }
  follow_scene_selection();
  state_.time_s = clock_.time_s();
  state_.selection = hub_.current();
  const double now = wall_seconds();
  const bool throttled = last_draw_wall_s_ >= 0 && now - last_draw_wall_s_ < kRedrawPeriod_s;
  bool drew = false;
  for (std::size_t i = 0; i < views_.size(); ++i) {
    const bool never = std::isnan(drawn_time_s_[i]);
    const bool selection_changed = !(drawn_selection_[i] == state_.selection);
    // Time moves the picture only when it moves by about a pixel of the run.
    const double pixel_s = index_.span_s() / std::max(1.0, rects_[i].w);
    const bool time_changed = !never && std::abs(state_.time_s - drawn_time_s_[i]) > pixel_s;
    if (never || selection_changed || (time_changed && !throttled)) {
      redraw(i);
      drew = true;
    }
  }
  if (drew) last_draw_wall_s_ = now;
  update_pair_line();
}

void ViewPanels::set_visible(bool on) {
  visible_ = on;
  geode_->setNodeMask(on ? ~0U : 0U);
}

int ViewPanels::panel_at(double x_px, double y_px) const {
  if (!visible_) return -1;
  for (std::size_t i = 0; i < rects_.size(); ++i) {
    if (rects_[i].contains(x_px, y_px)) return static_cast<int>(i);
  }
  return -1;
}

bool ViewPanels::click(double x_px, double y_px) {
  const int i = panel_at(x_px, y_px);
  if (i < 0) return false;
  const views::Rect& r = rects_[static_cast<std::size_t>(i)];
  // Panels are drawn y down from their top edge.
  const views::Selection picked = views_[static_cast<std::size_t>(i)]->pick(
      x_px - r.x, r.y + r.h - y_px, views::Rect{0, 0, r.w, r.h}, index_, state_);
  if (picked.empty()) return true;
  if (picked.has_time()) clock_.seek(std::clamp(picked.time_s, clock_.begin_s(), clock_.end_s()));
  hub_.set(views::apply_pick(hub_.current(), picked));
  return true;
}

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

std::unique_ptr<ViewPanels> make_view_panels(const trajectory::Reader& reader, TrajectoryScene& scene,
                                             ReplayClock& clock, const ViewPanelOptions& options) {
  if (options.views.empty()) return nullptr;
  views::TraceIndex index = views::build_trace_index(options.trace, options.index, options.format);
  return std::make_unique<ViewPanels>(reader, scene, clock, std::move(index), options.views);
}

}  // namespace kanoko::scene
