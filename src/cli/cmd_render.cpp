// kanoko render: one picture of a simulated run, drawn offscreen (works without a display).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>

#include "src/base/error.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/options.hpp"
#include "src/scene/render.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::cli {

int cmd_render(const Args& args) {
  const CommandSpec spec{
      "render", "RUN.kntj -o OUT.png [--frame SECONDS] [--size WxH]",
      "Draws the run at one trace time to an image, without opening a window: bodies as lit\n"
      "spheres (volume follows mass when the run stores it), springs as cylinders, and the clock\n"
      "dial (12 o'clock = start of the run, clockwise, 6 o'clock = half-way). The camera frames\n"
      "every body over the whole run. With DISPLAY set it draws in a GLX pbuffer, otherwise with\n"
      "EGL (no X server needed). The image is written atomically.",
      "  kanoko render ring.kntj -o ring.png\n"
      "  kanoko render ring.kntj --frame 1.5 --size 1280x720 -o ring-1.5s.png\n"};

  std::string run;
  std::string output;
  std::string size_text;
  std::string backend_text;
  po::options_description options("Options");
  options.add_options()("run", po::value<std::string>(&run)->required(),
                        "trajectory file from 'kanoko simulate' (the first argument)")(
      "output,o", po::value<std::string>(&output)->required(), "image to write (.png)")(
      "frame", po::value<double>(), "trace time to draw, in seconds (default: end of the run)")(
      "time", po::value<double>(), "same as --frame")(
      "size", po::value<std::string>(&size_text)->default_value("800x600"),
      "image size in pixels, WIDTHxHEIGHT")(
      "backend", po::value<std::string>(&backend_text)->default_value("auto"),
      "offscreen OpenGL: auto (GLX if DISPLAY is set, else EGL), glx or egl");
  po::positional_options_description positional;
  positional.add("run", 1);
  po::variables_map vm;
  if (!parse_command_line(spec, options, positional, args, vm)) return 0;

  if (vm.count("frame") != 0U && vm.count("time") != 0U) {
    throw InputError(FileLoc{"kanoko render"}, "give the time with --frame or --time, not both");
  }
  scene::RenderOptions render;
  render.size = scene::parse_image_size(size_text, "--size");
  render.backend = scene::parse_backend(backend_text, "--backend");

  const trajectory::Reader reader(run);
  const double begin = reader.begin_time();
  const double end = reader.end_time();
  render.time_s = end;
  for (const char* name : {"frame", "time"}) {
    if (vm.count(name) == 0U) continue;
    const double t = vm[name].as<double>();
    // Allow a hair of rounding at the ends (times typed from printed values).
    const double tolerance = 1e-9 * std::max(1.0, std::abs(end - begin));
    if (!std::isfinite(t) || t < begin - tolerance || t > end + tolerance) {
      throw InputError(FileLoc{std::string("--") + name},
                       "time " + std::to_string(t) + " s is outside the run, which goes from " +
                           std::to_string(begin) + " s to " + std::to_string(end) + " s");
    }
    render.time_s = std::clamp(t, begin, end);
  }

  const scene::RenderResult result = scene::render_to_file(reader, render, output);
  std::cout << "wrote " << output << " (" << render.size.width_px << 'x' << render.size.height_px
            << ", t = " << render.time_s << " s, " << scene::backend_name(result.backend_used)
            << ")\n";
  return 0;
}

}  // namespace kanoko::cli
