#include "sonify/voices.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numbers>
#include <sstream>

#include "src/base/atomic_file.hpp"
#include "src/base/error.hpp"

namespace kanoko::sonify {

namespace {

constexpr std::array<int, 10> kPentatonic{0, 2, 4, 7, 9, 12, 14, 16, 19, 21};  // semitones from A3
constexpr std::array<const char*, 10> kNoteNames{"A3", "B3", "C#4", "E4", "F#4",
                                                 "A4", "B4", "C#5", "E5", "F#5"};
constexpr double kA3_hz = 220.0;

std::string hz_label(mapping::Timbre timbre, double pitch_hz) {
  std::ostringstream os;
  os << mapping::to_string(timbre) << ' ' << std::lround(pitch_hz) << " Hz";
  return os.str();
}

void put_u32(std::string& s, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFFU));
}
void put_u16(std::string& s, std::uint16_t v) {
  s.push_back(static_cast<char>(v & 0xFFU));
  s.push_back(static_cast<char>(v >> 8));
}
std::uint32_t get_u32(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}
std::uint16_t get_u16(const std::string& s, std::size_t at) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(s[at]) |
                                    (static_cast<unsigned char>(s[at + 1]) << 8));
}

}  // namespace

Voice automatic_voice(std::size_t body) {
  const std::size_t timbres = mapping::timbre_names().size();
  Voice v;
  v.timbre = static_cast<mapping::Timbre>(body % timbres);
  const std::size_t note = (body / timbres) % kPentatonic.size();
  v.pitch_hz = kA3_hz * std::pow(2.0, kPentatonic[note] / 12.0);
  v.label = std::string(mapping::to_string(v.timbre)) + ' ' + kNoteNames[note];
  return v;
}

std::vector<Voice> assign_voices(const mapping::AudioSpec& audio, const trajectory::Metadata& meta) {
  std::vector<Voice> voices;
  voices.reserve(meta.body_count());
  for (std::size_t i = 0; i < meta.body_count(); ++i) voices.push_back(automatic_voice(i));
  DiagnosticList diag;
  for (const mapping::VoiceSpec& spec : audio.voices) {
    std::size_t body = meta.body_count();
    for (std::size_t i = 0; i < meta.body_count(); ++i) {
      if (meta.bodies[i].name == spec.body) body = i;
    }
    if (body == meta.body_count() && !spec.body.empty() &&
        std::all_of(spec.body.begin(), spec.body.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        spec.body.size() < 10) {
      body = std::stoul(spec.body);
    }
    if (body >= meta.body_count()) {
      diag.add(spec.where, spec.body.empty() ? std::string("a voice needs 'body' (a name or index)")
                                             : "the run has no body '" + spec.body + "' (it has " +
                                                   std::to_string(meta.body_count()) + " bodies)");
      continue;
    }
    Voice& v = voices[body];
    if (spec.timbre) v.timbre = *spec.timbre;
    if (spec.pitch_hz) {
      v.pitch_hz = *spec.pitch_hz;
      v.label = hz_label(v.timbre, v.pitch_hz);
    } else {
      v.label = std::string(mapping::to_string(v.timbre)) + v.label.substr(v.label.find(' '));
    }
  }
  diag.throw_if_any();
  return voices;
}

std::vector<float> synthesise(mapping::Timbre timbre, double pitch_hz, double duration_s,
                              int sample_rate_hz) {
  const auto n = static_cast<std::size_t>(std::max(1.0, std::round(duration_s * sample_rate_hz)));
  std::vector<float> out(n);
  const double two_pi = 2.0 * std::numbers::pi;
  const double attack_s = std::min(0.005, duration_s / 4);
  const double release_s = std::min(0.03, duration_s / 4);
  for (std::size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / sample_rate_hz;
    const double phase = std::fmod(pitch_hz * t, 1.0);  // 0..1
    double x = 0;
    double decay = 1;
    switch (timbre) {
      case mapping::Timbre::Sine:
        x = std::sin(two_pi * phase);
        break;
      case mapping::Timbre::Triangle:
        x = 1.0 - 4.0 * std::abs(phase - 0.5);
        break;
      case mapping::Timbre::Square:  // softened: odd harmonics 1, 3, 5
        x = (std::sin(two_pi * phase) + std::sin(3 * two_pi * phase) / 3 +
             std::sin(5 * two_pi * phase) / 5) * 0.8;
        break;
      case mapping::Timbre::Pluck:  // bright attack decaying fast
        decay = std::exp(-t * 12.0);
        x = std::sin(two_pi * phase) * 0.7 + std::sin(2 * two_pi * phase) * 0.3 * std::exp(-t * 30.0);
        break;
      case mapping::Timbre::Bell:  // inharmonic partials
        decay = std::exp(-t * 6.0);
        x = 0.6 * std::sin(two_pi * pitch_hz * t) + 0.25 * std::sin(two_pi * 2.76 * pitch_hz * t) +
            0.15 * std::sin(two_pi * 5.4 * pitch_hz * t);
        break;
    }
    double envelope = decay;
    if (t < attack_s) envelope *= t / attack_s;
    const double left = duration_s - t;
    if (left < release_s) envelope *= std::max(0.0, left / release_s);
    out[i] = static_cast<float>(x * envelope);
  }
  return out;
}

struct WavWriter::Impl {
  AtomicOutputFile file;
  std::uint64_t data_bytes = 0;
  std::string block;
  explicit Impl(const std::filesystem::path& path) : file(path) {}
};

WavWriter::WavWriter(const std::filesystem::path& path, int sample_rate_hz)
    : impl_(std::make_unique<Impl>(path)) {
  std::string header;
  header += "RIFF";
  put_u32(header, 0);  // patched by commit()
  header += "WAVEfmt ";
  put_u32(header, 16);
  put_u16(header, 1);  // PCM
  put_u16(header, 2);  // channels
  put_u32(header, static_cast<std::uint32_t>(sample_rate_hz));
  put_u32(header, static_cast<std::uint32_t>(sample_rate_hz) * 4);  // bytes per second
  put_u16(header, 4);                                                // bytes per frame
  put_u16(header, 16);                                               // bits per sample
  header += "data";
  put_u32(header, 0);  // patched by commit()
  impl_->file.write(header);
}

WavWriter::~WavWriter() = default;

void WavWriter::append(std::span<const float> interleaved_stereo) {
  std::string& block = impl_->block;
  block.clear();
  for (const float v : interleaved_stereo) {
    const float x = std::clamp(v, -1.0F, 1.0F);
    put_u16(block, static_cast<std::uint16_t>(static_cast<std::int16_t>(std::lround(x * 32767.0F))));
  }
  impl_->data_bytes += block.size();
  if (impl_->data_bytes > 0xFFFFFFFFULL - 36) {
    throw RunError("the sound track is too long for a WAV file (4 GiB): render a shorter range");
  }
  impl_->file.write(block);
}

void WavWriter::commit() {
  const auto data = static_cast<std::uint32_t>(impl_->data_bytes);
  std::string riff, chunk;
  put_u32(riff, 36 + data);
  put_u32(chunk, data);
  impl_->file.write_at(4, riff.data(), riff.size());
  impl_->file.write_at(40, chunk.data(), chunk.size());
  impl_->file.commit();
}

void write_wav(const std::filesystem::path& path, std::span<const float> interleaved_stereo,
               int sample_rate_hz) {
  WavWriter wav(path, sample_rate_hz);
  wav.append(interleaved_stereo);
  wav.commit();
}

WavData read_wav(const std::filesystem::path& path) {
  const std::string bytes = read_file(path);
  const auto fail = [&](const std::string& what) {
    throw InputError(FileLoc{path.string()}, "not a 16-bit PCM WAV file: " + what);
  };
  if (bytes.size() < 12 || bytes.compare(0, 4, "RIFF") != 0 || bytes.compare(8, 4, "WAVE") != 0) {
    fail("no RIFF/WAVE header");
  }
  WavData wav;
  bool have_format = false;
  for (std::size_t at = 12; at + 8 <= bytes.size();) {
    const std::string id = bytes.substr(at, 4);
    const std::uint32_t size = get_u32(bytes, at + 4);
    const std::size_t body = at + 8;
    if (size > bytes.size() - body) fail("chunk '" + id + "' runs past the end of the file");
    if (id == "fmt ") {
      if (size < 16) fail("format chunk too short");
      if (get_u16(bytes, body) != 1 || get_u16(bytes, body + 14) != 16) fail("not 16-bit PCM");
      wav.channels = get_u16(bytes, body + 2);
      wav.sample_rate_hz = static_cast<int>(get_u32(bytes, body + 4));
      if (wav.channels == 0 || wav.sample_rate_hz <= 0) fail("no channels or no sample rate");
      have_format = true;
    } else if (id == "data") {
      if (!have_format) fail("data before the format chunk");
      wav.samples.resize(size / 2);
      for (std::size_t i = 0; i < wav.samples.size(); ++i) {
        wav.samples[i] = static_cast<float>(static_cast<std::int16_t>(get_u16(bytes, body + 2 * i))) / 32767.0F;
      }
      return wav;
    }
    at = body + size + (size & 1U);
  }
  fail("no data chunk");
  return wav;
}

}  // namespace kanoko::sonify
