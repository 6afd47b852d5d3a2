// The companion views inside the viewer: each enabled view (src/views, drawn with cairo) is a
// panel of the interface's views column (viewer_ui.cpp draws their pictures in Dear ImGui windows),
// redrawn as the replay clock moves. Each panel zooms and pans on its own (wheel and drag over it).
// Selection is shared: a click in a panel selects the entity's body in the 3-D scene (and seeks the
// clock to the clicked time), a click on a message selects the pair's spring (or, without a
// spring, draws a line between the two bodies), and a body or spring picked in the scene is
// highlighted in the panels. The trace's index may be built in the background: the panels say so
// with its progress until it is ready, and the scene plays meanwhile.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <osg/Geode>
#include <osg/Geometry>
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

/// A panel's picture: cairo's ARGB32 pixels (BGRA bytes on little-endian machines), top row
/// first, with a version that changes with every redraw.
struct PanelImage {
  std::vector<std::uint8_t> bgra;
  int width = 0;
  int height = 0;
  std::uint64_t version = 0;
};

/// An index being built elsewhere, as the panels poll it (pending_index() wraps the views'
/// background build; tests hand in their own).
struct PendingIndex {
  std::function<bool()> ready;              ///< true when take() will not block
  std::function<views::TraceIndex()> take;  ///< the index, or what the build threw
  std::function<double()> fraction;         ///< 0..1, or -1 when unknown
  std::function<std::string()> text;        ///< e.g. "indexing trace: 42 % (1.2 M records)"
  std::function<void()> cancel;             ///< stops a build nobody waits for any more
};
/// The panels' view of a views::IndexBuildJob.
[[nodiscard]] PendingIndex pending_index(std::shared_ptr<views::IndexBuildJob> job);

/// The panels of one scene and clock, both of which must outlive it. Rectangles are in window
/// pixels with the origin at the top-left corner (as the interface's).
class ViewPanels {
 public:
  /// Panels over a ready index.
  ViewPanels(const trajectory::Reader& reader, TrajectoryScene& scene, ReplayClock& clock, views::TraceIndex index,
             const std::vector<std::string>& view_names);
  /// Panels whose index is being built (`index`); until it is ready they show status() and
  /// take no clicks. A build that fails shows its message instead.
  ViewPanels(const trajectory::Reader& reader, TrajectoryScene& scene, ReplayClock& clock, PendingIndex index,
             const std::vector<std::string>& view_names, std::string trace_name);
  ~ViewPanels();
  ViewPanels(const ViewPanels&) = delete;
  ViewPanels& operator=(const ViewPanels&) = delete;

  /// Follows `run` from now on (a re-simulated run, which must outlive the panels or the next
  /// set_run()): the bodies are matched to the trace's entities again and every panel is redrawn
  /// at the next refresh().
  void set_run(const trajectory::Reader& run);
  /// The run the panels link to.
  [[nodiscard]] const trajectory::Reader& run() const { return *reader_; }

  /// True once the index is there (polls the background build).
  [[nodiscard]] bool ready();
  /// What the panels show while not ready: the build's progress, or why it failed.
  [[nodiscard]] std::string status() const;
  /// The build's progress, 0..1 (1 once ready), -1 when unknown.
  [[nodiscard]] double progress() const;

  /// Call once per frame: follows the clock and the scene's selection, shows the pictures drawn
  /// since and starts drawing panels that changed (at most ten times a second while playing) on
  /// a background thread, so the frame loop never waits for a view.
  void refresh();
  /// Waits for the pictures being drawn and shows them (tests; the viewer never waits).
  void finish_drawing();
  /// Panel i's picture goes to `r` (window pixels, top-left origin); a new size redraws it.
  void set_panel_rect(std::size_t i, const views::Rect& r);
  /// Lays the panels out as a column in the window's left part (without an interface).
  void default_layout(int width_px, int height_px);
  /// A left click at window pixel (x, y): true when it was on a panel (then it picked there).
  bool click(double x_px, double y_px);
  /// Zooms panel i by `factor` (> 1 magnifies: a wheel notch is 1.25 or 1/1.25) around window
  /// pixel (x, y): the time and the entity under the pointer stay there (views::zoom_at).
  void zoom(std::size_t i, double x_px, double y_px, double factor);
  /// Pans panel i by a drag of (dx, dy) window pixels.
  void pan(std::size_t i, double dx_px, double dy_px);
  /// Panel i shows its whole extent again.
  void reset_zoom(std::size_t i);
  /// True when panel i shows less than its whole extent.
  [[nodiscard]] bool zoomed(std::size_t i) const;
  /// Colours the space-time panel's states by code location (null: by class) and redraws the panels.
  void set_location_colours(std::shared_ptr<const views::LocationColouring> colours) {
    location_colours_ = std::move(colours);
    for (auto& st : states_) st.location_colours = location_colours_;
    std::fill(dirty_.begin(), dirty_.end(), 1);
  }
  /// Shows or hides every panel (View → Companion views); hidden panels take no clicks.
  void set_visible(bool on) { visible_ = on; }
  [[nodiscard]] bool visible() const { return visible_; }
  /// The panel at window pixel (x, y), or -1.
  [[nodiscard]] int panel_at(double x_px, double y_px) const;
  /// Panel i's rectangle in window pixels (top-left origin).
  [[nodiscard]] views::Rect panel_rect(std::size_t i) const { return rects_[i]; }
  /// The number of panels (known before the index is ready).
  [[nodiscard]] std::size_t panel_count() const { return names_.size(); }
  [[nodiscard]] const std::string& panel_name(std::size_t i) const { return names_[i]; }
  [[nodiscard]] const views::View& view(std::size_t i) const { return *views_[i]; }
  [[nodiscard]] const PanelImage& image(std::size_t i) const { return images_[i]; }
  [[nodiscard]] views::SelectionHub& hub() { return hub_; }
  /// The index (only once ready()).
  [[nodiscard]] const views::TraceIndex& index() const { return *index_; }
  /// The state panel i was last drawn for.
  [[nodiscard]] const views::ViewState& state(std::size_t i = 0) const { return states_[i]; }
  /// True while the line between a selected pair's bodies is shown (pairs without a spring).
  [[nodiscard]] bool pair_line_visible() const;
  /// Number of times panel i was drawn (for tests of the redraw policy).
  [[nodiscard]] std::size_t draw_count(std::size_t i) const { return draws_[i]; }

 private:
  bool visible_ = true;  ///< set_visible()
  void start();          ///< makes the views once the index is there
  /// Shows the finished background pictures; `wait`: waits for running ones first.
  void collect(bool wait);
  /// Starts drawing the next panel that needs it, unless one is being drawn: true if it did.
  bool start_next();
  void apply_to_scene(const views::Selection& s);
  void follow_scene_selection();
  void update_pair_line();
  [[nodiscard]] std::int64_t entity_of_body(std::size_t body) const;
  /// Matches the run's bodies to the index's entities (body_of_entity_).
  void match_bodies();

  const trajectory::Reader* reader_;  ///< never null; set_run() swaps it
  TrajectoryScene& scene_;
  ReplayClock& clock_;
  std::vector<std::string> names_;
  std::optional<views::TraceIndex> index_;
  PendingIndex pending_;
  std::string trace_name_;
  std::string failure_;  ///< the background build's error, if it failed
  double index_started_wall_s_ = 0;
  std::vector<std::unique_ptr<views::View>> views_;
  views::SelectionHub hub_;
  std::vector<views::ViewState> states_;  ///< one per panel: each zooms on its own
  std::vector<std::int64_t> body_of_entity_;  ///< -1 when the entity has no body
  std::vector<views::Rect> rects_;
  std::vector<PanelImage> images_;
  std::vector<std::size_t> draws_;
  std::shared_ptr<const views::LocationColouring> location_colours_;  ///< set_location_colours()
  std::vector<double> drawn_time_s_;
  std::vector<char> dirty_;  ///< 1: draw again whatever the clock says (new size, zoom, run)
  std::size_t next_panel_ = 0;  ///< where the search for the next panel to draw starts
  std::vector<double> started_wall_s_;  ///< wall time each panel's last drawing started
  std::vector<views::Selection> drawn_selection_;
  struct Drawn {
    PanelImage image;
    views::ViewState state;
  };
  std::vector<std::future<Drawn>> jobs_;  ///< one per panel; waited for in the destructor
  osg::ref_ptr<osg::Geometry> pair_line_;
  osg::ref_ptr<osg::Geode> pair_geode_;
  std::optional<Pick> last_scene_selection_;
  bool following_scene_ = false;  ///< the hub is being set from the scene's own selection
};

/// The panels for `options` (nullptr when no views are enabled); the trace is indexed in the
/// background.
std::unique_ptr<ViewPanels> make_view_panels(const trajectory::Reader& reader, TrajectoryScene& scene,
                                             ReplayClock& clock, const ViewPanelOptions& options);

}  // namespace kanoko::scene
