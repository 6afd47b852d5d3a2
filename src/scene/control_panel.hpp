// The panel shown while playback is paused (bottom-right corner, above the dial): playback speed,
// the visual parameters and, with a Resimulator attached, the force parameters (a change
// re-simulates from the frame on screen) and a button that saves them as a new mapping; each
// with clickable buttons. Drawn with osgText in the scene's HUD and
// hit-tested in window pixels, so clicks are tested without a display.
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <vector>
#include <optional>
#include <osg/Geode>
#include <osg/Geometry>
#include <osg/Switch>
#include <osgText/Text>
#include <string>

#include "src/scene/replay_clock.hpp"
#include "src/scene/resimulator.hpp"
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
  /// Adds the force parameters of `resim` (which must outlive the panel) as rows with - / +
  /// buttons, and a row whose button saves the edited mapping into `save_folder`.
  void set_resimulation(Resimulator* resim, std::filesystem::path save_folder);
  /// Centre of the - (or +) button of force parameter `index`, and of the save button.
  [[nodiscard]] osg::Vec2d parameter_button_centre(std::size_t index, bool plus) const;
  [[nodiscard]] osg::Vec2d save_button_centre() const;
  /// What the last save did ("" before any): the file written, or why it failed.
  [[nodiscard]] const std::string& save_message() const { return save_message_; }
  /// The panel's text, row by row (for tests).
  [[nodiscard]] std::string text() const;

 private:
  struct Rect {
    double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  };
  /// A button: the fixed ones (PanelButton), then - and + of each force parameter, then save.
  struct Place {
    int row;
    int column_from_right;
    const char* label;
  };
  void press(std::size_t button);
  void layout();
  void build_texts();
  [[nodiscard]] std::vector<Place> places() const;
  [[nodiscard]] std::vector<std::string> row_texts() const;
  [[nodiscard]] osg::Vec2d centre_of(std::size_t button) const;

  ReplayClock& clock_;
  TrajectoryScene& scene_;
  bool visible_ = false;
  int laid_out_width_px_ = 0;
  int laid_out_height_px_ = 0;
  std::vector<Rect> buttons_;
  Rect panel_{};
  osg::ref_ptr<osg::Switch> root_;
  osg::ref_ptr<osg::Geode> geode_;
  osg::ref_ptr<osg::Geometry> background_;
  std::vector<osg::ref_ptr<osgText::Text>> rows_;
  std::vector<osg::ref_ptr<osgText::Text>> button_labels_;
  Resimulator* resim_ = nullptr;
  std::filesystem::path save_folder_;
  std::string save_message_;
};

}  // namespace kanoko::scene
