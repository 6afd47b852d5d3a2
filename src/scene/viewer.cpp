#include "src/scene/viewer.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <fstream>
#include <functional>
#include <sstream>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <osgViewer/GraphicsWindow>
#include <osgViewer/Viewer>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "src/base/atomic_file.hpp"
#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"
#include "src/base/json.hpp"
#include "src/base/progress.hpp"
#include "src/scene/audio_link.hpp"
#include "src/scene/imgui_overlay.hpp"
#include "src/scene/inspect.hpp"
#include "src/scene/layers/groups_layer.hpp"
#include "src/scene/locations_panel.hpp"
#include "src/scene/mapping_visual.hpp"
#include "src/scene/navigation.hpp"
#include "src/scene/offscreen.hpp"
#include "src/scene/playback.hpp"
#include "src/scene/replay_clock.hpp"
#include "src/scene/resimulator.hpp"
#include "src/scene/scene.hpp"
#include "src/scene/model/frame_stats.hpp"
#include "src/scene/model/session.hpp"
#include "src/scene/viewer_ui.hpp"

namespace kanoko::scene {

namespace {

// Frames are paced to at most this rate; llvmpipe rarely gets there, a GPU would spin without it.
constexpr std::chrono::milliseconds kMinFramePeriod{16};

std::string no_display_message(const std::string& what) {
  return what +
         "; 'kanoko view' needs a window. To get a picture without a display, use "
         "'kanoko render RUN.kntj -o out.png' (or run the viewer under xvfb-run)";
}

/// Key `p`: asks the main loop for a screenshot of the next frame.
class ScreenshotKey : public osgGA::GUIEventHandler {
 public:
  bool handle(const osgGA::GUIEventAdapter& ea, osgGA::GUIActionAdapter& /*aa*/) override {
    if (ea.getEventType() != osgGA::GUIEventAdapter::KEYDOWN || ea.getKey() != 'p') return false;
    requested = true;
    return true;
  }
  bool requested = false;
};

/// Key `h`: the help panel of the interface.
class HelpKey : public osgGA::GUIEventHandler {
 public:
  explicit HelpKey(ViewerUi& ui) : ui_(ui) {}
  bool handle(const osgGA::GUIEventAdapter& ea, osgGA::GUIActionAdapter& /*aa*/) override {
    if (ea.getEventType() != osgGA::GUIEventAdapter::KEYDOWN) return false;
    return ui_.key(ea.getKey());
  }

 private:
  ViewerUi& ui_;
};

/// The OSG key code of a script key name (script_key_known()).
int script_key_code(const std::string& name) {
  using GEA = osgGA::GUIEventAdapter;
  static const std::map<std::string, int> named = {
      {"space", GEA::KEY_Space}, {"left", GEA::KEY_Left},   {"right", GEA::KEY_Right}, {"up", GEA::KEY_Up},
      {"down", GEA::KEY_Down},   {"home", GEA::KEY_Home},   {"end", GEA::KEY_End},     {"esc", GEA::KEY_Escape},
      {"return", GEA::KEY_Return}, {"tab", GEA::KEY_Tab},   {"f1", GEA::KEY_F1},       {"f2", GEA::KEY_F2},
      {"f3", GEA::KEY_F3},       {"f4", GEA::KEY_F4},       {"f5", GEA::KEY_F5},       {"f6", GEA::KEY_F6},
      {"f7", GEA::KEY_F7},       {"f8", GEA::KEY_F8},       {"f9", GEA::KEY_F9}};
  if (name.size() == 1) return static_cast<unsigned char>(name[0]);
  const auto it = named.find(name);
  return it == named.end() ? -1 : it->second;
}

std::string rect_json(const PixelRect& r) {
  std::ostringstream o;
  o << "{\"x\": " << r.x << ", \"y\": " << r.y << ", \"w\": " << r.w << ", \"h\": " << r.h << "}";
  return o.str();
}

/// What a script acts on.
struct ScriptTarget {
  osgViewer::Viewer& viewer;
  osgViewer::GraphicsWindow& window;
  ViewerUi& ui;
  TrajectoryScene& scene;
  ReplayClock& clock;
  CaptureCallback& capture;
  const trajectory::Follower* follower;  ///< null for a whole run
};

const char* follower_state_name(trajectory::Follower::State s) {
  switch (s) {
    case trajectory::Follower::State::growing: return "growing";
    case trajectory::Follower::State::complete: return "complete";
    case trajectory::Follower::State::stalled: return "stalled";
    case trajectory::Follower::State::damaged: return "damaged";
  }
  return "?";
}

/// Runs a --script: one step before each frame. Input goes through the window's own event
/// queue, so it takes the path real input takes (the interface, then the 3-D handlers).
class ScriptRunner {
 public:
  ScriptRunner(std::vector<ScriptCommand> commands, std::string name)
      : commands_(std::move(commands)), name_(std::move(name)) {}

  /// False once the script has ended (quit or its last command done).
  bool step(ScriptTarget& t) {
    if (pending_shot_) finish_screenshot(t);
    while (true) {
      if (!micro_.empty()) {
        micro_.front()(t);
        micro_.pop_front();
        return true;
      }
      if (frames_left_ > 0) {
        --frames_left_;
        return true;
      }
      if (std::chrono::steady_clock::now() < wait_until_) return true;
      if (run_wait_ && !run_reached(*run_wait_, t)) return true;
      run_wait_.reset();
      if (next_ >= commands_.size()) return false;
      const ScriptCommand& c = commands_[next_++];
      if (!start(c, t)) return false;
    }
  }

 private:
  [[noreturn]] void fail(const ScriptCommand& c, const std::string& message) const {
    throw RunError("script " + name_ + ":" + std::to_string(c.line) + ": " + message);
  }

  /// wait-run: true once the run has frames up to the command's time (or is whole); fails the
  /// script when the run stopped growing before.
  bool run_reached(const ScriptCommand& c, const ScriptTarget& t) const {
    const trajectory::Follower* f = t.follower;
    if (f == nullptr || f->complete()) return true;
    if (c.name != "end" && f->frontier_s() >= c.v[0]) return true;
    if (f->state() == trajectory::Follower::State::stalled || f->state() == trajectory::Follower::State::damaged) {
      fail(c, "wait-run: " + f->status());
    }
    return false;
  }

  PixelRect element(const ScriptCommand& c, const ScriptTarget& t) const {
    const auto& el = t.ui.elements();
    const auto it = el.find(c.name);
    if (it == el.end() || it->second.w <= 0 || it->second.h <= 0) {
      std::string names;
      for (const auto& [n, r] : el) names += (names.empty() ? "" : ", ") + n;
      fail(c, "no element '" + c.name + "' on screen (there are: " + names + ")");
    }
    return it->second;
  }

  /// Window pixel (origin top-left) of world point `p`, which a click on `what` aims at.
  std::pair<double, double> world_pixel(const ScriptCommand& c, const ScriptTarget& t, const Eigen::Vector3d& p,
                                        const std::string& what) const {
    const osg::Camera* cam = t.viewer.getCamera();
    const osg::Vec3d w = osg::Vec3d(p.x(), p.y(), p.z()) * cam->getViewMatrix() * cam->getProjectionMatrix() *
                         cam->getViewport()->computeWindowMatrix();
    const double height = t.window.getTraits()->height;
    if (!(w.z() > 0 && w.z() < 1)) fail(c, what + " '" + c.name + "' is behind the camera");
    return {w.x(), height - w.y()};
  }

  /// Window pixel (origin top-left) of body `name` at the current time.
  std::pair<double, double> body_pixel(const ScriptCommand& c, const ScriptTarget& t) const {
    const std::size_t i = find_body(t.scene.reader(), c.name, "click body");
    return world_pixel(c, t, t.scene.positions().col(static_cast<Eigen::Index>(i)), "body");
  }

  /// Window pixel (origin top-left) of the closed group `name` (its centroid) at the current time.
  std::pair<double, double> group_pixel(const ScriptCommand& c, const ScriptTarget& t) const {
    const auto item = t.scene.item_named(c.name);
    if (!item || t.scene.cut().items()[*item].level == 0) {
      std::string some;
      const auto& groups = t.scene.groups();
      for (std::size_t k = 0; k < groups.count() && k < 4; ++k) {
        const auto it = t.scene.cut().items()[groups.item(k)];
        some += (k == 0 ? "" : ", ") + t.scene.hierarchy().group_name(it.level, it.group);
      }
      fail(c, "no closed group named '" + c.name + "' is drawn (" + std::to_string(t.scene.groups().count()) +
                  " groups" + (some.empty() ? "" : ": " + some + (t.scene.groups().count() > 4 ? ", ..." : "")) + ")");
    }
    return world_pixel(c, t, t.scene.item_position(*item), "group");
  }

  void push_click(double x, double y, bool shift_mask = false) {
    const auto fx = static_cast<float>(x);
    const auto fy = static_cast<float>(y);
    micro_.emplace_back([=](ScriptTarget& t) { t.window.getEventQueue()->mouseMotion(fx, fy); });
    micro_.emplace_back([=](ScriptTarget& t) {
      if (shift_mask) t.window.getEventQueue()->getCurrentEventState()->setModKeyMask(osgGA::GUIEventAdapter::MODKEY_LEFT_SHIFT);
      t.window.getEventQueue()->mouseButtonPress(fx, fy, 1);
    });
  }
  void push_release(double x, double y) {
    const auto fx = static_cast<float>(x);
    const auto fy = static_cast<float>(y);
    micro_.emplace_back([=](ScriptTarget& t) {
      t.window.getEventQueue()->mouseButtonRelease(fx, fy, 1);
      t.window.getEventQueue()->getCurrentEventState()->setModKeyMask(0);
    });
    settle();
  }
  void settle() {
    for (int k = 0; k < 3; ++k) micro_.emplace_back([](ScriptTarget&) {});
  }

  bool start(const ScriptCommand& c, ScriptTarget& t) {
    using Op = ScriptCommand::Op;
    switch (c.op) {
      case Op::wait:
        wait_until_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                             std::chrono::duration<double>(c.v[0]));
        return true;
      case Op::wait_run:
        run_wait_ = c;
        return true;
      case Op::frames:
        frames_left_ = static_cast<std::uint64_t>(c.v[0]);
        return true;
      case Op::key: {
        const int key = script_key_code(c.name);
        micro_.emplace_back([key](ScriptTarget& s) { s.window.getEventQueue()->keyPress(key); });
        micro_.emplace_back([key](ScriptTarget& s) { s.window.getEventQueue()->keyRelease(key); });
        settle();
        return true;
      }
      case Op::type:
        for (const char ch : c.name) {
          const int key = static_cast<unsigned char>(ch);
          micro_.emplace_back([key](ScriptTarget& s) { s.window.getEventQueue()->keyPress(key); });
          micro_.emplace_back([key](ScriptTarget& s) { s.window.getEventQueue()->keyRelease(key); });
        }
        settle();
        return true;
      case Op::click: {
        const PixelRect r = element(c, t);
        const double x = r.x + c.v[0] * (r.w - 1);
        const double y = r.y + c.v[1] * (r.h - 1);
        push_click(x, y);
        push_release(x, y);
        return true;
      }
      case Op::click_body: {
        const auto [x, y] = body_pixel(c, t);
        push_click(x, y);
        push_release(x, y);
        return true;
      }
      case Op::click_group: {
        const auto [x, y] = group_pixel(c, t);
        push_click(x, y, c.shift);
        push_release(x, y);
        return true;
      }
      case Op::click_at:
        push_click(c.v[0], c.v[1]);
        push_release(c.v[0], c.v[1]);
        return true;
      case Op::drag: {
        const PixelRect r = element(c, t);
        const double x0 = r.x + c.v[0] * (r.w - 1);
        const double y0 = r.y + c.v[1] * (r.h - 1);
        const double x1 = r.x + c.v[2] * (r.w - 1);
        const double y1 = r.y + c.v[3] * (r.h - 1);
        push_click(x0, y0, c.shift);
        for (int k = 1; k <= 4; ++k) {
          const auto fx = static_cast<float>(x0 + (x1 - x0) * k / 4.0);
          const auto fy = static_cast<float>(y0 + (y1 - y0) * k / 4.0);
          micro_.emplace_back([=](ScriptTarget& s) { s.window.getEventQueue()->mouseMotion(fx, fy); });
        }
        push_release(x1, y1);
        return true;
      }
      case Op::scroll: {
        const PixelRect r = element(c, t);
        const auto fx = static_cast<float>(r.x + 0.5 * r.w);
        const auto fy = static_cast<float>(r.y + 0.5 * r.h);
        micro_.emplace_back([=](ScriptTarget& s) { s.window.getEventQueue()->mouseMotion(fx, fy); });
        const int n = static_cast<int>(c.v[0]);
        for (int k = 0; k < std::abs(n); ++k) {
          micro_.emplace_back([n](ScriptTarget& s) {
            s.window.getEventQueue()->mouseScroll(n > 0 ? osgGA::GUIEventAdapter::SCROLL_UP
                                                        : osgGA::GUIEventAdapter::SCROLL_DOWN);
          });
        }
        settle();
        return true;
      }
      case Op::seek:
        t.clock.seek(c.v[0]);
        settle();
        return true;
      case Op::select:
        t.ui.timeline().select(c.v[0], c.v[1]);
        settle();
        return true;
      case Op::screenshot:
        check_image_output(c.name);
        t.capture.arm();
        pending_shot_ = c.name;
        frames_left_ = 1;
        return true;
      case Op::layout:
        write_layout(c.name, t);
        return true;
      case Op::inspect: {
        const std::string text = t.scene.inspect_text();
        if (text.empty()) fail(c, "inspect: nothing is selected (click body NAME first)");
        write_file_atomically(c.name, text + '\n');
        return true;
      }
      case Op::quit:
        return false;
    }
    return true;
  }

  void finish_screenshot(ScriptTarget& t) {
    const std::string path = *pending_shot_;
    pending_shot_.reset();
    if (t.capture.image() == nullptr || t.capture.image()->data() == nullptr) {
      throw RunError("script " + name_ + ": no frame was drawn for the screenshot " + path);
    }
    write_image_atomically(*t.capture.image(), path);
  }

  void write_layout(const std::string& path, const ScriptTarget& t) const {
    std::ostringstream o;
    o.precision(12);
    const auto* traits = t.window.getTraits();
    o << "{\n  \"window\": {\"w\": " << traits->width << ", \"h\": " << traits->height << "},\n";
    o << "  \"viewport\": " << rect_json(t.ui.layout().viewport) << ",\n  \"windows\": {";
    bool first = true;
    for (const auto& [name, r] : t.ui.windows()) {
      o << (first ? "" : ", ") << json_string(name) << ": " << rect_json(r);
      first = false;
    }
    o << "},\n  \"elements\": {";
    first = true;
    for (const auto& [name, r] : t.ui.elements()) {
      o << (first ? "" : ",") << "\n    " << json_string(name) << ": " << rect_json(r);
      first = false;
    }
    o << "\n  },\n";
    o << "  \"time_s\": " << t.clock.time_s() << ", \"paused\": " << (t.clock.paused() ? "true" : "false")
      << ", \"loop\": " << (t.clock.loop() ? "true" : "false") << ", \"reversed\": " << (t.clock.reversed() ? "true" : "false")
      << ", \"speed\": " << t.clock.speed() << ",\n";
    // A run still being simulated: how far its frames go, a seek waiting for them.
    o << "  \"run\": {\"end_s\": " << t.clock.end_s() << ", \"frontier_s\": " << t.clock.frontier_s()
      << ", \"waiting\": " << (t.clock.waiting() ? "true" : "false") << ", \"pending_seek_s\": ";
    if (t.clock.pending_seek()) {
      o << *t.clock.pending_seek();
    } else {
      o << "null";
    }
    o << ", \"frames\": " << t.scene.reader().frame_count() << ", \"state\": "
      << json_string(t.follower == nullptr ? "whole" : follower_state_name(t.follower->state())) << "},\n";
    const auto& tl = t.ui.timeline();
    o << "  \"timeline\": {\"view\": [" << tl.view_begin_s() << ", " << tl.view_end_s() << "], \"selection\": ";
    if (tl.selection()) {
      o << "[" << tl.selection()->first << ", " << tl.selection()->second << "]";
    } else {
      o << "null";
    }
    o << "},\n  \"help\": " << (t.ui.toggles().help ? "true" : "false") << ",\n";
    o << "  \"filter\": " << json_string(t.scene.body_filter() == BodyFilter::none        ? "none"
                                         : t.scene.body_filter() == BodyFilter::highlight ? "highlight"
                                                                                          : "isolate");
    std::size_t shown = 0;
    for (std::size_t i = 0; i < t.scene.reader().meta().body_count(); ++i) shown += t.scene.body_shown(i) ? 1U : 0U;
    o << ", \"bodies_shown\": " << shown << ",\n";
    o << "  \"selected_body\": ";
    const auto& sel = t.scene.selection();
    if (sel && sel->kind == Pick::Kind::body) {
      o << json_string(t.scene.reader().meta().bodies[sel->index].name);
    } else {
      o << "null";
    }
    // The code locations panel's highlight and timeline marks, and the panels' texts: JSON
    // items, each list joined with commas.
    std::vector<std::string> lit, marks, texts;
    for (std::size_t i = 0; i < t.scene.reader().meta().body_count(); ++i) {
      if (t.scene.body_found(i)) lit.push_back(json_string(t.scene.reader().meta().bodies[i].name));
    }
    for (const auto& [a, b] : tl.marks()) {
      std::ostringstream m;
      m.precision(12);
      m << "[" << a << ", " << b << "]";
      marks.push_back(m.str());
    }
    for (const auto& [name, text] : t.ui.texts()) texts.push_back("\n    " + json_string(name) + ": " + json_string(text));
    const auto joined = [](const std::vector<std::string>& items) {
      std::string j;
      for (const std::string& item : items) j += (j.empty() ? "" : ",") + item;
      return j;
    };
    // The hierarchy: its levels, and what is drawn (the closed groups, the selected group).
    const trajectory::Hierarchy& h = t.scene.hierarchy();
    const trajectory::Cut& cut = t.scene.cut();
    std::vector<std::string> levels, groups;
    for (std::size_t l = 0; l < h.level_count(); ++l) {
      levels.push_back("{\"name\": " + json_string(h.level_name(l)) + ", \"groups\": " + std::to_string(h.group_count(l)) + "}");
    }
    for (std::size_t k = 0; k < t.scene.groups().count(); ++k) {
      const auto it = cut.items()[t.scene.groups().item(k)];
      groups.push_back(json_string(h.group_name(it.level, it.group)));
    }
    o << ",\n  \"hierarchy\": {\"levels\": [" << joined(levels) << "], \"items\": " << cut.items().size()
      << ", \"groups\": [" << joined(groups) << "], \"selected_group\": ";
    if (sel && sel->kind == Pick::Kind::group) {
      const auto it = cut.items()[sel->index];
      o << json_string(h.group_name(it.level, it.group));
    } else {
      o << "null";
    }
    o << "}";
    o << ",\n  \"highlighted\": [" << joined(lit) << "],\n  \"marks\": [" << joined(marks) << "],\n  \"texts\": {"
      << joined(texts) << "\n  }\n}\n";
    write_file_atomically(path, o.str());
  }

  std::vector<ScriptCommand> commands_;
  std::string name_;
  std::size_t next_ = 0;
  std::deque<std::function<void(ScriptTarget&)>> micro_;
  std::uint64_t frames_left_ = 0;
  std::chrono::steady_clock::time_point wait_until_{};
  std::optional<std::string> pending_shot_;
  std::optional<ScriptCommand> run_wait_;  ///< a wait-run in progress
};

/// Opens the help on the first run: true (and the marker written) when the marker is absent.
bool first_run() {
  const std::filesystem::path marker = first_run_marker();
  if (marker.empty()) return false;
  std::error_code ec;
  if (std::filesystem::exists(marker, ec) || ec) return false;
  try {
    std::filesystem::create_directories(marker.parent_path(), ec);
    write_file_atomically(marker, "The Kanoko viewer showed its help here once.\n");
  } catch (const std::exception&) {
    // A read-only home: the help opens each time, which is harmless.
  }
  return true;
}

Session::Matrix to_array(const osg::Matrixd& m) {
  Session::Matrix a{};
  for (int k = 0; k < 16; ++k) a[static_cast<std::size_t>(k)] = m.ptr()[k];
  return a;
}
osg::Matrixd to_matrix(const Session::Matrix& a) {
  osg::Matrixd m;
  m.set(a.data());
  return m;
}

/// Reads the session at `path`, or none (missing, damaged, another run's, newer: said why).
std::optional<Session> load_session(const std::filesystem::path& path, std::uint64_t run_hash) {
  std::error_code ec;
  if (path.empty() || !std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  try {
    if (std::filesystem::file_size(path) > (1U << 20)) throw InputError(FileLoc(path.string()), "a session is at most 1 MiB");
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    Session s = parse_session(text.str(), path.string());
    if (s.run_hash != run_hash) {
      std::fprintf(stderr, "kanoko view: %s is the session of another run: opening with the default layout\n",
                   path.string().c_str());
      return std::nullopt;
    }
    return s;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kanoko view: %s; opening with the default layout\n", e.what());
    return std::nullopt;
  }
}

}  // namespace

std::filesystem::path first_run_marker() {
  const std::filesystem::path folder = config_folder();
  return folder.empty() ? folder : folder / "help-shown";
}

std::filesystem::path next_screenshot_path(const std::filesystem::path& folder, const std::string& stem) {
  for (int k = 1; k < 100000; ++k) {
    char number[16];
    std::snprintf(number, sizeof number, "%03d", k);
    const std::filesystem::path candidate = folder / (stem + "-" + number + ".png");
    std::error_code ec;
    if (!std::filesystem::exists(candidate, ec) && !ec) return candidate;
  }
  throw RunError("no free screenshot name " + stem + "-NNN.png in " + folder.string());
}

void follow_resimulated_runs(ReplayUpdateCallback& replay, AudioLink* audio, ViewPanels* panels) {
  if (audio != nullptr) replay.add_run_follower([audio](const trajectory::Reader& run) { audio->set_run(run); });
  if (panels != nullptr) replay.add_run_follower([panels](const trajectory::Reader& run) { panels->set_run(run); });
}

void require_display() {
  if (!display_variable_set()) throw RunError(no_display_message("no display: DISPLAY is not set"));
}

void run_viewer(const trajectory::Reader& reader, const ViewOptions& options) {
  require_display();
  if (!options.screenshot.empty()) check_image_output(options.screenshot);

  // The window fits the screen it opens on.
  unsigned screen_w = 0;
  unsigned screen_h = 0;
  if (osg::GraphicsContext::WindowingSystemInterface* wsi = osg::GraphicsContext::getWindowingSystemInterface();
      wsi != nullptr) {
    osg::GraphicsContext::ScreenIdentifier screen;
    screen.readDISPLAY();
    screen.setUndefinedScreenDetailsToDefaultScreen();
    wsi->getScreenResolution(screen, screen_w, screen_h);
  }
  WindowPlacement place;
  if (options.size_given) {
    place = fit_window(options.size.width_px, options.size.height_px, static_cast<int>(screen_w) + 32,
                       static_cast<int>(screen_h) + 80);
  } else {
    place = fit_window(1280, 800, static_cast<int>(screen_w), static_cast<int>(screen_h));
  }
  if (options.size_given && (place.width != options.size.width_px || place.height != options.size.height_px)) {
    std::fprintf(stderr, "kanoko view: the screen is %ux%u: the window opens at %dx%d, not %dx%d\n", screen_w,
                 screen_h, place.width, place.height, options.size.width_px, options.size.height_px);
  }
  const int w = place.width;
  const int h = place.height;
  // The command's re-simulation driver (if any) outlives the scene, so the runs it hands over do.
  // A run still being simulated is followed between frames (polls refresh the reader: nothing
  // else may read it on another thread meanwhile, hence no re-simulation and no sound).
  trajectory::Follower* follow = options.follower != nullptr && !options.follower->complete() ? options.follower : nullptr;
  Resimulator* resim = follow != nullptr ? nullptr : options.resimulator;
  TrajectoryScene scene(reader, w, h);
  if (options.mapping) scene.use_mapping_formulas(*options.mapping, options.run_name);
  VisualOptions visual = options.visual;
  visual.grid = true;  // orientation while flying around; renders stay uncluttered
  scene.set_visual(visual);
  // The timeline spans the whole run, the planned one while it is simulated.
  const double run_end = follow != nullptr ? follow->planned_end_s() : reader.end_time();
  ReplayClock clock(reader.begin_time(), run_end,
                    options.speed.value_or(ReplayClock::default_speed(reader.begin_time(), run_end)));
  if (follow != nullptr) clock.set_frontier(follow->frontier_s());
  std::vector<double> frame_times(reader.frame_count());
  for (std::size_t k = 0; k < frame_times.size(); ++k) frame_times[k] = reader.frame_time(k);

  ControlPanel panel(clock, scene);
  panel.set_resimulation(resim, options.screenshot_folder);
  // Companion views (src/views) in the interface's left column, linked to the scene by selection
  // and time; their index builds in the background.
  const std::unique_ptr<ViewPanels> view_panels = make_view_panels(reader, scene, clock, options.panels);
  // Sound before the window opens, so that a bad [audio] section fails early.
  osg::ref_ptr<AudioLink> audio;
  if (options.sound && follow != nullptr) {
    std::fprintf(stderr, "kanoko view: no sound cues while the run is being simulated (they are found over the whole "
                         "run); view the finished run to hear them\n");
  } else if (options.sound) {
    audio = new AudioLink(reader, options.mapping ? options.mapping->audio : mapping::AudioSpec{}, scene, "",
                          std::cerr);
  }
  // The interface (Dear ImGui): menus, timeline, help.
  std::vector<HelpSection> help = {{"Interface", interface_bindings()},
                                   {"Playback and selection", playback_bindings()},
                                   {"Camera", navigation_bindings()}};
  if (audio.valid()) help.push_back({"Sound", audio_bindings()});
  UiToggles toggles;
  toggles.help = options.help_open.has_value() ? *options.help_open : first_run();
  ViewerUi ui(reader, clock, scene, frame_times, std::move(help), toggles);
  scene.set_inspect_panel_visible(false);  // the interface's side panel shows it
  // The session: the run's own (config folder) unless --session names one; scripts start from
  // the defaults unless they name one.
  std::filesystem::path session_path = options.session_file;
  if (session_path.empty() && options.script.empty()) session_path = default_session_path(reader.meta().input_hash);
  const std::optional<Session> session = load_session(session_path, reader.meta().input_hash);
  if (session) {
    const Session& ss = *session;
    ui.toggles().side = ss.side;
    ui.toggles().help = ss.help || toggles.help;
    ui.toggles().timeline = ss.timeline;
    ui.toggles().frame_rate = ss.frame_rate;
    ui.set_side_width(ss.side_width_px);
    VisualOptions v = scene.visual();
    v.labels = ss.labels;
    v.grid = ss.grid;
    try {
      v.spring_colours = parse_spring_colours(ss.spring_colours, "session springs");
    } catch (const InputError&) {
      // an unknown name keeps today's colours
    }
    v.flashes = ss.flashes;
    v.trail_s = ss.trail_s;
    v.body_scale = ss.body_scale;
    scene.set_visual(v);
    if (ss.selected_body && *ss.selected_body < reader.meta().body_count()) {
      scene.select(Pick{Pick::Kind::body, *ss.selected_body, 0.0});
    }
    if (ss.speed > 0) clock.set_speed(std::clamp(ss.speed, clock.min_speed(), clock.max_speed()));
    clock.seek(ss.time_s);
    if (ss.reversed != clock.reversed()) clock.reverse();
    clock.set_loop(ss.loop);
    if (ss.paused) clock.pause();
    if (ss.view_range) ui.timeline().show(ss.view_range->first, ss.view_range->second);
    if (ss.range) ui.timeline().select(ss.range->first, ss.range->second);
  }
  // The code locations panel, its source search paths from the command line, else the session's.
  LocationsOptions locations;
  locations.trace = options.locations_trace;
  locations.format = options.locations_format;
  locations.missing = options.locations_missing;
  std::vector<std::string> source_paths = options.source_paths;
  if (source_paths.empty() && session) {
    try {
      locations.source_roots = profile::checked_source_roots(session->source_paths, "session source_paths");
      source_paths = session->source_paths;
    } catch (const InputError& e) {
      std::fprintf(stderr, "kanoko view: %s: the source panel searches no folder\n", e.what());
    }
  } else {
    locations.source_roots = profile::checked_source_roots(source_paths, "--source-path");
  }
  LocationsPanel locations_panel(reader, scene, clock, ui.timeline(), std::move(locations));
  ui.set_side_hooks({[&] { locations_panel.build_selection([&ui](const std::string& n) { ui.note(n); }, ui.texts()); },
                     [&] { locations_panel.build_sections([&ui](const std::string& n) { ui.note(n); }, ui.texts()); }});
  if (view_panels) {
    ViewPanels* vp = view_panels.get();
    locations_panel.set_share_selection([vp](const views::Selection& s) { vp->hub().set(s); });
    locations_panel.set_colour_views(
        [vp](std::shared_ptr<const views::LocationColouring> c) { vp->set_location_colours(std::move(c)); });
  }
  // What the command line says wins over the session.
  if (!options.level.empty()) scene.set_level(scene.hierarchy().level_index(options.level, "--level"));
  if (!options.select.empty()) {
    scene.select(Pick{Pick::Kind::body, find_body(reader, options.select, "--select"), 0.0});
  }
  if (options.start_paused) clock.pause();
  const auto save_session = [&](const osgGA::CameraManipulator& camera_now, const NavigationHandler& nav) {
    if (session_path.empty()) return;
    Session out;
    out.run_hash = reader.meta().input_hash;
    out.camera = to_array(camera_now.getMatrix());
    for (std::size_t k = 0; k < out.bookmarks.size() && k < NavigationHandler::kBookmarks; ++k) {
      if (nav.bookmark(k)) out.bookmarks[k] = to_array(*nav.bookmark(k));
    }
    UiToggles& t = ui.toggles();
    out.side = t.side;
    out.help = t.help;
    out.timeline = t.timeline;
    out.frame_rate = t.frame_rate;
    out.side_width_px = ui.side_width();
    const VisualOptions& v = scene.visual();
    out.labels = v.labels;
    out.grid = v.grid;
    out.spring_colours = to_string(v.spring_colours);
    out.flashes = v.flashes;
    out.trail_s = v.trail_s;
    out.body_scale = v.body_scale;
    if (scene.selection() && scene.selection()->kind == Pick::Kind::body) out.selected_body = scene.selection()->index;
    out.time_s = clock.time_s();
    out.paused = clock.paused();
    out.speed = clock.speed();
    out.loop = clock.loop();
    out.reversed = clock.reversed();
    if (!ui.timeline().whole()) out.view_range = std::make_pair(ui.timeline().view_begin_s(), ui.timeline().view_end_s());
    out.range = ui.timeline().selection();
    out.source_paths = source_paths;
    try {
      std::error_code ec;
      std::filesystem::create_directories(session_path.parent_path(), ec);
      write_file_atomically(session_path, session_json(out));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kanoko view: the session was not saved: %s\n", e.what());
    }
  };
  osg::ref_ptr<ImGuiOverlay> overlay = new ImGuiOverlay([&ui] { ui.build(); });

  // Declared after the clock, scene and panel it refers to, so it is destroyed first.
  osgViewer::Viewer viewer;
  // Single-threaded: the update callback edits geometry that the draw reads.
  viewer.setThreadingModel(osgViewer::Viewer::SingleThreaded);
  viewer.setUpViewInWindow(place.x, place.y, w, h);
  viewer.realize();
  if (!viewer.isRealized()) {
    const char* d = std::getenv("DISPLAY");
    throw RunError(no_display_message(std::string("cannot open a window on display '") +
                                      (d != nullptr ? d : "") + "'"));
  }
  auto* window = dynamic_cast<osgViewer::GraphicsWindow*>(viewer.getCamera()->getGraphicsContext());
  if (window != nullptr) {
    window->setWindowName(options.title);
    const osg::GraphicsContext::Traits* traits = window->getTraits();
    if (traits != nullptr) scene.set_window_size(traits->width, traits->height);
  }

  HomeView home = home_view(scene.bound(), static_cast<double>(scene.width_px()) / scene.height_px());
  osg::Camera* camera = viewer.getCamera();
  camera->setClearColor(background_colour());
  camera->setProjectionMatrixAsPerspective(
      home.fovy_deg, static_cast<double>(scene.width_px()) / scene.height_px(), home.near_m,
      home.far_m);
  // Always installed: --screenshot and the `p` key both read the last drawn frame back, the
  // whole window with the interface.
  osg::ref_ptr<CaptureCallback> capture = new CaptureCallback;
  capture->set_full_window(true);
  // The interface is drawn last (after the HUD camera), then the frame is captured.
  overlay->set_then(capture.get());
  camera->setFinalDrawCallback(overlay->draw_callback());
  osg::ref_ptr<ScreenshotKey> screenshot_key = new ScreenshotKey;

  osg::ref_ptr<osgGA::KeySwitchMatrixManipulator> manipulators = make_manipulators(home);
  osg::ref_ptr<NavigationHandler> navigation = new NavigationHandler(*manipulators, scene);
  if (session) {
    for (std::size_t k = 0; k < session->bookmarks.size() && k < NavigationHandler::kBookmarks; ++k) {
      if (session->bookmarks[k]) navigation->set_bookmark(k, to_matrix(*session->bookmarks[k]));
    }
  }
  osg::ref_ptr<ReplayUpdateCallback> replay = new ReplayUpdateCallback(clock, scene);
  // Nested, so the camera follows the body after the scene moved to the new time.
  replay->addNestedCallback(new FollowCallback(*navigation));
  scene.root()->setUpdateCallback(replay.get());
  viewer.setSceneData(scene.root());
  viewer.setCameraManipulator(manipulators.get());
  replay->set_control_panel(&panel);
  replay->set_resimulation(resim);
  // After a re-simulation the sound cues and the companion views follow the new run too.
  follow_resimulated_runs(*replay, audio.get(), view_panels.get());
  osg::ref_ptr<PlaybackHandler> playback = new PlaybackHandler(clock, scene, frame_times);
  playback->set_control_panel(&panel);
  // The interface first: it takes the clicks and the wheel over its windows.
  viewer.addEventHandler(overlay->handler());
  viewer.addEventHandler(new HelpKey(ui));
  viewer.addEventHandler(playback.get());
  viewer.addEventHandler(navigation.get());
  if (audio.valid()) viewer.addEventHandler(audio.get());
  viewer.addEventHandler(screenshot_key.get());

  // The 3-D view gets what the interface's edge panels leave; the home view frames the run in it.
  bool homed = false;
  auto apply_layout = [&](const UiLayout& l) {
    const osg::GraphicsContext::Traits* traits = window != nullptr ? window->getTraits() : nullptr;
    const double win_h = traits != nullptr ? traits->height : h;
    const double vw = std::max(1.0, std::floor(l.viewport.w));
    const double vh = std::max(1.0, std::floor(l.viewport.h));
    camera->setViewport(new osg::Viewport(std::floor(l.viewport.x), std::floor(win_h - l.viewport.y - vh), vw, vh));
    home = home_view(scene.bound(), vw / vh);
    camera->setProjectionMatrixAsPerspective(home.fovy_deg, vw / vh, home.near_m, home.far_m);
    scene.set_window_size(static_cast<int>(vw), static_cast<int>(vh));
    manipulators->setHomePosition(home.eye, home.centre, home.up);
    if (!homed) {
      viewer.home();
      homed = true;
      if (session && session->camera) manipulators->setByMatrix(to_matrix(*session->camera));
    }
  };

  ui.set_view_panels(view_panels.get());
  // The hover label: the body under the pointer, through the 3-D view's camera.
  ui.set_body_picker([&](double x, double y) -> std::optional<std::size_t> {
    const osg::Viewport* vp = camera->getViewport();
    const osg::GraphicsContext::Traits* traits = window != nullptr ? window->getTraits() : nullptr;
    if (vp == nullptr || traits == nullptr || vp->width() <= 0 || vp->height() <= 0) return std::nullopt;
    const double gl_y = traits->height - y;
    const double xn = 2.0 * (x - vp->x()) / vp->width() - 1.0;
    const double yn = 2.0 * (gl_y - vp->y()) / vp->height() - 1.0;
    const auto pick = scene.pick_at(camera->getViewMatrix(), camera->getProjectionMatrix(), xn, yn);
    if (!pick || pick->kind != Pick::Kind::body) return std::nullopt;
    return pick->index;
  });

  std::optional<ScriptRunner> script;
  if (!options.script.empty()) script.emplace(options.script, options.script_name);
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto last = start;
  bool first_frame = true;
  FrameStats stats;
  if (options.follower != nullptr) stats.simulation(options.writing_s, options.first_frames_s);
  bool views_were_ready = false;
  // A run still being simulated: new frames, its end once complete, the interface's live state.
  bool said_stopped = false;
  const auto follow_run = [&](Clock::time_point now) {
    if (follow == nullptr) return;
    if (!ui.reading_run() && follow->poll(now)) {
      for (std::size_t k = frame_times.size(); k < reader.frame_count(); ++k) frame_times.push_back(reader.frame_time(k));
      playback->set_frame_times(frame_times);
      ui.set_frame_times(frame_times);
    }
    if (follow->complete()) {
      clock.set_end(reader.end_time());
      stats.simulation_complete(std::chrono::duration<double>(now - options.started).count());
      ui.set_live(std::nullopt);
      replay->set_live_status("");
      follow = nullptr;
      return;
    }
    clock.set_frontier(follow->frontier_s());
    std::string text = follow->status();
    if (const auto target = clock.pending_seek()) {
      text = "waiting for the simulation to reach t = " + format_seconds(*target) + " (" + text + ")";
    }
    const bool stopped = follow->state() != trajectory::Follower::State::growing;
    if (stopped && !said_stopped) std::fprintf(stderr, "kanoko view: %s\n", follow->status().c_str());
    said_stopped = stopped;
    ui.set_live(ViewerUi::LiveRun{follow->frontier_s(), text, stopped});
    replay->set_live_status(text);
  };
  while (!viewer.done()) {
    const auto now = Clock::now();
    follow_run(now);
    const double wall_dt_s = std::chrono::duration<double>(now - last).count();
    // A frame that work blocked moves the clock by a capped step: playback slows, never jumps.
    clock.advance(std::min(wall_dt_s, max_clock_step_s()));
    last = now;
    const bool indexing = view_panels && !view_panels->ready();
    if (!first_frame) stats.frame(wall_dt_s, indexing);
    if (view_panels && !indexing && !views_were_ready) {
      views_were_ready = true;
      stats.views_ready(std::chrono::duration<double>(now - options.started).count());
    }
    if (const auto l = ui.take_layout_change()) apply_layout(*l);
    if (script && window != nullptr && !first_frame) {
      ScriptTarget target{viewer, *window, ui, scene, clock, *capture, options.follower};
      if (!script->step(target)) break;
    }
    auto& requests = ui.requests();
    if (requests.quit) break;
    if (requests.home) viewer.home();
    if (requests.open_group) scene.open_group(*requests.open_group);
    if (requests.close_group) scene.close_group(*requests.close_group);
    const bool shot = screenshot_key->requested || requests.screenshot;
    screenshot_key->requested = false;
    requests = {};
    if (!options.screenshot.empty() || shot) capture->arm();
    if (view_panels) view_panels->refresh();
    viewer.frame(clock.time_s());
    // After the frame: its update traversal may have ended the run early at damaged frames.
    if (audio.valid()) audio->update(clock, wall_dt_s, viewer.getCamera()->getViewMatrix());
    if (shot && capture->image() != nullptr && capture->image()->data() != nullptr) {
      try {
        const auto path = next_screenshot_path(options.screenshot_folder, options.screenshot_stem);
        write_image_atomically(*capture->image(), path);
        std::printf("kanoko view: screenshot %s\n", path.string().c_str());
        std::fflush(stdout);
      } catch (const std::exception& e) {
        // A full disk or a read-only folder must not end the session.
        std::fprintf(stderr, "kanoko view: screenshot failed: %s\n", e.what());
      }
    }
    if (first_frame) {
      keep_gl_driver_loaded();
      stats.first_frame(std::chrono::duration<double>(Clock::now() - options.started).count());
    }
    first_frame = false;
    if (follow == nullptr) locations_panel.start_reading();
    check_interrupt();
    if (options.exit_after_s &&
        std::chrono::duration<double>(Clock::now() - start).count() >= *options.exit_after_s) {
      break;
    }
    const auto spent = Clock::now() - now;
    if (spent < kMinFramePeriod) std::this_thread::sleep_for(kMinFramePeriod - spent);
  }

  save_session(*manipulators, *navigation);
  if (!options.frame_stats.empty()) write_file_atomically(options.frame_stats, stats.json());
  if (!options.screenshot.empty()) {
    if (capture->image() == nullptr || capture->image()->data() == nullptr) {
      throw RunError("no frame was drawn, so there is no screenshot for " +
                     options.screenshot.string());
    }
    write_image_atomically(*capture->image(), options.screenshot);
  }
}

}  // namespace kanoko::scene
