// The companion views' plug-and-play interface (the HYVT "Software-IC" views and VENUS's uniform
// per-view interface): each view declares the data it needs, draws itself with cairo into a
// rectangle for a replay time and a selection, and maps a click back to a selection. A registry
// names them for the command line, and named view groups are saved to a small file.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <cairo.h>

#include "src/views/trace_index.hpp"

namespace kanoko::views {

/// What one click picked, shared by every view and the 3-D scene (VENUS's correlation by time).
struct Selection {
  std::int64_t entity = -1;                                    ///< -1: none
  double time_s = std::numeric_limits<double>::quiet_NaN();   ///< NaN: none
  std::int64_t pair_src = -1;                                  ///< a sender → receiver pair, -1: none
  std::int64_t pair_dst = -1;
  std::int64_t message = -1;  ///< index in TraceIndex::messages, -1: none

  [[nodiscard]] bool has_entity() const { return entity >= 0; }
  [[nodiscard]] bool has_time() const { return !std::isnan(time_s); }
  [[nodiscard]] bool has_pair() const { return pair_src >= 0 && pair_dst >= 0; }
  [[nodiscard]] bool empty() const { return !has_entity() && !has_time() && !has_pair() && message < 0; }
  bool operator==(const Selection& o) const;
};

/// The selection after a click that picked `picked`: a picked entity (with its pair and message)
/// replaces the current ones, a picked time replaces the current time, the rest stays.
Selection apply_pick(const Selection& current, const Selection& picked);

/// The one shared selection: views and the scene set it and follow it.
class SelectionHub {
 public:
  using Listener = std::function<void(const Selection&)>;
  [[nodiscard]] const Selection& current() const { return current_; }
  /// Sets the selection and tells every listener (also when nothing changed: a re-click re-centres).
  void set(const Selection& s);
  /// Adds a listener; returns its id for remove().
  int subscribe(Listener l);
  void remove(int id);

 private:
  Selection current_;
  std::vector<std::pair<int, Listener>> listeners_;
  int next_id_ = 0;
};

/// Where to draw, in device units (pixels for images, points for SVG).
struct Rect {
  double x = 0;
  double y = 0;
  double w = 0;
  double h = 0;
  [[nodiscard]] bool contains(double px, double py) const { return px >= x && py >= y && px < x + w && py < y + h; }
};

struct LocationColouring;  // location_colours.hpp

/// What every view follows.
struct ViewState {
  double time_s = 0;     ///< the replay cursor
  double window_t0_s = 0;  ///< visible span of the history views (space-time, utilisation)
  double window_t1_s = 0;
  double interval_s = 0;   ///< the "current interval" of the matrix and the Kiviat, ending at time_s
  /// The interval is a run's binning interval (its mapping's): the current interval is then the
  /// one holding time_s, [origin + k × interval_s, + interval_s), as the simulator's statistics and
  /// the inspect panel count it; otherwise it ends at time_s.
  bool run_intervals = false;
  double interval_origin_s = 0;  ///< where the run's intervals start (Metadata::trace_begin_s)
  bool cumulative = false;  ///< matrix: everything up to time_s instead of the current interval
  bool bytes = false;       ///< matrix: bytes instead of message counts
  /// Visible entity range [entity0, entity1) of the views with an entity axis (space-time rows,
  /// matrix rows and columns, Kiviat spokes); fractional while zoomed. entity1 <= entity0: all.
  double entity0 = 0;
  double entity1 = 0;
  Selection selection;
  /// Space-time: states coloured by code location instead of by class (null: by class).
  std::shared_ptr<const LocationColouring> location_colours;
};

/// The default state for an index: the whole run visible, the cursor at its end, the current
/// interval the run's binning interval (`run_interval_s`, Metadata::interval_s, when positive:
/// run_intervals, starting at `run_origin_s`, Metadata::trace_begin_s; the index's begin when
/// NaN) or else, for a bare trace, a twentieth of the run (docs/statistics.md).
ViewState default_view_state(const TraceIndex& index, double run_interval_s = 0,
                             double run_origin_s = std::numeric_limits<double>::quiet_NaN());
/// The [t0, t1) of the current interval (or from the start when cumulative).
void current_interval(const TraceIndex& index, const ViewState& state, double& t0_s, double& t1_s);

/// The visible entity range of a state, made valid: within [0, n], at least one entity wide
/// (e0 = e1 = 0 without entities).
void visible_entities(const TraceIndex& index, const ViewState& state, double& e0, double& e1);

/// How a view's pixels map to its window, for zoom and pan (View::zoom_axes).
struct ZoomAxes {
  Rect plot;                     ///< the area the axes span; zoom and pan act only over it
  bool time_x = false;           ///< x across `plot` is the visible time window
  bool entities_y = false;       ///< y down `plot` is the visible entity range
  bool entities_x = false;       ///< x across `plot` is the visible entity range (the matrix's columns)
  bool entities_around = false;  ///< the angle about `plot`'s centre, from 12 o'clock clockwise (Kiviat)
  /// y down `plot` is a list of rows `row_height` pixels high, one per entity from the entity0-th
  /// (the summary table): zoom_at() scrolls it by kScrollRows rows a call (factor > 1 towards the
  /// first row, as a wheel turned up), pan() by the rows the drag covers; entity1 stays at the end.
  bool rows_y = false;
  double row_height = 0;
  [[nodiscard]] bool any() const { return time_x || entities_y || entities_x || entities_around || rows_y; }
};

/// The data a view reads from the index.
enum class DataNeed : unsigned { States = 1U, Messages = 2U, Traffic = 4U };

/// One companion view.
class View {
 public:
  virtual ~View() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  /// DataNeed bits.
  [[nodiscard]] virtual unsigned needs() const = 0;
  /// Draws the view for `state` into `area` (it clips itself to it).
  virtual void draw(cairo_t* cr, const Rect& area, const TraceIndex& index, const ViewState& state) const = 0;
  /// What a click at (x, y) inside `area` selects; an empty selection when it hits nothing.
  [[nodiscard]] virtual Selection pick(double x, double y, const Rect& area, const TraceIndex& index,
                                       const ViewState& state) const = 0;
  /// The axes zoom_at() and pan() move for this view drawn in `area`; none by default (the
  /// summary table has no window).
  [[nodiscard]] virtual ZoomAxes zoom_axes(const Rect& /*area*/, const TraceIndex& /*index*/,
                                           const ViewState& /*state*/) const {
    return {};
  }
};

// ---- per-view zoom and pan -------------------------------------------------------------------
// Each panel keeps a ViewState of its own (time_s, interval, selection copied from the shared
// one) whose window (window_t0_s/window_t1_s, entity0/entity1) only these functions change, so a
// panel zooms and pans independently of the others and of the 3-D camera.

/// Narrowest time window, as a fraction of the run (and never under kMinZoomSeconds).
inline constexpr double kMinZoomFraction = 1e-9;
inline constexpr double kMinZoomSeconds = 1e-12;
/// Largest zoom factor one call applies (larger ones are clamped; 1/that for zooming out).
inline constexpr double kMaxZoomStep = 1e3;
/// Rows a table (ZoomAxes::rows_y) scrolls for one zoom_at() call, a wheel's notch.
inline constexpr double kScrollRows = 3;

/// Zooms `view` drawn in `area` by `factor` (> 1 in, < 1 out; a mouse wheel's notch: 1.25 or
/// 1/1.25) about the pixel (x, y), y down as the view draws: the time and the entity under the
/// pointer stay under it. The window stays inside the run and all entities, at least
/// kMinZoomFraction of the run and one entity wide. Returns true when the state changed; a
/// factor that is not finite and positive, a point outside the view's ZoomAxes::plot, or a view
/// without axes change nothing.
bool zoom_at(ViewState& state, const View& view, const Rect& area, const TraceIndex& index, double x, double y,
             double factor);
/// Pans `view` drawn in `area` by a drag of (dx, dy) pixels: the content follows the pointer
/// (clamped to the run and the entities). Returns true when the state changed.
bool pan(ViewState& state, const View& view, const Rect& area, const TraceIndex& index, double dx, double dy);
/// The whole run and every entity again.
void reset_zoom(ViewState& state, const TraceIndex& index);
/// A panel's state to draw with: everything from `shared` (cursor, interval, toggles, selection)
/// and the visible window (window_t0_s/window_t1_s, entity0/entity1) of `panel`.
ViewState with_window(const ViewState& shared, const ViewState& panel);
/// True when `state` shows less than the whole run or not every entity.
bool zoomed(const ViewState& state, const TraceIndex& index);

/// A registry row.
struct ViewInfo {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<View>()> make;
};

/// The registered views, in a fixed order.
const std::vector<ViewInfo>& view_registry();
/// The registered names.
std::vector<std::string> view_names();
/// Creates a view by name; throws InputError naming `where` with a suggestion for an unknown name.
std::unique_ptr<View> make_view(const std::string& name, const std::string& where = "view");
/// Splits "a,b" into checked view names (InputError for an unknown or empty one).
std::vector<std::string> parse_view_list(const std::string& list, const std::string& where = "--views");

/// The views a command line asks for: `list` ("a,b", may be empty) and a named group. With a
/// group and a file: the group is saved to the file when `list` is given, else loaded from it.
/// A group without a file is an error. Returns the names (empty: no views).
std::vector<std::string> views_from_options(const std::string& list, const std::string& group,
                                            const std::filesystem::path& groups_file);

/// Named view groups in a small TOML file (`[groups]` then `NAME = ["view", ...]`).
/// Reads the groups of a file; InputError with line:column for anything it does not understand.
std::vector<std::pair<std::string, std::vector<std::string>>> read_view_groups(const std::filesystem::path& path);
/// The same from text (`name` is used in messages).
std::vector<std::pair<std::string, std::vector<std::string>>> parse_view_groups(const std::string& text,
                                                                                 const std::string& name);
/// The views of group `group` in `path`; InputError (with a suggestion) when it is not there.
std::vector<std::string> load_view_group(const std::filesystem::path& path, const std::string& group);
/// Adds or replaces group `group` in `path` (created if missing), atomically.
void save_view_group(const std::filesystem::path& path, const std::string& group, const std::vector<std::string>& views);

}  // namespace kanoko::views
