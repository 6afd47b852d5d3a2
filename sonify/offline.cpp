#include "sonify/offline.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

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

OfflineResult render_offline_audio(const trajectory::Reader& reader, const mapping::AudioSpec& audio,
                                   const OfflineTiming& timing,
                                   const std::function<ListenerState(std::size_t)>& listener_at,
                                   const std::filesystem::path& output) {
  KANOKO_ASSERT(timing.fps > 0 && timing.speed > 0 && timing.frames > 0 && timing.sample_rate_hz > 0,
                "offline timing is validated by the caller");
  const std::vector<CueRule> rules = resolve_cue_rules(audio, reader.meta());
  const std::vector<Voice> voices = assign_voices(audio, reader.meta());
  EngineOptions options = engine_options(audio, reader);
  options.sample_rate_hz = timing.sample_rate_hz;

  // Cues of the shown range, merged per video frame, then capped.
  const double frame_period_s = timing.speed / timing.fps;
  std::vector<Cue> cues;
  for (const Cue& c : detect_cues(reader, rules)) {
    if (c.time_s >= timing.begin_s && c.time_s <= timing.end_s) cues.push_back(c);
  }
  cues = merge_cues_per_frame(cues, timing.begin_s, frame_period_s);
  OfflineResult result;
  result.cues_detected = cues.size();
  cues = cap_voices(cues, options.max_voices, options.cue_length_s * timing.speed);

  std::unique_ptr<Engine> engine = Engine::open_loopback(options, voices);
  result.hrtf_status = engine->hrtf_status();
  const std::size_t total = offline_frame_sample(timing, timing.frames);
  // Streamed: one frame's samples at a time, so long videos need little memory.
  WavWriter wav(output, timing.sample_rate_hz);
  std::vector<float> samples;
  std::size_t done = 0;  // samples rendered
  const auto render_to = [&](std::size_t sample) {
    sample = std::min(sample, total);
    if (sample <= done) return;
    samples.resize((sample - done) * 2);
    engine->render(samples);
    wav.append(samples);
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
    while (next_cue < cues.size() &&
           (cues[next_cue].time_s < frame_end_s || (k + 1 == timing.frames && cues[next_cue].time_s <= frame_end_s))) {
      const Cue& c = cues[next_cue++];
      const double video_s = (c.time_s - timing.begin_s) / timing.speed;
      const auto at = static_cast<std::size_t>(std::llround(video_s * timing.sample_rate_hz));
      render_to(std::max(at, offline_frame_sample(timing, k)));
      const auto b = static_cast<Eigen::Index>(c.body);
      if (engine->start(c, positions.col(b), velocities.col(b))) {
        ++result.cues_played;
        if (result.first_cue_s < 0) result.first_cue_s = static_cast<double>(done) / timing.sample_rate_hz;
      }
    }
    render_to(offline_frame_sample(timing, k + 1));
    listener = next;
  }
  render_to(total);
  wav.commit();
  result.samples = total;
  return result;
}

}  // namespace kanoko::sonify
