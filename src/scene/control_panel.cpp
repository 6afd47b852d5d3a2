#include "src/scene/control_panel.hpp"

#include <algorithm>
#include <cstdio>
#include <osg/Geode>
#include <osgText/Font>

#include "src/scene/layers/scene_graph.hpp"

namespace kanoko::scene {

namespace {

constexpr double kTrailStepFraction = 1.0 / 40.0;
constexpr double kBodyScaleStep = 1.25;

const osg::Vec4 kPanelFill{0.07F, 0.08F, 0.11F, 0.86F};
const osg::Vec4 kButtonFill{0.22F, 0.27F, 0.38F, 1.0F};
const osg::Vec4 kPanelText{0.88F, 0.90F, 0.94F, 1.0F};
const osg::Vec4 kTitleText{1.0F, 0.62F, 0.12F, 1.0F};

// Row of each fixed button (row 0 is the title) and its column counted from the right (0 = last).
struct FixedPlace {
  int row;
  int column_from_right;
  const char* label;
};
constexpr std::array<FixedPlace, kPanelButtons> kPlaces{{
    {1, 1, "-"},
    {1, 0, "+"},
    {2, 1, "-"},
    {2, 0, "+"},
    {3, 1, "-"},
    {3, 0, "+"},
    {4, 0, "on/off"},
    {5, 0, "on/off"},
    {6, 0, "next"},
    {7, 0, "on/off"},
}};

const char* on_off(bool on) { return on ? "on" : "off"; }

osg::ref_ptr<osgText::Text> make_text(osgText::Font* font, const osg::Vec4& colour,
                                      osgText::Text::AlignmentType align) {
  return layers::make_text(font, align, colour, 32, 32);
}

}  // namespace

double longer_trail(double trail_s, double run_s) {
  const double step = std::max(run_s, 0.0) * kTrailStepFraction;
  if (!(step > 0)) return 0;
  return trail_s < step ? step : std::min(2.0 * trail_s, run_s);
}

double shorter_trail(double trail_s, double run_s) {
  const double step = std::max(run_s, 0.0) * kTrailStepFraction;
  const double half = 0.5 * trail_s;
  return half < step * (1.0 - 1e-9) ? 0.0 : half;
}

ControlPanel::ControlPanel(ReplayClock& clock, TrajectoryScene& scene)
    : clock_(clock), scene_(scene) {
  root_ = new osg::Switch;
  root_->setName("paused panel");
  geode_ = new osg::Geode;
  background_ = new osg::Geometry;
  background_->setDataVariance(osg::Object::DYNAMIC);
  background_->setUseDisplayList(false);
  background_->setUseVertexBufferObjects(true);
  background_->setVertexArray(new osg::Vec3Array);
  background_->setColorArray(new osg::Vec4Array, osg::Array::BIND_PER_VERTEX);
  background_->getOrCreateStateSet()->setRenderBinDetails(30, "RenderBin");
  build_texts();
  root_->addChild(geode_.get(), false);
  scene_.hud()->addChild(root_.get());
}

void ControlPanel::build_texts() {
  geode_->removeDrawables(0, geode_->getNumDrawables());
  geode_->addDrawable(background_.get());
  osg::ref_ptr<osgText::Font> font = monospace_font();
  const std::size_t row_count = row_texts().size();
  rows_.assign(row_count, nullptr);
  for (std::size_t r = 0; r < row_count; ++r) {
    rows_[r] = make_text(font.get(), r == 0 ? kTitleText : kPanelText, osgText::Text::LEFT_CENTER);
    geode_->addDrawable(rows_[r].get());
  }
  const std::vector<Place> all = places();
  buttons_.assign(all.size(), Rect{});
  button_labels_.assign(all.size(), nullptr);
  for (std::size_t b = 0; b < all.size(); ++b) {
    button_labels_[b] = make_text(font.get(), kPanelText, osgText::Text::CENTER_CENTER);
    layers::set_text(*button_labels_[b], all[b].label);
    geode_->addDrawable(button_labels_[b].get());
  }
  laid_out_width_px_ = 0;  // lay out again at the next refresh
  laid_out_height_px_ = 0;
}

void ControlPanel::set_resimulation(Resimulator* resim, std::filesystem::path save_folder) {
  resim_ = resim;
  save_folder_ = std::move(save_folder);
  build_texts();
  layout();
}

std::vector<ControlPanel::Place> ControlPanel::places() const {
  std::vector<Place> out;
  for (const FixedPlace& p : kPlaces) out.push_back({p.row, p.column_from_right, p.label});
  if (resim_ != nullptr) {
    const int first = static_cast<int>(kPanelRows);
    const auto count = static_cast<int>(resim_->parameters().size());
    for (int i = 0; i < count; ++i) {
      out.push_back({first + i, 1, "-"});
      out.push_back({first + i, 0, "+"});
    }
    out.push_back({first + count, 0, "save"});
  }
  return out;
}

std::vector<std::string> ControlPanel::row_texts() const {
  const VisualOptions& v = scene_.visual();
  char buf[96];
  std::vector<std::string> rows(kPanelRows);
  rows[0] = "paused - click to change";
  std::snprintf(buf, sizeof buf, "speed    %.3g s/s", clock_.speed());
  rows[1] = buf;
  std::snprintf(buf, sizeof buf, "bodies   x%.2f", v.body_scale);
  rows[2] = buf;
  if (v.trail_s > 0) {
    std::snprintf(buf, sizeof buf, "trails   %.3g s", v.trail_s);
  } else {
    std::snprintf(buf, sizeof buf, "trails   off");
  }
  rows[3] = buf;
  rows[4] = std::string("labels   ") + on_off(v.labels);
  rows[5] = std::string("grid     ") + on_off(v.grid);
  rows[6] = std::string("springs  ") + to_string(v.spring_colours);
  rows[7] = std::string("flashes  ") + on_off(v.flashes);
  if (resim_ != nullptr) {
    for (const mapping::Tunable& p : resim_->parameters()) {
      std::snprintf(buf, sizeof buf, "%-11s%.4g", p.label.c_str(), p.value);
      rows.emplace_back(buf);
    }
    rows.emplace_back(resim_->edited() ? "mapping  changed" : "mapping  as run");
  }
  return rows;
}

std::string ControlPanel::text() const {
  std::string s;
  for (const auto& r : row_texts()) s += r + '\n';
  return s;
}

void ControlPanel::layout() {
  const int w = scene_.width_px();
  const int h = scene_.height_px();
  laid_out_width_px_ = w;
  laid_out_height_px_ = h;
  const double size = std::clamp(0.035 * std::min(w, h), 11.0, 18.0);
  const double row_h = 1.6 * size;
  const double margin = 0.6 * size;
  const double panel_w = 17.0 * size;
  const double button_w = 2.0 * size;
  const double toggle_w = 4.0 * size;
  // Bottom-right, above the dial (the inspect panel takes the top-left corner).
  const DialLayout& dial = scene_.dial();
  const double bottom = dial.centre_y_px + dial.radius_px + margin;
  panel_ = Rect{w - margin - panel_w, bottom, w - margin,
                bottom + row_h * static_cast<double>(rows_.size()) + margin};
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    const double y = panel_.y1 - margin * 0.5 - row_h * (static_cast<double>(r) + 0.5);
    rows_[r]->setCharacterSize(static_cast<float>(size));
    rows_[r]->setPosition(osg::Vec3(static_cast<float>(panel_.x0 + margin), static_cast<float>(y),
                                    0.0F));
  }
  auto* v = static_cast<osg::Vec3Array*>(background_->getVertexArray());
  auto* c = static_cast<osg::Vec4Array*>(background_->getColorArray());
  v->clear();
  c->clear();
  const auto quad = [&](const Rect& q, const osg::Vec4& colour) {
    for (const auto& [x, y] : {std::pair{q.x0, q.y0}, std::pair{q.x1, q.y0}, std::pair{q.x1, q.y1},
                               std::pair{q.x0, q.y0}, std::pair{q.x1, q.y1}, std::pair{q.x0, q.y1}}) {
      v->push_back(osg::Vec3(static_cast<float>(x), static_cast<float>(y), 0.0F));
      c->push_back(colour);
    }
  };
  quad(panel_, kPanelFill);
  const std::vector<Place> all = places();
  for (std::size_t b = 0; b < all.size(); ++b) {
    const Place& p = all[b];
    const double y = panel_.y1 - margin * 0.5 - row_h * (p.row + 0.5);
    const double width = p.label[1] == '\0' ? button_w : toggle_w;
    const double x1 = panel_.x1 - margin - p.column_from_right * (button_w + 0.3 * size);
    buttons_[b] = Rect{x1 - width, y - 0.42 * row_h, x1, y + 0.42 * row_h};
    quad(buttons_[b], kButtonFill);
    button_labels_[b]->setCharacterSize(static_cast<float>(size));
    button_labels_[b]->setPosition(osg::Vec3(static_cast<float>(0.5 * (x1 - width + x1)),
                                             static_cast<float>(y), 0.0F));
  }
  v->dirty();
  c->dirty();
  background_->removePrimitiveSet(0, background_->getNumPrimitiveSets());
  background_->addPrimitiveSet(
      new osg::DrawArrays(GL_TRIANGLES, 0, static_cast<GLsizei>(v->size())));
  background_->dirtyBound();
}

void ControlPanel::refresh() {
  visible_ = clock_.paused();
  root_->setValue(0, visible_);
  if (!visible_) return;
  if (laid_out_width_px_ != scene_.width_px() || laid_out_height_px_ != scene_.height_px()) {
    layout();
  }
  const auto rows = row_texts();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows_[r]->getText().createUTF8EncodedString() != rows[r]) layers::set_text(*rows_[r], rows[r]);
  }
}

osg::Vec2d ControlPanel::centre_of(std::size_t button) const {
  const Rect& r = buttons_.at(button);
  return {0.5 * (r.x0 + r.x1), 0.5 * (r.y0 + r.y1)};
}

osg::Vec2d ControlPanel::button_centre(PanelButton b) const { return centre_of(static_cast<std::size_t>(b)); }

osg::Vec2d ControlPanel::parameter_button_centre(std::size_t index, bool plus) const {
  return centre_of(kPanelButtons + 2 * index + (plus ? 1U : 0U));
}

osg::Vec2d ControlPanel::save_button_centre() const { return centre_of(buttons_.size() - 1); }

bool ControlPanel::click(double x_px, double y_px) {
  if (!visible_) return false;
  const auto inside = [&](const Rect& r) {
    return x_px >= r.x0 && x_px <= r.x1 && y_px >= r.y0 && y_px <= r.y1;
  };
  if (!inside(panel_)) return false;
  for (std::size_t b = 0; b < buttons_.size(); ++b) {
    if (inside(buttons_[b])) {
      press(b);
      break;
    }
  }
  refresh();
  return true;
}

void ControlPanel::press(std::size_t button) {
  if (button >= kPanelButtons) {
    if (resim_ == nullptr) return;
    const std::size_t k = button - kPanelButtons;
    if (k == 2 * resim_->parameters().size()) {
      try {
        save_message_ = "saved " + resim_->save_mapping(save_folder_).string();
      } catch (const std::exception& e) {
        save_message_ = std::string("could not save the mapping: ") + e.what();
      }
      std::printf("kanoko view: %s\n", save_message_.c_str());
      std::fflush(stdout);
      return;
    }
    const double factor = k % 2 == 1 ? Resimulator::kStep : 1.0 / Resimulator::kStep;
    const trajectory::Reader& shown = scene_.reader();
    resim_->change(k / 2, factor, shown, shown.frame_at_or_before(scene_.time_s()));
    return;
  }
  const auto b = static_cast<PanelButton>(button);
  VisualOptions v = scene_.visual();
  const double run_s = clock_.end_s() - clock_.begin_s();
  switch (b) {
    case PanelButton::slower:
      clock_.slower();
      return;
    case PanelButton::faster:
      clock_.faster();
      return;
    case PanelButton::smaller_bodies:
      v.body_scale /= kBodyScaleStep;
      break;
    case PanelButton::larger_bodies:
      v.body_scale *= kBodyScaleStep;
      break;
    case PanelButton::shorter_trails:
      v.trail_s = shorter_trail(v.trail_s, run_s);
      break;
    case PanelButton::longer_trails:
      v.trail_s = longer_trail(v.trail_s, run_s);
      break;
    case PanelButton::labels:
      v.labels = !v.labels;
      break;
    case PanelButton::grid:
      v.grid = !v.grid;
      break;
    case PanelButton::spring_colours:
      v.spring_colours = next_spring_colours(v.spring_colours);
      break;
    case PanelButton::flashes:
      v.flashes = !v.flashes;
      break;
  }
  scene_.set_visual(v);
}

}  // namespace kanoko::scene
