// The colour key of a run, one model for every place that shows it: the viewer's side panel (Dear
// ImGui, src/scene/viewer_ui.cpp) and the boxed key in `kanoko render` pictures and videos
// (src/scene/layers/legend_layer.hpp). What is coloured and by which scale is decided here, once:
// the bodies (the [visual] colour formula through its colour map with its range, or the run's own
// palette colours as named swatches) and the springs (tension or traffic scale). Plain data and
// plain geometry (no OpenSceneGraph, no ImGui), so tests check it without a display.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "src/mapping/mapping.hpp"
#include "src/scene/layers/visual_options.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::scene {

/// Linear RGB in [0, 1].
using LegendRgb = std::array<float, 3>;

/// One named colour: "node3 (4 bodies)".
struct LegendSwatch {
  LegendRgb rgb{};
  std::string label;
};

/// One line of the key: a title and a gradient, swatches or nothing more.
struct LegendEntry {
  enum class Kind { gradient, swatches, note };
  Kind kind = Kind::note;
  std::string title;  ///< "Bodies: busy", "Springs: tension"
  /// Gradient: the colour at kGradientSamples evenly spaced points from the low end (first) to
  /// the high end (last), both ends included; drawn linearly between them.
  std::vector<LegendRgb> samples;
  std::string low;   ///< gradient: label of the low end, with its unit ("0 %", "-25 % shorter")
  std::string high;  ///< gradient: label of the high end
  std::vector<LegendSwatch> swatches;  ///< swatches: at most the legend's swatch limit
  std::size_t more = 0;                ///< swatches: distinct colours left out ("… and 3 more")
};

/// Samples of a gradient entry.
inline constexpr std::size_t kGradientSamples = 33;
/// Distinct body colours listed by name; the others are counted.
inline constexpr std::size_t kLegendSwatches = 10;

/// The key: its entries in drawing order (bodies first, then springs, then notes).
struct Legend {
  std::vector<LegendEntry> entries;
};

/// How the bodies are coloured by formula (the [visual] colour through its map and range).
struct BodyColourScale {
  mapping::ColourMap map = mapping::ColourMap::Cividis;
  std::array<double, 2> range{0.0, 1.0};  ///< values at the two ends of the map
  std::string quantity;                   ///< the formula's text ("load", "busy", "bytes_sent/1e6")
};

/// What the key is computed from.
struct LegendInputs {
  /// The run's bodies: their own (palette) colours, names and hosts.
  const std::vector<trajectory::BodyInfo>* bodies = nullptr;
  /// Set when a formula colours the bodies; otherwise their own colours are listed as swatches.
  std::optional<BodyColourScale> body_scale;
  /// The closed groups drawn (levels of detail), each as one body with its own colour; null or
  /// empty when none. Listed as swatches, or, when a formula colours the bodies, as a note that
  /// the groups take the formula on their summed statistics.
  const std::vector<trajectory::BodyInfo>* groups = nullptr;
  std::size_t springs = 0;  ///< springs drawn (no spring entry without any)
  SpringColours spring_colours = SpringColours::tension;
  bool flashes = false;  ///< communication flashes drawn
  std::size_t max_swatches = kLegendSwatches;
};

/// The key for these inputs.
[[nodiscard]] Legend make_legend(const LegendInputs& in);

/// A value of the body colour formula as a gradient end label: when the formula is one stored
/// statistic, in its unit (busy, communicating, idle as "55.0 %", bytes in B or KiB ...:
/// trajectory::format_stat_value, as the inspect panel writes them); otherwise "%.4g".
[[nodiscard]] std::string format_legend_value(const std::string& quantity, double value);

/// An axis-aligned rectangle in window pixels, origin bottom-left, y up.
struct LegendRect {
  double x = 0;
  double y = 0;
  double w = 0;
  double h = 0;
  [[nodiscard]] double right() const { return x + w; }
  [[nodiscard]] double top() const { return y + h; }
  [[nodiscard]] bool overlaps(const LegendRect& o) const {
    return x < o.right() && o.x < right() && y < o.top() && o.y < top();
  }
};

/// Where each part of the key goes in a picture.
struct LegendLayout {
  struct Text {
    std::string text;
    double x = 0;         ///< left end of the baseline (right end when right_aligned)
    double baseline = 0;  ///< y of the baseline
    bool right_aligned = false;
  };
  struct Bar {
    LegendRect rect;               ///< the gradient's bar; samples spread from left to right
    std::vector<LegendRgb> samples;
  };
  struct Swatch {
    LegendRect rect;
    LegendRgb rgb{};
  };
  LegendRect box;  ///< the backdrop; empty (w = 0) when there is nothing to draw
  double text_px = 0;  ///< character height of every text
  std::vector<Text> texts;
  std::vector<Bar> bars;
  std::vector<Swatch> swatches;
};

/// Pictures smaller than this have no room for a key beside the run: it is left out.
inline constexpr int kLegendMinWidth_px = 640;
inline constexpr int kLegendMinHeight_px = 480;

/// Width in pixels of a text at a character height (osgText's measure in the layer).
using TextWidth = std::function<double(const std::string& text, double size_px)>;

/// Lays the key out in the top-right corner of a width × height picture: text `text_px` high,
/// each gradient bar 10 text heights wide (wider when a title is), swatches as squares before
/// their names, on a backdrop whose bottom stays above `floor_px` (the dial's top): swatches that
/// do not fit are counted in the "… and K more" line instead; a gradient's end labels share the
/// row under its bar when they fit side by side. Nothing when the key is empty or the picture is
/// smaller than kLegendMinWidth_px × kLegendMinHeight_px.
[[nodiscard]] LegendLayout layout_legend(const Legend& legend, int width_px, int height_px, double text_px,
                                         double floor_px, const TextWidth& text_width);

}  // namespace kanoko::scene
