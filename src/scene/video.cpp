#include "src/scene/video.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <numbers>
#include <vector>

#include "src/base/check.hpp"
#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"
#include "src/base/output_target.hpp"
#include "sonify/offline.hpp"
#include "src/base/progress.hpp"
#include "src/scene/audio_link.hpp"
#include "src/scene/scene.hpp"

extern char** environ;

namespace kanoko::scene {

namespace {

// Where the one %d conversion of a sequence pattern is.
struct SequencePattern {
  std::string prefix;
  std::string suffix;
  int width = 0;
};

std::optional<SequencePattern> split_pattern(const std::string& name) {
  std::optional<SequencePattern> found;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] != '%') continue;
    if (i + 1 < name.size() && name[i + 1] == '%') {  // a literal percent sign
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    int width = 0;
    while (j < name.size() && name[j] >= '0' && name[j] <= '9' && width < 100) {
      width = width * 10 + (name[j] - '0');
      ++j;
    }
    if (j >= name.size() || name[j] != 'd' || found) return std::nullopt;
    found = SequencePattern{name.substr(0, i), name.substr(j + 1), width};
    i = j;
  }
  if (found) {
    const auto unescape = [](std::string s) {
      for (std::size_t p = s.find("%%"); p != std::string::npos; p = s.find("%%", p + 1))
        s.erase(p, 1);
      return s;
    };
    found->prefix = unescape(found->prefix);
    found->suffix = unescape(found->suffix);
  }
  return found;
}

// A running `ffmpeg` reading raw RGB frames on its standard input.
class FfmpegPipe {
 public:
  FfmpegPipe(const ImageSize& size, double fps, const std::filesystem::path& output,
             const std::filesystem::path& temp_output, const std::filesystem::path& audio)
      : output_(output) {
    const std::string ext = temp_output.extension().string();
    const bool h264 = ext == ".mp4" || ext == ".mkv" || ext == ".mov";
    std::vector<std::string> args = {
        // -xerror: without it ffmpeg exits 0 after failing to write the file's end (disk full).
        "ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-xerror", "-y", "-f", "rawvideo",
        "-pix_fmt", "rgb24", "-s",
        std::to_string(size.width_px) + "x" + std::to_string(size.height_px), "-framerate",
        format_rate(fps), "-i", "pipe:0",
        // OpenGL rows start at the bottom; yuv420p (what players expect) needs even sides.
        "-vf", "vflip,pad=ceil(iw/2)*2:ceil(ih/2)*2"};
    if (h264) {
      for (const char* a : {"-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-pix_fmt",
                            "yuv420p"}) {
        args.emplace_back(a);
      }
    }
    if (!audio.empty()) {  // the sound track (same length as the video)
      args.insert(std::find(args.begin(), args.end(), "pipe:0") + 1, {"-i", audio.string()});
      for (const char* a : {"-map", "0:v", "-map", "1:a"}) args.emplace_back(a);
      if (h264) args.insert(args.end(), {"-c:a", "aac", "-b:a", "192k"});
    }
    args.push_back(temp_output.string());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw RunError("cannot create a pipe to ffmpeg");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
    const int rc = ::posix_spawnp(&pid_, "ffmpeg", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[0]);
    if (rc != 0) {
      ::close(fds[1]);
      throw RunError(std::string("cannot run ffmpeg (") + std::strerror(rc) +
                     "); install it (Debian: apt-get install ffmpeg) or write PNG frames with "
                     "-o 'frames/%05d.png'");
    }
    fd_ = fds[1];
  }
  FfmpegPipe(const FfmpegPipe&) = delete;
  FfmpegPipe& operator=(const FfmpegPipe&) = delete;
  ~FfmpegPipe() {
    if (pid_ > 0) {  // abandoned (an exception): stop ffmpeg and reap it
      if (fd_ >= 0) ::close(fd_);
      ::kill(pid_, SIGTERM);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }

  void write_frame(const osg::Image& image) {
    const auto* data = image.data();
    std::size_t left = image.getTotalSizeInBytes();
    while (left > 0) {
      const ssize_t n = ::write(fd_, data, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        throw RunError("writing " + output_.string() + " failed: ffmpeg stopped reading frames (see its message above)");
      }
      data += n;
      left -= static_cast<std::size_t>(n);
    }
  }

  // Closes the pipe and waits for ffmpeg to finish the file.
  void finish() {
    ::close(fd_);
    fd_ = -1;
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      // A full disk or `ulimit -f` ends here too: ffmpeg names the cause on its standard error.
      throw RunError("writing " + output_.string() + " failed: ffmpeg " +
                     (WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                        : "was killed by signal " + std::to_string(WTERMSIG(status))) +
                     " (see its message above)");
    }
  }

 private:
  static std::string format_rate(double fps) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", fps);
    return buf;
  }

  std::filesystem::path output_;  ///< the name the user gave, for messages
  pid_t pid_ = -1;
  int fd_ = -1;
};

// Ignores SIGPIPE while alive, so a dead ffmpeg shows up as a write error, not a killed process.
class IgnoreSigpipe {
 public:
  IgnoreSigpipe() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGPIPE, &ignore, &previous_);
  }
  IgnoreSigpipe(const IgnoreSigpipe&) = delete;
  IgnoreSigpipe& operator=(const IgnoreSigpipe&) = delete;
  ~IgnoreSigpipe() { ::sigaction(SIGPIPE, &previous_, nullptr); }

 private:
  struct sigaction previous_ {};
};

CameraMatrices frame_camera(const VideoOptions& options, const HomeView& home,
                            const osg::BoundingSphered& bound, const Eigen::Matrix3Xd& positions,
                            std::size_t frame, std::size_t frames) {
  const int w = options.size.width_px;
  const int h = options.size.height_px;
  const double aspect = static_cast<double>(w) / h;
  CameraMatrices c;
  c.width_px = w;
  c.height_px = h;
  osg::Vec3d eye = home.eye;
  osg::Vec3d centre = home.centre;
  double near_m = home.near_m;
  double far_m = home.far_m;
  switch (options.camera) {
    case CameraPath::fixed:
      break;
    case CameraPath::orbit: {
      const double turn = 2.0 * std::numbers::pi * static_cast<double>(frame) /
                          static_cast<double>(std::max<std::size_t>(frames, 1));
      eye = centre + osg::Matrixd::rotate(turn, osg::Vec3d(0, 0, 1)).preMult(home.eye - centre);
      break;
    }
    case CameraPath::follow: {
      const auto p = positions.col(static_cast<Eigen::Index>(options.follow_body));
      centre = osg::Vec3d(p.x(), p.y(), p.z());
      const osg::Vec3d offset = (home.eye - home.centre) * 0.5;
      eye = centre + offset;
      // Any body can be up to the run's diameter away from the followed one.
      const double distance = offset.length();
      const double reach = 2.2 * bound.radius();
      near_m = std::max(distance - reach, 1e-3 * distance);
      far_m = distance + reach;
      break;
    }
  }
  c.view = osg::Matrixd::lookAt(eye, centre, home.up);
  c.projection = osg::Matrixd::perspective(home.fovy_deg, aspect, near_m, far_m);
  return c;
}

/// The sound track under a temporary name beside its target ("<target>.tmp-<pid>-0", which the
/// next run removes if this process dies) until the pictures are in place: a render whose frames
/// or video fail leaves no track either. Removed on destruction unless kept.
class StagedTrack {
 public:
  explicit StagedTrack(const std::filesystem::path& output) {
    if (output.empty()) return;
    target_ = checked_output_target(output);
    temp_ = target_;
    temp_ += ".tmp-" + std::to_string(::getpid()) + "-0";
    register_temporary_file(temp_);
  }
  StagedTrack(const StagedTrack&) = delete;
  StagedTrack& operator=(const StagedTrack&) = delete;
  ~StagedTrack() {
    if (temp_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove(temp_, ignored);
    unregister_temporary_file(temp_);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return temp_; }
  /// Moves the track into place.
  void keep() {
    if (temp_.empty()) return;
    std::error_code ec;
    std::filesystem::rename(temp_, target_, ec);
    if (ec) throw RunError("cannot move the sound track into place at " + target_.string() + ": " + ec.message());
    unregister_temporary_file(temp_);
    temp_.clear();
  }

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
};

// The cues for the video's camera path, into `track` (sonify/offline.hpp).
sonify::OfflineResult render_audio(const trajectory::Reader& reader, const VideoOptions& options,
                                   TrajectoryScene& scene, const HomeView& home, std::size_t frames,
                                   const std::filesystem::path& track) {
  sonify::OfflineTiming timing;
  timing.begin_s = options.begin_s;
  timing.end_s = options.end_s;
  timing.speed = options.speed;
  timing.fps = options.fps;
  timing.frames = frames;
  const auto listener_at = [&](std::size_t k) {
    if (options.camera == CameraPath::follow) scene.set_time(video_frame_time(options, k));
    return listener_from_view(
        frame_camera(options, home, scene.bound(), scene.positions(), k, frames).view);
  };
  return sonify::render_offline_audio(reader, options.audio, timing, listener_at, track);
}

}  // namespace

CameraPath parse_camera_path(std::string_view text, std::string_view option) {
  if (text == "fixed") return CameraPath::fixed;
  if (text == "orbit") return CameraPath::orbit;
  if (text == "follow") return CameraPath::follow;
  throw InputError(FileLoc{std::string(option)},
                   "unknown camera '" + std::string(text) + "'; expected fixed, orbit or follow");
}

std::size_t video_frame_count(const VideoOptions& options) {
  KANOKO_ASSERT(options.fps > 0 && options.speed > 0 && options.end_s >= options.begin_s,
                "video options are validated by the command line");
  const double duration_s = (options.end_s - options.begin_s) / options.speed;
  const double frames = std::round(duration_s * options.fps);
  return frames < 1 ? 1 : static_cast<std::size_t>(frames);
}

double video_frame_time(const VideoOptions& options, std::size_t frame) {
  return std::min(options.begin_s + static_cast<double>(frame) * options.speed / options.fps,
                  options.end_s);
}

bool is_image_sequence(const std::filesystem::path& output) {
  return output.filename().string().find('%') != std::string::npos;
}

std::filesystem::path sequence_frame_path(const std::filesystem::path& pattern,
                                          std::size_t frame) {
  const std::optional<SequencePattern> p = split_pattern(pattern.filename().string());
  if (!p) {
    throw InputError(FileLoc{pattern.string()},
                     "an image sequence name needs exactly one %d (e.g. frames/%05d.png) and no "
                     "other % conversion (write %% for a percent sign)");
  }
  std::string number = std::to_string(frame);
  if (static_cast<int>(number.size()) < p->width) {
    number.insert(0, static_cast<std::size_t>(p->width) - number.size(), '0');
  }
  return pattern.parent_path() / (p->prefix + number + p->suffix);
}

VideoResult render_video(const trajectory::Reader& reader, const VideoOptions& options,
                         const std::filesystem::path& output) {
  if (options.follow_body >= reader.meta().body_count()) {
    throw InputError(FileLoc{"--follow"}, "the run has no body " +
                                              std::to_string(options.follow_body));
  }
  const bool sequence = is_image_sequence(output);
  std::filesystem::path temp;
  std::filesystem::path destination;  // the output, or the file it links to
  if (sequence) {
    check_image_output(sequence_frame_path(output, 0));  // pattern, extension and folder
  } else {
    const std::string ext = output.extension().string();
    if (ext.size() < 2) {
      throw InputError(FileLoc{output.string()},
                       "the output needs an extension: .mp4 (or .mkv, .mov, .webm, .gif) for a "
                       "video, or a pattern such as frames/%05d.png for images");
    }
    const std::filesystem::path folder =
        output.has_parent_path() ? output.parent_path() : std::filesystem::path(".");
    std::error_code ec;
    if (!std::filesystem::is_directory(folder, ec)) {
      throw RunError("cannot write " + output.string() + ": folder " + folder.string() +
                     " does not exist");
    }
    destination = checked_output_target(output);
    temp = destination;
    temp += ".tmp-" + std::to_string(::getpid()) + ext;  // same extension: same muxer
  }

  const std::size_t frames = video_frame_count(options);
  const int w = options.size.width_px;
  const int h = options.size.height_px;
  TrajectoryScene scene(reader, w, h);
  if (options.mapping) scene.use_mapping_formulas(*options.mapping, options.run_name);
  scene.set_visual(options.visual);
  if (!options.level.empty()) scene.set_level(scene.hierarchy().level_index(options.level, "--level"));
  scene.set_status(run_caption(reader));  // what the video shows; the dial says when
  const HomeView home = home_view(scene.bound(), static_cast<double>(w) / h);
  const CameraMatrices first = frame_camera(options, home, scene.bound(), scene.positions(), 0, 1);

  OffscreenRequest request;
  request.scene = scene.root();
  request.view = first.view;
  request.projection = first.projection;
  request.clear_colour = background_colour();
  request.width_px = w;
  request.height_px = h;
  request.backend = options.backend;

  ProgressBar progress("render", frames, "frames", options.show_progress);
  const auto prepare = [&](std::size_t k, osg::Matrixd& view, osg::Matrixd& projection) {
    check_interrupt();
    scene.set_time(video_frame_time(options, k));
    const CameraMatrices c =
        frame_camera(options, home, scene.bound(), scene.positions(), k, frames);
    view = c.view;
    projection = c.projection;
  };

  VideoResult result;
  result.frames = frames;
  std::filesystem::path audio_track;
  StagedTrack track(options.audio_output);
  if (!options.audio_output.empty()) {
    result.audio = render_audio(reader, options, scene, home, frames, track.path());
    result.audio_cues = result.audio.cues_played;
    result.hrtf_status = result.audio.hrtf_status;
    std::string ext = output.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // A track without a cue is silence: not muxed unless asked for (the render warns why).
    const bool silent = result.audio.cues_played == 0;
    if (!sequence && ext != ".gif") {
      result.silent_audio_withheld = silent && !options.mux_silent_audio;
      if (!result.silent_audio_withheld) audio_track = track.path();
    }
  }
  if (sequence) {
    // The frames appear together: each is written and closed under a temporary name, and all are
    // moved into place once the last is written; on any failure the destructors remove them all.
    std::vector<std::unique_ptr<AtomicOutputFile>> staged;
    staged.reserve(frames);
    result.backend_used =
        draw_offscreen_frames(request, frames, prepare, [&](std::size_t k, const osg::Image& i) {
          staged.push_back(stage_image(i, sequence_frame_path(output, k)));
          progress.update(k + 1);
        });
    for (const auto& frame : staged) frame->commit();
    track.keep();
    progress.finish();
    return result;
  }

  register_temporary_file(temp);
  try {
    const IgnoreSigpipe no_sigpipe;
    FfmpegPipe ffmpeg(options.size, options.fps, output, temp, audio_track);
    result.backend_used =
        draw_offscreen_frames(request, frames, prepare, [&](std::size_t k, const osg::Image& i) {
          ffmpeg.write_frame(i);
          progress.update(k + 1);
        });
    ffmpeg.finish();
    result.audio_muxed = !audio_track.empty();
    progress.finish();
    std::error_code ec;
    std::filesystem::rename(temp, destination, ec);
    if (ec) throw RunError("cannot move the video into place at " + destination.string() + ": " + ec.message());
    track.keep();
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    unregister_temporary_file(temp);
    throw;
  }
  unregister_temporary_file(temp);
  return result;
}

}  // namespace kanoko::scene
