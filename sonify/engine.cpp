#include "sonify/engine.hpp"

#define AL_ALEXT_PROTOTYPES
#include <AL/al.h>
#include <AL/alc.h>
#include <AL/alext.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <map>
#include <utility>

#include "src/base/check.hpp"
#include "src/base/error.hpp"

namespace kanoko::sonify {

namespace {

constexpr double kDefaultSpeedOfSound = 343.3;

std::vector<std::int16_t> to_pcm16(const std::vector<float>& x) {
  std::vector<std::int16_t> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    out[i] = static_cast<std::int16_t>(std::lround(std::clamp(x[i], -1.0F, 1.0F) * 32767.0F));
  }
  return out;
}

const char* hrtf_status_reason(ALCint status) {
  switch (status) {
    case ALC_HRTF_DISABLED_SOFT: return "disabled";
    case ALC_HRTF_ENABLED_SOFT: return "enabled";
    case ALC_HRTF_DENIED_SOFT: return "denied by the OpenAL configuration";
    case ALC_HRTF_REQUIRED_SOFT: return "required by the OpenAL configuration";
    case ALC_HRTF_HEADPHONES_DETECTED_SOFT: return "headphones detected";
    case ALC_HRTF_UNSUPPORTED_FORMAT_SOFT: return "unsupported output format";
    default: return "unknown status";
  }
}

ALfloat to_al(double x) { return static_cast<ALfloat>(x); }

// Opens an output device with stderr silenced: with no sound card, ALSA and OpenAL Soft print a
// dozen lines of their own, and the user should see only our one message. ALSOFT_LOGLEVEL set by
// the user keeps their output.
ALCdevice* open_device_quietly(const char* name) {
  if (std::getenv("ALSOFT_LOGLEVEL") != nullptr) return alcOpenDevice(name);
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  const bool redirected = saved >= 0 && null >= 0 && ::dup2(null, STDERR_FILENO) >= 0;
  ALCdevice* device = alcOpenDevice(name);
  if (redirected) {
    std::fflush(stderr);
    ::dup2(saved, STDERR_FILENO);
  }
  if (null >= 0) ::close(null);
  if (saved >= 0) ::close(saved);
  return device;
}

}  // namespace

double speed_of_sound_for(const trajectory::Reader& reader) {
  double fastest = 0;
  for (std::size_t k = 0; k < reader.frame_count(); ++k) {
    const trajectory::FrameView f = reader.frame(k);
    if (f.velocities.cols() > 0) fastest = std::max(fastest, f.velocities.colwise().norm().maxCoeff());
  }
  return fastest > 0 && std::isfinite(fastest) ? 4.0 * fastest : kDefaultSpeedOfSound;
}

double reference_distance_for(const trajectory::Reader& reader) {
  if (reader.frame_count() == 0 || reader.meta().body_count() == 0) return 1.0;
  const trajectory::FrameView f = reader.frame(0);
  const Eigen::Vector3d lo = f.positions.rowwise().minCoeff();
  const Eigen::Vector3d hi = f.positions.rowwise().maxCoeff();
  return std::max(0.25 * (hi - lo).norm(), 1e-3);
}

EngineOptions engine_options(const mapping::AudioSpec& audio, const trajectory::Reader& reader) {
  EngineOptions o;
  o.hrtf = audio.hrtf;
  o.doppler = audio.doppler;
  o.speed_of_sound = speed_of_sound_for(reader);
  o.reference_distance = reference_distance_for(reader);
  o.max_voices = audio.max_voices;
  o.master_volume = audio.master_volume;
  o.cue_length_s = audio.cue_length_s;
  return o;
}

struct Engine::Impl {
  ALCdevice* device = nullptr;
  ALCcontext* context = nullptr;
  bool loopback = false;
  EngineOptions options;
  std::vector<ALuint> buffers;          // one per distinct voice sound
  std::vector<std::size_t> body_buffer;  // body -> index in buffers
  std::vector<ALuint> sources;           // the voice slots
  std::vector<std::uint32_t> source_body;
  double volume = 0.8;
  bool muted = false;
  bool paused = false;
  double pitch_scale = 1.0;
  bool deferred_updates = false;  // AL_SOFT_deferred_updates is available

  ~Impl() {
    if (context != nullptr) {
      alcMakeContextCurrent(context);
      if (!sources.empty()) alDeleteSources(static_cast<ALsizei>(sources.size()), sources.data());
      if (!buffers.empty()) alDeleteBuffers(static_cast<ALsizei>(buffers.size()), buffers.data());
      alcMakeContextCurrent(nullptr);
      alcDestroyContext(context);
    }
    if (device != nullptr) alcCloseDevice(device);
  }

  [[nodiscard]] bool live() const { return context != nullptr; }
  void current() const {
    if (alcGetCurrentContext() != context) alcMakeContextCurrent(context);
  }

  /// Creates the context with HRTF as requested, the buffers and the sources.
  bool create_context(const std::vector<Voice>& voices, std::string& error) {
    std::vector<ALCint> attrs;
    if (loopback) {
      attrs = {ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT, ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT,
               ALC_FREQUENCY, options.sample_rate_hz};
    }
    attrs.push_back(ALC_HRTF_SOFT);
    attrs.push_back(options.hrtf == mapping::HrtfRequest::On    ? ALC_TRUE
                    : options.hrtf == mapping::HrtfRequest::Off ? ALC_FALSE
                                                                : ALC_DONT_CARE_SOFT);
    // Enough mono sources for the cap (OpenAL Soft's default is 256).
    attrs.push_back(ALC_MONO_SOURCES);
    attrs.push_back(static_cast<ALCint>(std::max<std::uint32_t>(options.max_voices, 1)));
    attrs.push_back(0);
    context = alcCreateContext(device, attrs.data());
    if (context == nullptr) {
      error = "cannot create an OpenAL context";
      return false;
    }
    alcMakeContextCurrent(context);
    deferred_updates = alIsExtensionPresent("AL_SOFT_deferred_updates") == AL_TRUE;
    alDistanceModel(AL_INVERSE_DISTANCE_CLAMPED);
    alDopplerFactor(options.doppler ? 1.0F : 0.0F);
    alSpeedOfSound(to_al(options.speed_of_sound));

    // One buffer per distinct (timbre, pitch).
    std::map<std::pair<int, double>, std::size_t> distinct;
    body_buffer.resize(voices.size());
    for (std::size_t b = 0; b < voices.size(); ++b) {
      const auto key = std::make_pair(static_cast<int>(voices[b].timbre), voices[b].pitch_hz);
      auto it = distinct.find(key);
      if (it == distinct.end()) {
        ALuint buffer = 0;
        alGenBuffers(1, &buffer);
        const std::vector<std::int16_t> pcm = to_pcm16(
            synthesise(voices[b].timbre, voices[b].pitch_hz, options.cue_length_s, options.sample_rate_hz));
        alBufferData(buffer, AL_FORMAT_MONO16, pcm.data(),
                     static_cast<ALsizei>(pcm.size() * sizeof(std::int16_t)), options.sample_rate_hz);
        if (alGetError() != AL_NO_ERROR) {
          error = "cannot load the voice sounds into OpenAL";
          return false;
        }
        buffers.push_back(buffer);
        it = distinct.emplace(key, buffers.size() - 1).first;
      }
      body_buffer[b] = it->second;
    }
    for (std::uint32_t i = 0; i < options.max_voices; ++i) {
      ALuint source = 0;
      alGenSources(1, &source);
      if (alGetError() != AL_NO_ERROR) break;  // fewer slots: the cap only gets stricter
      alSourcef(source, AL_REFERENCE_DISTANCE, to_al(options.reference_distance));
      alSourcef(source, AL_ROLLOFF_FACTOR, 1.0F);
      alSourcef(source, AL_MAX_DISTANCE, 1e30F);
      sources.push_back(source);
      source_body.push_back(0);
    }
    volume = std::clamp(options.master_volume, 0.0, 1.0);
    apply_gain();
    return true;
  }

  void apply_gain() const {
    current();
    alListenerf(AL_GAIN, muted ? 0.0F : to_al(volume));
  }

  [[nodiscard]] bool sounding(ALuint source) const {
    ALint state = AL_STOPPED;
    alGetSourcei(source, AL_SOURCE_STATE, &state);
    return state == AL_PLAYING || state == AL_PAUSED;
  }
};

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;

std::unique_ptr<Engine> Engine::open_device(const EngineOptions& options,
                                            const std::vector<Voice>& voices,
                                            const std::string& device_name, std::string& message) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  message.clear();
  impl->device = open_device_quietly(device_name.empty() ? nullptr : device_name.c_str());
  if (impl->device == nullptr) {
    message = "no sound device" + (device_name.empty() ? std::string() : " '" + device_name + "'") +
              " could be opened: playing silently (set ALSOFT_DRIVERS or check the sound setup)";
    return std::unique_ptr<Engine>(new Engine(std::make_unique<Impl>()));
  }
  std::string error;
  if (!impl->create_context(voices, error)) {
    message = error + " on the sound device: playing silently";
    return std::unique_ptr<Engine>(new Engine(std::make_unique<Impl>()));
  }
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

std::unique_ptr<Engine> Engine::open_loopback(const EngineOptions& options,
                                              const std::vector<Voice>& voices) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->loopback = true;
  if (alcIsExtensionPresent(nullptr, "ALC_SOFT_loopback") != ALC_TRUE) {
    throw RunError("OpenAL Soft lacks ALC_SOFT_loopback: cannot render audio offline");
  }
  impl->device = alcLoopbackOpenDeviceSOFT(nullptr);
  if (impl->device == nullptr) throw RunError("cannot open OpenAL Soft's loopback device");
  if (alcIsRenderFormatSupportedSOFT(impl->device, options.sample_rate_hz, ALC_STEREO_SOFT,
                                     ALC_FLOAT_SOFT) != ALC_TRUE) {
    throw RunError("OpenAL Soft's loopback device cannot render float stereo at " +
                   std::to_string(options.sample_rate_hz) + " Hz");
  }
  std::string error;
  if (!impl->create_context(voices, error)) throw RunError(error + " for offline audio");
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

bool Engine::silent() const { return !impl_->live(); }

bool Engine::hrtf_enabled() const {
  if (!impl_->live()) return false;
  ALCint on = ALC_FALSE;
  alcGetIntegerv(impl_->device, ALC_HRTF_SOFT, 1, &on);
  return on == ALC_TRUE;
}

std::string Engine::hrtf_status() const {
  if (!impl_->live()) return "HRTF off (no sound device)";
  ALCint status = ALC_HRTF_DISABLED_SOFT;
  alcGetIntegerv(impl_->device, ALC_HRTF_STATUS_SOFT, 1, &status);
  if (hrtf_enabled()) {
    const ALCchar* name = alcGetString(impl_->device, ALC_HRTF_SPECIFIER_SOFT);
    return std::string("HRTF on (") + (name != nullptr ? name : "unnamed") + ")";
  }
  if (status == ALC_HRTF_DISABLED_SOFT && impl_->options.hrtf == mapping::HrtfRequest::Off) {
    return "HRTF off (not requested)";
  }
  return std::string("HRTF off (") + hrtf_status_reason(status) + ")";
}

std::string Engine::device_name() const {
  if (!impl_->live()) return "";
  const ALCchar* name = alcGetString(impl_->device, ALC_DEVICE_SPECIFIER);
  return name != nullptr ? name : "";
}

std::size_t Engine::voice_slots() const { return impl_->sources.size(); }

// AL_SOFT_deferred_updates holds every change until alProcessUpdatesSOFT, so the mixer never
// sees half a frame's update (alcSuspendContext is the portable fallback).
void Engine::begin_frame() {
  if (!impl_->live()) return;
  impl_->current();
  if (impl_->deferred_updates) {
    alDeferUpdatesSOFT();
  } else {
    alcSuspendContext(impl_->context);
  }
}

void Engine::end_frame() {
  if (!impl_->live()) return;
  impl_->current();
  if (impl_->deferred_updates) {
    alProcessUpdatesSOFT();
  } else {
    alcProcessContext(impl_->context);
  }
}

void Engine::set_listener(const ListenerState& l) {
  if (!impl_->live()) return;
  impl_->current();
  alListener3f(AL_POSITION, to_al(l.position.x()), to_al(l.position.y()), to_al(l.position.z()));
  alListener3f(AL_VELOCITY, to_al(l.velocity.x()), to_al(l.velocity.y()), to_al(l.velocity.z()));
  const ALfloat orientation[6] = {to_al(l.forward.x()), to_al(l.forward.y()), to_al(l.forward.z()),
                                  to_al(l.up.x()),      to_al(l.up.y()),      to_al(l.up.z())};
  alListenerfv(AL_ORIENTATION, orientation);
}

bool Engine::start(const Cue& cue, const Eigen::Vector3d& position, const Eigen::Vector3d& velocity) {
  Impl& m = *impl_;
  if (!m.live() || m.paused || cue.body >= m.body_buffer.size()) return false;
  m.current();
  for (std::size_t i = 0; i < m.sources.size(); ++i) {
    const ALuint s = m.sources[i];
    if (m.sounding(s)) continue;
    m.source_body[i] = cue.body;
    alSourcei(s, AL_BUFFER, static_cast<ALint>(m.buffers[m.body_buffer[cue.body]]));
    alSourcef(s, AL_GAIN, cue.gain);
    alSourcef(s, AL_PITCH, to_al(m.pitch_scale));
    alSource3f(s, AL_POSITION, to_al(position.x()), to_al(position.y()), to_al(position.z()));
    alSource3f(s, AL_VELOCITY, to_al(velocity.x()), to_al(velocity.y()), to_al(velocity.z()));
    alSourcePlay(s);
    return true;
  }
  return false;
}

void Engine::follow_bodies(const Eigen::Ref<const Eigen::Matrix3Xd>& positions,
                           const Eigen::Ref<const Eigen::Matrix3Xd>& velocities) {
  Impl& m = *impl_;
  if (!m.live()) return;
  m.current();
  for (std::size_t i = 0; i < m.sources.size(); ++i) {
    const auto b = static_cast<Eigen::Index>(m.source_body[i]);
    if (!m.sounding(m.sources[i]) || b >= positions.cols()) continue;
    const auto p = positions.col(b);
    alSource3f(m.sources[i], AL_POSITION, to_al(p.x()), to_al(p.y()), to_al(p.z()));
    if (b < velocities.cols()) {
      const auto v = velocities.col(b);
      alSource3f(m.sources[i], AL_VELOCITY, to_al(v.x()), to_al(v.y()), to_al(v.z()));
    }
  }
}

void Engine::stop_all() {
  Impl& m = *impl_;
  if (!m.live() || m.sources.empty()) return;
  m.current();
  alSourceStopv(static_cast<ALsizei>(m.sources.size()), m.sources.data());
}

void Engine::set_paused(bool paused) {
  Impl& m = *impl_;
  if (!m.live() || paused == m.paused) return;
  m.paused = paused;
  m.current();
  for (const ALuint s : m.sources) {
    ALint state = AL_STOPPED;
    alGetSourcei(s, AL_SOURCE_STATE, &state);
    if (paused && state == AL_PLAYING) alSourcePause(s);
    if (!paused && state == AL_PAUSED) alSourcePlay(s);
  }
}

void Engine::set_master_volume(double volume) {
  impl_->volume = std::clamp(volume, 0.0, 1.0);
  if (impl_->live()) impl_->apply_gain();
}

double Engine::master_volume() const { return impl_->volume; }

void Engine::set_muted(bool muted) {
  impl_->muted = muted;
  if (impl_->live()) impl_->apply_gain();
}

bool Engine::muted() const { return impl_->muted; }

void Engine::set_pitch_scale(double scale) {
  Impl& m = *impl_;
  m.pitch_scale = std::clamp(scale, 0.25, 4.0);
  if (!m.live()) return;
  m.current();
  for (const ALuint s : m.sources) alSourcef(s, AL_PITCH, to_al(m.pitch_scale));
}

std::size_t Engine::playing() const {
  const Impl& m = *impl_;
  if (!m.live()) return 0;
  m.current();
  return static_cast<std::size_t>(
      std::count_if(m.sources.begin(), m.sources.end(), [&](ALuint s) { return m.sounding(s); }));
}

void Engine::render(std::span<float> out) {
  Impl& m = *impl_;
  KANOKO_ASSERT(m.loopback && m.live(), "render() needs a loopback engine");
  KANOKO_ASSERT(out.size() % 2 == 0, "stereo frames are pairs of samples");
  m.current();
  alcRenderSamplesSOFT(m.device, out.data(), static_cast<ALCsizei>(out.size() / 2));
}

}  // namespace kanoko::sonify
