// The 3-D scene of one run: bodies are lit spheres, springs are cylinders, and a clock dial HUD
// shows where in the run we are. The same scene graph is drawn by `kanoko render` (offscreen)
// and `kanoko view` (window); set_time() moves it to any trace time.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <filesystem>
#include <osg/BoundingSphere>
#include <osg/Camera>
#include <osg/Geometry>
#include <osg/Image>
#include <osg/Group>
#include <osg/MatrixTransform>
#include <osg/Matrixd>
#include <osg/Point>
#include <osg/PositionAttitudeTransform>
#include <osg/Uniform>
#include <osg/Vec3d>
#include <osg/Texture2D>
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
#include "src/trajectory/traffic.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::scene {

class BodyFormulas;

/// Clear colour behind the scene (dark blue-grey, so dark body colours still read).
[[nodiscard]] osg::Vec4 background_colour();

/// The mesh every body shares: a unit sphere at the origin, 128 triangles wound counter-clockwise
/// seen from outside, normals equal to positions.
[[nodiscard]] osg::ref_ptr<osg::Geometry> unit_sphere_geometry();
/// The mesh every spring shares: an open cylinder of radius 1 from z = 0 to z = 1.
[[nodiscard]] osg::ref_ptr<osg::Geometry> unit_cylinder_geometry();

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

/// How springs are coloured.
enum class SpringColours {
  off,      ///< all neutral grey
  tension,  ///< blue when shorter than at the start, red when longer
  traffic,  ///< grey to orange with the bytes the pair exchanges in the current interval
};
/// The next mode in the order tension, traffic, off (the key and the panel button cycle).
[[nodiscard]] SpringColours next_spring_colours(SpringColours c);
/// "tension", "traffic" or "off".
[[nodiscard]] const char* to_string(SpringColours c);
/// The mode named `text`; throws InputError naming `option` otherwise.
[[nodiscard]] SpringColours parse_spring_colours(std::string_view text, std::string_view option);

/// Patterns on the bodies (mesh style only), from the textures in assets/textures: none, one
/// per host (bodies of a host share a pattern; colours still tell them apart) or one per body
/// (cycling through the set).
enum class BodyTextures { none, host, body };
/// "none", "host", "body".
[[nodiscard]] const char* to_string(BodyTextures t);
/// The choice named `text`; throws InputError naming `option` otherwise.
[[nodiscard]] BodyTextures parse_body_textures(std::string_view text, std::string_view option);

/// Visual parameters of the scene (the viewer's paused panel changes them).
struct VisualOptions {
  double body_scale = 1.0;  ///< multiplies every drawn body radius; clamped to 0.25..4
  bool labels = false;      ///< labels beside the bodies
  /// What the labels say ([visual] labels, --labels=KIND): name, rank, host or index.
  mapping::LabelKind label_text = mapping::LabelKind::Name;
  bool grid = false;        ///< a ground grid under the run and x/y/z axes at its centre
  SpringColours spring_colours = SpringColours::tension;
  bool flashes = false;     ///< lines between the bodies that communicate in the current interval
  double trail_s = 0;       ///< trails of the last trail_s trace seconds; 0 draws none
  BodyTextures textures = BodyTextures::none;
  /// One image on every body (the mapping's [visual] texture), used while `textures` is none;
  /// mesh-drawn bodies only. Null: none.
  osg::ref_ptr<osg::Image> texture_image;
};

/// The folder of the shipped body textures: $KANOKO_ASSETS/textures, else the source tree's
/// assets/textures.
[[nodiscard]] std::filesystem::path body_texture_folder();
/// Its PNG files, sorted by name (the order in which bodies or hosts get them).
[[nodiscard]] std::vector<std::filesystem::path> body_texture_files();

/// Colour of a spring that carries `bytes` in the current interval when the busiest spring
/// carries `max_bytes`: neutral grey without traffic, towards orange (square-root scale).
[[nodiscard]] osg::Vec3 traffic_colour(double bytes, double max_bytes);

/// Bodies are labelled by default in runs of at most this many bodies.
inline constexpr std::size_t kDefaultLabelledBodies = 64;
/// A one-line caption for pictures and videos of a run: its trace and mapping (file names), or
/// the mapping's purpose, e.g. "trace ring.paje · mapping paper.toml".
[[nodiscard]] std::string run_caption(const trajectory::Reader& reader);

/// Throws InputError naming `file` if the run has no bodies (nothing to draw or view).
void check_has_bodies(const trajectory::Reader& reader, const std::string& file);

/// DejaVu Sans Mono for the panels (columns of label and value line up), from Debian's
/// fonts-dejavu-core; falls back to osgText's default font if it is missing.
[[nodiscard]] osg::ref_ptr<osgText::Font> monospace_font();

/// Colour of a spring whose length is `length` and was `length0` at the start: grey when
/// unchanged, towards blue when compressed and red when stretched (saturating at ±25%).
[[nodiscard]] osg::Vec3 tension_colour(double length, double length0);

/// What a set of found bodies does to the others: nothing, dimmed (the found ones stand out), or
/// hidden with their springs (only the found ones remain, and only they can be picked).
enum class BodyFilter { none, highlight, isolate };

/// How bodies are drawn. Picking is analytic, so it works the same for all three.
enum class BodyStyle {
  meshes,     ///< a lit low-poly sphere per body (one shared mesh, a transform each)
  impostors,  ///< one point sprite per body, shaded as a sphere in the fragment shader
  cloud,      ///< small points, no springs, a wire sphere per host (up to 512 hosts) around
              ///< its bodies' centre with their RMS spread as radius
};
/// Above this many bodies the scene uses impostors (llvmpipe's cost follows triangles).
inline constexpr std::size_t kImpostorThreshold = 2000;
/// Above this many bodies the scene draws a cloud aggregated by host (the paper's suggestion).
inline constexpr std::size_t kCloudThreshold = 50000;
/// Above this many springs (or with impostor bodies), springs are lines, not cylinders.
inline constexpr std::size_t kCylinderSpringLimit = 4000;
/// The style used for a run with this many bodies.
[[nodiscard]] BodyStyle body_style_for(std::size_t bodies);

/// Trails are drawn only for runs with at most this many bodies (each costs a polyline).
inline constexpr std::size_t kMaxTrailBodies = 2000;

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
  [[nodiscard]] double time_s() const { return time_s_; }

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
  [[nodiscard]] const Eigen::Matrix3Xd& positions() const { return positions_; }
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
  /// Text of the inspect panel (empty without a selection).
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
  /// The HUD camera (pixels, y up), where the viewer adds its panels.
  [[nodiscard]] osg::Camera* hud() const { return hud_.get(); }

 private:
  void build_world();
  void build_hud();
  void update_dial();
  void update_selection();
  void update_springs();
  void update_labels();
  void update_trails();
  void update_flashes();
  void apply_textures();
  /// Sets the body colours (meshes and points) from body_colour().
  void apply_body_colours();
  void build_labels();
  /// Index into textures_ of body i's pattern.
  [[nodiscard]] std::size_t texture_of(std::size_t body) const;
  void build_decorations();
  void build_point_bodies();
  void build_spring_lines();
  void update_point_bodies();
  /// Ratio drawn radius / base radius of body i from the mass statistic at the current time.
  [[nodiscard]] double mass_scale(std::size_t i) const;

  const trajectory::Reader* reader_;  ///< never null; set_reader() swaps it
  osg::BoundingSphered bound_;
  int mass_stat_ = -1;         ///< index of the "mass" statistic, or -1
  std::vector<double> mass0_;  ///< each body's mass in frame 0 (reference for the volume)
  Eigen::Matrix3Xd positions_;
  Eigen::MatrixXd stats_;
  double time_s_ = 0;
  double spring_radius_ = 0;
  DialLayout dial_;
  int width_px_;
  int height_px_;

  osg::ref_ptr<osg::Group> root_;
  osg::ref_ptr<osg::Group> world_;
  std::vector<osg::ref_ptr<osg::PositionAttitudeTransform>> bodies_;
  std::vector<osg::ref_ptr<osg::MatrixTransform>> springs_;
  osg::ref_ptr<osg::Camera> hud_;
  osg::ref_ptr<osg::MatrixTransform> dial_xform_;
  osg::ref_ptr<osg::MatrixTransform> hand_xform_;
  osg::ref_ptr<osg::Geometry> elapsed_wedge_;
  osg::ref_ptr<osgText::Text> time_label_;
  osg::ref_ptr<osgText::Text> status_label_;

  std::optional<Pick> selection_;
  osg::ref_ptr<osg::PositionAttitudeTransform> body_highlight_;
  VisualOptions visual_;
  std::vector<double> spring_length0_;  ///< length of each spring in frame 0
  std::vector<osg::ref_ptr<osg::Uniform>> spring_colours_;  ///< cylinder springs
  std::vector<osg::Vec3> spring_colour_values_;
  BodyStyle style_ = BodyStyle::meshes;
  osg::ref_ptr<osg::Geometry> points_;        ///< impostor or cloud bodies
  osg::ref_ptr<osg::Uniform> viewport_height_;  ///< impostors: framebuffer height in pixels
  osg::ref_ptr<osg::Point> cloud_point_;        ///< cloud: dot size
  osg::ref_ptr<osg::Geometry> spring_lines_;  ///< springs drawn as lines
  std::vector<std::size_t> host_of_body_;     ///< cloud: host index of each body
  std::vector<osg::ref_ptr<osg::PositionAttitudeTransform>> host_spheres_;
  osg::ref_ptr<osg::Group> decorations_;  ///< grid, labels, trails (not lit, not picked)
  osg::ref_ptr<osg::Node> grid_;
  osg::ref_ptr<osg::Geode> labels_;
  osg::ref_ptr<osg::Geometry> trails_;
  osg::ref_ptr<osg::Geometry> flashes_;       ///< communication flashes of the current interval
  IntervalTraffic traffic_;                   ///< the current interval's pairs (traffic section)
  std::vector<osg::ref_ptr<osg::Texture2D>> textures_;  ///< loaded on first use
  osg::ref_ptr<osg::Texture2D> image_texture_;          ///< of visual_.texture_image
  std::unique_ptr<BodyFormulas> formulas_;              ///< [visual] colour and scale, or null
  std::vector<osg::ref_ptr<osg::Uniform>> body_colours_;  ///< mesh bodies' colour uniforms
  mapping::LabelKind labels_built_for_ = mapping::LabelKind::Name;
  bool textures_tried_ = false;
  bool inspect_panel_visible_ = true;
  BodyFilter filter_ = BodyFilter::none;
  std::vector<bool> found_;
  float label_px_ = 14.0F;  ///< body label height in framebuffer pixels
  std::vector<std::size_t> host_index_;       ///< textures by host: each body's host number
  mutable PartnerTotals partners_;            ///< running totals for the inspect panel
  osg::ref_ptr<osgText::Text> inspect_panel_;
};

}  // namespace kanoko::scene
