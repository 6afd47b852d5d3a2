// `kanoko share`: one self-contained HTML page that plays a run in a browser, offline. The page's
// own HTML, JavaScript and CSS are real files in src/web/, compiled into the binary; three.js is
// read from Debian's libjs-three when the page is written. The run's data is inlined as base64:
// positions quantised to 16 bits in the bounding box of the shown frames, frames decimated to a
// rate, the statistics at the frames where they change, and the sound cues. Layout: docs/share.md.
// No OpenSceneGraph, no OpenAL (cues come from sonify's OpenAL-free cue detection).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sonify/cues.hpp"
#include "sonify/voices.hpp"
#include "src/trajectory/trajectory.hpp"

namespace kanoko::share {

/// The page plays the whole shown range in this many wall seconds at speed 1× (the desktop
/// viewer's default, ReplayClock::default_speed).
inline constexpr double kPlaybackWall_s = 20.0;
/// Default frames stored per wall second of playback at 1×.
inline constexpr double kDefaultFps = 30.0;
/// The inspect panel lists this many top partners (as the desktop's).
inline constexpr std::size_t kTopPartners = 3;
/// Default size budget of a page (bytes).
inline constexpr std::uint64_t kDefaultMaxBytes = 25ULL << 20;
/// Where Debian's libjs-three puts three.js.
inline constexpr const char* kThreeDir = "/usr/share/javascript/three";

struct PageOptions {
  double fps = kDefaultFps;            ///< frames per wall second at 1× (the range lasts kPlaybackWall_s)
  std::optional<double> from_s, to_s;  ///< trace time range (default: the whole run)
  std::uint64_t max_bytes = kDefaultMaxBytes;
  std::optional<bool> hrtf, doppler;   ///< initial sound options (default: the run's [audio])
  std::size_t max_labels = 64;         ///< name labels are drawn for runs of at most this many bodies
  std::filesystem::path three_dir = kThreeDir;
  std::string title;                   ///< shown in the page's title (the run's file name)
  /// Non-empty: a page for `kanoko serve` that reads the frames from this URL (the run's bytes,
  /// by range requests) instead of holding them.
  std::string stream_url;
  /// With stream_url: where the page reads the sound cues of the frames served so far (JSON,
  /// cues_json), again each time the run grows.
  std::string cues_url;
  /// With stream_url: where the page reads the springs' traffic of an interval and a body's top
  /// partners (kanoko serve's /traffic.json and /partners.json).
  std::string traffic_url, partners_url;
};

/// Positions quantised to 16 bits per coordinate in the box [lo, lo + extent]: q = round((v − lo)
/// / extent × 65535), so that dequantise(q) is within extent / 131070 of v (0 when extent is 0).
[[nodiscard]] std::uint16_t quantise(double v, double lo, double extent);
[[nodiscard]] double dequantise(std::uint16_t q, double lo, double extent);

/// The times the page stores for the range [begin_s, end_s]: the run's own frames in the range
/// when there are no more than fps × kPlaybackWall_s + 1 of them, else that many evenly spaced
/// times (positions there are the run's Hermite interpolation). Always begins at begin_s and
/// ends at end_s (a single time when they are equal).
[[nodiscard]] std::vector<double> page_times(const trajectory::Reader& reader, double begin_s,
                                             double end_s, double fps);

/// Everything the page holds, before encoding.
struct PageData {
  double begin_s = 0, end_s = 0;
  std::vector<double> times;              ///< F frame times
  Eigen::Vector3d box_lo = Eigen::Vector3d::Zero();
  Eigen::Vector3d box_extent = Eigen::Vector3d::Zero();
  std::vector<std::uint16_t> positions;   ///< F × N × 3 (frame-major, then body, then x y z)
  double max_speed = 0;                   ///< the largest speed of the stored frames
  std::vector<std::uint16_t> speeds;      ///< F × N, quantised in [0, max_speed]
  std::vector<double> stat_times;         ///< K: the run frames (in the range) where a statistic changes
  std::vector<float> stats;               ///< K × N × S (body-major inside a key frame, as the run)
  // From the run's traffic section (empty without one), at each statistics key frame's interval:
  std::vector<float> spring_bytes;        ///< K × E: bytes both ways on each spring's pair
  std::vector<float> max_spring_bytes;    ///< K: the busiest spring's
  /// K × N × kTopPartners: each body's top partners by bytes so far (both ways), largest first,
  /// as the desktop panel lists them (trajectory::PartnerTotals); 0xffffffff: none.
  std::vector<std::uint32_t> partner_bodies;
  std::vector<float> partner_sent, partner_received;  ///< bytes so far to and from each
  std::vector<sonify::Cue> cues;          ///< merged per page frame and capped to the voices
  std::vector<sonify::Voice> voices;      ///< one per body
  mapping::AudioSpec audio;               ///< the run's [audio] section
  double speed_of_sound = 0;              ///< scene units per trace second (4 × the fastest body)
  double reference_distance = 1;          ///< distance at which a cue sounds at full gain
  /// Why the page has no sound cues although the run may have some: the mapping stored in the run
  /// cannot be read (the page uses the default voices); "" when the sound is the run's.
  std::string sound_problem;
};

/// Bytes of the page's data (before base64) for F frames, N bodies, S statistics, K statistics
/// key frames and C cues: known before the frames are read, for the budget.
[[nodiscard]] std::uint64_t data_bytes(std::uint64_t frames, std::uint64_t bodies, std::uint64_t stats,
                                       std::uint64_t stat_frames, std::uint64_t cues);

/// Reads what the page shows from a complete run. `run` names the file in errors. Throws
/// InputError for a bad range or a damaged run, and for a page that cannot fit options.max_bytes
/// (with what to change).
[[nodiscard]] PageData collect_page_data(const trajectory::Reader& reader, const std::string& run,
                                         const PageOptions& options);

/// The sound cues a page plays over [begin_s, end_s] when it stores `frames` frames evenly over
/// it: the run's cues (sonify::detect_cues over the frames readable now, as `render --audio`
/// detects them) in the range, merged per page frame and capped to the voices at 1×. Throws
/// InputError for cue rules the run cannot resolve.
[[nodiscard]] std::vector<sonify::Cue> page_cues(const trajectory::Reader& reader, const mapping::AudioSpec& audio,
                                                 double begin_s, double end_s, std::size_t frames);

/// The cues as a served page reads them: {"times":[…],"gains":[…],"bodies":[…]} (trace seconds,
/// gains, body indices; sorted by time).
[[nodiscard]] std::string cues_json(const std::vector<sonify::Cue>& cues);

/// What a served page needs before the frames (kanoko serve): the run's [audio] and voices, the
/// box and speed of sound of the frames readable now; no frames, statistics or cues.
[[nodiscard]] PageData collect_stream_data(const trajectory::Reader& reader, const std::string& run);

/// Leaves out the run's traffic (spring traffic, top partners): what a page too big with it drops.
void drop_traffic(PageData& data);

/// The page: the HTML template from src/web with the CSS, three.js, OrbitControls, the data and
/// the page script inlined. Throws InputError naming the libjs-three file when it is missing, and
/// for a page over options.max_bytes (with what to change). With `left_out`, a page that fits
/// only without the traffic (top partners, spring traffic) is written without it, and *left_out
/// says what was left out and what it would take ("" when nothing was).
[[nodiscard]] std::string build_page(const trajectory::Reader& reader, const PageData& data,
                                     const PageOptions& options, const std::string& run,
                                     std::string* left_out = nullptr);

/// Standard base64 (RFC 4648, with padding).
[[nodiscard]] std::string base64(const std::uint8_t* bytes, std::size_t size);

}  // namespace kanoko::share
