// The panel shown while playback is paused (bottom-right corner, above the dial): playback speed and
// the visual parameters, each with clickable buttons. Drawn with osgText in the scene's HUD and
// hit-tested in window pixels, so clicks are tested without a display.
#pragma once

#include <array>
#include <optional>
#include <osg/Geometry>
#include <osg/Switch>
#include <osgText/Text>
#include <string>

#include "src/scene/replay_clock.hpp"
#include "src/scene/scene.hpp"

namespace kanoko::scene {

/// One button of the panel.
enum class PanelButton {
  slower,
  faster,
  smaller_bodies,
  larger_bodies,
  shorter_trails,
  longer_trails,
  labels,
  grid,
  spring_colours,  ///< cycles tension, traffic, off
  flashes,
};
/// Number of PanelButton values.
inline constexpr std::size_t kPanelButtons = 10;
/// Number of text rows of the panel (the title and one per setting).
inline constexpr std::size_t kPanelRows = 8;

/// Trail length after one press of "longer" from `trail_s`: 1/40 of the run from none, then
/// doubling, at most the whole run.
[[nodiscard]] double longer_trail(double trail_s, double run_s);
/// Trail length after one press of "shorter": halving, none below 1/40 of the run.
[[nodiscard]] double shorter_trail(double trail_s, double run_s);

/// The paused panel of one scene and clock, both of which must outlive it. It adds itself to
/// the scene's HUD and is visible only while the clock is paused.
class ControlPanel {
 public:
  ControlPanel(ReplayClock& clock, TrajectoryScene& scene);

  /// Shows or hides the panel with the pause state and updates its texts and layout (for the
  /// scene's current window size). Call once per frame; cheap when nothing changed.
  void refresh();
  /// True while the panel is shown.
  [[nodiscard]] bool visible() const { return visible_; }
  /// Handles a left click at window pixel (x, y), y up: presses the button there and returns
  /// true when the click was on the visible panel (so nothing else sees it).
  bool click(double x_px, double y_px);
  /// Centre of a button in window pixels (y up), for tests and scripted clicks.
  [[nodiscard]] osg::Vec2d button_centre(PanelButton b) const;
  /// The panel's text, row by row (for tests).
  [[nodiscard]] std::string text() const;

 private:
  struct Rect {
    double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  };
  void press(PanelButton b);
  void layout();
  [[nodiscard]] std::array<std::string, kPanelRows> row_texts() const;

  ReplayClock& clock_;
  TrajectoryScene& scene_;
  bool visible_ = false;
  int laid_out_width_px_ = 0;
  int laid_out_height_px_ = 0;
  std::array<Rect, kPanelButtons> buttons_{};
  Rect panel_{};
  osg::ref_ptr<osg::Switch> root_;
  osg::ref_ptr<osg::Geometry> background_;
  std::array<osg::ref_ptr<osgText::Text>, kPanelRows> rows_;
  std::array<osg::ref_ptr<osgText::Text>, kPanelButtons> button_labels_;
};

}  // namespace kanoko::scene
