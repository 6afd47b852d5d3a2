// `kanoko render`: one picture of a run at one trace time, drawn offscreen (no window), with the
// same scene the viewer shows.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <optional>
#include <osg/Image>
#include <string_view>

#include "src/scene/offscreen.hpp"
#include "src/scene/scene.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::scene {

/// Width and height of an image or window in pixels.
struct ImageSize {
  int width_px = 0;
  int height_px = 0;
};

/// Parses "WIDTHxHEIGHT" (e.g. "800x600", 16..8192 each); throws InputError naming `option`.
[[nodiscard]] ImageSize parse_image_size(std::string_view text, std::string_view option);

/// What to render.
struct RenderOptions {
  ImageSize size{800, 600};
  double time_s = 0;  ///< trace time (clamped to the stored frames)
  /// Drawn at this many times the size in each direction (1..4, lowered so the framebuffer side
  /// stays <= 4096 px) and box-filtered down: anti-aliasing that does not depend on the driver's
  /// multisampling.
  int supersample = 2;
  Backend backend = Backend::automatic;
  /// How bodies are drawn; by default chosen from the body count (body_style_for()).
  std::optional<BodyStyle> style;
  /// Labels, grid, spring colours, flashes, trails (the defaults draw tension colours only).
  VisualOptions visual;
  /// The run's own mapping (stored_mapping()): its [visual] colour and scale formulas colour and
  /// size the bodies. Null: the run's own colours.
  std::shared_ptr<const mapping::Mapping> mapping;
  /// The run's name in messages.
  std::string run_name = "the run";
  /// A level of the run's hierarchy to draw, each group as one body ("": the scene's default);
  /// one the run does not have is an InputError at --level listing its levels.
  std::string level;
};

/// A rendered picture and the camera that drew it.
struct RenderResult {
  osg::ref_ptr<osg::Image> image;  ///< RGB, size.width_px × size.height_px, origin bottom-left
  CameraMatrices camera;           ///< at the output size: to_window() gives output pixels
  Backend backend_used = Backend::automatic;
};

/// Renders the run at options.time_s. Throws RunError if no offscreen context can be made.
[[nodiscard]] RenderResult render_image(const trajectory::Reader& reader,
                                        const RenderOptions& options);

/// Renders and writes the picture atomically to `output` (format from its extension, PNG
/// recommended): a failed render leaves no file behind.
RenderResult render_to_file(const trajectory::Reader& reader, const RenderOptions& options,
                            const std::filesystem::path& output);

}  // namespace kanoko::scene
