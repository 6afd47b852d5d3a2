// Playback control in the viewer: keys and clicks drive the ReplayClock, and an update callback
// moves the scene to the clock's time each frame. Both work with any osgViewer event source, so
// they are tested with a GraphicsWindowEmbedded and no display.
#pragma once

#include <osg/ApplicationUsage>
#include <osg/Callback>
#include <osgGA/GUIEventHandler>
#include <string>
#include <vector>

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

/// One line describing the playback state, e.g. "paused   1.5 s/s  reverse   h: help".
[[nodiscard]] std::string playback_status(const ReplayClock& clock);

/// Keyboard and mouse control of a ReplayClock: space pauses/resumes, +/- change speed, arrows
/// step one stored frame (pausing), r reverses, Home or 0 restarts, c returns the camera home,
/// a left click on the dial pauses/resumes. Also keeps the scene's HUD laid out on resize.
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

 private:
  ReplayClock& clock_;
  TrajectoryScene& scene_;
  std::vector<double> frame_times_s_;
  int window_width_px_ = 0;
  int window_height_px_ = 0;
};

/// Update callback for the scene root: sets the scene to the clock's time and the status line.
class ReplayUpdateCallback : public osg::NodeCallback {
 public:
  /// Keeps `scene` at `clock`'s time; both must outlive the callback's use.
  ReplayUpdateCallback(const ReplayClock& clock, TrajectoryScene& scene);
  /// Runs during the update traversal of every frame.
  void operator()(osg::Node* node, osg::NodeVisitor* nv) override;

 private:
  const ReplayClock& clock_;
  TrajectoryScene& scene_;
  std::string status_;
};

}  // namespace kanoko::scene
