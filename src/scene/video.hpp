// `kanoko render RUN -o out.mp4` or `-o frames/%05d.png`: an animation of a run drawn offscreen
// (EGL without X, or a GLX pbuffer), the camera fixed, orbiting or following a body. Videos go
// through Debian's `ffmpeg` executable, which reads raw RGB frames on a pipe.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "sonify/offline.hpp"
#include "src/mapping/audio_section.hpp"
#include "src/scene/offscreen.hpp"
#include "src/scene/render.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::scene {

/// How the camera moves during an animation.
enum class CameraPath {
  fixed,   ///< the home view of the whole run (as a still render)
  orbit,   ///< the home view turned once around the vertical axis through the run's centre
  follow,  ///< looks at one body from the home direction, at half the home distance
};
/// Parses "fixed", "orbit" or "follow"; throws InputError naming `option` otherwise.
[[nodiscard]] CameraPath parse_camera_path(std::string_view text, std::string_view option);

/// What to animate.
struct VideoOptions {
  ImageSize size{640, 480};
  double fps = 25;       ///< frames per second of the video
  double begin_s = 0;    ///< first trace time shown
  double end_s = 0;      ///< last trace time shown (>= begin_s)
  double speed = 1;      ///< trace seconds per video second (> 0)
  CameraPath camera = CameraPath::fixed;
  std::size_t follow_body = 0;  ///< body the follow camera looks at
  Backend backend = Backend::automatic;
  bool show_progress = true;    ///< progress bar on stderr
  VisualOptions visual;         ///< spring colours, flashes, textures (as for a picture)
  /// The run's own mapping: [visual] colour and scale formulas (as for a picture); may be null.
  std::shared_ptr<const mapping::Mapping> mapping;
  std::string run_name = "the run";  ///< in messages
  std::string level;  ///< a level of the run's hierarchy to draw (as for a picture)
  /// If set, the sound cues (sonify/) for the same camera path are rendered to this WAV file,
  /// sample-accurate with the frames, first; a video output (not .gif) then carries it too.
  std::filesystem::path audio_output;
  mapping::AudioSpec audio;     ///< the mapping's [audio] section, for audio_output
  /// Mux the sound track into the video even when no cue fires (by default a silent track is not
  /// muxed: the render warns instead).
  bool mux_silent_audio = false;
};

/// Whole run (trace time) in this many video seconds when no speed is given.
inline constexpr double kDefaultVideoDuration_s = 10.0;

/// Number of frames: the video lasts (end − begin) / speed seconds, rounded to whole frames,
/// at least one.
[[nodiscard]] std::size_t video_frame_count(const VideoOptions& options);
/// Trace time of frame k: begin + k × speed / fps, clamped to end.
[[nodiscard]] double video_frame_time(const VideoOptions& options, std::size_t frame);

/// True if `output` names an image sequence: a file name holding one %d conversion
/// (optionally zero-padded with a width, e.g. %05d).
[[nodiscard]] bool is_image_sequence(const std::filesystem::path& output);
/// The file name of frame k of an image sequence pattern (frames are numbered from 0).
/// Throws InputError if the pattern has no or several %d conversions or other % conversions.
[[nodiscard]] std::filesystem::path sequence_frame_path(const std::filesystem::path& pattern,
                                                        std::size_t frame);

/// What render_video() did.
struct VideoResult {
  std::size_t frames = 0;
  Backend backend_used = Backend::automatic;
  bool audio_muxed = false;      ///< the video file carries the sound track
  std::size_t audio_cues = 0;    ///< cues played in the sound track
  std::string hrtf_status;       ///< of the offline audio render
  sonify::OfflineResult audio;   ///< the offline audio render (loudness, warnings)
  bool silent_audio_withheld = false;  ///< no cue fired, so the video got no sound track
};

/// Renders the animation to `output`: an image sequence (see is_image_sequence) written frame by
/// frame, or a video file through ffmpeg written under a temporary name and renamed into place
/// (nothing is left behind on failure or Ctrl-C). Throws InputError for bad options or output
/// names, RunError if ffmpeg is missing or fails or no offscreen context can be made.
VideoResult render_video(const trajectory::Reader& reader, const VideoOptions& options,
                         const std::filesystem::path& output);

}  // namespace kanoko::scene
