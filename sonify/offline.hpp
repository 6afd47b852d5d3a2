// Offline audio: the cues of a run rendered through OpenAL Soft's loopback device into a WAV file,
// sample-accurate with the frames of a video (frame k starts at sample round(k · rate / fps), and a
// cue starts at the sample of its trace time). The listener follows a camera path given per frame
// by the caller (the scene's video camera), so sonify needs nothing from the scene.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "sonify/engine.hpp"
#include "sonify/loudness.hpp"
#include "src/mapping/audio_section.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::sonify {

/// The video the audio goes with.
struct OfflineTiming {
  double begin_s = 0;     ///< trace time of frame 0
  double end_s = 0;       ///< last trace time shown
  double speed = 1;       ///< trace seconds per video second
  double fps = 25;
  std::size_t frames = 1;
  int sample_rate_hz = 48000;
};

/// Trace time of video frame k (begin + k · speed / fps, clamped to end).
[[nodiscard]] double offline_frame_time(const OfflineTiming& timing, std::size_t frame);
/// First sample of video frame k: round(k · rate / fps). frame == frames gives the total length.
[[nodiscard]] std::size_t offline_frame_sample(const OfflineTiming& timing, std::size_t frame);

/// What render_offline_audio() did.
struct OfflineResult {
  std::size_t samples = 0;       ///< stereo frames written
  std::size_t cues_detected = 0; ///< in the rendered time range, after merging per video frame
  std::size_t cues_played = 0;   ///< after the voice cap
  double first_cue_s = -1;       ///< video time of the first cue played (-1: none)
  std::string hrtf_status;
  bool hrtf_enabled = false;     ///< the binaural (HRTF) mix, as OpenAL Soft reports it
  double loudness_before_lufs = 0;  ///< integrated loudness as rendered (-inf: silent)
  LoudnessGain loudness;         ///< the gain applied and the loudness and true peak after it
  /// What the user should know: no cue (and why), a track the peak ceiling kept quiet, HRTF asked
  /// for but not available.
  std::vector<std::string> warnings;
};

/// Renders the run's cues between timing.begin_s and end_s to a 16-bit stereo WAV at `output`
/// (written atomically), normalised to kTargetLoudness_lufs integrated with a true peak at most
/// kTruePeakCeiling_dbtp (sonify/loudness.hpp; the track is rendered twice, to measure then to
/// write). HRTF follows audio.hrtf, "auto" meaning off (a plain stereo mix). `listener_at(k)` is the camera of video frame k; its velocity is taken
/// from successive frames. Throws InputError for an [audio] section that does not fit the run,
/// RunError if OpenAL Soft cannot render offline.
OfflineResult render_offline_audio(const trajectory::Reader& reader, const mapping::AudioSpec& audio,
                                   const OfflineTiming& timing,
                                   const std::function<ListenerState(std::size_t)>& listener_at,
                                   const std::filesystem::path& output);

}  // namespace kanoko::sonify
