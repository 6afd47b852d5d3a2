#include "src/scene/playback.hpp"

#include "src/base/error.hpp"

#include <cmath>
#include <cstdio>
#include <optional>
#include <osgViewer/View>
#include <utility>

namespace kanoko::scene {

const std::vector<KeyBinding>& playback_bindings() {
  static const std::vector<KeyBinding> bindings = {
      {"Space", "pause / resume playback"},
      {"click on dial", "pause / resume playback"},
      {"click on a body or spring", "select it: highlight and statistics panel (empty space clears)"},
      {"click on a group (host, ...)", "open it into its members (Shift+click: select it, its summed statistics)"},
      {"e", "open the selected group / close the group of the selected body"},
      {"+ / -", "play faster / slower (x2 / x0.5)"},
      {"Left / Right", "step one stored frame back / forward (pauses)"},
      {"r", "reverse the playing direction"},
      {"Home / 0", "restart from the beginning of the run"},
      {"c", "camera back to the home view"},
      {"l / g", "body labels / ground grid and axes on or off"},
      {"k", "spring colours: tension, traffic of the current interval, off"},
      {"x", "communication flashes between the bodies talking in the current interval"},
      {"t / T", "longer / shorter trails (off below 1/40 of the run)"},
      {"p", "screenshot: kanoko-RUN-NNN.png in the current folder"},
      {"[ / ]", "smaller / larger bodies"},
      {"paused panel (above the dial)", "click - / + and on/off: speed, view, force parameters (re-simulates), save"},
      {"left drag / middle drag / right drag", "rotate / pan / zoom the camera"},
      {"Esc", "quit"},
  };
  return bindings;
}

bool toggle_selected_group(TrajectoryScene& scene) {
  const auto sel = scene.selection();
  if (!sel) return false;
  if (sel->kind == Pick::Kind::group) return scene.open_group(sel->index);
  if (sel->kind != Pick::Kind::body) return false;
  return scene.close_group(scene.cut().item_of_body(sel->index));
}

PlaybackHandler::PlaybackHandler(ReplayClock& clock, TrajectoryScene& scene,
                                 std::vector<double> frame_times_s)
    : clock_(clock), scene_(scene), frame_times_s_(std::move(frame_times_s)) {}

bool PlaybackHandler::handle(const osgGA::GUIEventAdapter& ea, osgGA::GUIActionAdapter& aa) {
  using GEA = osgGA::GUIEventAdapter;
  switch (ea.getEventType()) {
    case GEA::RESIZE: {
      // The HUD fills the camera's viewport: the window, or what the viewer's interface leaves.
      const auto* view = dynamic_cast<osgViewer::View*>(&aa);
      const osg::Viewport* vp = view != nullptr ? view->getCamera()->getViewport() : nullptr;
      if (vp != nullptr && vp->width() > 0 && vp->height() > 0) {
        scene_.set_window_size(static_cast<int>(vp->width()), static_cast<int>(vp->height()));
      } else if (ea.getWindowWidth() > 0 && ea.getWindowHeight() > 0) {
        scene_.set_window_size(ea.getWindowWidth(), ea.getWindowHeight());
      }
      return false;
    }
    case GEA::KEYDOWN:
      switch (ea.getKey()) {
        case GEA::KEY_Space:
          clock_.toggle_pause();
          return true;
        case '+':
        case '=':
        case GEA::KEY_KP_Add:
          clock_.faster();
          return true;
        case '-':
        case '_':
        case GEA::KEY_KP_Subtract:
          clock_.slower();
          return true;
        case GEA::KEY_Left:
        case GEA::KEY_KP_Left:
          clock_.step_frames(-1, frame_times_s_);
          return true;
        case GEA::KEY_Right:
        case GEA::KEY_KP_Right:
          clock_.step_frames(+1, frame_times_s_);
          return true;
        case 'r':
        case 'R':
          clock_.reverse();
          return true;
        case GEA::KEY_Home:
        case GEA::KEY_KP_Home:
        case '0':
          clock_.restart();
          return true;
        case 'l':
        case 'g':
        case 'k':
        case 'x':
        case 't':
        case 'T':
        case '[':
        case ']': {
          VisualOptions v = scene_.visual();
          const double run_s = clock_.end_s() - clock_.begin_s();
          if (ea.getKey() == 'l') v.labels = !v.labels;
          if (ea.getKey() == 'g') v.grid = !v.grid;
          if (ea.getKey() == 'k') v.spring_colours = next_spring_colours(v.spring_colours);
          if (ea.getKey() == 'x') v.flashes = !v.flashes;
          if (ea.getKey() == 't') v.trail_s = longer_trail(v.trail_s, run_s);
          if (ea.getKey() == 'T') v.trail_s = shorter_trail(v.trail_s, run_s);
          if (ea.getKey() == '[') v.body_scale /= 1.25;
          if (ea.getKey() == ']') v.body_scale *= 1.25;
          scene_.set_visual(v);
          return true;
        }
        case 'e':
          return toggle_selected_group(scene_);
        case 'c':
          if (auto* view = dynamic_cast<osgViewer::View*>(&aa); view != nullptr) view->home();
          return true;
        default:
          return false;
      }
    case GEA::PUSH: {
      // A press the interface took (over its windows: ImGuiOverlay's handler runs first) is no pick.
      if (ea.getButton() != GEA::LEFT_MOUSE_BUTTON || ea.getHandled()) return false;
      // Normalised coordinates are y-up whatever the event source's orientation.
      const double x = 0.5 * (static_cast<double>(ea.getXnormalized()) + 1.0) * scene_.width_px();
      const double y = 0.5 * (static_cast<double>(ea.getYnormalized()) + 1.0) * scene_.height_px();
      if (panel_ != nullptr && panel_->click(x, y)) return true;
      press_x_px_ = x;
      press_y_px_ = y;
      pressed_ = true;
      if (!dial_contains(scene_.dial(), x, y)) return false;  // the camera may start a drag
      pressed_ = false;
      clock_.toggle_pause();
      return true;
    }
    case GEA::RELEASE: {
      if (ea.getButton() != GEA::LEFT_MOUSE_BUTTON || !pressed_) return false;
      pressed_ = false;
      const double x = 0.5 * (static_cast<double>(ea.getXnormalized()) + 1.0) * scene_.width_px();
      const double y = 0.5 * (static_cast<double>(ea.getYnormalized()) + 1.0) * scene_.height_px();
      // A drag moves the camera; only a click (press and release in one place) picks.
      if (std::hypot(x - press_x_px_, y - press_y_px_) > kClickSlop_px) return false;
      const auto* view = dynamic_cast<osgViewer::View*>(&aa);
      if (view == nullptr) return false;
      const osg::Camera* camera = view->getCamera();
      const auto hit = scene_.pick_at(camera->getViewMatrix(), camera->getProjectionMatrix(), ea.getXnormalized(),
                                       ea.getYnormalized());
      // A click opens a group into its members; with Shift it selects the group instead.
      const bool shift = (ea.getModKeyMask() & (GEA::MODKEY_LEFT_SHIFT | GEA::MODKEY_RIGHT_SHIFT)) != 0;
      if (hit && hit->kind == Pick::Kind::group && !shift) {
        scene_.open_group(hit->index);
      } else {
        scene_.select(hit);
      }
      return false;
    }
    default:
      return false;
  }
}

void PlaybackHandler::getUsage(osg::ApplicationUsage& usage) const {
  for (const auto& b : playback_bindings()) usage.addKeyboardMouseBinding(b.key, b.action);
}

ReplayUpdateCallback::ReplayUpdateCallback(ReplayClock& clock, TrajectoryScene& scene)
    : clock_(clock), scene_(scene) {}

void ReplayUpdateCallback::follow_clock() {
  if (clock_.time_s() == scene_.time_s()) return;
  try {
    scene_.set_time(clock_.time_s());
  } catch (const InputError& e) {
    // A damaged block (checksum, times or values): play what comes before it.
    const trajectory::Reader& run = scene_.reader();
    const std::optional<std::size_t> good = run.last_readable_frame_at_or_before(clock_.time_s());
    if (!good) throw;  // nothing before the damage either
    const std::size_t k = *good;
    clock_.limit_end(run.frame_time(k));
    scene_.set_time(clock_.time_s());
    char at[64];
    std::snprintf(at, sizeof at, "%.6g s", run.frame_time(k));
    damage_ = std::string("the run is damaged after ") + at + ": playback ends there (re-simulate to repair it)";
    std::fprintf(stderr, "kanoko view: %s\n", e.what());
  }
}

void ReplayUpdateCallback::operator()(osg::Node* node, osg::NodeVisitor* nv) {
  if (resim_ != nullptr) {
    if (const trajectory::Reader* run = resim_->take_finished(); run != nullptr) {
      scene_.set_reader(*run);
      for (const auto& follow : followers_) follow(*run);
    }
  }
  follow_clock();
  // The line under the 3-D view says what the interface's timeline does not: a re-simulation's
  // progress, a save, damaged frames. Text layout is redone on every setText, so only when the
  // line changes.
  std::string status;
  const auto add = [&status](const std::string& part) {
    if (part.empty()) return;
    if (!status.empty()) status += "   ";
    status += part;
  };
  if (resim_ != nullptr) add(resim_->status());
  if (panel_ != nullptr) add(panel_->save_message());
  add(live_);
  add(damage_);
  if (status != status_) {
    scene_.set_status(status);
    status_ = std::move(status);
  }
  if (panel_ != nullptr) panel_->refresh();
  traverse(node, nv);
}

}  // namespace kanoko::scene
