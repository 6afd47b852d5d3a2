// Per-body voices: a timbre and a pitch each, from the mapping's [[audio.voice]] tables or
// assigned automatically, and the synthesised sound of each voice (no sample files needed).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "src/mapping/audio_section.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::sonify {

/// The sound of one body.
struct Voice {
  mapping::Timbre timbre = mapping::Timbre::Sine;
  double pitch_hz = 440;
  std::string label;  ///< for the legend, e.g. "bell E4" or "sine 523 Hz"
};

/// Voice of the automatic assignment for body index i: timbres cycle fastest, then the notes of
/// an A major pentatonic scale over two octaves from A3 (220 Hz), so the first 50 bodies all sound
/// different.
[[nodiscard]] Voice automatic_voice(std::size_t body);

/// One voice per body: the mapping's [[audio.voice]] entries (by body name, or index) over the
/// automatic assignment; a voice table may set only the timbre or only the pitch. Throws
/// InputError at the entry's location for a body the run does not have.
[[nodiscard]] std::vector<Voice> assign_voices(const mapping::AudioSpec& audio,
                                               const trajectory::Metadata& meta);

/// The sound of a voice: `duration_s` of mono samples in [-1, 1] at `sample_rate_hz`, with a
/// short attack and a decay to silence at the end (no click).
[[nodiscard]] std::vector<float> synthesise(mapping::Timbre timbre, double pitch_hz,
                                            double duration_s, int sample_rate_hz);

/// A stereo 16-bit PCM RIFF/WAVE file written piece by piece under a temporary name; commit()
/// patches the sizes into the header and renames it into place (nothing is left otherwise).
/// Samples are clipped to [-1, 1].
class WavWriter {
 public:
  WavWriter(const std::filesystem::path& path, int sample_rate_hz);
  ~WavWriter();
  WavWriter(const WavWriter&) = delete;
  WavWriter& operator=(const WavWriter&) = delete;
  /// Appends interleaved L R samples. Throws RunError past the format's 4 GiB limit.
  void append(std::span<const float> interleaved_stereo);
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Writes a whole stereo WAV at once (WavWriter).
void write_wav(const std::filesystem::path& path, std::span<const float> interleaved_stereo,
               int sample_rate_hz);

/// A WAV file read back (16-bit PCM only; for tests and tools).
struct WavData {
  int sample_rate_hz = 0;
  int channels = 0;
  std::vector<float> samples;  ///< interleaved
  [[nodiscard]] std::size_t frames() const {
    return channels > 0 ? samples.size() / static_cast<std::size_t>(channels) : 0;
  }
};
/// Reads a 16-bit PCM WAV written by write_wav (or any plain one); throws InputError otherwise.
[[nodiscard]] WavData read_wav(const std::filesystem::path& path);

}  // namespace kanoko::sonify
