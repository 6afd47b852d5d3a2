// The companion views inside the viewer: each enabled view (src/views, drawn with cairo) is a
// textured panel in the scene's HUD, redrawn as the replay clock moves. Selection is shared: a
// click in a panel selects the entity's body in the 3-D scene (and seeks the clock to the clicked
// time), a click on a message selects the pair's spring (or, without a spring, draws a line
// between the two bodies), and a body or spring picked in the scene is highlighted in the panels.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <osg/Geode>
#include <osg/Geometry>
#include <osg/Image>
#include <osgGA/GUIEventHandler>
#include <string>
#include <utility>
#include <vector>

#include "src/scene/inspect.hpp"
#include "src/scene/replay_clock.hpp"
#include "src/scene/scene.hpp"
#include "src/views/trace_index.hpp"
#include "src/views/view.hpp"

namespace kanoko::scene {

/// Which panels the viewer shows.
struct ViewPanelOptions {
  std::vector<std::string> views;  ///< view names; empty: no panels
  std::filesystem::path trace;     ///< the trace to index (the run's own)
  std::string format = "auto";     ///< trace format
  views::IndexOptions index;       ///< how to class states: as the run's mapping does (docs/statistics.md)
};

/// The panels of one scene and clock, both of which must outlive it.
class ViewPanels {
 public:
  ViewPanels(const trajectory::Reader& reader, TrajectoryScene& scene, ReplayClock& clock, views::TraceIndex index,
             const std::vector<std::string>& view_names);
  ~ViewPanels();
  ViewPanels(const ViewPanels&) = delete;
  ViewPanels& operator=(const ViewPanels&) = delete;

  /// Follows `run` from now on (a re-simulated run, which must outlive the panels or the next
  /// set_run()): the bodies are matched to the trace's entities again and every panel is redrawn
  /// at the next refresh().
  void set_run(const trajectory::Reader& run);
  /// The run the panels link to.
  [[nodiscard]] const trajectory::Reader& run() const { return *reader_; }

  /// Call once per frame: follows the clock and the scene's selection, redraws panels that
  /// changed (at most ten times a second while playing) and lays them out for the window size.
  void refresh();
  /// A left click at window pixel (x, y), y up: true when it was on a panel (then it picked there).
  bool click(double x_px, double y_px);
  /// A click to apply at the next refresh() (what the event handler does, so that the click
  /// wins over the 3-D pick the playback handler makes of the same click).
  void queue_click(double x_px, double y_px) { pending_click_ = std::make_pair(x_px, y_px); }
  /// Shows or hides every panel (View → Companion views); hidden panels take no clicks.
  void set_visible(bool on);
  [[nodiscard]] bool visible() const { return visible_; }
  /// The panel at window pixel (x, y), y up, or -1.
  [[nodiscard]] int panel_at(double x_px, double y_px) const;
  /// Panel i in window pixels, y up: x, y of the bottom-left corner, width, height.
  [[nodiscard]] views::Rect panel_rect(std::size_t i) const { return rects_[i]; }
  [[nodiscard]] std::size_t panel_count() const { return views_.size(); }
  [[nodiscard]] const views::View& view(std::size_t i) const { return *views_[i]; }
  [[nodiscard]] views::SelectionHub& hub() { return hub_; }
  [[nodiscard]] const views::TraceIndex& index() const { return index_; }
  /// The state the panels were last drawn for.
  [[nodiscard]] const views::ViewState& state() const { return state_; }
  /// True while the line between a selected pair's bodies is shown (pairs without a spring).
  [[nodiscard]] bool pair_line_visible() const;
  /// Number of times panel i was drawn (for tests of the redraw policy).
  [[nodiscard]] std::size_t draw_count(std::size_t i) const { return draws_[i]; }
  /// The event handler that routes clicks on panels here; add it before the playback handler.
  [[nodiscard]] osgGA::GUIEventHandler* handler() { return handler_.get(); }

 private:
  bool visible_ = true;  ///< set_visible()
  void layout();
  void redraw(std::size_t i);
  void apply_to_scene(const views::Selection& s);
  void follow_scene_selection();
  void update_pair_line();
  [[nodiscard]] std::int64_t entity_of_body(std::size_t body) const;
  /// Matches the run's bodies to the index's entities (body_of_entity_).
  void match_bodies();

  const trajectory::Reader* reader_;  ///< never null; set_run() swaps it
  TrajectoryScene& scene_;
  ReplayClock& clock_;
  views::TraceIndex index_;
  std::vector<std::unique_ptr<views::View>> views_;
  views::SelectionHub hub_;
  views::ViewState state_;
  std::vector<std::int64_t> body_of_entity_;  ///< -1 when the entity has no body
  std::vector<views::Rect> rects_;
  std::vector<osg::ref_ptr<osg::Image>> images_;
  std::vector<osg::ref_ptr<osg::Geometry>> quads_;
  std::vector<std::size_t> draws_;
  std::vector<double> drawn_time_s_;
  std::vector<views::Selection> drawn_selection_;
  osg::ref_ptr<osg::Geode> geode_;
  osg::ref_ptr<osg::Geometry> pair_line_;
  osg::ref_ptr<osg::Geode> pair_geode_;
  osg::ref_ptr<osgGA::GUIEventHandler> handler_;
  std::optional<Pick> last_scene_selection_;
  std::optional<std::pair<double, double>> pending_click_;
  bool following_scene_ = false;  ///< the hub is being set from the scene's own selection
  int laid_out_width_px_ = 0;
  int laid_out_height_px_ = 0;
  double last_draw_wall_s_ = -1;
};

/// The panels for `options` (nullptr when no views are enabled): indexes the trace in one pass.
std::unique_ptr<ViewPanels> make_view_panels(const trajectory::Reader& reader, TrajectoryScene& scene,
                                             ReplayClock& clock, const ViewPanelOptions& options);

}  // namespace kanoko::scene
