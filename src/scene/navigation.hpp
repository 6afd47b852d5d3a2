// Camera navigation in the viewer: trackball, fly and drive manipulators switched by key, the
// home view framing all bodies, a follow-the-selected-body mode and camera bookmarks. Works with
// any osgViewer event source, so it is tested on an embedded window without a display.
#pragma once

#include <array>
#include <optional>
#include <osg/ApplicationUsage>
#include <osg/Callback>
#include <osg/Vec3d>
#include <osgGA/GUIEventHandler>
#include <osgGA/KeySwitchMatrixManipulator>
#include <vector>

#include "src/scene/playback.hpp"
#include "src/scene/scene.hpp"

namespace kanoko::scene {

/// The navigation keys, for --help and OSG's help screen.
[[nodiscard]] const std::vector<KeyBinding>& navigation_bindings();

/// The camera manipulators the viewer offers, each starting at `home`: '1' trackball, '2' fly,
/// '3' drive. Space never reaches them (it pauses playback).
[[nodiscard]] osg::ref_ptr<osgGA::KeySwitchMatrixManipulator> make_manipulators(
    const HomeView& home);

/// Follow mode and bookmarks on top of a KeySwitchMatrixManipulator. 'f' toggles following the
/// selected body (the camera moves with it, keeping its offset); F1..F9 go to a bookmark,
/// Shift+F1..F9 store the current camera there. `manipulators` and `scene` must outlive it.
class NavigationHandler : public osgGA::GUIEventHandler {
 public:
  NavigationHandler(osgGA::KeySwitchMatrixManipulator& manipulators, const TrajectoryScene& scene);

  using osgGA::GUIEventHandler::handle;
  /// Reacts to one event; returns true if it was consumed.
  bool handle(const osgGA::GUIEventAdapter& ea, osgGA::GUIActionAdapter& aa) override;
  /// Adds the navigation keys to OSG's help screen ('h').
  void getUsage(osg::ApplicationUsage& usage) const override;

  /// True while the camera follows the selected body.
  [[nodiscard]] bool following() const { return following_; }
  /// Moves the camera by how far the followed body moved since the last call. Called every
  /// frame after the scene was set to the new time (see FollowCallback).
  void apply_follow();
  /// Number of bookmark slots.
  static constexpr std::size_t kBookmarks = 9;
  /// The stored camera (manipulator matrix) of a slot, if any.
  [[nodiscard]] const std::optional<osg::Matrixd>& bookmark(std::size_t slot) const {
    return bookmarks_.at(slot);
  }
  /// Stores a camera in a slot (a session being restored).
  void set_bookmark(std::size_t slot, const std::optional<osg::Matrixd>& m) { bookmarks_.at(slot) = m; }

 private:
  [[nodiscard]] std::optional<osg::Vec3d> followed_position() const;

  osgGA::KeySwitchMatrixManipulator& manipulators_;
  const TrajectoryScene& scene_;
  bool following_ = false;
  std::optional<osg::Vec3d> last_followed_;
  std::array<std::optional<osg::Matrixd>, kBookmarks> bookmarks_;
};

/// Update callback nested under ReplayUpdateCallback (so it runs after the scene moved): applies
/// the follow mode before the manipulator sets the camera for the frame.
class FollowCallback : public osg::NodeCallback {
 public:
  /// `navigation` must outlive the callback's use.
  explicit FollowCallback(NavigationHandler& navigation) : navigation_(navigation) {}
  /// Runs during the update traversal of every frame.
  void operator()(osg::Node* node, osg::NodeVisitor* nv) override;

 private:
  NavigationHandler& navigation_;
};

}  // namespace kanoko::scene
