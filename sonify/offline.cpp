#include "sonify/offline.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "sonify/loudness.hpp"
#include "src/base/check.hpp"
#include "src/base/interrupt.hpp"

namespace kanoko::sonify {

double offline_frame_time(const OfflineTiming& timing, std::size_t frame) {
  return std::min(timing.begin_s + static_cast<double>(frame) * timing.speed / timing.fps,
                  timing.end_s);
}

std::size_t offline_frame_sample(const OfflineTiming& timing, std::size_t frame) {
  return static_cast<std::size_t>(
      std::llround(static_cast<double>(frame) * timing.sample_rate_hz / timing.fps));
}

OfflineResult render_offline_audio(const trajectory::Reader& reader, const mapping::AudioSpec& given_audio,
                                   const OfflineTiming& timing,
                                   const std::function<ListenerState(std::size_t)>& listener_at,
                                   const std::filesystem::path& output) {
  KANOKO_ASSERT(timing.fps > 0 && timing.speed > 0 && timing.frames > 0 && timing.sample_rate_hz > 0,
                "offline timing is validated by the caller");
  mapping::AudioSpec audio = given_audio;
  // Offline, "auto" is the plain stereo mix: a report's track is played on speakers as often as on
  // headphones. HRTF (binaural) only when asked for.
  const bool hrtf_requested = audio.hrtf == mapping::HrtfRequest::On;
  if (audio.hrtf == mapping::HrtfRequest::Auto) audio.hrtf = mapping::HrtfRequest::Off;
  const std::vector<CueRule> rules = resolve_cue_rules(audio, reader.meta());
  const std::vector<Voice> voices = assign_voices(audio, reader.meta());
  EngineOptions options = engine_options(audio, reader);
  options.sample_rate_hz = timing.sample_rate_hz;

  // Cues of the shown range, merged per video frame, then capped.
  const double frame_period_s = timing.speed / timing.fps;
  const std::vector<Cue> all_cues = detect_cues(reader, rules);
  std::vector<Cue> cues;
  for (const Cue& c : all_cues) {
    if (c.time_s >= timing.begin_s && c.time_s <= timing.end_s) cues.push_back(c);
  }
  cues = merge_cues_per_frame(cues, timing.begin_s, frame_period_s);
  OfflineResult result;
  result.cues_detected = cues.size();
  cues = cap_voices(cues, options.max_voices, options.cue_length_s * timing.speed);
  if (cues.empty()) {
    std::ostringstream os;
    if (all_cues.empty()) {
      os << "no sound cue fires in this run, so the sound track is silent: " << why_no_cues(reader, rules)
         << ". Widen 'rate' in the [[audio.cue]] tables of the mapping (docs/sound.md)";
    } else {
      os << "no sound cue fires between t = " << timing.begin_s << " and " << timing.end_s
         << " s, so the sound track is silent (the run's " << all_cues.size() << " cues fire from t = "
         << all_cues.front().time_s << " s to " << all_cues.back().time_s << " s)";
    }
    result.warnings.push_back(os.str());
  }

  // Renders the whole track once, handing each block of samples to `sink`. Called twice: once to
  // measure the loudness, once to write the normalised track (the loopback render is
  // deterministic, and memory stays bounded for long videos).
  const std::size_t total = offline_frame_sample(timing, timing.frames);
  const auto render_pass = [&](const std::function<void(std::span<float>)>& sink, OfflineResult& r) {
    std::unique_ptr<Engine> engine = Engine::open_loopback(options, voices);
    r.hrtf_status = engine->hrtf_status();
    r.hrtf_enabled = engine->hrtf_enabled();
    r.cues_played = 0;
    r.first_cue_s = -1;
    std::vector<float> samples;
    std::size_t done = 0;  // samples rendered
    const auto render_to = [&](std::size_t sample) {
      sample = std::min(sample, total);
      if (sample <= done) return;
      samples.resize((sample - done) * 2);
      engine->render(samples);
      sink(samples);
      done = sample;
    };
    Eigen::Matrix3Xd positions;
    std::size_t next_cue = 0;
    ListenerState listener = listener_at(0);
    for (std::size_t k = 0; k < timing.frames; ++k) {
      check_interrupt();
      const double t = offline_frame_time(timing, k);
      const ListenerState next = listener_at(k + 1 < timing.frames ? k + 1 : k);
      listener.velocity = k + 1 < timing.frames
                              ? Eigen::Vector3d((next.position - listener.position) / frame_period_s)
                              : Eigen::Vector3d::Zero();
      reader.positions_at(t, positions);
      const trajectory::FrameView frame = reader.frame(reader.frame_at_or_before(t));
      const Eigen::Matrix3Xd velocities = frame.velocities;
      engine->begin_frame();
      engine->set_listener(listener);
      engine->follow_bodies(positions, velocities);
      engine->end_frame();
      // Cues of this frame start at their own sample.
      const double frame_end_s = k + 1 < timing.frames ? offline_frame_time(timing, k + 1) : timing.end_s;
      while (next_cue < cues.size() && (cues[next_cue].time_s < frame_end_s ||
                                        (k + 1 == timing.frames && cues[next_cue].time_s <= frame_end_s))) {
        const Cue& c = cues[next_cue++];
        const double video_s = (c.time_s - timing.begin_s) / timing.speed;
        const auto at = static_cast<std::size_t>(std::llround(video_s * timing.sample_rate_hz));
        render_to(std::max(at, offline_frame_sample(timing, k)));
        const auto b = static_cast<Eigen::Index>(c.body);
        if (engine->start(c, positions.col(b), velocities.col(b))) {
          ++r.cues_played;
          if (r.first_cue_s < 0) r.first_cue_s = static_cast<double>(done) / timing.sample_rate_hz;
        }
      }
      render_to(offline_frame_sample(timing, k + 1));
      listener = next;
    }
    render_to(total);
  };

  // Pass 1: the loudness of the track as rendered.
  LoudnessMeter meter(timing.sample_rate_hz);
  render_pass([&](std::span<float> block) { meter.add(block); }, result);
  const LoudnessGain gain = loudness_gain(meter.integrated_lufs(), meter.true_peak_dbtp());
  result.loudness_before_lufs = meter.integrated_lufs();
  result.loudness = gain;
  if (gain.peak_limited) {
    std::ostringstream os;
    os.precision(3);
    os << "the sound track reaches only " << gain.loudness_lufs << " LUFS instead of " << kTargetLoudness_lufs
       << ": its true peak would pass " << kTruePeakCeiling_dbtp
       << " dBTP above that (a few loud cues in a quiet track; lower 'gain' of the loudest cues to even them out)";
    result.warnings.push_back(os.str());
  }
  if (hrtf_requested && !result.hrtf_enabled) {
    result.warnings.push_back("HRTF was asked for but OpenAL Soft could not enable it (" + result.hrtf_status +
                              "): the track is a plain stereo mix");
  }

  // Pass 2: the same render, scaled, into the WAV (written atomically).
  WavWriter wav(output, timing.sample_rate_hz);
  const auto scale = static_cast<float>(gain.linear());
  render_pass(
      [&](std::span<float> block) {
        for (float& x : block) x *= scale;
        wav.append(block);
      },
      result);
  wav.commit();
  result.samples = total;
  return result;
}

}  // namespace kanoko::sonify
