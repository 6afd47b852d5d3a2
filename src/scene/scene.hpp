// The 3-D scene of one run: bodies are lit spheres, springs are cylinders, and a clock dial HUD
// shows where in the run we are. The same scene graph is drawn by `kanoko render` (offscreen)
// and `kanoko view` (window); set_time() moves it to any trace time.
//
// TrajectoryScene is a thin composition of layers with one job each (src/scene/layers: bodies,
// springs, decorations, labels, trails, the dial and the HUD text). set_time() reads the run once
// into a FrameState (positions, statistics, radii, colours, the interval's traffic, trail samples,
// the inspect text) and hands it to every layer's update(); docs/viewer.md, "The scene's code".
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <filesystem>
#include <osg/BoundingSphere>
#include <osg/Camera>
#include <osg/Geometry>
#include <osg/Group>
#include <osg/Matrixd>
#include <osg/Vec3d>
#include <osg/Vec4>
#include <osgText/Text>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/mapping/mapping.hpp"
#include "src/scene/dial.hpp"
#include "src/scene/inspect.hpp"
#include "src/scene/legend.hpp"
#include "src/scene/layers/frame_state.hpp"
#include "src/scene/layers/scene_graph.hpp"
#include "src/scene/layers/visual_options.hpp"
#include "src/trajectory/hierarchy.hpp"
#include "src/trajectory/traffic.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::scene {

class BodyFormulas;
namespace layers {
class BodiesLayer;
class SpringsLayer;
class DecorationsLayer;
class TrailsLayer;
class LabelsLayer;
class DialLayer;
class HudLayer;
class LegendLayer;
class GroupsLayer;
}  // namespace layers

/// Bounding sphere of every body over the whole run, sphere radii included: the positions of up
/// to 64 evenly spaced stored frames (first and last always among them). Never empty: a run whose
/// bodies all sit at one point gets the largest body radius (or 1) as radius.
[[nodiscard]] osg::BoundingSphered run_bound(const trajectory::Reader& reader);

/// Where the camera sits to frame the whole run.
struct HomeView {
  osg::Vec3d eye;
  osg::Vec3d centre;
  osg::Vec3d up;
  double fovy_deg = 30.0;  ///< vertical field of view
  double near_m = 0.1;     ///< clip planes that enclose the run bound
  double far_m = 100.0;
};

/// Home view for a bound seen in a viewport of the given aspect (width / height): from a slightly
/// elevated oblique direction (azimuth 35°, elevation 25°, z up), far enough that the whole
/// bound fits both horizontally and vertically.
[[nodiscard]] HomeView home_view(const osg::BoundingSphered& bound, double aspect);

/// The camera a render uses: view and projection matrices and the viewport size.
struct CameraMatrices {
  osg::Matrixd view;
  osg::Matrixd projection;
  int width_px = 0;
  int height_px = 0;

  /// Window coordinates of a world point: x, y in pixels from the bottom-left corner, z the
  /// depth (0 near .. 1 far).
  [[nodiscard]] osg::Vec3d to_window(const osg::Vec3d& world) const;
};

/// The camera `kanoko render` uses for a run at the given image size: the home view of
/// run_bound() with fixed near/far planes.
[[nodiscard]] CameraMatrices render_camera(const trajectory::Reader& reader, int width_px,
                                           int height_px);
/// The same for a bound (a scene's bound(), which makes room for bodies the mapping enlarges).
[[nodiscard]] CameraMatrices render_camera(const osg::BoundingSphered& bound, int width_px, int height_px);

/// The level of `h` a scene draws by default: ranks while they are at most kCloudThreshold, else
/// the finest level with at most that many groups (hosts when ranks are too many), else ranks
/// (the cloud of dots, the last resort).
[[nodiscard]] std::size_t default_level(const trajectory::Hierarchy& h);

/// Bodies are labelled by default in runs of at most this many bodies.
inline constexpr std::size_t kDefaultLabelledBodies = 64;
/// A one-line caption for pictures and videos of a run: its trace and mapping (file names), or
/// the mapping's purpose, e.g. "trace ring.paje · mapping paper.toml".
[[nodiscard]] std::string run_caption(const trajectory::Reader& reader);

/// Throws InputError naming `file` if the run has no bodies (nothing to draw or view).
void check_has_bodies(const trajectory::Reader& reader, const std::string& file);

/// The scene graph of one run, kept in step with a trace time. Holds a reference to the reader,
/// which must outlive it.
class TrajectoryScene {
 public:
  /// Builds bodies, springs and the HUD for a window of the given size, at the run's first
  /// frame. `style` overrides body_style_for() (benchmarks compare the styles).
  TrajectoryScene(const trajectory::Reader& reader, int width_px, int height_px,
                  std::optional<BodyStyle> style = std::nullopt);
  ~TrajectoryScene();
  TrajectoryScene(const TrajectoryScene&) = delete;
  TrajectoryScene& operator=(const TrajectoryScene&) = delete;

  /// Colours and sizes bodies by the [visual] `colour` and `scale` formulas of `m` (the run's
  /// own mapping, src/scene/mapping_visual.hpp); without them nothing changes. `run` names the
  /// run in messages. Throws InputError or RunError as BodyFormulas does.
  void use_mapping_formulas(const mapping::Mapping& m, const std::string& run);
  /// The formulas in use, or null.
  [[nodiscard]] const BodyFormulas* formulas() const { return formulas_.get(); }
  /// Colour body i is drawn in now (the formula's, else the run's own), RGB 0..1.
  [[nodiscard]] osg::Vec3 body_colour(std::size_t i) const;

  /// Root of everything to draw: the 3-D world and the HUD camera.
  [[nodiscard]] osg::Group* root() const { return root_.get(); }
  /// The 3-D part only (bodies and springs); what a camera manipulator or picker looks at.
  [[nodiscard]] osg::Group* world() const { return world_.get(); }

  /// Moves bodies, springs and the dial to trace time t (clamped to the stored frames).
  void set_time(double t_s);
  /// Shows another run of the same bodies and springs from now on (the viewer's re-simulation):
  /// same body count, springs and frame times are required (KANOKO_ASSERT). `reader` must
  /// outlive the scene or the next set_reader().
  void set_reader(const trajectory::Reader& reader);
  /// The run shown.
  [[nodiscard]] const trajectory::Reader& reader() const { return *reader_; }
  /// The trace time the scene shows.
  [[nodiscard]] double time_s() const { return frame_.time_s; }

  /// How the bodies are drawn.
  [[nodiscard]] BodyStyle body_style() const { return style_; }
  /// Height in pixels of the framebuffer the scene is drawn into (sizes the impostors); set by
  /// set_window_size(), and by renderers that draw at a multiple of the window size.
  void set_framebuffer_height(int height_px);

  /// Lays the HUD out for a new window size.
  void set_window_size(int width_px, int height_px);
  /// Width of the window (or image) the HUD is laid out for.
  [[nodiscard]] int width_px() const { return width_px_; }
  /// Height of the window (or image) the HUD is laid out for.
  [[nodiscard]] int height_px() const { return height_px_; }
  /// Text in the bottom-left corner (playback state in the viewer; empty in renders).
  void set_status(const std::string& text);

  /// Current dial placement (pixels, y up), for hit tests.
  [[nodiscard]] const DialLayout& dial() const { return dial_; }
  /// Body positions at the current time, 3×N.
  [[nodiscard]] const Eigen::Matrix3Xd& positions() const { return frame_.positions; }
  /// Everything the layers show now (computed by set_time(), kept up to date by select(),
  /// set_body_filter() and set_visual()).
  [[nodiscard]] const layers::FrameState& frame() const { return frame_; }
  /// Drawn sphere radius of body i at the current time (base radius × mass scale × the
  /// mapping's `scale` × the panel's body scale).
  [[nodiscard]] double drawn_radius(std::size_t i) const;
  /// The bound used for the home view.
  [[nodiscard]] const osg::BoundingSphered& bound() const { return bound_; }

  /// What a click at normalised window coordinates (-1..1, y up) hits, seen through a camera
  /// with these matrices: analytic ray–sphere and ray–segment tests on the current positions.
  [[nodiscard]] std::optional<Pick> pick_at(const osg::Matrixd& view,
                                            const osg::Matrixd& projection, double x_normalised,
                                            double y_normalised) const;
  /// Selects a body or spring (highlighted, its statistics in the panel at the top left), or
  /// clears the selection.
  void select(const std::optional<Pick>& pick);
  /// The current selection.
  [[nodiscard]] const std::optional<Pick>& selection() const { return selection_; }
  /// Text of the inspect panel (empty without a selection), as of the last set_time() or select().
  [[nodiscard]] std::string inspect_text() const;
  /// Applies `mode` with `found[i]` true for the found bodies (size = body count; empty with
  /// `none`).
  void set_body_filter(BodyFilter mode, std::vector<bool> found);
  [[nodiscard]] BodyFilter body_filter() const { return filter_; }
  /// False for a body the filter hides.
  [[nodiscard]] bool body_shown(std::size_t i) const {
    return filter_ != BodyFilter::isolate || i >= found_.size() || found_[i];
  }
  /// True for a body the filter (highlight or isolate) marks as found.
  [[nodiscard]] bool body_found(std::size_t i) const { return filter_ != BodyFilter::none && i < found_.size() && found_[i]; }
  /// Whether the HUD draws the inspect panel (the viewer shows inspect_text() in its own side
  /// panel instead).
  void set_inspect_panel_visible(bool on);

  /// Changes the visual parameters (takes effect at once).
  void set_visual(const VisualOptions& options);
  /// The current visual parameters.
  [[nodiscard]] const VisualOptions& visual() const { return visual_; }
  /// Current colour of spring e (tension colour, neutral, or the highlight when selected).
  [[nodiscard]] osg::Vec3 spring_colour(std::size_t e) const;
  /// The colour key of what the scene shows now (body colours, spring colours, flashes): the
  /// viewer's side panel draws it, and the HUD box when visual().legend is on.
  [[nodiscard]] const Legend& legend() const { return legend_; }
  /// Where the HUD box draws the key (an empty box when visual().legend is off).
  [[nodiscard]] const LegendLayout& legend_layout() const;
  /// The run's levels of detail (rank, host, ...; src/trajectory/hierarchy.hpp).
  [[nodiscard]] const trajectory::Hierarchy& hierarchy() const { return *hierarchy_; }
  /// What is drawn: each item of the cut a rank, or a closed group drawn as one body at its
  /// members' centroid (whose members are hidden). Starts at default_level().
  [[nodiscard]] const trajectory::Cut& cut() const { return *cut_; }
  /// Draws every group of `level` closed (0: every rank on its own).
  void set_level(std::size_t level);
  /// Opens item `item` of the cut into the groups (or ranks) of the level below; false for a rank.
  bool open_group(std::size_t item);
  /// Closes the group of the level above item `item` back into one body; false at the top level.
  bool close_group(std::size_t item);
  /// The cut item drawing the group or rank named `name`, if it is drawn as an item of its own.
  [[nodiscard]] std::optional<std::size_t> item_named(std::string_view name) const;
  /// Closed groups drawn now, their items and where they are (centroid) and how large.
  [[nodiscard]] const layers::GroupsLayer& groups() const { return *groups_; }
  /// The bodies' trails (the groups' own are groups().trails()).
  [[nodiscard]] const layers::TrailsLayer& trails() const { return *trails_; }
  /// World position of cut item `item` now (a rank's position, a group's centroid).
  [[nodiscard]] Eigen::Vector3d item_position(std::size_t item) const;

  /// The HUD camera (pixels, y up), where the viewer adds its panels.
  [[nodiscard]] osg::Camera* hud() const { return hud_.get(); }

 private:
  /// Reads the run at frame_.time_s into the frame state (positions, statistics, formulas, radii,
  /// interval, traffic, trail samples, inspect text).
  void compute_frame();
  /// frame_.radii and frame_.shown from the statistics, formulas, filter and body scale.
  void compute_radii();
  /// frame_.colours from body_colour() (a new colours_version).
  void compute_colours();
  /// Every layer's update from frame_.
  void update_layers();
  /// Rebuilds the groups for the cut, keeps a selected group that is still drawn, redraws.
  void cut_changed(std::optional<trajectory::Cut::Item> selected);
  /// True when some item of the cut is a closed group (its members are hidden).
  [[nodiscard]] bool grouped() const;
  /// The inspect text for the selection at frame_.time_s, from the run (empty without one).
  [[nodiscard]] std::string inspect_text_now() const;
  /// legend_ from the formulas and the visual options, and the HUD box from it.
  void refresh_legend();
  /// Ratio drawn radius / base radius of body i from the mass statistic at the current time.
  [[nodiscard]] double mass_scale(std::size_t i) const;

  const trajectory::Reader* reader_;  ///< never null; set_reader() swaps it
  osg::BoundingSphered bound_;
  int mass_stat_ = -1;         ///< index of the "mass" statistic, or -1
  std::vector<double> mass0_;  ///< each body's mass in frame 0 (reference for the volume)
  layers::FrameState frame_;   ///< what every layer shows now
  DialLayout dial_;
  int width_px_;
  int height_px_;
  BodyStyle style_ = BodyStyle::meshes;
  VisualOptions visual_;
  std::optional<Pick> selection_;
  BodyFilter filter_ = BodyFilter::none;
  std::vector<bool> found_;
  std::unique_ptr<BodyFormulas> formulas_;  ///< [visual] colour and scale, or null
  IntervalTraffic traffic_;                 ///< the current interval's pairs (traffic section)
  mutable PartnerTotals partners_;          ///< running totals for the inspect panel

  osg::ref_ptr<osg::Group> root_;
  osg::ref_ptr<osg::Group> world_;
  osg::ref_ptr<osg::Group> decorations_;  ///< grid, trails, flashes, labels (unlit, not picked)
  osg::ref_ptr<osg::Camera> hud_;
  std::unique_ptr<layers::SpringsLayer> springs_;
  std::unique_ptr<layers::BodiesLayer> bodies_;
  std::unique_ptr<layers::DecorationsLayer> decorations_layer_;
  std::unique_ptr<layers::TrailsLayer> trails_;
  std::unique_ptr<layers::LabelsLayer> labels_;
  std::unique_ptr<layers::DialLayer> dial_layer_;
  std::unique_ptr<layers::HudLayer> hud_text_;
  std::unique_ptr<layers::LegendLayer> legend_layer_;
  Legend legend_;
  std::unique_ptr<trajectory::Hierarchy> hierarchy_;
  std::unique_ptr<trajectory::Cut> cut_;
  std::unique_ptr<layers::GroupsLayer> groups_;
  layers::FrameState flash_frame_;  ///< while grouped: the flashes between the drawn items
};

}  // namespace kanoko::scene
