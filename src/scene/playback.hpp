// Playback control in the viewer: keys and clicks drive the ReplayClock, and an update callback
// moves the scene to the clock's time each frame. Both work with any osgViewer event source, so
// they are tested with a GraphicsWindowEmbedded and no display.
#pragma once

#include <osg/ApplicationUsage>
#include <osg/Callback>
#include <osgGA/GUIEventHandler>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "src/scene/control_panel.hpp"
#include "src/scene/replay_clock.hpp"
#include "src/scene/scene.hpp"

namespace kanoko::scene {

/// One playback key or mouse action and what it does, for --help and OSG's help screen.
struct KeyBinding {
  const char* key;     ///< e.g. "Space"
  const char* action;  ///< e.g. "pause / resume playback"
};
/// All playback keys and mouse actions of the viewer.
[[nodiscard]] const std::vector<KeyBinding>& playback_bindings();

/// Key `e`: opens the selected group of the hierarchy into its members, or closes the group of
/// the selected body back into one body; false when there is nothing to open or close.
bool toggle_selected_group(TrajectoryScene& scene);


/// Keyboard and mouse control of a ReplayClock: space pauses/resumes, +/- change speed, arrows
/// step one stored frame (pausing), r reverses, Home or 0 restarts, c returns the camera home,
/// a left click on the dial pauses/resumes, a left click elsewhere selects the body or spring
/// under the pointer (analytic picking, TrajectoryScene::pick_at) or clears the selection. Also keeps the scene's HUD laid out on resize.
/// `clock` and `scene` must outlive the handler's use by the viewer.
class PlaybackHandler : public osgGA::GUIEventHandler {
 public:
  /// Controls `clock`; `frame_times_s` are the stored frame times (for frame stepping).
  PlaybackHandler(ReplayClock& clock, TrajectoryScene& scene, std::vector<double> frame_times_s);

  using osgGA::GUIEventHandler::handle;  // keep the other overloads visible
  /// Reacts to one event; returns true if it was consumed (so the camera manipulator ignores it).
  bool handle(const osgGA::GUIEventAdapter& ea, osgGA::GUIActionAdapter& aa) override;
  /// Adds the playback keys to OSG's help screen ('h').
  void getUsage(osg::ApplicationUsage& usage) const override;
  /// The paused panel that gets clicks first (may be null; must outlive the handler's use).
  void set_control_panel(ControlPanel* panel) { panel_ = panel; }
  /// The stored frame times grew (a run still being simulated).
  void set_frame_times(std::vector<double> frame_times_s) { frame_times_s_ = std::move(frame_times_s); }

 private:
  ReplayClock& clock_;
  TrajectoryScene& scene_;
  std::vector<double> frame_times_s_;
  ControlPanel* panel_ = nullptr;
  // A press and release closer than this is a click (picks), farther apart a camera drag.
  static constexpr double kClickSlop_px = 4.0;
  bool pressed_ = false;
  double press_x_px_ = 0;
  double press_y_px_ = 0;
};

/// Update callback for the scene root: sets the scene to the clock's time and the status line.
class ReplayUpdateCallback : public osg::NodeCallback {
 public:
  /// Keeps `scene` at `clock`'s time; both must outlive the callback's use.
  /// When the run's frames turn out damaged at some time, the clock's end is moved back to the
  /// last readable frame before them and the status line says so: the session goes on.
  ReplayUpdateCallback(ReplayClock& clock, TrajectoryScene& scene);
  /// Runs during the update traversal of every frame.
  void operator()(osg::Node* node, osg::NodeVisitor* nv) override;
  /// The paused panel to refresh each frame (may be null; must outlive the callback's use).
  void set_control_panel(ControlPanel* panel) { panel_ = panel; }
  /// Re-simulations whose finished runs replace the scene's run, and whose progress shows in the
  /// status line (may be null; must outlive the callback's use).
  void set_resimulation(Resimulator* resim) { resim_ = resim; }
  /// Called with each finished re-simulated run right after the scene switched to it (the sound
  /// cues and the companion views rebuild from it).
  void add_run_follower(std::function<void(const trajectory::Reader&)> follower) {
    followers_.push_back(std::move(follower));
  }
  /// How a run still being simulated goes, for the status line ("" once it is whole).
  void set_live_status(std::string status) { live_ = std::move(status); }

 private:
  /// Sets the scene to the clock's time; on damaged frames, ends the clock before them.
  void follow_clock();

  ReplayClock& clock_;
  TrajectoryScene& scene_;
  std::string status_;
  std::string damage_;  ///< why playback ends early ("" while every frame read so far is sound)
  std::string live_;    ///< a run still being simulated: how far it has got, or why it stopped
  ControlPanel* panel_ = nullptr;
  Resimulator* resim_ = nullptr;
  std::vector<std::function<void(const trajectory::Reader&)>> followers_;
};

}  // namespace kanoko::scene
