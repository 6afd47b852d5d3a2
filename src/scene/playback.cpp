#include "src/scene/playback.hpp"

#include <cstdio>
#include <osgViewer/View>
#include <utility>

namespace kanoko::scene {

const std::vector<KeyBinding>& playback_bindings() {
  static const std::vector<KeyBinding> bindings = {
      {"Space", "pause / resume playback"},
      {"click on dial", "pause / resume playback"},
      {"+ / -", "play faster / slower (x2 / x0.5)"},
      {"Left / Right", "step one stored frame back / forward (pauses)"},
      {"r", "reverse the playing direction"},
      {"Home / 0", "restart from the beginning of the run"},
      {"c", "camera back to the home view"},
      {"left drag / middle drag / right drag", "rotate / pan / zoom the camera"},
      {"h", "show / hide the help screen"},
      {"Esc", "quit"},
  };
  return bindings;
}

std::string playback_status(const ReplayClock& clock) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s  %.3g s/s%s   h: help", clock.paused() ? "paused " : "playing",
                clock.speed(), clock.reversed() ? "  reverse" : "");
  return buf;
}

PlaybackHandler::PlaybackHandler(ReplayClock& clock, TrajectoryScene& scene,
                                 std::vector<double> frame_times_s)
    : clock_(clock), scene_(scene), frame_times_s_(std::move(frame_times_s)) {}

bool PlaybackHandler::handle(const osgGA::GUIEventAdapter& ea, osgGA::GUIActionAdapter& aa) {
  using GEA = osgGA::GUIEventAdapter;
  switch (ea.getEventType()) {
    case GEA::RESIZE:
      if (ea.getWindowWidth() > 0 && ea.getWindowHeight() > 0) {
        scene_.set_window_size(ea.getWindowWidth(), ea.getWindowHeight());
      }
      return false;
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
        case 'c':
          if (auto* view = dynamic_cast<osgViewer::View*>(&aa); view != nullptr) view->home();
          return true;
        default:
          return false;
      }
    case GEA::PUSH: {
      if (ea.getButton() != GEA::LEFT_MOUSE_BUTTON) return false;
      // Normalised coordinates are y-up whatever the event source's orientation.
      const double x = 0.5 * (static_cast<double>(ea.getXnormalized()) + 1.0) * scene_.width_px();
      const double y = 0.5 * (static_cast<double>(ea.getYnormalized()) + 1.0) * scene_.height_px();
      if (!dial_contains(scene_.dial(), x, y)) return false;
      clock_.toggle_pause();
      return true;
    }
    default:
      return false;
  }
}

void PlaybackHandler::getUsage(osg::ApplicationUsage& usage) const {
  for (const auto& b : playback_bindings()) usage.addKeyboardMouseBinding(b.key, b.action);
}

ReplayUpdateCallback::ReplayUpdateCallback(const ReplayClock& clock, TrajectoryScene& scene)
    : clock_(clock), scene_(scene) {}

void ReplayUpdateCallback::operator()(osg::Node* node, osg::NodeVisitor* nv) {
  if (clock_.time_s() != scene_.time_s()) scene_.set_time(clock_.time_s());
  // Text layout is redone on every setText, so only when the line changes.
  std::string status = playback_status(clock_);
  if (status != status_) {
    scene_.set_status(status);
    status_ = std::move(status);
  }
  traverse(node, nv);
}

}  // namespace kanoko::scene
