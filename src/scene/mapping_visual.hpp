// The run's own mapping in the scene: `kanoko view` and `kanoko render` draw what the [visual]
// section of the mapping stored in the run asks for (docs/mapping-language.md, [visual]): body
// colours from the `colour` formula through the colour map, radius scales from `scale`, one image
// on every body from `texture`, the label text and the trail length. The command line overrides
// each of them. Formulas are the mapping's own compiled expressions (src/mapping/expression),
// evaluated once per stored frame from the statistics the run stores with it.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/mapping/expression.hpp"
#include "src/mapping/mapping.hpp"
#include "src/scene/scene.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::scene {

/// The mapping stored in the run (`kanoko simulate` keeps its text), parsed under its recorded
/// path so that `texture` resolves against the mapping's folder; nullptr when the run stores none.
/// Throws InputError at the mapping's own file:line:column (e.g. a texture that is not a file).
[[nodiscard]] std::shared_ptr<const mapping::Mapping> stored_mapping(const trajectory::Reader& reader,
                                                                     const std::string& run);

/// What the command line chose; an unset field comes from the mapping's [visual], else the
/// default.
struct VisualOverrides {
  std::optional<mapping::LabelKind> labels;  ///< --labels[=KIND]; LabelKind::None hides them
  std::optional<double> trail_s;             ///< --trail
  std::optional<BodyTextures> textures;      ///< --textures; `none` also drops the mapping's image
};

/// `base` with the [visual] choices of `m` (may be null) and then `cli` applied: labels (shown
/// from the start when the mapping names a kind other than none), trails and the texture image,
/// loaded here with osgDB. An image osgDB cannot read is an InputError at `visual.texture`
/// naming the file.
[[nodiscard]] VisualOptions visual_from_mapping(const mapping::Mapping* m, const VisualOverrides& cli,
                                                VisualOptions base);

/// A run opened to be drawn (`kanoko view`, `kanoko render` to a picture or a video): the reader
/// of a run with bodies, its stored mapping and the visual options from `base`, the mapping's
/// [visual] and `cli` (labels on by default up to kDefaultLabelledBodies bodies).
struct DrawnRun {
  std::unique_ptr<trajectory::Reader> reader;
  std::shared_ptr<const mapping::Mapping> mapping;  ///< may be null
  VisualOptions visual;
};
/// Opens `run` that way; InputError for a run without bodies or a bad stored [visual]. With
/// Open::partial, a run still being written opens with the frames it has (`kanoko view` follows it).
[[nodiscard]] DrawnRun open_drawn_run(const std::string& run, const VisualOverrides& cli, VisualOptions base,
                                      trajectory::Open open = trajectory::Open::complete);
/// The same for a run `reader` already opened (named `run` in errors).
[[nodiscard]] DrawnRun drawn_run_of(std::unique_ptr<trajectory::Reader> reader, const std::string& run,
                                    const VisualOverrides& cli, VisualOptions base);

/// The label kind named `text` (none, name, rank, host, index); throws InputError naming
/// `option` otherwise.
[[nodiscard]] mapping::LabelKind parse_label_kind(const std::string& text, const std::string& option);

/// A trail length from the command line: `seconds` if finite and ≥ 0, else an InputError naming
/// `option`.
[[nodiscard]] double checked_trail(double seconds, const std::string& option);

/// The text a label shows for body i under `kind` (name, rank, host or index; the index when the
/// run has no such datum).
[[nodiscard]] std::string label_text(const trajectory::BodyInfo& body, std::size_t index, mapping::LabelKind kind);

/// True when the mapping colours bodies by formula: it gives `colour`, `colour_map` or
/// `colour_range` in [visual]. Otherwise each body keeps the run's own (palette) colour.
[[nodiscard]] bool mapping_colours_bodies(const mapping::Mapping& m);

/// Per-body colours and radius scales from the [visual] `colour` and `scale` formulas. Each
/// formula is evaluated for every body once per stored frame (the statistics are constant between
/// frames), into arrays allocated once. The constructor evaluates every interval of the run: for
/// `colour_range = "auto"`, and so that a bad value (not finite; a negative scale) is an error at
/// load time, naming the formula's location, the body and the time, not a failure mid-playback.
class BodyFormulas {
 public:
  /// Throws InputError when a formula reads a variable the run does not store (e.g. `busy` when
  /// [mass] load is "samples") and RunError for a bad value.
  BodyFormulas(const mapping::Mapping& m, const trajectory::Reader& reader, const std::string& run);
  BodyFormulas(const BodyFormulas&) = delete;
  BodyFormulas& operator=(const BodyFormulas&) = delete;
  ~BodyFormulas();

  [[nodiscard]] bool has_colour() const { return colour_.valid(); }
  [[nodiscard]] bool has_scale() const { return scale_.valid(); }
  /// Evaluates for the stored frame of `reader` (a run of the same bodies) at or before trace time
  /// t; does nothing when that frame of that run was the last one evaluated. Returns true when it
  /// evaluated. No allocation.
  bool update(const trajectory::Reader& reader, double t_s);
  /// The colour formula's colour (through the same map and range) for a group of bodies drawn as
  /// one: its statistics `stats` (one per statistic of the run, as trajectory::aggregate gives
  /// them: sums, and means of the fractions), its other variables (index, rank, degree) those of
  /// its first member `first_body`. Requires has_colour(). No allocation.
  [[nodiscard]] std::array<float, 3> aggregate_colour(const Eigen::Ref<const Eigen::VectorXd>& stats, std::size_t first_body);
  /// Colours (RGB 0..1) and radius scales of the last update, one per body.
  [[nodiscard]] const std::vector<std::array<float, 3>>& colours() const { return colours_; }
  [[nodiscard]] const std::vector<double>& scales() const { return scales_; }
  /// The colour map the colour formula goes through.
  [[nodiscard]] mapping::ColourMap colour_map() const { return map_; }
  /// The values mapped to the two ends of the colour map.
  [[nodiscard]] std::array<double, 2> colour_range() const { return range_; }
  /// The colour formula's text ("load" when [visual] gives only the map or the range).
  [[nodiscard]] const std::string& colour_text() const { return colour_text_; }
  /// The largest scale over the run (the home view makes room for it).
  [[nodiscard]] double max_scale() const { return max_scale_; }

 private:
  /// Sets the variables of body i in frame `f`.
  void fill(const trajectory::FrameView& f, std::size_t i);
  /// Evaluates both formulas for every body of frame k of `reader` into the value arrays.
  void evaluate(const trajectory::Reader& reader, std::size_t k, bool check);

  mapping::ColourMap map_;
  std::string colour_text_;
  std::array<double, mapping::kBodyVarCount> vars_{};
  mapping::Expression colour_;
  mapping::Expression scale_;
  /// For each body variable: the row of the run's statistics it is read from, or -1 when it is
  /// not a statistic (index, rank, ... are filled from the metadata).
  std::array<int, mapping::kBodyVarCount> stat_row_{};
  std::vector<double> rank_;
  std::vector<double> degree_;
  double peak_bytes_ = 0;
  double peak_msgs_ = 0;
  std::array<double, 2> range_{0.0, 1.0};
  double max_scale_ = 1.0;
  std::vector<double> values_;  ///< raw colour values of the frame being evaluated
  std::vector<std::array<float, 3>> colours_;
  std::vector<double> scales_;
  const trajectory::Reader* last_reader_ = nullptr;
  std::size_t last_frame_ = 0;
  std::string run_;
};

}  // namespace kanoko::scene
