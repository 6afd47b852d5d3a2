#include "src/scene/render.hpp"

#include <algorithm>
#include <charconv>
#include <string>

#include "src/base/error.hpp"

namespace kanoko::scene {

namespace {
constexpr int kMinSide_px = 16;
constexpr int kMaxSide_px = 8192;
constexpr int kMaxSupersample = 4;
constexpr int kMaxSupersampledSide_px = 4096;

bool parse_int(std::string_view s, int& out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}
}  // namespace

ImageSize parse_image_size(std::string_view text, std::string_view option) {
  const auto x = text.find_first_of("xX");
  ImageSize size;
  if (x == std::string_view::npos || !parse_int(text.substr(0, x), size.width_px) ||
      !parse_int(text.substr(x + 1), size.height_px)) {
    throw InputError(
        FileLoc{std::string(option)},
        "expected WIDTHxHEIGHT in pixels, e.g. 800x600, got '" + std::string(text) + "'");
  }
  if (size.width_px < kMinSide_px || size.height_px < kMinSide_px || size.width_px > kMaxSide_px ||
      size.height_px > kMaxSide_px) {
    throw InputError(FileLoc{std::string(option)},
                     "each side must be between " + std::to_string(kMinSide_px) + " and " +
                         std::to_string(kMaxSide_px) + " pixels, got '" + std::string(text) + "'");
  }
  return size;
}

RenderResult render_image(const trajectory::Reader& reader, const RenderOptions& options) {
  const int w = options.size.width_px;
  const int h = options.size.height_px;
  int ss = std::clamp(options.supersample, 1, kMaxSupersample);
  // Large pictures need no anti-aliasing help, and their framebuffer would grow by ss².
  while (ss > 1 && std::max(w, h) * ss > kMaxSupersampledSide_px) --ss;
  // The HUD is laid out in output pixels; its orthographic projection maps them onto the larger
  // framebuffer, so text and dial scale with the supersampling.
  TrajectoryScene scene(reader, w, h, options.style);
  scene.set_framebuffer_height(h * ss);
  if (options.mapping) scene.use_mapping_formulas(*options.mapping, options.run_name);
  scene.set_visual(options.visual);
  if (!options.level.empty()) scene.set_level(scene.hierarchy().level_index(options.level, "--level"));
  scene.set_status(run_caption(reader));  // what the picture shows; the dial says when
  scene.set_time(options.time_s);

  RenderResult result;
  result.camera = render_camera(scene.bound(), w, h);
  OffscreenRequest request;
  request.scene = scene.root();
  request.view = result.camera.view;
  request.projection = result.camera.projection;
  request.clear_colour = background_colour();
  request.width_px = w * ss;
  request.height_px = h * ss;
  request.backend = options.backend;
  OffscreenResult drawn = draw_offscreen(request);
  result.image = downsample_rgb(*drawn.image, ss);
  result.backend_used = drawn.backend_used;
  return result;
}

RenderResult render_to_file(const trajectory::Reader& reader, const RenderOptions& options,
                            const std::filesystem::path& output) {
  check_image_output(output);  // fail before the (slow) draw, not after
  RenderResult result = render_image(reader, options);
  write_image_atomically(*result.image, output);
  return result;
}

}  // namespace kanoko::scene
