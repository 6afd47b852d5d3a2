#include "src/scene/navigation.hpp"

#include <osgGA/DriveManipulator>
#include <osgGA/FlightManipulator>
#include <osgGA/TrackballManipulator>

namespace kanoko::scene {

namespace {

// Space pauses playback, and 'c' (PlaybackHandler) returns home, so Space must not reach the
// manipulators, all of which treat it as "home".
class ReplayManipulators : public osgGA::KeySwitchMatrixManipulator {
 public:
  using osgGA::KeySwitchMatrixManipulator::handle;
  bool handle(const osgGA::GUIEventAdapter& ea, osgGA::GUIActionAdapter& aa) override {
    if ((ea.getEventType() == osgGA::GUIEventAdapter::KEYDOWN ||
         ea.getEventType() == osgGA::GUIEventAdapter::KEYUP) &&
        ea.getKey() == osgGA::GUIEventAdapter::KEY_Space) {
      return false;
    }
    return osgGA::KeySwitchMatrixManipulator::handle(ea, aa);
  }
  void getUsage(osg::ApplicationUsage& /*usage*/) const override {
    // Listed with the viewer's own keys (navigation_bindings()), which --help prints too.
  }
};

int function_key_slot(int key) {
  using GEA = osgGA::GUIEventAdapter;
  if (key >= GEA::KEY_F1 && key <= GEA::KEY_F9) return key - GEA::KEY_F1;
  return -1;
}

}  // namespace

const std::vector<KeyBinding>& navigation_bindings() {
  static const std::vector<KeyBinding> bindings = {
      {"1 / 2 / 3", "camera: trackball / fly / drive"},
      {"f", "follow the selected body (toggle)"},
      {"F1 .. F9", "go to camera bookmark 1..9"},
      {"Shift+F1 .. Shift+F9", "store the camera as bookmark 1..9"},
  };
  return bindings;
}

osg::ref_ptr<osgGA::KeySwitchMatrixManipulator> make_manipulators(const HomeView& home) {
  osg::ref_ptr<osgGA::KeySwitchMatrixManipulator> switcher = new ReplayManipulators;
  osg::ref_ptr<osgGA::TrackballManipulator> trackball = new osgGA::TrackballManipulator;
  osg::ref_ptr<osgGA::FlightManipulator> fly =
      new osgGA::FlightManipulator(osgGA::StandardManipulator::DEFAULT_SETTINGS);
  fly->setYawControlMode(osgGA::FlightManipulator::NO_AUTOMATIC_YAW);
  osg::ref_ptr<osgGA::DriveManipulator> drive = new osgGA::DriveManipulator;
  switcher->addMatrixManipulator('1', "Trackball", trackball.get());
  switcher->addMatrixManipulator('2', "Fly", fly.get());
  switcher->addMatrixManipulator('3', "Drive", drive.get());
  switcher->setAutoComputeHomePosition(false);
  switcher->setHomePosition(home.eye, home.centre, home.up);
  return switcher;
}

NavigationHandler::NavigationHandler(osgGA::KeySwitchMatrixManipulator& manipulators,
                                     const TrajectoryScene& scene)
    : manipulators_(manipulators), scene_(scene) {}

std::optional<osg::Vec3d> NavigationHandler::followed_position() const {
  const auto& sel = scene_.selection();
  if (!sel || sel->kind != Pick::Kind::body) return std::nullopt;
  const auto c = scene_.positions().col(static_cast<Eigen::Index>(sel->index));
  return osg::Vec3d(c.x(), c.y(), c.z());
}

void NavigationHandler::apply_follow() {
  if (!following_) return;
  const std::optional<osg::Vec3d> now = followed_position();
  if (!now) {  // the selection was cleared or is a spring: stop following
    following_ = false;
    last_followed_.reset();
    return;
  }
  if (last_followed_) {
    const osg::Vec3d moved = *now - *last_followed_;
    if (moved.length2() > 0) {
      manipulators_.setByMatrix(manipulators_.getMatrix() * osg::Matrixd::translate(moved));
    }
  }
  last_followed_ = now;
}

bool NavigationHandler::handle(const osgGA::GUIEventAdapter& ea, osgGA::GUIActionAdapter& /*aa*/) {
  using GEA = osgGA::GUIEventAdapter;
  if (ea.getEventType() != GEA::KEYDOWN) return false;
  const int key = ea.getKey();
  if (key == 'f') {
    following_ = !following_ && followed_position().has_value();
    last_followed_ = following_ ? followed_position() : std::nullopt;
    return true;
  }
  const int slot = function_key_slot(key);
  if (slot < 0) return false;
  const auto s = static_cast<std::size_t>(slot);
  if ((ea.getModKeyMask() & GEA::MODKEY_SHIFT) != 0) {
    bookmarks_[s] = manipulators_.getMatrix();
  } else if (bookmarks_[s]) {
    manipulators_.setByMatrix(*bookmarks_[s]);
    if (following_) last_followed_ = followed_position();
  }
  return true;
}

void NavigationHandler::getUsage(osg::ApplicationUsage& usage) const {
  for (const auto& b : navigation_bindings()) usage.addKeyboardMouseBinding(b.key, b.action);
}

void FollowCallback::operator()(osg::Node* node, osg::NodeVisitor* nv) {
  navigation_.apply_follow();
  traverse(node, nv);
}

}  // namespace kanoko::scene
