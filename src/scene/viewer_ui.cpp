#include "src/scene/viewer_ui.hpp"

#include <imgui.h>
#include <osg/GL>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <utility>

#include "src/base/background.hpp"
#include "src/base/progress.hpp"
#include "src/base/units.hpp"
#include "src/mapping/mapping.hpp"
#include "src/scene/dial.hpp"
#include "src/scene/mapping_visual.hpp"
#include "src/scene/scene.hpp"
#include "src/scene/view_panels.hpp"
#include "src/trajectory/panel_values.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::scene {

namespace {

constexpr double kTimelineHeight = 118;  ///< buttons row + activity strip + tick labels
constexpr double kMinSideWidth = 220;
constexpr double kMinViewsWidth = 160;
constexpr std::size_t kActivityBins = 480;

constexpr ImGuiWindowFlags kEdgeWindow =
    ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove |
    ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
    ImGuiWindowFlags_NoBringToFrontOnFocus;

ImU32 rgba(int r, int g, int b, int a = 255) { return IM_COL32(r, g, b, a); }

std::string fmt_bytes(double bytes) { return trajectory::format_bytes_text(bytes); }

std::string fmt_percent(double f) { return std::isfinite(f) ? format_percent(f) : "-"; }

/// True when a background job has its result (without waiting).
template <typename T>
bool ready(const std::future<T>& f) {
  return f.valid() && f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

}  // namespace

bool overlaps(const PixelRect& a, const PixelRect& b) {
  if (a.w <= 0 || a.h <= 0 || b.w <= 0 || b.h <= 0) return false;
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

UiLayout ui_layout(int width_px, int height_px, double menu_h, double timeline_h, double side_w, double views_w) {
  const double w = std::max(width_px, 1);
  const double h = std::max(height_px, 1);
  UiLayout l;
  menu_h = std::clamp(menu_h, 0.0, h / 4);
  // The 3-D view keeps at least a quarter of the height and of the width.
  timeline_h = std::clamp(timeline_h, 0.0, std::max(0.0, 0.75 * h - menu_h));
  side_w = std::clamp(side_w, 0.0, 0.75 * w);
  views_w = std::clamp(views_w, 0.0, std::max(0.0, 0.75 * w - side_w));
  l.menu = {0, 0, w, menu_h};
  l.timeline = {0, h - timeline_h, w, timeline_h};
  const double middle_h = std::max(0.0, h - menu_h - timeline_h);
  l.side = {w - side_w, menu_h, side_w, side_w > 0 ? middle_h : 0};
  l.views = {0, menu_h, views_w, views_w > 0 ? middle_h : 0};
  l.viewport = {views_w, menu_h, w - side_w - views_w, middle_h};
  return l;
}

void* OverlayTextures::get(std::size_t key, const std::uint8_t* bgra, int w, int h, std::uint64_t version) {
  if (key >= entries_.size()) entries_.resize(key + 1);
  Entry& e = entries_[key];
  if (e.id == 0) {
    GLuint id = 0;
    glGenTextures(1, &id);
    e.id = id;
    glBindTexture(GL_TEXTURE_2D, id);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  }
  if (e.version != version && bgra != nullptr && w > 0 && h > 0) {
    glBindTexture(GL_TEXTURE_2D, e.id);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    if (e.w != w || e.h != h) {
      glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, w, h, 0, GL_BGRA, GL_UNSIGNED_BYTE, bgra);
    } else {
      glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, GL_BGRA, GL_UNSIGNED_BYTE, bgra);
    }
    e.w = w;
    e.h = h;
    e.version = version;
  }
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(e.id));
}

WindowPlacement fit_window(int wanted_w, int wanted_h, int screen_w, int screen_h) {
  WindowPlacement p;
  // Leave room for a desktop's panels and the window's decorations.
  const int avail_w = screen_w > 0 ? std::max(320, screen_w - 32) : wanted_w;
  const int avail_h = screen_h > 0 ? std::max(240, screen_h - 80) : wanted_h;
  p.width = std::max(1, std::min(wanted_w, std::max(320, avail_w)));
  p.height = std::max(1, std::min(wanted_h, std::max(240, avail_h)));
  p.x = screen_w > 0 ? std::max(0, (screen_w - p.width) / 2) : 0;
  p.y = screen_h > 0 ? std::max(0, (screen_h - p.height) / 3) : 0;
  return p;
}

ViewerUi::ViewerUi(const trajectory::Reader& reader, ReplayClock& clock, TrajectoryScene& scene,
                   std::vector<double> frame_times_s, std::vector<HelpSection> help, UiToggles toggles)
    : reader_(reader),
      clock_(clock),
      scene_(scene),
      frame_times_s_(std::move(frame_times_s)),
      help_(std::move(help)),
      toggles_(toggles),
      timeline_(clock.begin_s(), clock.end_s()) {}

ViewerUi::~ViewerUi() = default;  // the futures wait for their jobs (they read reader_)

std::optional<UiLayout> ViewerUi::take_layout_change() {
  if (!layout_changed_) return std::nullopt;
  layout_changed_ = false;
  return layout_;
}

std::map<std::string, PixelRect> ViewerUi::windows() const {
  std::map<std::string, PixelRect> w;
  w["menu"] = layout_.menu;
  if (layout_.timeline.h > 0) w["timeline"] = layout_.timeline;
  if (layout_.side.w > 0 && layout_.side.h > 0) w["side"] = layout_.side;
  if (layout_.views.w > 0 && layout_.views.h > 0) w["views"] = layout_.views;
  return w;
}

void ViewerUi::note(const std::string& name) {
  const ImVec2 a = ImGui::GetItemRectMin();
  const ImVec2 b = ImGui::GetItemRectMax();
  elements_[name] = {a.x, a.y, b.x - a.x, b.y - a.y};
}

void ViewerUi::poll_background() {
  // The activity strip reads up to kActivityBins frames: off the frame loop, once the run is
  // whole (a run still being simulated gets it when its simulation ends).
  if (!activity_ && !activity_job_.valid() && !live_) {
    activity_job_ = background_async([&r = reader_] { return trajectory::run_activity(r, kActivityBins); });
  }
  if (ready(activity_job_)) activity_ = activity_job_.get();
  if (ready(range_job_)) range_ = range_job_.get();
  const auto& sel = timeline_.selection();
  if (sel != range_for_ && !range_job_.valid()) {
    range_for_ = sel;
    range_.reset();
    if (sel) {
      range_job_ = background_async([&r = reader_, s = *sel] {
        return trajectory::range_statistics(r, s.first, s.second);
      });
    }
  }
}

void ViewerUi::build() {
  elements_.clear();
  texts_.clear();
  poll_background();
  const ImGuiIO& io = ImGui::GetIO();
  const int w = static_cast<int>(io.DisplaySize.x);
  const int h = static_cast<int>(io.DisplaySize.y);
  build_menu();
  const bool side_open = toggles_.side || toggles_.help || timeline_.selection().has_value();
  const bool views_open = panels_ != nullptr && panels_->visible();
  const UiLayout l = ui_layout(w, h, ImGui::GetFrameHeight(), toggles_.timeline ? kTimelineHeight : 0,
                               side_open ? side_w_ : 0, views_open ? views_w_ : 0);
  if (!(l == layout_)) {
    layout_ = l;
    layout_changed_ = true;
  }
  elements_["viewport"] = layout_.viewport;
  // The dial, drawn by the scene's HUD inside the 3-D view (y up there).
  const DialLayout& d = scene_.dial();
  elements_["dial"] = {layout_.viewport.x + d.centre_x_px - d.radius_px,
                       layout_.viewport.y + layout_.viewport.h - d.centre_y_px - d.radius_px,
                       2 * d.radius_px, 2 * d.radius_px};
  if (toggles_.timeline) build_timeline();
  if (side_open) build_side();
  if (views_open) build_views();
  hover_label();
}

void ViewerUi::hover_label() {
  // Labels are on by default for small runs; beyond, the body under the pointer is named.
  const ImGuiIO& io = ImGui::GetIO();
  if (!picker_ || !layout_.viewport.contains(io.MousePos.x, io.MousePos.y) || ImGui::IsAnyItemActive() ||
      ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
    hovered_.reset();
    return;
  }
  if (io.MousePos.x != last_hover_x_ || io.MousePos.y != last_hover_y_) {
    last_hover_x_ = io.MousePos.x;
    last_hover_y_ = io.MousePos.y;
    hovered_ = picker_(io.MousePos.x, io.MousePos.y);
  }
  const auto& bodies = reader_.meta().bodies;
  if (hovered_ && *hovered_ < bodies.size() && !(scene_.visual().labels)) {
    const auto& b = bodies[*hovered_];
    if (b.host.empty()) {
      ImGui::SetTooltip("%s", b.name.c_str());
    } else {
      ImGui::SetTooltip("%s  (host %s)", b.name.c_str(), b.host.c_str());
    }
  }
}

std::vector<std::size_t> find_bodies(const std::vector<trajectory::BodyInfo>& bodies, const std::string& query) {
  std::string q = query;
  const auto not_space = [](unsigned char c) { return std::isspace(c) == 0; };
  q.erase(q.begin(), std::find_if(q.begin(), q.end(), not_space));
  q.erase(std::find_if(q.rbegin(), q.rend(), not_space).base(), q.end());
  std::vector<std::size_t> out;
  if (q.empty()) return out;
  const auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string lq = lower(q);
  std::int64_t rank = -1;
  if (std::all_of(q.begin(), q.end(), [](unsigned char c) { return std::isdigit(c) != 0; }) && q.size() < 18) {
    rank = std::stoll(q);
  }
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const auto& b = bodies[i];
    if ((rank >= 0 && b.rank == rank) || lower(b.name).find(lq) != std::string::npos ||
        (!b.host.empty() && lower(b.host).find(lq) != std::string::npos)) {
      out.push_back(i);
    }
  }
  return out;
}

void ViewerUi::build_find() {
  if (!ImGui::CollapsingHeader("Find bodies", ImGuiTreeNodeFlags_DefaultOpen)) return;
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##find", "name, host or rank", query_.data(), query_.size());
  note("side.find");
  const auto& bodies = reader_.meta().bodies;
  const std::string q(query_.data());
  if (q != matched_query_) {
    matched_query_ = q;
    found_ = find_bodies(bodies, q);
    if (scene_.body_filter() != BodyFilter::none) {
      std::vector<bool> mask(bodies.size(), false);
      for (const std::size_t i : found_) mask[i] = true;
      scene_.set_body_filter(found_.empty() ? BodyFilter::none : scene_.body_filter(), std::move(mask));
    }
  }
  if (q.empty()) return;
  ImGui::Text("%zu of %zu bodies", found_.size(), bodies.size());
  const BodyFilter mode = scene_.body_filter();
  auto apply = [&](BodyFilter m) {
    std::vector<bool> mask(bodies.size(), false);
    for (const std::size_t i : found_) mask[i] = true;
    scene_.set_body_filter(found_.empty() ? BodyFilter::none : m, std::move(mask));
  };
  if (ImGui::RadioButton("show all", mode == BodyFilter::none)) apply(BodyFilter::none);
  note("button.show-all");
  ImGui::SameLine();
  if (ImGui::RadioButton("highlight", mode == BodyFilter::highlight)) apply(BodyFilter::highlight);
  note("button.highlight");
  ImGui::SameLine();
  if (ImGui::RadioButton("isolate", mode == BodyFilter::isolate)) apply(BodyFilter::isolate);
  note("button.isolate");
  // The first matches, to pick one; the full count is above.
  constexpr std::size_t kListed = 40;
  for (std::size_t k = 0; k < found_.size() && k < kListed; ++k) {
    const std::size_t i = found_[k];
    const auto& sel = scene_.selection();
    const bool selected = sel && sel->kind == Pick::Kind::body && sel->index == i;
    std::string label = bodies[i].name;
    if (!bodies[i].host.empty()) label += "  (" + bodies[i].host + ")";
    ImGui::PushID(static_cast<int>(k));
    if (ImGui::Selectable(label.c_str(), selected)) scene_.select(Pick{Pick::Kind::body, i, 0.0});
    ImGui::PopID();
    if (k == 0) note("side.find.first");
  }
  if (found_.size() > kListed) ImGui::Text("... and %zu more", found_.size() - kListed);
}

void ViewerUi::build_selection() {
  const std::string text = scene_.inspect_text();
  if (text.empty()) return;
  if (ImGui::CollapsingHeader("Selection", ImGuiTreeNodeFlags_DefaultOpen)) {
    note("side.selection");
    const ImGuiIO& io = ImGui::GetIO();
    // The inspect text lines its columns up with spaces: the monospace face.
    if (io.Fonts->Fonts.Size > 1) ImGui::PushFont(io.Fonts->Fonts[1]);
    ImGui::TextUnformatted(text.c_str());
    if (io.Fonts->Fonts.Size > 1) ImGui::PopFont();
    texts_["selection"] = text;
    if (side_hooks_.selection) side_hooks_.selection();
    if (ImGui::SmallButton("clear selection")) scene_.select(std::nullopt);
    note("button.clear-selection");
    build_group_buttons();
  }
}

void ViewerUi::build_group_buttons() {
  // The hierarchy: a selected group opens into its members, a selected rank's group closes.
  const auto& sel = scene_.selection();
  if (!sel) return;
  const trajectory::Hierarchy& h = scene_.hierarchy();
  const trajectory::Cut& cut = scene_.cut();
  if (sel->kind == Pick::Kind::group) {
    const auto it = cut.items().at(sel->index);
    ImGui::SameLine();
    const std::string label = "open " + h.group_name(it.level, it.group) + " (e)";
    if (ImGui::SmallButton(label.c_str())) requests_.open_group = sel->index;
    note("button.open-group");
    if (it.level + 1 < h.level_count()) {
      ImGui::SameLine();
      const std::string up = "close " + h.group_name(it.level + 1, h.parent(it.level, it.group));
      if (ImGui::SmallButton(up.c_str())) requests_.close_group = sel->index;
      note("button.close-group");
    }
  } else if (sel->kind == Pick::Kind::body && h.level_count() > 1) {
    const std::size_t item = cut.item_of_body(sel->index);
    const auto it = cut.items().at(item);
    ImGui::SameLine();
    const std::string label = "close " + h.group_name(it.level + 1, h.parent(it.level, it.group)) + " (e)";
    if (ImGui::SmallButton(label.c_str())) requests_.close_group = item;
    note("button.close-group");
  }
}

void ViewerUi::build_legend() {
  if (!ImGui::CollapsingHeader("Legend", ImGuiTreeNodeFlags_DefaultOpen)) return;
  note("side.legend");
  // What is coloured and by which scale: the scene's legend model (src/scene/legend.hpp), the
  // one `kanoko render` boxes in its pictures.
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float bar_w = std::max(120.0F, ImGui::GetContentRegionAvail().x - 8);
  const float bar_h = 12;
  const auto colour = [](const LegendRgb& c) {
    return rgba(static_cast<int>(255 * c[0]), static_cast<int>(255 * c[1]), static_cast<int>(255 * c[2]));
  };
  const Legend& legend = scene_.legend();
  for (std::size_t k = 0; k < legend.entries.size(); ++k) {
    const LegendEntry& e = legend.entries[k];
    if (k > 0) ImGui::Spacing();
    ImGui::TextWrapped("%s", e.title.c_str());
    if (e.kind == LegendEntry::Kind::gradient && e.samples.size() >= 2) {
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const float step = bar_w / static_cast<float>(e.samples.size() - 1);
      for (std::size_t j = 0; j + 1 < e.samples.size(); ++j) {
        const float x0 = p.x + step * static_cast<float>(j);
        const ImU32 c0 = colour(e.samples[j]);
        const ImU32 c1 = colour(e.samples[j + 1]);
        dl->AddRectFilledMultiColor(ImVec2(x0, p.y), ImVec2(x0 + step, p.y + bar_h), c0, c1, c1, c0);
      }
      ImGui::Dummy(ImVec2(bar_w, bar_h));
      ImGui::TextUnformatted(e.low.c_str());
      const float rw = ImGui::CalcTextSize(e.high.c_str()).x;
      ImGui::SameLine(std::max(0.0F, bar_w - rw));
      ImGui::TextUnformatted(e.high.c_str());
    }
    for (const LegendSwatch& w : e.swatches) {
      ImGui::ColorButton("##swatch", ImVec4(w.rgb[0], w.rgb[1], w.rgb[2], 1.0F), ImGuiColorEditFlags_NoTooltip,
                         ImVec2(12, 12));
      ImGui::SameLine();
      ImGui::TextUnformatted(w.label.c_str());
    }
    if (e.more > 0) ImGui::Text("... and %zu more", e.more);
  }
  ImGui::TextWrapped("Timeline: orange bars bytes exchanged, green line mean busy fraction; shaded: settling.");
}

void ViewerUi::build_menu() {
  if (!ImGui::BeginMainMenuBar()) return;
  elements_["menu"] = {0, 0, ImGui::GetWindowWidth(), ImGui::GetFrameHeight()};
  const bool file = ImGui::BeginMenu("File");
  note("menu.File");
  if (file) {
    if (ImGui::MenuItem("Screenshot", "p")) requests_.screenshot = true;
    if (ImGui::MenuItem("Quit", "Esc")) requests_.quit = true;
    ImGui::EndMenu();
  }
  const bool view = ImGui::BeginMenu("View");
  note("menu.View");
  if (view) {
    VisualOptions v = scene_.visual();
    bool changed = false;
    changed |= ImGui::MenuItem("Labels", "l", &v.labels);
    changed |= ImGui::MenuItem("Ground grid and axes", "g", &v.grid);
    changed |= ImGui::MenuItem("Communication flashes", "x", &v.flashes);
    if (ImGui::BeginMenu("Spring colours")) {
      for (const SpringColours c : {SpringColours::tension, SpringColours::traffic, SpringColours::off}) {
        if (ImGui::MenuItem(to_string(c), "k", v.spring_colours == c)) {
          v.spring_colours = c;
          changed = true;
        }
      }
      ImGui::EndMenu();
    }
    if (ImGui::MenuItem("Larger bodies", "]")) {
      v.body_scale *= 1.25;
      changed = true;
    }
    if (ImGui::MenuItem("Smaller bodies", "[")) {
      v.body_scale /= 1.25;
      changed = true;
    }
    if (changed) scene_.set_visual(v);
    ImGui::Separator();
    ImGui::MenuItem("Timeline", "u", &toggles_.timeline);
    ImGui::MenuItem("Side panel (selection, legend)", "i", &toggles_.side);
    if (panels_ != nullptr) {
      bool shown = panels_->visible();
      if (ImGui::MenuItem("Companion views", "o", &shown)) panels_->set_visible(shown);
    }
    ImGui::MenuItem("Frame rate", "y", &toggles_.frame_rate);
    if (ImGui::MenuItem("Camera home", "c")) requests_.home = true;
    ImGui::EndMenu();
  }
  const bool play = ImGui::BeginMenu("Playback");
  note("menu.Playback");
  if (play) {
    if (ImGui::MenuItem(clock_.paused() ? "Play" : "Pause", "Space")) clock_.toggle_pause();
    if (ImGui::MenuItem("Reverse", "r", clock_.reversed())) clock_.reverse();
    bool loop = clock_.loop();
    if (ImGui::MenuItem("Loop", nullptr, &loop)) clock_.set_loop(loop);
    if (ImGui::MenuItem("Faster", "+")) clock_.faster();
    if (ImGui::MenuItem("Slower", "-")) clock_.slower();
    if (ImGui::MenuItem("Step forward", "Right")) clock_.step_frames(+1, frame_times_s_);
    if (ImGui::MenuItem("Step back", "Left")) clock_.step_frames(-1, frame_times_s_);
    if (ImGui::MenuItem("Restart", "Home")) clock_.restart();
    ImGui::EndMenu();
  }
  const bool help = ImGui::BeginMenu("Help");
  note("menu.Help");
  if (help) {
    ImGui::MenuItem("Keys and mouse", "h", &toggles_.help);
    ImGui::EndMenu();
  }
  ImGui::EndMainMenuBar();
}

void ViewerUi::build_timeline() {
  const PixelRect& r = layout_.timeline;
  ImGui::SetNextWindowPos(ImVec2(static_cast<float>(r.x), static_cast<float>(r.y)));
  ImGui::SetNextWindowSize(ImVec2(static_cast<float>(r.w), static_cast<float>(r.h)));
  if (!ImGui::Begin("Timeline", nullptr, kEdgeWindow | ImGuiWindowFlags_NoScrollbar)) {
    ImGui::End();
    return;
  }
  // Transport: buttons as well as keys.
  if (ImGui::Button("|<")) clock_.restart();
  note("button.restart");
  ImGui::SameLine();
  if (ImGui::Button("<|")) clock_.step_frames(-1, frame_times_s_);
  note("button.step-back");
  ImGui::SameLine();
  if (ImGui::Button(clock_.paused() ? " Play  " : " Pause ")) clock_.toggle_pause();
  note("button.play");
  ImGui::SameLine();
  if (ImGui::Button("|>")) clock_.step_frames(+1, frame_times_s_);
  note("button.step-forward");
  ImGui::SameLine();
  bool reversed = clock_.reversed();
  if (ImGui::Checkbox("reverse", &reversed)) clock_.reverse();
  note("button.reverse");
  ImGui::SameLine();
  bool loop = clock_.loop();
  if (ImGui::Checkbox("loop", &loop)) clock_.set_loop(loop);
  note("button.loop");
  ImGui::SameLine();
  if (ImGui::Button("-")) clock_.slower();
  note("button.slower");
  ImGui::SameLine();
  ImGui::Text("%.3g s/s", clock_.speed());  // trace seconds per wall second, as the status line
  ImGui::SameLine();
  if (ImGui::Button("+")) clock_.faster();
  note("button.faster");
  ImGui::SameLine();
  ImGui::TextUnformatted(format_dial_time(clock_.time_s(), clock_.begin_s(), clock_.end_s()).c_str());
  if (!timeline_.whole()) {
    ImGui::SameLine();
    if (ImGui::SmallButton("whole run")) timeline_.reset();
    note("button.whole-run");
  }
  if (live_) {
    ImGui::SameLine();
    ImGui::TextColored(live_->stopped ? ImVec4(0.95F, 0.4F, 0.35F, 1) : ImVec4(0.98F, 0.8F, 0.3F, 1), "%s",
                       live_->text.c_str());
    note("timeline.simulation");
    texts_["simulation"] = live_->text;
  }
  if (toggles_.frame_rate) {
    ImGui::SameLine();
    const double fps = static_cast<double>(ImGui::GetIO().Framerate);
    ImGui::Text("  %.0f fps (%.1f ms)", fps, fps > 0 ? 1000.0 / fps : 0.0);
  }
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const double strip_w = std::max(10.0f, avail.x);
  const double strip_h = std::max(10.0f, avail.y - ImGui::GetTextLineHeight() - 2);
  draw_strip(origin.x, origin.y, strip_w, strip_h);
  ImGui::End();
  elements_["timeline"] = r;
}

void ViewerUi::draw_strip(double x0, double y0, double w, double h) {
  ImGui::InvisibleButton("strip", ImVec2(static_cast<float>(w), static_cast<float>(h)),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                             ImGuiButtonFlags_MouseButtonMiddle);
  note("timeline.strip");
  const ImGuiIO& io = ImGui::GetIO();
  const double mouse_t = timeline_.time_at(io.MousePos.x, x0, w);
  // Wheel zooms the timeline around the pointer; right or middle drag pans it.
  if (ImGui::IsItemHovered() && io.MouseWheel != 0) timeline_.zoom(std::pow(0.8, io.MouseWheel), mouse_t);
  if (ImGui::IsItemActive() && (ImGui::IsMouseDown(ImGuiMouseButton_Right) || ImGui::IsMouseDown(ImGuiMouseButton_Middle))) {
    timeline_.pan(-io.MouseDelta.x, w);
  }
  // Left: click or drag seeks (the playhead follows); with Shift it selects a range.
  if (ImGui::IsItemActivated() && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
    if (io.KeyShift) {
      drag_anchor_s_ = mouse_t;
    } else {
      seeking_ = true;
    }
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
    if (drag_anchor_s_) {
      timeline_.select(*drag_anchor_s_, mouse_t);
    } else if (seeking_) {
      clock_.seek(mouse_t);
    }
  }
  if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
    if (drag_anchor_s_) timeline_.select(*drag_anchor_s_, mouse_t);
    if (seeking_) clock_.seek(mouse_t);
    seeking_ = false;
    drag_anchor_s_.reset();
  }
  if (ImGui::IsItemHovered() && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) timeline_.clear_selection();

  ImDrawList* dl = ImGui::GetWindowDrawList();
  const auto X = [&](double t) { return static_cast<float>(timeline_.x_of(t, x0, w)); };
  const ImVec2 a(static_cast<float>(x0), static_cast<float>(y0));
  const ImVec2 b(static_cast<float>(x0 + w), static_cast<float>(y0 + h));
  dl->PushClipRect(a, ImVec2(b.x, b.y + ImGui::GetTextLineHeight() + 2), true);
  dl->AddRectFilled(a, b, rgba(24, 27, 34));
  // The settling part (after the trace's end: no forcing) is shaded and labelled.
  const double trace_end = reader_.meta().trace_end_s;
  if (trace_end < timeline_.view_end_s()) {
    const float xs = std::max(a.x, X(trace_end));
    dl->AddRectFilled(ImVec2(xs, a.y), b, rgba(44, 40, 56));
    dl->AddText(ImVec2(xs + 4, a.y + 2), rgba(170, 160, 200), "settling");
  }
  dl->AddText(ImVec2(a.x + 4, a.y + 2), rgba(150, 170, 190), "trace");
  // Activity: bytes per bin as bars (square-root scale), mean busy fraction as a line.
  if (activity_) {
    const auto& act = *activity_;
    const std::size_t n = act.bytes.size();
    const double run0 = timeline_.begin_s();
    const double run_span = timeline_.end_s() - run0;
    for (std::size_t k = 0; k < n && act.max_bytes > 0; ++k) {
      if (!(act.bytes[k] > 0)) continue;
      const double t0 = run0 + run_span * static_cast<double>(k) / static_cast<double>(n);
      const double t1 = run0 + run_span * static_cast<double>(k + 1) / static_cast<double>(n);
      const float bar = static_cast<float>(std::sqrt(act.bytes[k] / act.max_bytes) * (h - 16));
      dl->AddRectFilled(ImVec2(X(t0), b.y - bar), ImVec2(std::max(X(t1), X(t0) + 1), b.y), rgba(230, 140, 60, 170));
    }
    ImVec2 prev(0, 0);
    bool have_prev = false;
    for (std::size_t k = 0; k < act.busy.size(); ++k) {
      if (!std::isfinite(act.busy[k])) {
        have_prev = false;
        continue;
      }
      const double t = run0 + run_span * (static_cast<double>(k) + 0.5) / static_cast<double>(act.busy.size());
      const ImVec2 p(X(t), static_cast<float>(static_cast<double>(b.y) - act.busy[k] * (h - 16)));
      if (have_prev) dl->AddLine(prev, p, rgba(120, 200, 120), 1.5F);
      prev = p;
      have_prev = true;
    }
  } else {
    // (a run still being simulated gets it when it is complete; on the second line, clear of
    // the "settling" label)
    dl->AddText(ImVec2(a.x + (live_ ? 4 : 60), a.y + (live_ ? 18 : 2)), rgba(150, 150, 150),
                live_ ? "activity: when the simulation is done" : "reading activity...");
  }
  // A run still being simulated: the part without frames yet is shaded, its edge marked.
  if (live_ && live_->frontier_s < timeline_.view_end_s()) {
    const float xf = std::clamp(X(live_->frontier_s), a.x, b.x);
    const ImU32 edge = live_->stopped ? rgba(230, 80, 70) : rgba(250, 200, 60);
    dl->AddRectFilled(ImVec2(xf, a.y), b, rgba(0, 0, 0, 150));
    for (float x = xf + 8; x < b.x + static_cast<float>(h); x += 12) {  // hatching: not there yet
      dl->AddLine(ImVec2(x, a.y), ImVec2(x - static_cast<float>(h), b.y), rgba(90, 90, 100, 120));
    }
    dl->AddLine(ImVec2(xf, a.y), ImVec2(xf, b.y), edge, 2.0F);
    const char* label = live_->stopped ? "simulation stopped" : "simulating...";
    dl->AddText(ImVec2(xf + 4, a.y + 14), edge, label);
    elements_["timeline.frontier"] = {xf, a.y, b.x - xf, b.y - a.y};
  }
  // Legend of the strip.
  const char* legend = "bars: bytes exchanged (sqrt scale)   line: mean busy fraction";
  const ImVec2 lsz = ImGui::CalcTextSize(legend);
  dl->AddText(ImVec2(b.x - lsz.x - 6, a.y + 2), rgba(200, 200, 200), legend);
  elements_["timeline.legend"] = {b.x - lsz.x - 6, a.y + 2, lsz.x, lsz.y};
  // Selected range.
  if (const auto& sel = timeline_.selection()) {
    dl->AddRectFilled(ImVec2(X(sel->first), a.y), ImVec2(X(sel->second), b.y), rgba(90, 150, 255, 60));
    dl->AddRect(ImVec2(X(sel->first), a.y), ImVec2(X(sel->second), b.y), rgba(90, 150, 255, 200));
  }
  // Marked times (where a chosen code location dominates): a band along the top.
  for (const auto& [m0, m1] : timeline_.marks()) {
    dl->AddRectFilled(ImVec2(X(m0), a.y), ImVec2(std::max(X(m1), X(m0) + 1), a.y + 6), rgba(240, 80, 200, 230));
    dl->AddRectFilled(ImVec2(X(m0), a.y + 6), ImVec2(std::max(X(m1), X(m0) + 1), b.y), rgba(240, 80, 200, 40));
  }
  // Ticks and their times under the strip.
  const double span = timeline_.view_end_s() - timeline_.view_begin_s();
  const double step = tick_step(span, w, 90);
  for (double t = std::ceil(timeline_.view_begin_s() / step) * step; t <= timeline_.view_end_s() + 1e-12 * span;
       t += step) {
    const float x = X(t);
    dl->AddLine(ImVec2(x, b.y - 5), ImVec2(x, b.y), rgba(200, 200, 200));
    dl->AddText(ImVec2(x + 2, b.y + 1), rgba(200, 200, 200), format_seconds(t).c_str());
  }
  // Playhead.
  const float xp = X(clock_.time_s());
  dl->AddLine(ImVec2(xp, a.y), ImVec2(xp, b.y), rgba(255, 255, 255), 2.0F);
  dl->AddTriangleFilled(ImVec2(xp - 6, a.y), ImVec2(xp + 6, a.y), ImVec2(xp, a.y + 8), rgba(255, 255, 255));
  dl->PopClipRect();
}

void ViewerUi::build_side() {
  const PixelRect& r = layout_.side;
  ImGui::SetNextWindowPos(ImVec2(static_cast<float>(r.x), static_cast<float>(r.y)));
  ImGui::SetNextWindowSize(ImVec2(static_cast<float>(r.w), static_cast<float>(r.h)));
  if (!ImGui::Begin("Side", nullptr, kEdgeWindow)) {
    ImGui::End();
    return;
  }
  // The left edge is a splitter: drag it to widen or narrow the panel.
  {
    const ImVec2 p = ImGui::GetWindowPos();
    ImGui::SetCursorScreenPos(p);
    ImGui::InvisibleButton("splitter", ImVec2(6, static_cast<float>(r.h)));
    note("side.splitter");
    if (ImGui::IsItemHovered() || ImGui::IsItemActive()) ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
    if (ImGui::IsItemActive()) {
      const ImGuiIO& io = ImGui::GetIO();
      side_w_ = std::clamp(side_w_ - static_cast<double>(io.MouseDelta.x), kMinSideWidth,
                           std::max(kMinSideWidth, 0.6 * static_cast<double>(io.DisplaySize.x)));
    }
    ImGui::SetCursorScreenPos(ImVec2(p.x + 10, p.y + 6));
  }
  build_find();
  build_selection();
  build_legend();
  if (side_hooks_.sections) side_hooks_.sections();
  if (const auto& sel = timeline_.selection()) {
    if (ImGui::CollapsingHeader("Selected range", ImGuiTreeNodeFlags_DefaultOpen)) {
      note("side.range");
      ImGui::Text("%s .. %s  (%s)", format_seconds(sel->first).c_str(), format_seconds(sel->second).c_str(),
                  format_seconds(sel->second - sel->first).c_str());
      if (ImGui::SmallButton("clear")) timeline_.clear_selection();
      note("button.clear-range");
      if (!range_) {
        ImGui::TextUnformatted("computing...");
      } else {
        const auto& st = *range_;
        double busy = 0, comm = 0, idle = 0, none = 0;
        for (const auto& b : st.bodies) {
          busy += b.busy;
          comm += b.communicating;
          idle += b.idle;
          none += b.no_state;
        }
        const double n = std::max<double>(1.0, static_cast<double>(st.bodies.size()));
        ImGui::Text("total: %s in %.0f messages", fmt_bytes(st.bytes).c_str(), st.messages);
        ImGui::Text("mean busy %s  communicating %s  waiting %s  no state %s", fmt_percent(busy / n).c_str(),
                    fmt_percent(comm / n).c_str(), fmt_percent(idle / n).c_str(), fmt_percent(none / n).c_str());
        ImGui::Text("(%zu intervals weighed)", st.frames);
        if (ImGui::BeginTable("range-bodies", 7,
                              ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                  ImGuiTableFlags_SizingFixedFit,
                              ImVec2(0, std::clamp(ImGui::GetContentRegionAvail().y, 120.0F, 400.0F)))) {
          ImGui::TableSetupScrollFreeze(0, 1);
          for (const char* c : {"body", "busy", "comm.", "wait", "no state", "sent", "received"}) ImGui::TableSetupColumn(c);
          ImGui::TableHeadersRow();
          ImGuiListClipper clip;
          clip.Begin(static_cast<int>(st.bodies.size()));
          const auto& bodies = reader_.meta().bodies;
          while (clip.Step()) {
            for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
              const auto& b = st.bodies[static_cast<std::size_t>(i)];
              ImGui::TableNextRow();
              ImGui::TableNextColumn();
              ImGui::TextUnformatted(bodies[static_cast<std::size_t>(i)].name.c_str());
              ImGui::TableNextColumn();
              ImGui::TextUnformatted(fmt_percent(b.busy).c_str());
              ImGui::TableNextColumn();
              ImGui::TextUnformatted(fmt_percent(b.communicating).c_str());
              ImGui::TableNextColumn();
              ImGui::TextUnformatted(fmt_percent(b.idle).c_str());
              ImGui::TableNextColumn();
              ImGui::TextUnformatted(fmt_percent(b.no_state).c_str());
              ImGui::TableNextColumn();
              ImGui::TextUnformatted(fmt_bytes(b.bytes_sent).c_str());
              ImGui::TableNextColumn();
              ImGui::TextUnformatted(fmt_bytes(b.bytes_recv).c_str());
            }
          }
          ImGui::EndTable();
        }
      }
    }
  }
  if (toggles_.help) {
    bool open = true;
    if (ImGui::CollapsingHeader("Keys and mouse", &open, ImGuiTreeNodeFlags_DefaultOpen)) {
      note("side.help");
      for (const HelpSection& s : help_) {
        ImGui::Spacing();
        ImGui::TextColored(ImVec4(0.6F, 0.8F, 1.0F, 1.0F), "%s", s.heading.c_str());
        if (ImGui::BeginTable(s.heading.c_str(), 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
          ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthStretch, 0.35F);
          ImGui::TableSetupColumn("action", ImGuiTableColumnFlags_WidthStretch, 0.65F);
          for (const KeyBinding& k : s.bindings) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextWrapped("%s", k.key);
            ImGui::TableNextColumn();
            ImGui::TextWrapped("%s", k.action);
          }
          ImGui::EndTable();
        }
      }
    }
    if (!open) toggles_.help = false;
  }
  ImGui::End();
  elements_["side"] = r;
}

const std::vector<KeyBinding>& interface_bindings() {
  static const std::vector<KeyBinding> bindings = {
      {"h", "show / hide this help"},
      {"i / u", "side panel (find, selection, legend) / timeline on or off"},
      {"o / y", "companion views / frame rate on or off"},
      {"timeline: click, drag", "seek; Shift+drag selects a range (double-click clears it)"},
      {"timeline: wheel, right drag", "zoom / pan the timeline"},
      {"view panel: wheel, drag", "zoom / pan that panel (not the camera)"},
      {"view panel: click, double-click", "select there (linked to the scene) / whole run again"},
  };
  return bindings;
}

bool ViewerUi::key(int k) {
  switch (k) {
    case 'h': toggle_help(); return true;
    case 'i': toggles_.side = !toggles_.side; return true;
    case 'u': toggles_.timeline = !toggles_.timeline; return true;
    case 'y': toggles_.frame_rate = !toggles_.frame_rate; return true;
    case 'o':
      if (panels_ == nullptr) return false;
      panels_->set_visible(!panels_->visible());
      return true;
    default: return false;
  }
}

void ViewerUi::build_views() {
  const PixelRect& r = layout_.views;
  ImGui::SetNextWindowPos(ImVec2(static_cast<float>(r.x), static_cast<float>(r.y)));
  ImGui::SetNextWindowSize(ImVec2(static_cast<float>(r.w), static_cast<float>(r.h)));
  if (!ImGui::Begin("Views", nullptr, kEdgeWindow | ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
    ImGui::End();
    return;
  }
  elements_["views"] = r;
  const ImGuiIO& io = ImGui::GetIO();
  const ImVec2 origin = ImGui::GetWindowPos();
  // The right edge is a splitter: drag it to widen or narrow the column.
  ImGui::SetCursorScreenPos(ImVec2(origin.x + static_cast<float>(r.w) - 6, origin.y));
  ImGui::InvisibleButton("views-splitter", ImVec2(6, static_cast<float>(r.h)));
  note("views.splitter");
  if (ImGui::IsItemHovered() || ImGui::IsItemActive()) ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
  if (ImGui::IsItemActive()) {
    views_w_ = std::clamp(views_w_ + static_cast<double>(io.MouseDelta.x), kMinViewsWidth,
                          std::max(kMinViewsWidth, 0.6 * static_cast<double>(io.DisplaySize.x)));
  }
  const float pad = 6;
  const float x0 = origin.x + pad;
  const float width = static_cast<float>(r.w) - 2 * pad - 6;
  if (!panels_->ready()) {
    ImGui::SetCursorScreenPos(ImVec2(x0, origin.y + pad));
    ImGui::PushTextWrapPos(x0 + width);
    ImGui::TextUnformatted(panels_->status().c_str());
    ImGui::PopTextWrapPos();
    ImGui::SetNextItemWidth(width);
    const double f = panels_->progress();  // -1: how far is unknown, the text says what was read
    ImGui::ProgressBar(f < 0 ? 0.0F : static_cast<float>(f), ImVec2(width, 0), f < 0 ? "" : nullptr);
    note("views.progress");
    ImGui::End();
    return;
  }
  const std::size_t n = panels_->panel_count();
  const float title_h = ImGui::GetTextLineHeightWithSpacing();
  const float gap = 4;
  const float avail = static_cast<float>(r.h) - 2 * pad;
  const float each = std::max(24.0F, (avail - gap * static_cast<float>(n)) / static_cast<float>(std::max<std::size_t>(n, 1)));
  for (std::size_t i = 0; i < n; ++i) {
    const float top = origin.y + pad + static_cast<float>(i) * (each + gap);
    const std::string& name = panels_->panel_name(i);
    ImGui::SetCursorScreenPos(ImVec2(x0, top));
    ImGui::TextUnformatted(name.c_str());
    if (panels_->zoomed(i)) {
      ImGui::SameLine();
      ImGui::PushID(static_cast<int>(i));
      if (ImGui::SmallButton("whole run")) panels_->reset_zoom(i);
      note("views." + name + ".reset");
      ImGui::PopID();
    }
    const float img_h = std::max(1.0F, each - title_h);
    const ImVec2 p0(x0, top + title_h);
    panels_->set_panel_rect(i, views::Rect{p0.x, p0.y, width, img_h});
    const PanelImage& img = panels_->image(i);
    ImGui::SetCursorScreenPos(p0);
    ImGui::PushID(static_cast<int>(i));
    ImGui::InvisibleButton("panel", ImVec2(width, img_h));
    ImGui::PopID();
    note("views." + name);
    if (img.width > 0 && img.height > 0) {
      void* tex = textures_.get(i, img.bgra.data(), img.width, img.height, img.version);
      ImGui::GetWindowDrawList()->AddImage(
          tex, p0, ImVec2(p0.x + static_cast<float>(img.width), p0.y + static_cast<float>(img.height)));
    } else {
      ImGui::GetWindowDrawList()->AddText(ImVec2(p0.x + 8, p0.y + 8), rgba(160, 160, 160), "drawing...");
    }
    // Wheel zooms this panel (not the camera), drag pans it, a click picks, double-click resets.
    if (ImGui::IsItemHovered() && io.MouseWheel != 0) {
      panels_->zoom(i, io.MousePos.x, io.MousePos.y, io.MouseWheel > 0 ? 1.25 : 1 / 1.25);
    }
    if (ImGui::IsItemActivated()) panel_dragged_ = false;
    if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 3.0F)) {
      panel_dragged_ = true;
      panels_->pan(i, io.MouseDelta.x, io.MouseDelta.y);
    }
    if (ImGui::IsItemHovered() && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
      panels_->reset_zoom(i);
    } else if (ImGui::IsItemDeactivated() && !panel_dragged_) {
      (void)panels_->click(io.MousePos.x, io.MousePos.y);
    }
  }
  ImGui::End();
}

}  // namespace kanoko::scene
