// The trajectory file (.kntj): the cached result of `kanoko simulate`, read by the viewer, the
// renderer, `kanoko export` and (later) the sound. Byte layout: docs/trajectory-format.md.
//
// Format 2 groups the frames in blocks of a fixed number of frames, each followed by a footer with
// its checksum, so frame k is still at a computable offset (O(1) seeking), a file can be read while
// it is being appended, and a reader checks a block only when it first reads from it. A completion
// record, written last, tells a finished run from one still being written or killed. The reader
// memory-maps the file; format 1 files (one checksum over everything) are still read. Format 3 is
// format 2 with XXH3-64 checksums instead of FNV-1a 64; format 2 files are still read.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "src/trace/event.hpp"

namespace kanoko::trajectory {

inline constexpr std::uint16_t kVersionMajor = 3;  ///< 2: checksummed blocks, appendable; 3: XXH3-64 checksums
inline constexpr std::uint16_t kVersionMinor = 1;  ///< 2.1 (and 3.1): section `groups`

/// A container of the trace above a body's host (section `groups`, format 2.1): a SimGrid zone,
/// an OTF2 system-tree node, ...; `type` is the name of its container type.
using Enclosing = trace::Enclosing;

/// Presentation data of one body (cold data, indexed like the positions).
struct BodyInfo {
  std::string name;
  std::string host;
  /// The containers above the host (above the body when it has no host), innermost first; empty
  /// when the trace records none (and in files without the `groups` section).
  std::vector<Enclosing> above_host;
  std::int64_t rank = -1;
  std::array<float, 3> colour_rgb{0.8F, 0.8F, 0.8F};  ///< 0..1
  float radius = 0.1F;                                 ///< sphere radius at base mass, scene units
};

/// Traffic from body src to body dst in one binning interval.
struct PairTraffic {
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
  double bytes = 0;
  double messages = 0;
};

/// The traffic section's pair records: built in memory (a run being written, a test), or read
/// in place from a trajectory file's mapping, which they keep alive, so that opening a run does not
/// copy its records (hundreds of MB for a long run of 10,000 ranks) into fresh memory. Building
/// onto records read in place copies them first.
class PairRecords {
 public:
  PairRecords() = default;
  PairRecords(std::initializer_list<PairTraffic> pairs) : owned_(pairs) {}
  explicit PairRecords(std::vector<PairTraffic> pairs) : owned_(std::move(pairs)) {}
  /// The records at `in_place`, in memory that `keep` holds (a file's mapping).
  PairRecords(std::shared_ptr<const void> keep, std::span<const PairTraffic> in_place)
      : keep_(std::move(keep)), in_place_(in_place) {}

  [[nodiscard]] std::size_t size() const { return keep_ ? in_place_.size() : owned_.size(); }
  [[nodiscard]] bool empty() const { return size() == 0; }
  [[nodiscard]] const PairTraffic* data() const { return keep_ ? in_place_.data() : owned_.data(); }
  [[nodiscard]] const PairTraffic* begin() const { return data(); }
  [[nodiscard]] const PairTraffic* end() const { return data() + size(); }
  [[nodiscard]] const PairTraffic& operator[](std::size_t i) const { return data()[i]; }
  /// True when the records are read in place from a file rather than held in memory of their own.
  [[nodiscard]] bool in_place() const { return keep_ != nullptr; }

  void push_back(const PairTraffic& p) { owned().push_back(p); }
  void append(std::span<const PairTraffic> pairs) {
    std::vector<PairTraffic>& v = owned();
    v.insert(v.end(), pairs.begin(), pairs.end());
  }
  void clear() {
    keep_.reset();
    in_place_ = {};
    owned_.clear();
  }

 private:
  std::vector<PairTraffic>& owned() {
    if (keep_) {
      owned_.assign(in_place_.begin(), in_place_.end());
      keep_.reset();
      in_place_ = {};
    }
    return owned_;
  }
  std::vector<PairTraffic> owned_;
  std::shared_ptr<const void> keep_;
  std::span<const PairTraffic> in_place_;
};

/// Everything in the file except the frames.
struct Metadata {
  std::vector<BodyInfo> bodies;
  std::vector<std::array<std::uint32_t, 2>> edges;  ///< springs, body index pairs
  std::vector<std::string> stat_names;              ///< per-body statistics stored in each frame
  double dt_s = 0;                 ///< integrator step (trace seconds)
  std::uint32_t steps_per_frame = 1;
  double interval_s = 0;           ///< binning interval of the trace
  double trace_begin_s = 0;        ///< start of the traced run (trace time of frame 0)
  double trace_end_s = 0;          ///< end of the traced run; later frames are the settling phase
  std::uint64_t input_hash = 0;    ///< digest of trace, mapping and parameters (cache key)
  std::string integrator;          ///< registry name
  std::string source_trace;        ///< path given to simulate (informational)
  std::string source_mapping;      ///< path of the mapping (informational)
  std::string mapping_text;        ///< the mapping file's text, for inspection and re-simulation
  /// Frames the writer means to write (0: unknown), so that a reader of an unfinished run can say
  /// how far it got. Not a promise: the complete file's frame count is what was written.
  std::uint64_t planned_frames = 0;
  /// Per-interval traffic between bodies (section `traffic`, format 1.1): the pairs of interval b
  /// are traffic[traffic_begin[b] .. traffic_begin[b + 1]). Empty in files without the section.
  std::vector<std::uint64_t> traffic_begin;
  PairRecords traffic;

  /// Number of intervals with traffic records (0 without the section).
  [[nodiscard]] std::size_t traffic_intervals() const {
    return traffic_begin.empty() ? 0 : traffic_begin.size() - 1;
  }
  /// The pairs of interval `bin` (empty when bin is past the recorded intervals).
  [[nodiscard]] std::span<const PairTraffic> traffic_in(std::size_t bin) const {
    if (bin >= traffic_intervals()) return {};
    return {traffic.data() + traffic_begin[bin], traffic_begin[bin + 1] - traffic_begin[bin]};
  }
  /// Binning interval that contains trace time t (clamped to >= 0; past the end gives an index
  /// beyond traffic_intervals()).
  [[nodiscard]] std::size_t interval_of(double t) const;

  [[nodiscard]] std::size_t body_count() const { return bodies.size(); }
  [[nodiscard]] std::size_t stat_count() const { return stat_names.size(); }
  /// Index of a statistic by name, or -1.
  [[nodiscard]] int stat_index(std::string_view name) const;
};

/// Names of the per-body statistics `kanoko simulate` stores, in order.
namespace stat {
inline constexpr const char* kLoad = "load";                  ///< load in the current interval
inline constexpr const char* kMass = "mass";
inline constexpr const char* kBytesSent = "bytes_sent";       ///< in the current interval
inline constexpr const char* kBytesRecv = "bytes_recv";
inline constexpr const char* kMsgsSent = "msgs_sent";
inline constexpr const char* kMsgsRecv = "msgs_recv";
inline constexpr const char* kBytesSentTotal = "bytes_sent_total";  ///< since the start
inline constexpr const char* kBytesRecvTotal = "bytes_recv_total";
inline constexpr const char* kMsgsSentTotal = "msgs_sent_total";
inline constexpr const char* kMsgsRecvTotal = "msgs_recv_total";
inline constexpr const char* kBusy = "busy";                    ///< fraction of the interval computing
inline constexpr const char* kCommunicating = "communicating";  ///< fraction communicating
inline constexpr const char* kIdle = "idle";                    ///< fraction idle
}  // namespace stat

/// One stored frame, viewed in place (memory-mapped). Positions and velocities are 3×N,
/// column-major (a body's x, y, z are contiguous), stats are S×N.
struct FrameView {
  double time_s = 0;  ///< trace time (frames after Metadata::trace_end_s: settling, no forcing)
  Eigen::Map<const Eigen::Matrix3Xd> positions{nullptr, 3, 0};
  Eigen::Map<const Eigen::Matrix3Xd> velocities{nullptr, 3, 0};
  Eigen::Map<const Eigen::MatrixXd> stats{nullptr, 0, 0};
};

/// Bytes of a complete trajectory file of `frames` frames of `bodies` bodies with `stats`
/// statistics each, whose sections take `section_bytes`: what a run will write, estimated before it
/// starts. Saturates at 2^64 − 1 instead of wrapping.
std::uint64_t file_size_for(std::uint64_t bodies, std::uint64_t stats, std::uint64_t frames, std::uint64_t section_bytes);

/// Traffic records that a Writer takes a piece at a time: `begin` as Metadata::traffic_begin, and
/// `fill(first, out)` writes records first .. first + out.size() into `out`.
struct TrafficSource {
  std::vector<std::uint64_t> begin;
  std::function<void(std::uint64_t first, std::span<PairTraffic> out)> fill;
};

/// Writes a trajectory (format 3) under a temporary name; commit() makes it appear. Destroying an
/// uncommitted writer removes the temporary file. Every finished block is flushed to the
/// temporary file, so a Reader opened with Open::partial on temporary_path() follows the run.
class Writer {
 public:
  /// Writes the header and every section of `meta`; frames may follow.
  Writer(const std::filesystem::path& path, const Metadata& meta);
  /// Begins a run whose traffic is known before the rest of its metadata (a calibrated run: the
  /// calibration sets the mapping's constants). The traffic section, hundreds of MB for a long
  /// run of thousands of bodies, is written first, on a thread of its own, while the caller goes
  /// on; start() then writes the other sections and the header. `traffic.fill` runs on that
  /// thread: what it reads must stay unchanged until start() or the writer's end.
  Writer(const std::filesystem::path& path, TrafficSource traffic);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  /// After the constructor with a TrafficSource: writes the sections of `meta` other than its
  /// traffic (which is not read) and the header, once the traffic is written; frames may then
  /// follow. Throws what writing the traffic threw (RunError: the disk is full).
  void start(const Metadata& meta);

  /// Appends one frame. Shapes must be 3×N, 3×N and S×N.
  void append_frame(double time_s, const Eigen::Ref<const Eigen::Matrix3Xd>& positions,
                    const Eigen::Ref<const Eigen::Matrix3Xd>& velocities,
                    const Eigen::Ref<const Eigen::MatrixXd>& stats);
  [[nodiscard]] std::uint64_t frame_count() const;
  /// The file being written until commit(): readable (Open::partial) while it grows.
  [[nodiscard]] const std::filesystem::path& temporary_path() const;
  /// Writes the last block, makes everything durable, then writes the completion record and
  /// renames into place.
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Whether a Reader accepts a run that is not (yet) complete.
enum class Open {
  complete,  ///< an unfinished or killed run is an InputError that says how far it got
  partial,   ///< an unfinished run opens with its whole blocks (a viewer following a live run)
};

/// Whether the run at `path` may be reused as a cached result (defined below Reader, its friend).
std::string reuse_problem(const std::filesystem::path& path);

/// A trajectory opened for reading. Opening checks the header, the sections and the block index
/// (O(header + index), never the frames) and throws InputError (file + record) on anything wrong.
/// A block's checksum, frame times and values (finite; statistics in range) are checked when a
/// frame of it is first read: frame(), frame_time() and what uses them throw a located
/// InputError for a bad block. Format 1 files are checked whole on open. Reading from several
/// threads at once is safe; refresh() is not (no reads may run beside it).
class Reader {
 public:
  /// Opens and checks `path` (not its frames); with Open::complete an unfinished run is refused.
  explicit Reader(const std::filesystem::path& path, Open open = Open::complete);
  ~Reader();
  Reader(Reader&&) noexcept;
  Reader& operator=(Reader&&) noexcept;

  [[nodiscard]] const Metadata& meta() const;
  /// Frames that can be read: all of a complete run, the whole blocks so far of a partial one.
  [[nodiscard]] std::size_t frame_count() const;
  /// True once the writer has finished (completion record present and valid).
  [[nodiscard]] bool complete() const;
  /// Frames in blocks already checked (checksum, times and values).
  [[nodiscard]] std::size_t frames_verified() const;
  /// Trajectory format major version of the file (1 or 2).
  [[nodiscard]] unsigned version() const;
  /// Looks for blocks appended since opening (and for completion) and returns frame_count().
  /// Invalidates earlier FrameViews (the file is mapped again). Throws InputError like opening.
  std::size_t refresh();
  /// Bytes of the file as last mapped (opening or refresh()): how far a writer has got, frames
  /// of an unfinished block included.
  [[nodiscard]] std::uint64_t file_bytes() const;
  /// Checks every block now (reads the whole file); throws like frame().
  void verify_all() const;
  /// Whether frame k can be read: checks its block (as frame() would) and returns false instead
  /// of throwing when the block is damaged. How the viewer finds where a damaged run stops.
  [[nodiscard]] bool frame_readable(std::size_t k) const noexcept;
  /// The last frame at or before t that can be read, skipping back over damaged blocks (found
  /// from the block index, so no damaged frame is read); none if every block up to t is damaged.
  [[nodiscard]] std::optional<std::size_t> last_readable_frame_at_or_before(double t) const noexcept;
  [[nodiscard]] FrameView frame(std::size_t k) const;
  [[nodiscard]] double frame_time(std::size_t k) const;
  /// Time of the first and last frame (frame_count() must be > 0).
  [[nodiscard]] double begin_time() const;
  [[nodiscard]] double end_time() const;
  /// Index of the last frame with time <= t (clamped to the valid range).
  [[nodiscard]] std::size_t frame_at_or_before(double t) const;
  /// Positions at any time t, by cubic Hermite interpolation between the two stored frames
  /// around t (positions and velocities make it C¹); clamped outside the stored range.
  void positions_at(double t, Eigen::Matrix3Xd& out) const;
  /// Statistics at time t: those of the last frame at or before t (piecewise constant).
  void stats_at(double t, Eigen::MatrixXd& out) const;

  /// Implementation detail (the memory map and parsed header), opaque to users.
  struct Impl;

 private:
  friend std::string reuse_problem(const std::filesystem::path& path);
  std::unique_ptr<Impl> impl_;
};

/// Reads only the header and its input hash (cheap); returns false if the file is missing, is not
/// a trajectory or its header checksum fails. Used by the simulate cache.
bool read_input_hash(const std::filesystem::path& path, std::uint64_t& hash_out);

/// True when the file starts with the trajectory magic (whatever its version or state): how
/// `kanoko view` tells a run from a trace. False for a missing or unreadable file.
bool looks_like_trajectory(const std::filesystem::path& path);

/// Whether the run at `path` may be reused as a cached result: "" if it is complete and every
/// checksum, frame time and value verifies (reads the whole file), else why not, as a phrase that
/// follows the file name ("is incomplete (still being written, or killed at frame 812 of 2000)",
/// "fails its checksum in block 3, frames 192–255, bytes …", "cannot be read (header is corrupt
/// …)").
std::string reuse_problem(const std::filesystem::path& path);

}  // namespace kanoko::trajectory
