// Playback of cues through OpenAL Soft: one source per voice slot (the global voice cap), sources
// at the bodies' positions, the listener at the camera, inverse-distance attenuation, HRTF when
// available, Doppler from velocities. The engine plays on a real output device (the viewer) or
// renders into memory through the ALC_SOFT_loopback device (offline WAV, tests). With no output
// device it is silent: every call does nothing and one message says why.
//
// Only sonify/ links OpenAL; no OpenAL type appears in this header.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sonify/cues.hpp"
#include "sonify/voices.hpp"
#include "src/mapping/audio_section.hpp"

namespace kanoko::sonify {

/// How the engine sounds. Distances and velocities are in scene units and trace seconds.
struct EngineOptions {
  int sample_rate_hz = 48000;
  mapping::HrtfRequest hrtf = mapping::HrtfRequest::Auto;
  bool doppler = true;
  double speed_of_sound = 343.3;    ///< scene units per trace second (see speed_of_sound_for)
  double reference_distance = 1.0;  ///< full loudness up to here, then 1/distance
  std::uint32_t max_voices = 16;    ///< sources, i.e. sounds at once
  double master_volume = 0.8;
  double cue_length_s = 0.25;       ///< length of each cue sound (wall seconds)
};

/// Options from the mapping's [audio] section; the speed of sound and the reference distance are
/// derived from the run (speed_of_sound_for, reference_distance_for).
[[nodiscard]] EngineOptions engine_options(const mapping::AudioSpec& audio,
                                           const trajectory::Reader& reader);
/// Four times the largest body speed of the run (so Doppler shifts stay within about ±30 %), or
/// 343.3 when nothing moves.
[[nodiscard]] double speed_of_sound_for(const trajectory::Reader& reader);
/// Half the radius of the bodies' bounding sphere at the first frame (at least 1e-3).
[[nodiscard]] double reference_distance_for(const trajectory::Reader& reader);

/// The listener (camera): position, velocity and orientation.
struct ListenerState {
  Eigen::Vector3d position = Eigen::Vector3d::Zero();
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();
  Eigen::Vector3d forward{0, 0, -1};
  Eigen::Vector3d up{0, 1, 0};
};

class Engine {
 public:
  /// Opens the default output device (or the one named). If none can be opened the engine is
  /// silent and `message` says so in one line; otherwise `message` is empty.
  static std::unique_ptr<Engine> open_device(const EngineOptions& options,
                                             const std::vector<Voice>& voices,
                                             const std::string& device_name, std::string& message);
  /// Opens a loopback device that renders into memory (render()). Throws RunError if OpenAL Soft
  /// lacks ALC_SOFT_loopback or the format.
  static std::unique_ptr<Engine> open_loopback(const EngineOptions& options,
                                               const std::vector<Voice>& voices);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// True when there is no device (everything is a no-op).
  [[nodiscard]] bool silent() const;
  /// True if OpenAL Soft reports HRTF as really enabled (ALC_HRTF_STATUS_SOFT).
  [[nodiscard]] bool hrtf_enabled() const;
  /// e.g. "HRTF on (default-48000)", "HRTF off (not requested)", "HRTF off (unsupported format)".
  [[nodiscard]] std::string hrtf_status() const;
  /// Name of the output device ("" when silent).
  [[nodiscard]] std::string device_name() const;
  /// Number of voice slots (the cap; may be below max_voices if OpenAL refused sources).
  [[nodiscard]] std::size_t voice_slots() const;

  /// Groups the updates of one frame: OpenAL applies them together at end_frame().
  void begin_frame();
  void end_frame();

  void set_listener(const ListenerState& listener);
  /// Starts the body's voice for a cue at the given state. Returns false when every voice slot
  /// is busy (the cue is dropped: the cap holds) or the engine is silent.
  bool start(const Cue& cue, const Eigen::Vector3d& position, const Eigen::Vector3d& velocity);
  /// Moves every sounding voice to its body: columns of 3×N positions and velocities.
  void follow_bodies(const Eigen::Ref<const Eigen::Matrix3Xd>& positions,
                     const Eigen::Ref<const Eigen::Matrix3Xd>& velocities);
  /// Stops every voice (after a seek: no stale cues).
  void stop_all();
  /// Pauses or resumes the sounding voices (replay paused).
  void set_paused(bool paused);
  /// Master volume 0..1 (clamped) and mute; both act on the listener gain.
  void set_master_volume(double volume);
  [[nodiscard]] double master_volume() const;
  void set_muted(bool muted);
  [[nodiscard]] bool muted() const;
  /// Multiplies every voice's pitch (1 = the voice's own pitch).
  void set_pitch_scale(double scale);
  /// Voices sounding now.
  [[nodiscard]] std::size_t playing() const;

  /// Loopback only: renders `frames` stereo frames, interleaved L R, into `out` (2 × frames).
  void render(std::span<float> out);

  struct Impl;

 private:
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kanoko::sonify
