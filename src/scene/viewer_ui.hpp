// The viewer's Dear ImGui interface: a menu bar, a timeline along the bottom (the run's span with
// its trace and settling parts, activity, a draggable playhead, zoom, pan and range selection,
// transport buttons), a side panel on the right (find, selection, legend, the selected range's
// statistics, help) and the companion views in a column on the left. The panels tile
// the window's edges; the 3-D view gets the rectangle that remains (ui_layout()). Every drawn
// element is named, so scripts (view_script.hpp) click at names and `layout` reports rectangles.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/scene/playback.hpp"
#include "src/scene/replay_clock.hpp"
#include "src/scene/model/timeline.hpp"
#include "src/trajectory/range_stats.hpp"

namespace kanoko::trajectory {
class Reader;
struct BodyInfo;
}

namespace kanoko::scene {

class TrajectoryScene;
class ViewPanels;

/// GL textures for pictures shown in the interface's windows (ImGui::Image), uploaded again when
/// their version changes. Use only while the window's GL context is current (inside the
/// overlay's build function); the textures live as long as that context.
class OverlayTextures {
 public:
  /// The texture (an ImTextureID) for picture `key`, BGRA bytes of w × h, top row first.
  void* get(std::size_t key, const std::uint8_t* bgra, int w, int h, std::uint64_t version);

 private:
  struct Entry {
    unsigned id = 0;
    int w = 0;
    int h = 0;
    std::uint64_t version = ~std::uint64_t{0};
  };
  std::vector<Entry> entries_;
};

/// A window rectangle in pixels, origin at the top-left corner.
struct PixelRect {
  double x = 0;
  double y = 0;
  double w = 0;
  double h = 0;
  [[nodiscard]] bool contains(double px, double py) const {
    return px >= x && px < x + w && py >= y && py < y + h;
  }
  bool operator==(const PixelRect&) const = default;
};
/// True if the two rectangles share interior area (touching edges do not count).
[[nodiscard]] bool overlaps(const PixelRect& a, const PixelRect& b);

/// Where the interface's edge panels and the 3-D view sit.
struct UiLayout {
  PixelRect menu;      ///< top edge, full width
  PixelRect timeline;  ///< bottom edge, full width
  PixelRect side;      ///< right edge between menu and timeline (zero width when closed)
  PixelRect views;     ///< left edge between menu and timeline: the companion views (zero width when none)
  PixelRect viewport;  ///< what remains: the 3-D view
  bool operator==(const UiLayout&) const = default;
};
/// The layout for a window of w × h pixels with the given panel sizes; panels shrink (the views
/// column first, then the side panel, then the timeline) so the 3-D view keeps at least a quarter
/// of each side.
[[nodiscard]] UiLayout ui_layout(int width_px, int height_px, double menu_h, double timeline_h,
                                 double side_w, double views_w = 0);

/// The window size to open with on a screen of the given size: `wanted` if it fits with room
/// for the desktop's panels and decorations, else shrunk to fit (never below 320 × 240 for that).
struct WindowPlacement {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
};
[[nodiscard]] WindowPlacement fit_window(int wanted_w, int wanted_h, int screen_w, int screen_h);

/// Which overlays are on.
struct UiToggles {
  bool side = true;        ///< the side panel: selection, legend, range, help
  bool help = false;       ///< the help section of the side panel
  bool timeline = true;
  bool frame_rate = false;  ///< frame rate and frame time in the timeline's status
};

/// Bodies matching a search: `query` (trimmed, case-insensitive) is a substring of the name or
/// the host, or a whole number equal to the rank. Empty query: none.
[[nodiscard]] std::vector<std::size_t> find_bodies(const std::vector<trajectory::BodyInfo>& bodies,
                                                   const std::string& query);

/// The keys and mouse actions of the viewer, grouped under headings, as the help lists them.
struct HelpSection {
  std::string heading;
  std::vector<KeyBinding> bindings;
};

/// The interface's keys and mouse actions, for the help.
[[nodiscard]] const std::vector<KeyBinding>& interface_bindings();

class ViewerUi {
 public:
  /// `frame_times_s`: the run's stored frame times (frame stepping). `clock`, `scene` and
  /// `reader` must outlive the interface.
  ViewerUi(const trajectory::Reader& reader, ReplayClock& clock, TrajectoryScene& scene,
           std::vector<double> frame_times_s, std::vector<HelpSection> help, UiToggles toggles);
  ~ViewerUi();
  ViewerUi(const ViewerUi&) = delete;
  ViewerUi& operator=(const ViewerUi&) = delete;

  /// Makes this frame's windows (call inside the ImGui frame: ImGuiOverlay's build function).
  void build();

  /// The layout of the last frame (all zero before the first).
  [[nodiscard]] const UiLayout& layout() const { return layout_; }
  /// The layout if it changed since the last call (the viewer applies it to the camera).
  [[nodiscard]] std::optional<UiLayout> take_layout_change();

  /// Named elements drawn in the last frame ("timeline", "button.play", "menu.View", ...), in
  /// window pixels, origin top-left.
  [[nodiscard]] const std::map<std::string, PixelRect>& elements() const { return elements_; }
  /// The edge windows of the last frame (menu, timeline, side) by name, for `layout`.
  [[nodiscard]] std::map<std::string, PixelRect> windows() const;

  [[nodiscard]] UiToggles& toggles() { return toggles_; }
  [[nodiscard]] const UiToggles& toggles() const { return toggles_; }
  [[nodiscard]] double side_width() const { return side_w_; }
  void set_side_width(double w) { side_w_ = std::clamp(w, 220.0, 4000.0); }
  [[nodiscard]] const TimelineView& timeline() const { return timeline_; }
  [[nodiscard]] TimelineView& timeline() { return timeline_; }
  /// Statistics of the selected range once computed (computed in the background).
  [[nodiscard]] const std::optional<trajectory::RangeStats>& range_stats() const { return range_; }

  /// Requests to the viewer from the menus (the viewer loop acts on them and clears them).
  struct Requests {
    bool quit = false;
    bool screenshot = false;
    bool home = false;
    std::optional<std::size_t> open_group;   ///< a cut item to open (the side panel's button)
    std::optional<std::size_t> close_group;  ///< a cut item whose group to close
  };
  [[nodiscard]] Requests& requests() { return requests_; }

  /// The interface's own keys (h help, i side panel, u timeline, o companion views, y frame
  /// rate): true when `key` was one of them.
  bool key(int key);
  /// Toggles the help (the `h` key calls it); opening it opens the side panel.
  void toggle_help() {
    toggles_.help = !toggles_.help;
    if (toggles_.help) toggles_.side = true;
  }
  /// The companion views to show in the left column (null: the run has none); they must
  /// outlive the interface.
  void set_view_panels(ViewPanels* panels) { panels_ = panels; }
  /// Other panels' parts of the side panel (the code locations panel, locations_panel.hpp):
  /// `selection` draws under a selected body's inspect text, `sections` after the legend.
  struct SideHooks {
    std::function<void()> selection;
    std::function<void()> sections;
  };
  void set_side_hooks(SideHooks hooks) { side_hooks_ = std::move(hooks); }
  /// Records the last ImGui item's rectangle as element `name` (for scripts and `layout`).
  void note(const std::string& name);
  /// Texts the panels showed in the last frame, by name ("selection", ...), for `layout`.
  [[nodiscard]] std::map<std::string, std::string>& texts() { return texts_; }
  [[nodiscard]] const std::map<std::string, std::string>& texts() const { return texts_; }
  /// The stored frame times grew (a run still being simulated): frame stepping uses these.
  void set_frame_times(std::vector<double> frame_times_s) { frame_times_s_ = std::move(frame_times_s); }
  /// A run still being simulated: how far its frames go and one line on how it goes (shown in
  /// the timeline, which shades the part not simulated yet).
  struct LiveRun {
    double frontier_s = 0;
    std::string text;      ///< "simulating: 42 % ...", "waiting for ...", "... stopped growing ..."
    bool stopped = false;  ///< the writer stopped or failed before the end
  };
  /// Sets or (nullopt: the run is whole) clears the live state. While it is set, nothing of the
  /// interface reads the run's frames on other threads, so the run may be refreshed.
  void set_live(std::optional<LiveRun> live) { live_ = std::move(live); }
  /// True while a background job of the interface reads the run's frames (a refresh must wait).
  [[nodiscard]] bool reading_run() const { return activity_job_.valid() || range_job_.valid(); }
  /// The body under window pixel (x, y), origin top-left, or none (for the hover label).
  void set_body_picker(std::function<std::optional<std::size_t>(double, double)> picker) {
    picker_ = std::move(picker);
  }

 private:
  void build_menu();
  void build_timeline();
  void build_side();
  void build_views();
  void draw_strip(double x0, double y0, double w, double h);
  void build_selection();
  void build_group_buttons();
  void build_find();
  void build_legend();
  void hover_label();
  void poll_background();

  const trajectory::Reader& reader_;
  ReplayClock& clock_;
  TrajectoryScene& scene_;
  std::vector<double> frame_times_s_;
  std::vector<HelpSection> help_;
  UiToggles toggles_;
  TimelineView timeline_;
  UiLayout layout_;
  bool layout_changed_ = false;
  double side_w_ = 380;
  std::map<std::string, PixelRect> elements_;
  std::map<std::string, std::string> texts_;
  SideHooks side_hooks_;
  Requests requests_;

  std::future<trajectory::Activity> activity_job_;
  std::optional<trajectory::Activity> activity_;
  std::optional<LiveRun> live_;
  std::future<trajectory::RangeStats> range_job_;
  std::optional<trajectory::RangeStats> range_;
  std::optional<std::pair<double, double>> range_for_;  ///< the selection range_ was asked for
  std::optional<double> drag_anchor_s_;                 ///< shift-drag start of a range selection
  bool seeking_ = false;                                ///< the playhead is being dragged
  std::function<std::optional<std::size_t>(double, double)> picker_;
  ViewPanels* panels_ = nullptr;
  double views_w_ = 420;
  OverlayTextures textures_;
  bool panel_dragged_ = false;  ///< the press on a panel moved: a pan, not a click
  float last_hover_x_ = -1;  ///< the pointer position the hover pick was made at
  float last_hover_y_ = -1;
  std::optional<std::size_t> hovered_;
  std::array<char, 128> query_{};
  std::string matched_query_;
  std::vector<std::size_t> found_;
};

}  // namespace kanoko::scene
