// kanoko render: a picture or an animation of a simulated run, drawn offscreen (works without a
// display).
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>

#include "src/base/error.hpp"
#include "src/base/output_target.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/options.hpp"
#include "src/scene/inspect.hpp"
#include "src/scene/mapping_visual.hpp"
#include "src/scene/render.hpp"
#include "src/scene/video.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::cli {

namespace {

bool is_video_file(const std::filesystem::path& output) {
  std::string ext = output.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* v : {".mp4", ".mkv", ".mov", ".webm", ".avi", ".gif"}) {
    if (ext == v) return true;
  }
  return false;
}

// A trace time given on the command line, checked against the run.
double run_time(const po::variables_map& vm, const char* name, double begin, double end) {
  const double t = vm[name].as<double>();
  // Allow a hair of rounding at the ends (times typed from printed values).
  const double tolerance = 1e-9 * std::max(1.0, std::abs(end - begin));
  if (!std::isfinite(t) || t < begin - tolerance || t > end + tolerance) {
    throw InputError(FileLoc{std::string("--") + name},
                     "time " + std::to_string(t) + " s is outside the run, which goes from " +
                         std::to_string(begin) + " s to " + std::to_string(end) + " s");
  }
  return std::clamp(t, begin, end);
}

double positive(const po::variables_map& vm, const char* name, const char* what) {
  const double x = vm[name].as<double>();
  if (!std::isfinite(x) || x <= 0) {
    throw InputError(FileLoc{std::string("--") + name},
                     std::string("expected a positive ") + what + ", got " + std::to_string(x));
  }
  return x;
}

}  // namespace

int cmd_render(const Args& args) {
  const CommandSpec spec{
      "render",
      "RUN.kntj -o OUT.png|OUT.mp4|'frames/%05d.png' [--frame SECONDS] [--size WxH] "
      "[--camera fixed|orbit|follow] [--fps N] [--from S] [--to S] [--speed X] [--audio OUT.wav "
      "[--hrtf on|off] [--silent-track]]",
      "Draws the run without opening a window: bodies as lit spheres (volume follows mass when\n"
      "the run stores it), springs as cylinders coloured by tension (blue shorter, red longer\n"
      "than at the start), and the clock dial (12 o'clock = start of the run, clockwise,\n"
      "6 o'clock = half-way). With DISPLAY set it draws in a GLX pbuffer, otherwise with EGL (no\n"
      "X server needed).\n\n"
      "A .png (or other image) output is one picture at one trace time (--frame), written\n"
      "atomically. A video output (.mp4, .mkv, .mov: H.264; .webm, .avi, .gif: ffmpeg's default\n"
      "codec) animates the run from --from to --to at --speed trace seconds per video second\n"
      "(default: the range in 10 s) through the 'ffmpeg' program; a name with %d (e.g.\n"
      "frames/%05d.png) writes numbered images instead, from 0. The camera is fixed on the whole\n"
      "run, orbits it once, or follows one body (--follow). A progress bar shows on stderr.\n\n"
      "--audio OUT.wav also renders the sound cues (the [audio] section of the run's mapping, see\n"
      "docs/sound.md) heard from the same camera path, through OpenAL Soft's loopback device (no\n"
      "sound card needed), sample-accurate with the frames; a video output (not .gif) carries\n"
      "the sound track too. The track is normalised to -16 LUFS integrated loudness (EBU R128)\n"
      "with its true peak at most -1 dBTP. It is a plain stereo mix unless --hrtf on (or hrtf =\n"
      "\"on\" in [audio]) asks for the binaural mix for headphones. When no cue fires, the render\n"
      "says why and does not mux the silent track into the video (--silent-track does).\n\n"
      "The [visual] section of the run's mapping (docs/mapping-language.md) sets body colours (a\n"
      "formula through a colour map), sizes, a texture image, label text and trails; --labels,\n"
      "--trail and --textures override it.\n\n"
      "A colour key sits in the top-right corner, above the dial: what colours the bodies (the\n"
      "colour formula's map with its range and quantity, or the run's own colours named by host\n"
      "or body, at most 10 then a count) and the springs (tension or traffic scale), in\n"
      "pictures of at least 640x480; --no-legend leaves it out. The caption (trace and mapping)\n"
      "is in the bottom-left corner.",
      "  kanoko render ring.kntj -o ring.png\n"
      "  kanoko render ring.kntj --frame 1.5 --size 1280x720 -o ring-1.5s.png\n"
      "  kanoko render ring.kntj -o ring.mp4 --camera orbit --fps 30 --size 1280x720\n"
      "  kanoko render ring.kntj -o 'frames/%05d.png' --from 0 --to 2 --speed 0.5\n"
      "  kanoko render mesh.kntj -o follow.mp4 --camera follow --follow 'n(1,1,1)'\n"
      "  kanoko render ring.kntj -o ring.mp4 --audio ring.wav\n"
      "  kanoko render ring.kntj -o ring.mp4 --audio ring.wav --hrtf on   # for headphones\n"};

  std::string run;
  std::string output;
  std::string size_text;
  std::string backend_text;
  std::string camera_text;
  std::string follow_text;
  std::string audio_text;
  std::string springs = "tension";
  std::string textures;
  std::string labels;
  std::string level;
  bool flashes = false;
  bool no_legend = false;
  bool silent_track = false;
  std::string hrtf_text;
  po::options_description options("Options");
  options.add_options()("run", po::value<std::string>(&run)->required(),
                        "trajectory file from 'kanoko simulate' (the first argument)")(
      "output,o", po::value<std::string>(&output)->required(),
      "image (.png), video (.mp4 ...) or image sequence (name with %d) to write")(
      "frame", po::value<double>(),
      "picture: trace time to draw, in seconds (default: end of the run)")(
      "time", po::value<double>(), "same as --frame")(
      "size", po::value<std::string>(&size_text),
      "size in pixels, WIDTHxHEIGHT (default 800x600 for a picture, 640x480 for a video)")(
      "camera", po::value<std::string>(&camera_text),
      "animation: fixed (default), orbit (one turn around the run) or follow (one body)")(
      "follow", po::value<std::string>(&follow_text),
      "animation: the body the follow camera looks at, by name or index (default 0)")(
      "fps", po::value<double>(), "animation: frames per second (default 25)")(
      "from", po::value<double>(), "animation: first trace time (default: start of the run)")(
      "to", po::value<double>(), "animation: last trace time (default: end of the run)")(
      "speed", po::value<double>(),
      "animation: trace seconds per video second (default: the range in 10 s)")(
      "audio", po::value<std::string>(&audio_text),
      "animation: also render the sound cues to this WAV file (muxed into a video output)")(
      "hrtf", po::value<std::string>(&hrtf_text),
      "with --audio: on for the binaural mix (headphones), off for plain stereo (default: [audio] "
      "hrtf of the run's mapping, where auto means off)")(
      "silent-track", po::bool_switch(&silent_track),
      "with --audio: mux the track into the video even when no cue fires")(
      "springs", po::value<std::string>(&springs), "spring colours: tension (default), traffic or off")(
      "flashes", po::bool_switch(&flashes), "lines between the bodies communicating in the current interval")(
      "textures", po::value<std::string>(&textures),
      "patterns on the bodies: none, host or body (default: the image of [visual] texture in the "
      "run's mapping, else none)")(
      "labels", po::value<std::string>(&labels)->implicit_value("name"),
      "labels beside the bodies: --labels shows names, --labels=rank|host|index other text, "
      "--labels=none hides them (default: [visual] labels of the run's mapping)")(
      "trail", po::value<double>(), "trails of this many trace seconds (default: [visual] trails)")(
      "level", po::value<std::string>(&level),
      "draw this level of the run's hierarchy, each group as one body at its members' centroid: rank, "
      "host, the trace's container levels (zone, ...) or cluster where the host names make one "
      "(kanoko info RUN lists the levels; default: ranks, or hosts when there are more than 50000 ranks)")(
      "no-legend", po::bool_switch(&no_legend),
      "leave out the colour key (top-right corner: body colours, spring colours)")(
      "backend", po::value<std::string>(&backend_text)->default_value("auto"),
      "offscreen OpenGL: auto (GLX if DISPLAY is set, else EGL), glx or egl");
  po::positional_options_description positional;
  positional.add("run", 1);
  po::variables_map vm;
  if (!parse_command_line(spec, options, positional, args, vm)) return 0;

  if (audio_text.empty() && (!hrtf_text.empty() || silent_track)) {
    const std::string name = !hrtf_text.empty() ? "--hrtf" : "--silent-track";
    throw InputError(FileLoc{name}, name + " applies to the sound track: add --audio OUT.wav");
  }
  note_command_input(run);
  const bool animation = is_video_file(output) || scene::is_image_sequence(output);
  if (vm.count("frame") != 0U && vm.count("time") != 0U) {
    throw InputError(FileLoc{"kanoko render"}, "give the time with --frame or --time, not both");
  }
  for (const char* name : animation ? std::array<const char*, 7>{"frame", "time", "", "", "", "", ""}
                                    : std::array<const char*, 7>{"camera", "follow", "fps", "from",
                                                                 "to", "speed", "audio"}) {
    if (*name == '\0' || vm.count(name) == 0U) continue;
    throw InputError(FileLoc{std::string("--") + name},
                     animation ? "--" + std::string(name) +
                                     " picks one picture; for a video use --from/--to"
                               : "--" + std::string(name) +
                                     " applies to animations; name a video (.mp4) or an image "
                                     "sequence (frames/%05d.png) as the output");
  }
  const scene::Backend backend = scene::parse_backend(backend_text, "--backend");
  scene::VisualOptions visual;
  visual.spring_colours = scene::parse_spring_colours(springs, "--springs");
  visual.flashes = flashes;
  visual.legend = !no_legend;
  scene::VisualOverrides overrides;
  if (vm.count("textures") != 0U) overrides.textures = scene::parse_body_textures(textures, "--textures");
  if (vm.count("labels") != 0U) overrides.labels = scene::parse_label_kind(labels, "--labels");
  if (vm.count("trail") != 0U) overrides.trail_s = scene::checked_trail(vm["trail"].as<double>(), "--trail");

  if (!animation) {
    scene::RenderOptions render;
    render.size = scene::parse_image_size(size_text.empty() ? "800x600" : size_text, "--size");
    render.backend = backend;
    const scene::DrawnRun opened = scene::open_drawn_run(run, overrides, visual);
    const trajectory::Reader& reader = *opened.reader;
    render.mapping = opened.mapping;
    render.run_name = run;
    render.level = level;
    render.visual = opened.visual;
    render.time_s = reader.end_time();
    for (const char* name : {"frame", "time"}) {
      if (vm.count(name) != 0U)
        render.time_s = run_time(vm, name, reader.begin_time(), reader.end_time());
    }
    const scene::RenderResult result = scene::render_to_file(reader, render, output);
    std::cout << "wrote " << output << " (" << render.size.width_px << 'x'
              << render.size.height_px << ", t = " << render.time_s << " s, "
              << scene::backend_name(result.backend_used) << ")\n";
    return 0;
  }

  scene::VideoOptions video;
  video.size = scene::parse_image_size(size_text.empty() ? "640x480" : size_text, "--size");
  video.backend = backend;
  if (!camera_text.empty()) video.camera = scene::parse_camera_path(camera_text, "--camera");
  if (!follow_text.empty() && video.camera != scene::CameraPath::follow) {
    throw InputError(FileLoc{"--follow"}, "--follow needs --camera follow");
  }
  if (vm.count("fps") != 0U) video.fps = positive(vm, "fps", "number of frames per second");
  const scene::DrawnRun opened = scene::open_drawn_run(run, overrides, visual);
  const trajectory::Reader& reader = *opened.reader;
  video.mapping = opened.mapping;
  video.run_name = run;
  video.level = level;
  video.visual = opened.visual;
  video.begin_s = reader.begin_time();
  video.end_s = reader.end_time();
  if (vm.count("from") != 0U) video.begin_s = run_time(vm, "from", reader.begin_time(), reader.end_time());
  if (vm.count("to") != 0U) video.end_s = run_time(vm, "to", reader.begin_time(), reader.end_time());
  if (video.end_s < video.begin_s) {
    throw InputError(FileLoc{"--to"}, "--to must not be before --from");
  }
  video.speed = vm.count("speed") != 0U
                    ? positive(vm, "speed", "number of trace seconds per video second")
                    : std::max(video.end_s - video.begin_s, 1e-9) / scene::kDefaultVideoDuration_s;
  if (!follow_text.empty()) video.follow_body = scene::find_body(reader, follow_text, "--follow");
  if (!audio_text.empty()) {
    std::string ext = std::filesystem::path(audio_text).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (ext != ".wav") {
      throw InputError(FileLoc{"--audio"}, "the sound track is written as WAV: name it '.wav', not '" +
                                               audio_text + "'");
    }
    video.audio_output = audio_text;
    if (video.mapping) video.audio = video.mapping->audio;
    if (!hrtf_text.empty()) {
      if (hrtf_text != "on" && hrtf_text != "off") {
        throw InputError(FileLoc{"--hrtf"}, "--hrtf is on or off, not '" + hrtf_text + "'");
      }
      video.audio.hrtf = hrtf_text == "on" ? mapping::HrtfRequest::On : mapping::HrtfRequest::Off;
    }
    video.mux_silent_audio = silent_track;
  }

  const scene::VideoResult result = scene::render_video(reader, video, output);
  std::cout << "wrote " << output << " (" << result.frames << " frames, " << video.size.width_px
            << 'x' << video.size.height_px << " at " << video.fps << " fps, t = " << video.begin_s
            << " .. " << video.end_s << " s, " << scene::backend_name(result.backend_used)
            << (result.audio_muxed ? ", with sound" : "") << ")\n";
  if (!audio_text.empty()) {
    const sonify::OfflineResult& a = result.audio;
    std::ostringstream loudness;
    loudness.setf(std::ios::fixed);
    loudness.precision(1);
    if (std::isfinite(a.loudness_before_lufs)) {
      loudness << ", " << a.loudness.loudness_lufs << " LUFS (" << a.loudness_before_lufs << " LUFS as rendered, "
               << std::showpos << a.loudness.gain_db << std::noshowpos << " dB), true peak "
               << a.loudness.true_peak_dbtp << " dBTP";
    } else {
      loudness << ", silent";
    }
    std::cout << "wrote " << audio_text << " (" << result.audio_cues << " cues, "
              << result.hrtf_status << loudness.str() << ")\n";
    for (const std::string& w : a.warnings) std::cerr << "kanoko render: warning: " << w << '\n';
    if (result.silent_audio_withheld) {
      std::cerr << "kanoko render: the silent track is not muxed into " << output
                << " (--silent-track muxes it anyway)\n";
    }
  }
  return 0;
}

}  // namespace kanoko::cli
