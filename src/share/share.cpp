#include "src/share/share.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "src/base/atomic_file.hpp"
#include "src/base/error.hpp"
#include "src/base/json.hpp"
#include "src/trajectory/body_size.hpp"
#include "src/trajectory/panel_values.hpp"
#include "src/trajectory/spring_colour.hpp"
#include "src/trajectory/traffic.hpp"
#include "src/web/assets.hpp"

namespace kanoko::share {

namespace {

constexpr double kQuantumSteps = 65535.0;

/// base64 grows data by 4/3 (rounded up to whole groups).
std::uint64_t base64_size(std::uint64_t bytes) { return (bytes + 2) / 3 * 4; }

std::string mebibytes(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// A JSON string that can sit inside a <script> block.
std::string json_string(std::string_view s) { return kanoko::json_string(s, true); }

std::string html_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

/// A script's text made safe to sit inside <script>…</script>: "</script" cannot occur in valid
/// JavaScript outside strings, regular expressions and comments, where "<\/" means the same.
std::string script_text(std::string text) {
  for (std::size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 3)) {
    text.replace(at, 2, "<\\/");
  }
  return text;
}

std::string read_library_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError(FileLoc{path.string()},
                     "cannot read three.js: install Debian's libjs-three (apt-get install libjs-three)");
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

[[noreturn]] void refuse_budget(const std::string& run, std::uint64_t page, const PageOptions& options,
                                std::size_t frames, std::size_t bodies, std::uint64_t fixed,
                                std::uint64_t per_frame) {
  std::string fix;
  if (per_frame > 0 && options.max_bytes > fixed) {
    const double fit_frames = static_cast<double>(options.max_bytes - fixed) / static_cast<double>(per_frame);
    const double fit_fps = std::floor((fit_frames - 1.0) / kPlaybackWall_s * 10.0) / 10.0;
    if (fit_fps >= 0.1) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g", fit_fps);
      fix = "lower --fps to " + std::string(buf) + " or less, ";
    }
  }
  throw InputError(FileLoc{run},
                   "the page would take " + mebibytes(page) + ", over its " + mebibytes(options.max_bytes) +
                       " budget (--max-size): " + std::to_string(frames) + " frames of " +
                       std::to_string(bodies) + " bodies; " + fix +
                       "share a shorter time range with --from/--to, or raise --max-size");
}

/// As the desktop sound engine (sonify/engine.cpp): the speed of sound is 4 × the fastest body of
/// frames first..last, and a cue sounds at full gain within a quarter of frame first's diagonal.
void set_sound_scale(PageData& d, const trajectory::Reader& reader, std::size_t first, std::size_t last) {
  double fastest = 0;
  for (std::size_t k = first; k <= last && k < reader.frame_count(); ++k) {
    const trajectory::FrameView f = reader.frame(k);
    if (f.velocities.cols() > 0) fastest = std::max(fastest, f.velocities.colwise().norm().maxCoeff());
    if (k == first && f.positions.cols() > 0) {
      const Eigen::Vector3d lo = f.positions.rowwise().minCoeff();
      const Eigen::Vector3d hi = f.positions.rowwise().maxCoeff();
      d.reference_distance = std::max(0.25 * (hi - lo).norm(), 1e-3);
    }
  }
  d.speed_of_sound = fastest > 0 && std::isfinite(fastest) ? 4.0 * fastest : 343.3;
}

/// The run's [audio] section and voices; the defaults (and the reason in d.sound_problem) when the
/// mapping stored in the run cannot be read any more: the page is still worth having.
bool load_sound(PageData& d, const trajectory::Reader& reader, const std::string& run) {
  try {
    d.audio = sonify::stored_audio_section(reader, run);
    d.voices = sonify::assign_voices(d.audio, reader.meta());
    return true;
  } catch (const InputError& e) {
    d.sound_problem = e.what();
    d.audio = mapping::AudioSpec{};
    d.voices = sonify::assign_voices(d.audio, reader.meta());
    return false;
  }
}

/// The springs' colour scales (src/trajectory/spring_colour.hpp) as tables the page interpolates
/// linearly: tension over length / length at the start, traffic over bytes / the busiest spring's
/// (sampled on a square grid, as the scale is a square root), each clamped at its ends.
std::string spring_colour_tables() {
  constexpr int kSamples = 64;
  std::string json;
  const auto table = [&](const char* name, const auto& x_of, const auto& colour_of) {
    json += std::string(json.empty() ? "{" : ",") + json_string(name) + ":{\"x\":[";
    std::string rgb;
    for (int j = 0; j <= kSamples; ++j) {
      const double x = x_of(static_cast<double>(j) / kSamples);
      const trajectory::Rgb c = colour_of(x);
      json += std::string(j ? "," : "") + number(x);
      rgb += std::string(j ? "," : "") + "[" + number(c[0]) + "," + number(c[1]) + "," + number(c[2]) + "]";
    }
    json += "],\"rgb\":[" + rgb + "]}";
  };
  table("tension", [](double u) { return 1.0 + (2.0 * u - 1.0) * trajectory::kFullTensionStrain; },
        [](double ratio) { return trajectory::tension_colour(ratio, 1.0); });
  table("traffic", [](double u) { return u * u; }, [](double ratio) { return trajectory::traffic_colour(ratio, 1.0); });
  const trajectory::Rgb n = trajectory::kSpringNeutral;
  return json + ",\"neutral\":[" + number(n[0]) + "," + number(n[1]) + "," + number(n[2]) + "]}";
}

template <typename T>
void append_raw(std::string& blob, const std::vector<T>& values) {
  const std::size_t at = blob.size();
  blob.resize(at + values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(blob.data() + at, values.data(), values.size() * sizeof(T));
}

}  // namespace

std::uint16_t quantise(double v, double lo, double extent) {
  if (!(extent > 0)) return 0;
  const double q = std::round((v - lo) / extent * kQuantumSteps);
  return static_cast<std::uint16_t>(std::clamp(q, 0.0, kQuantumSteps));
}

double dequantise(std::uint16_t q, double lo, double extent) {
  return lo + static_cast<double>(q) / kQuantumSteps * extent;
}

std::vector<double> page_times(const trajectory::Reader& reader, double begin_s, double end_s, double fps) {
  if (!(end_s > begin_s)) return {begin_s};
  const auto most = static_cast<std::size_t>(std::max(2.0, std::floor(fps * kPlaybackWall_s) + 1.0));
  const std::size_t first = reader.frame_at_or_before(begin_s);
  const std::size_t last = reader.frame_at_or_before(end_s);
  if (reader.frame_time(first) == begin_s && reader.frame_time(last) == end_s && last - first + 1 <= most) {
    std::vector<double> times;
    for (std::size_t k = first; k <= last; ++k) times.push_back(reader.frame_time(k));
    return times;
  }
  std::vector<double> times(most);
  for (std::size_t k = 0; k < most; ++k) {
    times[k] = begin_s + (end_s - begin_s) * static_cast<double>(k) / static_cast<double>(most - 1);
  }
  times.back() = end_s;
  return times;
}

std::uint64_t data_bytes(std::uint64_t frames, std::uint64_t bodies, std::uint64_t stats,
                         std::uint64_t stat_frames, std::uint64_t cues) {
  return frames * 8 + stat_frames * 8 + cues * 8 + stat_frames * bodies * stats * 4 + cues * 8 +
         frames * bodies * 3 * 2 + frames * bodies * 2;
}

PageData collect_page_data(const trajectory::Reader& reader, const std::string& run, const PageOptions& options) {
  const auto& meta = reader.meta();
  const std::size_t n = meta.body_count();
  const std::size_t s_count = meta.stat_count();
  PageData d;
  d.begin_s = options.from_s.value_or(reader.begin_time());
  d.end_s = options.to_s.value_or(reader.end_time());
  const auto in_run = [&](double t, const char* option) {
    if (!(t >= reader.begin_time() && t <= reader.end_time())) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%g is outside the run (%g to %g s)", t, reader.begin_time(), reader.end_time());
      throw InputError(FileLoc{option}, buf);
    }
  };
  in_run(d.begin_s, "--from");
  in_run(d.end_s, "--to");
  if (d.end_s < d.begin_s) throw InputError(FileLoc{"--to"}, "--to must not be before --from");

  d.times = page_times(reader, d.begin_s, d.end_s, options.fps);
  const std::size_t f_count = d.times.size();
  // The positions and speeds alone are known now: refuse before reading every frame.
  const std::uint64_t frames_part = base64_size(data_bytes(f_count, n, 0, 0, 0));
  if (frames_part > options.max_bytes) {
    refuse_budget(run, frames_part, options, f_count, n, 0, base64_size(data_bytes(1, n, 0, 0, 0)));
  }

  // Positions at the page's times, then their box and the quantised values.
  std::vector<double> exact(f_count * n * 3);
  Eigen::Matrix3Xd p;
  d.box_lo.setConstant(std::numeric_limits<double>::infinity());
  Eigen::Vector3d hi = Eigen::Vector3d::Constant(-std::numeric_limits<double>::infinity());
  d.speeds.resize(f_count * n);
  std::vector<double> speeds(f_count * n);
  for (std::size_t k = 0; k < f_count; ++k) {
    reader.positions_at(d.times[k], p);
    for (std::size_t i = 0; i < n; ++i) {
      for (int c = 0; c < 3; ++c) {
        const double v = p(c, static_cast<Eigen::Index>(i));
        exact[(k * n + i) * 3 + static_cast<std::size_t>(c)] = v;
        d.box_lo[c] = std::min(d.box_lo[c], v);
        hi[c] = std::max(hi[c], v);
      }
      speeds[k * n + i] = trajectory::body_speed(reader, i, d.times[k]);
      d.max_speed = std::max(d.max_speed, speeds[k * n + i]);
    }
  }
  if (n == 0) {
    d.box_lo.setZero();
    hi.setZero();
  }
  d.box_extent = hi - d.box_lo;
  d.positions.resize(exact.size());
  for (std::size_t j = 0; j < exact.size(); ++j) {
    const auto c = static_cast<Eigen::Index>(j % 3);
    d.positions[j] = quantise(exact[j], d.box_lo[c], d.box_extent[c]);
  }
  for (std::size_t j = 0; j < speeds.size(); ++j) d.speeds[j] = quantise(speeds[j], 0.0, d.max_speed);

  // Statistics: a key frame at every run frame of the range where one of them (or the traffic
  // interval) changes; with them the springs' traffic and each body's top partners there.
  const std::size_t first = reader.frame_at_or_before(d.begin_s);
  const std::size_t last = reader.frame_at_or_before(d.end_s);
  const bool traffic = meta.traffic_intervals() > 0;
  trajectory::IntervalTraffic intervals(meta);
  std::vector<trajectory::PartnerTotals> partners(traffic ? n : 0);
  Eigen::MatrixXd previous;
  std::size_t previous_bin = 0;
  for (std::size_t k = first; k <= last; ++k) {
    const trajectory::FrameView f = reader.frame(k);
    const double t = std::max(f.time_s, d.begin_s);
    const std::size_t bin = traffic ? meta.interval_of(t) : 0;
    if (k != first && f.stats == previous && bin == previous_bin) continue;
    previous = f.stats;
    previous_bin = bin;
    d.stat_times.push_back(t);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t s = 0; s < s_count; ++s) {
        d.stats.push_back(static_cast<float>(f.stats(static_cast<Eigen::Index>(s), static_cast<Eigen::Index>(i))));
      }
    }
    if (!traffic) continue;
    intervals.set_interval(bin);
    for (const double bytes : intervals.spring_bytes()) d.spring_bytes.push_back(static_cast<float>(bytes));
    d.max_spring_bytes.push_back(static_cast<float>(intervals.max_spring_bytes()));
    for (std::size_t i = 0; i < n; ++i) {
      const auto top = partners[i].top(meta, static_cast<std::uint32_t>(i), bin, kTopPartners);
      for (std::size_t j = 0; j < kTopPartners; ++j) {
        d.partner_bodies.push_back(j < top.size() ? top[j].body : 0xffffffffU);
        d.partner_sent.push_back(j < top.size() ? static_cast<float>(top[j].sent.bytes) : 0.0F);
        d.partner_received.push_back(j < top.size() ? static_cast<float>(top[j].received.bytes) : 0.0F);
      }
    }
  }
  set_sound_scale(d, reader, first, last);

  // Sound: the run's cues in the range, merged per page frame and capped to the voices at 1×.
  if (!load_sound(d, reader, run)) return d;
  try {
    d.cues = page_cues(reader, d.audio, d.begin_s, d.end_s, f_count);
  } catch (const InputError& e) {
    d.sound_problem = e.what();
  }
  return d;
}

std::vector<sonify::Cue> page_cues(const trajectory::Reader& reader, const mapping::AudioSpec& audio,
                                   double begin_s, double end_s, std::size_t frames) {
  const std::vector<sonify::CueRule> rules = sonify::resolve_cue_rules(audio, reader.meta());
  std::vector<sonify::Cue> cues;
  if (rules.empty() || reader.frame_count() == 0) return cues;
  for (const sonify::Cue& c : sonify::detect_cues(reader, rules)) {
    if (c.time_s >= begin_s && c.time_s <= end_s) cues.push_back(c);
  }
  const double speed = std::max(end_s - begin_s, 1e-9) / kPlaybackWall_s;
  const double period = frames > 1 ? (end_s - begin_s) / static_cast<double>(frames - 1) : 1.0;
  cues = sonify::merge_cues_per_frame(cues, begin_s, period);
  return sonify::cap_voices(cues, audio.max_voices, audio.cue_length_s * speed);
}

std::string cues_json(const std::vector<sonify::Cue>& cues) {
  std::string times, gains, bodies;
  for (const sonify::Cue& c : cues) {
    const char* sep = times.empty() ? "" : ",";
    times += sep + number(c.time_s);
    gains += sep + number(c.gain);
    bodies += sep + std::to_string(c.body);
  }
  return "{\"times\":[" + times + "],\"gains\":[" + gains + "],\"bodies\":[" + bodies + "]}";
}

PageData collect_stream_data(const trajectory::Reader& reader, const std::string& run) {
  PageData d;
  if (reader.frame_count() > 0) {
    const trajectory::FrameView f = reader.frame(0);
    if (f.positions.cols() > 0) {
      d.box_lo = f.positions.rowwise().minCoeff();
      d.box_extent = Eigen::Vector3d(f.positions.rowwise().maxCoeff()) - d.box_lo;
    }
    set_sound_scale(d, reader, 0, reader.frame_count() - 1);
  }
  load_sound(d, reader, run);
  return d;
}

std::string base64(const std::uint8_t* bytes, std::size_t size) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve(base64_size(size));
  std::size_t i = 0;
  for (; i + 3 <= size; i += 3) {
    const std::uint32_t v = (std::uint32_t{bytes[i]} << 16) | (std::uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < size) {
    std::uint32_t v = std::uint32_t{bytes[i]} << 16;
    if (i + 1 < size) v |= std::uint32_t{bytes[i + 1]} << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < size ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

void drop_traffic(PageData& d) {
  d.spring_bytes.clear();
  d.max_spring_bytes.clear();
  d.partner_bodies.clear();
  d.partner_sent.clear();
  d.partner_received.clear();
}

std::string build_page(const trajectory::Reader& reader, const PageData& d, const PageOptions& options,
                       const std::string& run, std::string* left_out) {
  if (left_out != nullptr) left_out->clear();
  const auto& meta = reader.meta();
  const std::string three = read_library_file(options.three_dir / "build" / "three.min.js");
  const std::string orbit = read_library_file(options.three_dir / "examples" / "js" / "controls" / "OrbitControls.js");

  // The binary block: 8-byte values first, then 4-byte, then 2-byte ones, so that the page views
  // each part in place with a typed array.
  std::string blob;
  std::vector<double> cue_times;
  std::vector<float> cue_gains;
  std::vector<std::uint32_t> cue_bodies;
  for (const sonify::Cue& c : d.cues) {
    cue_times.push_back(c.time_s);
    cue_gains.push_back(c.gain);
    cue_bodies.push_back(c.body);
  }
  std::string layout;
  const auto part = [&](const char* name, const auto& values) {
    layout += std::string(layout.empty() ? "" : ",") + json_string(name) + ":[" + std::to_string(blob.size()) +
              "," + std::to_string(values.size()) + "]";
    append_raw(blob, values);
  };
  part("times", d.times);
  part("stat_times", d.stat_times);
  part("cue_times", cue_times);
  part("stats", d.stats);
  part("cue_gains", cue_gains);
  part("cue_bodies", cue_bodies);
  part("spring_bytes", d.spring_bytes);
  part("max_spring_bytes", d.max_spring_bytes);
  part("partner_bodies", d.partner_bodies);
  part("partner_sent", d.partner_sent);
  part("partner_received", d.partner_received);
  part("positions", d.positions);
  part("speeds", d.speeds);

  std::string json = "{\"format\":1,\"title\":" + json_string(options.title);
  json += ",\"begin\":" + number(d.begin_s) + ",\"end\":" + number(d.end_s);
  json += ",\"trace_end\":" + number(meta.trace_end_s) + ",\"playback_wall_s\":" + number(kPlaybackWall_s);
  // The run's binning intervals, for the panel's "interval" line (as the desktop's inspect panel).
  json += ",\"trace_begin\":" + number(meta.trace_begin_s) + ",\"interval\":" + number(meta.interval_s);
  json += ",\"box_lo\":[" + number(d.box_lo.x()) + "," + number(d.box_lo.y()) + "," + number(d.box_lo.z()) + "]";
  json += ",\"box_extent\":[" + number(d.box_extent.x()) + "," + number(d.box_extent.y()) + "," +
          number(d.box_extent.z()) + "]";
  json += ",\"max_speed\":" + number(d.max_speed) + ",\"max_labels\":" + std::to_string(options.max_labels);
  // The masses at the run's first frame: the desktop sizes bodies relative to them
  // (trajectory::mass_ratio_scale, whose clamp the page gets as mass_ratio_range).
  const int mass_stat = meta.stat_index(trajectory::stat::kMass);
  std::optional<trajectory::FrameView> frame0;
  if (mass_stat >= 0 && reader.frame_count() > 0) frame0.emplace(reader.frame(0));
  json += ",\"mass_ratio_range\":[" + number(trajectory::kMassRatioMin) + "," + number(trajectory::kMassRatioMax) + "]";
  json += ",\"bodies\":[";
  for (std::size_t i = 0; i < meta.bodies.size(); ++i) {
    const auto& b = meta.bodies[i];
    const double mass0 = frame0 ? frame0->stats(mass_stat, static_cast<Eigen::Index>(i)) : std::nan("");
    json += std::string(i ? "," : "") + "{\"name\":" + json_string(b.name) + ",\"host\":" + json_string(b.host) +
            ",\"rank\":" + std::to_string(b.rank) + ",\"colour\":[" + number(b.colour_rgb[0]) + "," +
            number(b.colour_rgb[1]) + "," + number(b.colour_rgb[2]) + "],\"radius\":" + number(trajectory::body_radius(b)) +
            ",\"timbre\":" + json_string(mapping::to_string(d.voices[i].timbre)) +
            ",\"pitch\":" + number(d.voices[i].pitch_hz) + ",\"voice\":" + json_string(d.voices[i].label) +
            ",\"mass0\":" + number(mass0) + "}";
  }
  json += "],\"edges\":[";
  for (std::size_t e = 0; e < meta.edges.size(); ++e) {
    json += std::string(e ? "," : "") + "[" + std::to_string(meta.edges[e][0]) + "," +
            std::to_string(meta.edges[e][1]) + "]";
  }
  json += "],\"spring_length0\":[";
  if (reader.frame_count() > 0) {
    const trajectory::FrameView f0 = reader.frame(0);  // as the desktop: lengths at the run's start
    for (std::size_t e = 0; e < meta.edges.size(); ++e) {
      const auto [a, b] = meta.edges[e];
      json += std::string(e ? "," : "") + number((f0.positions.col(a) - f0.positions.col(b)).norm());
    }
  }
  json += "],\"spring_colours\":" + spring_colour_tables() + ",\"traffic\":" +
          (meta.traffic_intervals() > 0 && (!options.stream_url.empty() || !d.max_spring_bytes.empty()) ? "true"
                                                                                                  : "false") +
          ",\"top_partners\":" + std::to_string(kTopPartners);
  json += ",\"stats\":[";
  for (std::size_t s = 0; s < meta.stat_names.size(); ++s) {
    json += std::string(s ? "," : "") + "{\"name\":" + json_string(meta.stat_names[s]) +
            ",\"label\":" + json_string(trajectory::stat_label(meta.stat_names[s])) +
            ",\"percent\":" + (trajectory::is_fraction_stat(meta.stat_names[s]) ? "true" : "false") + "}";
  }
  const bool hrtf = options.hrtf.value_or(d.audio.hrtf != mapping::HrtfRequest::Off);
  json += "],\"audio\":{\"hrtf\":" + std::string(hrtf ? "true" : "false") +
          ",\"doppler\":" + (options.doppler.value_or(d.audio.doppler) ? "true" : "false") +
          ",\"master_volume\":" + number(d.audio.master_volume) + ",\"cue_length_s\":" + number(d.audio.cue_length_s) +
          ",\"max_voices\":" + std::to_string(d.audio.max_voices) + ",\"speed_of_sound\":" + number(d.speed_of_sound) +
          ",\"reference_distance\":" + number(d.reference_distance) + "}";
  if (options.stream_url.empty()) {
    json += ",\"data\":{" + layout + ",\"bytes\":" + std::to_string(blob.size()) + "}}";
  } else {
    json += ",\"stream\":" + json_string(options.stream_url) + ",\"cues_url\":" + json_string(options.cues_url) +
            ",\"traffic_url\":" + json_string(options.traffic_url) +
            ",\"partners_url\":" + json_string(options.partners_url) + "}";
    blob.clear();
  }

  const std::string encoded = base64(reinterpret_cast<const std::uint8_t*>(blob.data()), blob.size());
  const std::string title = html_escape(options.title.empty() ? "Kanoko run" : options.title + " — Kanoko");
  const std::string scripts = "<script>" + script_text(three) + "</script>\n<script>" + script_text(orbit) +
                              "</script>\n<script id=\"kanoko-meta\" type=\"application/json\">" + json +
                              "</script>\n<script id=\"kanoko-data\" type=\"application/octet-stream\">" + encoded +
                              "</script>\n<script>" + script_text(std::string(web::kPageJs)) + "</script>\n";
  // Fill the template's markers, each once, in one pass over the template only.
  const std::string_view page = web::kPageHtml;
  const std::pair<std::string_view, std::string> fills[] = {
      {"<!--KANOKO_TITLE-->", title},
      {"/*KANOKO_CSS*/", std::string(web::kPageCss)},
      {"<!--KANOKO_SCRIPTS-->", scripts},
  };
  std::string html;
  html.reserve(page.size() + scripts.size() + web::kPageCss.size() + 256);
  std::size_t at = 0;
  for (const auto& [marker, text] : fills) {
    const std::size_t found = page.find(marker, at);
    if (found == std::string_view::npos) throw std::logic_error("src/web/page.html lacks " + std::string(marker));
    html.append(page.substr(at, found - at));
    html += text;
    at = found + marker.size();
  }
  html.append(page.substr(at));

  if (html.size() > options.max_bytes && left_out != nullptr && !d.max_spring_bytes.empty()) {
    // The traffic is the part a page can best do without: try without it.
    PageData without = d;
    drop_traffic(without);
    std::string smaller = build_page(reader, without, options, run);
    *left_out = "the top partners and spring traffic colours are left out: with them the page would take " +
                mebibytes(html.size()) + " (raise --max-size to keep them)";
    return smaller;
  }
  if (html.size() > options.max_bytes) {
    const std::uint64_t per_frame = base64_size(data_bytes(1, meta.body_count(), 0, 0, 0));
    const std::uint64_t frames_part = per_frame * d.times.size();
    refuse_budget(run, html.size(), options, d.times.size(), meta.body_count(),
                  html.size() > frames_part ? html.size() - frames_part : 0, per_frame);
  }
  return html;
}

}  // namespace kanoko::share
