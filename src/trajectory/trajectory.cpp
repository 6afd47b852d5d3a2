#include "src/trajectory/trajectory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <limits>
#include <array>
#include <atomic>
#include <exception>
#include <thread>
#include <map>
#include <optional>
#include <span>
#include <tuple>
#include <type_traits>

#include "src/base/atomic_file.hpp"
#include "src/base/check.hpp"
#include "src/base/error.hpp"
#include "src/base/hash.hpp"

namespace kanoko::trajectory {

static_assert(std::endian::native == std::endian::little, "the trajectory format is little-endian");

namespace {

constexpr char kMagic[8] = {'K', 'A', 'N', 'O', 'K', 'O', 'T', 'J'};
constexpr char kTrailerMagic[8] = {'K', 'N', 'T', 'J', 'E', 'N', 'D', '\0'};
constexpr std::size_t kSectionNameBytes = 16;

/// The first 24 bytes of the header, the same in every format.
struct HeaderStart {
  char magic[8];
  std::uint16_t version_major;
  std::uint16_t version_minor;
  std::uint8_t little_endian;
  std::uint8_t double_bytes;
  std::uint16_t reserved0;
  std::uint32_t body_count;
  std::uint32_t stat_count;
};
static_assert(sizeof(HeaderStart) == 24);

/// The fixed header of format 1 (legacy, read only), byte for byte as in
/// docs/trajectory-format.md.
struct HeaderV1 : HeaderStart {
  std::uint64_t frame_count;
  std::uint64_t frames_offset;
  std::uint64_t frame_stride;
  std::uint64_t input_hash;
  double dt_s;
  std::uint32_t steps_per_frame;
  std::uint32_t section_count;
  std::uint64_t file_size;
  std::uint64_t header_hash;  ///< FNV-1a of bytes 0..79
  std::uint64_t reserved1;
};
static_assert(sizeof(HeaderV1) == 96, "trajectory header must be 96 bytes");
constexpr std::size_t kHeaderV1HashedBytes = 80;

/// Format 1's trailer: one checksum over everything between header and trailer.
struct TrailerV1 {
  std::uint64_t checksum;  ///< FNV-1a of bytes [96, trailer)
  char magic[8];
};
static_assert(sizeof(TrailerV1) == 16);

/// The fixed header of formats 2 and 3, written once before anything else and never changed. Its
/// checksums, and those below, are the format's Checksum (FNV-1a in format 2, XXH3-64 in 3).
struct Header : HeaderStart {
  std::uint32_t block_frames;  ///< frames per block (the last block of a complete file may hold fewer)
  std::uint32_t section_count;
  std::uint64_t frames_offset;
  std::uint64_t frame_stride;
  std::uint64_t input_hash;
  double dt_s;
  std::uint32_t steps_per_frame;
  std::uint32_t reserved1;
  std::uint64_t planned_frames;
  std::uint64_t sections_hash;  ///< checksum of bytes [kSectionsOffset, frames_offset)
  std::uint64_t header_hash;    ///< checksum of bytes 0..87
};
static_assert(sizeof(Header) == 96, "trajectory header must be 96 bytes");
constexpr std::size_t kHeaderHashedBytes = 88;

/// Written last, at byte 96, when the run is complete and everything before it is on disk; all
/// zero while the file is being written.
struct Completion {
  char magic[8];
  std::uint64_t frame_count;
  std::uint64_t file_size;
  std::uint64_t footers_hash;  ///< checksum of every block footer, in order
  std::uint64_t reserved;
  std::uint64_t record_hash;   ///< checksum of bytes 96..135
};
static_assert(sizeof(Completion) == 48);
constexpr char kCompletionMagic[8] = {'K', 'N', 'T', 'J', 'D', 'O', 'N', 'E'};
constexpr std::size_t kSectionsOffset = sizeof(Header) + sizeof(Completion);

/// Follows the frames of every block.
struct BlockFooter {
  char magic[4];
  std::uint32_t frame_count;  ///< frames in this block
  std::uint64_t block_index;
  double first_time;
  double last_time;
  std::uint64_t checksum;     ///< checksum of the block's frame bytes
  std::uint64_t footer_hash;  ///< checksum of the footer's bytes 0..39
};
static_assert(sizeof(BlockFooter) == 48);
constexpr char kBlockMagic[4] = {'K', 'N', 'B', 'K'};
constexpr std::size_t kFooterHashedBytes = 40;

/// Frames per block for a frame stride: 64, fewer for frames so large that a block would pass
/// 1 MiB. A block is read whole when it is checked, and a run being watched shows nothing until
/// its first block is written: at 10,000 bodies (1.3 MB frames) a block is one frame, so the
/// first frame is on disk as soon as it is integrated (with 8 MiB it waited for six, 13 s of a
/// zero-configuration run on 2 cores).
std::uint32_t block_frames_for(std::uint64_t frame_stride) {
  constexpr std::uint64_t kMaxBlockBytes = 1U << 20U;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(kMaxBlockBytes / std::max<std::uint64_t>(frame_stride, 1), 1, 64));
}

/// The checksum of format `major`: FNV-1a 64 in formats 1 and 2, XXH3-64 from format 3. FNV-1a
/// takes one multiply per byte, XXH3 reads 8-byte words with SIMD, about 20 times faster: the
/// traffic section of a 10,000-body run is hundreds of MB, hashed when it is written and again
/// when it is opened, and FNV-1a took 1.4 s of the two on 2 cores.
class Checksum {
 public:
  explicit Checksum(unsigned major) {
    if (major >= 3) xxh3_.emplace();
  }
  void update(const void* data, std::size_t bytes) {
    if (xxh3_) {
      xxh3_->update(data, bytes);
    } else {
      fnv_.update(data, bytes);
    }
  }
  void update(std::string_view s) { update(s.data(), s.size()); }
  [[nodiscard]] std::uint64_t digest() const { return xxh3_ ? xxh3_->digest() : fnv_.digest(); }

 private:
  Fnv1a64 fnv_;
  std::optional<Xxh3_64> xxh3_;
};

/// The checksum of format `major` of `bytes` bytes at `data`.
std::uint64_t checksum_of(unsigned major, const void* data, std::size_t bytes) {
  Checksum c(major);
  c.update(data, bytes);
  return c.digest();
}

/// The checksum of format `major` of the first `bytes` bytes of `object`.
template <class T>
std::uint64_t digest_prefix(unsigned major, const T& object, std::size_t bytes) {
  return checksum_of(major, &object, bytes);
}

// ---- section encoding --------------------------------------------------------------------

class ByteWriter {
 public:
  template <class T>
  void pod(const T& v) {
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(std::string_view s) {
    pod(static_cast<std::uint32_t>(s.size()));
    bytes_.append(s);
  }
  void raw(std::string_view s) { bytes_.append(s); }
  void reserve(std::size_t bytes) { bytes_.reserve(bytes); }
  [[nodiscard]] std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class ByteReader {
 public:
  ByteReader(std::string_view data, FileLoc loc) : data_(data), loc_(std::move(loc)) {}
  template <class T>
  T pod() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, data_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string str() {
    const auto n = pod<std::uint32_t>();
    return std::string(bytes(n));
  }
  /// The next n bytes, in place.
  std::string_view bytes(std::size_t n) {
    need(n);
    const std::string_view b = data_.substr(pos_, n);
    pos_ += n;
    return b;
  }
  [[nodiscard]] bool done() const { return pos_ == data_.size(); }

 private:
  void need(std::size_t n) const {
    if (data_.size() - pos_ < n) {
      throw InputError(loc_, "section is shorter than its content (corrupt file)");
    }
  }
  std::string_view data_;
  FileLoc loc_;
  std::size_t pos_ = 0;
};

std::string format_double(double v) {
  char buf[40];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string encode_meta_text(const Metadata& m) {
  std::string s;
  auto kv = [&s](std::string_view k, std::string_view v) {
    s += k;
    s += '=';
    for (char c : v) s += (c == '\n') ? ' ' : c;  // values are single-line
    s += '\n';
  };
  kv("interval_s", format_double(m.interval_s));
  kv("trace_begin_s", format_double(m.trace_begin_s));
  kv("trace_end_s", format_double(m.trace_end_s));
  kv("integrator", m.integrator);
  kv("source_trace", m.source_trace);
  kv("source_mapping", m.source_mapping);
  return s;
}

void decode_meta_text(std::string_view text, Metadata& m, const FileLoc& loc) {
  std::map<std::string, std::string, std::less<>> kv;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) throw InputError(loc, "malformed 'meta' section");
    kv.emplace(std::string(line.substr(0, eq)), std::string(line.substr(eq + 1)));
    pos = end + 1;
  }
  auto number = [&](std::string_view key, double& out) {
    const auto it = kv.find(key);
    if (it == kv.end()) throw InputError(loc, "'meta' section lacks " + std::string(key));
    const auto r = std::from_chars(it->second.data(), it->second.data() + it->second.size(), out);
    if (r.ec != std::errc() || r.ptr != it->second.data() + it->second.size() || !std::isfinite(out)) {
      throw InputError(loc, "'meta' section has a bad " + std::string(key));
    }
  };
  number("interval_s", m.interval_s);
  number("trace_begin_s", m.trace_begin_s);
  number("trace_end_s", m.trace_end_s);
  auto text_value = [&](std::string_view key) {
    const auto it = kv.find(key);
    return it == kv.end() ? std::string() : it->second;
  };
  m.integrator = text_value("integrator");
  m.source_trace = text_value("source_trace");
  m.source_mapping = text_value("source_mapping");
}

std::string encode_bodies(const Metadata& m) {
  ByteWriter w;
  for (const auto& b : m.bodies) {
    w.str(b.name);
    w.str(b.host);
    w.pod(b.rank);
    for (float c : b.colour_rgb) w.pod(c);
    w.pod(b.radius);
  }
  return w.take();
}

constexpr std::uint32_t kNoContainer = 0xFFFFFFFFU;

/// Section `groups` (2.1): the containers above the bodies' hosts as a table, each with its
/// parent before it, then per body its innermost container. Empty (no section) when no body has any.
std::string encode_groups(const Metadata& m) {
  bool any = false;
  for (const auto& b : m.bodies) any = any || !b.above_host.empty();
  if (!any) return {};
  std::vector<const Enclosing*> table;
  std::vector<std::uint32_t> parents;
  std::map<std::tuple<std::string_view, std::string_view, std::uint32_t>, std::uint32_t> index;
  std::vector<std::uint32_t> innermost(m.bodies.size(), kNoContainer);
  for (std::size_t i = 0; i < m.bodies.size(); ++i) {
    const auto& chain = m.bodies[i].above_host;
    std::uint32_t parent = kNoContainer;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {  // outermost first: parents first
      const auto [at, added] = index.emplace(std::make_tuple(std::string_view(it->type), std::string_view(it->name), parent),
                                             static_cast<std::uint32_t>(table.size()));
      if (added) {
        table.push_back(&*it);
        parents.push_back(parent);
      }
      parent = at->second;
    }
    innermost[i] = parent;
  }
  ByteWriter w;
  w.pod(static_cast<std::uint32_t>(table.size()));
  for (std::size_t c = 0; c < table.size(); ++c) {
    w.str(table[c]->type);
    w.str(table[c]->name);
    w.pod(parents[c]);
  }
  for (const std::uint32_t c : innermost) w.pod(c);
  return w.take();
}

void decode_groups(std::string_view data, std::uint32_t body_count, Metadata& m, const FileLoc& loc) {
  ByteReader br(data, loc);
  const auto count = br.pod<std::uint32_t>();
  if (count > data.size() / 12) throw InputError(loc, "container count exceeds the section");
  std::vector<Enclosing> table(count);
  std::vector<std::uint32_t> parents(count);
  for (std::uint32_t c = 0; c < count; ++c) {
    table[c].type = br.str();
    table[c].name = br.str();
    parents[c] = br.pod<std::uint32_t>();
    if (parents[c] != kNoContainer && parents[c] >= c) {
      throw InputError(loc, "container " + std::to_string(c) + " names a parent that does not come before it");
    }
  }
  for (std::uint32_t i = 0; i < body_count; ++i) {
    const auto c = br.pod<std::uint32_t>();
    if (c != kNoContainer && c >= count) {
      throw InputError(loc, "body " + std::to_string(i) + " names container " + std::to_string(c) + " of " + std::to_string(count));
    }
    auto& chain = m.bodies.at(i).above_host;
    chain.clear();
    for (std::uint32_t a = c; a != kNoContainer; a = parents[a]) chain.push_back(table[a]);
  }
  if (!br.done()) throw InputError(loc, "section has trailing bytes");
}

std::string encode_edges(const Metadata& m) {
  ByteWriter w;
  w.pod(static_cast<std::uint64_t>(m.edges.size()));
  for (const auto& e : m.edges) {
    w.pod(e[0]);
    w.pod(e[1]);
  }
  return w.take();
}

std::string encode_stats(const Metadata& m) {
  ByteWriter w;
  for (const auto& s : m.stat_names) w.str(s);
  return w.take();
}

std::uint64_t frame_stride_bytes(std::uint64_t bodies, std::uint64_t stats) {
  return sizeof(double) * (1 + 6 * bodies + stats * bodies);
}

/// The stride for counts read from a file, or 0 if 8 (1 + 6N + S·N) does not fit in 64 bits: two
/// 32-bit counts can wrap it round to a small, plausible number.
std::uint64_t checked_frame_stride(std::uint64_t bodies, std::uint64_t stats) {
  std::uint64_t per_body = 0, doubles = 0, bytes = 0;
  if (__builtin_add_overflow(stats, std::uint64_t{6}, &per_body) ||
      __builtin_mul_overflow(per_body, bodies, &doubles) || __builtin_add_overflow(doubles, std::uint64_t{1}, &doubles) ||
      __builtin_mul_overflow(doubles, std::uint64_t{sizeof(double)}, &bytes)) {
    return 0;
  }
  return bytes;
}

}  // namespace

std::uint64_t file_size_for(std::uint64_t bodies, std::uint64_t stats, std::uint64_t frames, std::uint64_t section_bytes) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t stride = checked_frame_stride(bodies, stats);
  if (stride == 0) return kMax;
  const std::uint64_t per_block = block_frames_for(stride);
  const std::uint64_t blocks = frames / per_block + (frames % per_block != 0 ? 1 : 0);
  std::uint64_t total = sizeof(Header) + sizeof(Completion) + 7, part = 0;
  if (__builtin_add_overflow(total, section_bytes, &total) || __builtin_mul_overflow(frames, stride, &part) ||
      __builtin_add_overflow(total, part, &total) || __builtin_mul_overflow(blocks, std::uint64_t{sizeof(BlockFooter)}, &part) ||
      __builtin_add_overflow(total, part, &total)) {
    return kMax;
  }
  return total;
}

// A pair record in the file is src u32, dst u32, bytes f64, messages f64, little-endian: PairTraffic
// byte for byte, so the records are written from and read into Metadata::traffic whole.
static_assert(std::is_trivially_copyable_v<PairTraffic> && sizeof(PairTraffic) == 24 &&
                  offsetof(PairTraffic, dst) == 4 && offsetof(PairTraffic, bytes) == 8 &&
                  offsetof(PairTraffic, messages) == 16,
              "PairTraffic is the traffic section's pair record");

/// The traffic section up to its pair records: the counts and the interval offsets `begin`
/// (Metadata::traffic_begin). The records follow.
std::string encode_traffic_head(const std::vector<std::uint64_t>& begin) {
  ByteWriter w;
  w.reserve(8 * (3 + begin.size()));
  w.pod(static_cast<std::uint64_t>(begin.empty() ? 0 : begin.size() - 1));
  w.pod(begin.empty() ? std::uint64_t{0} : begin.back());
  if (begin.empty()) w.pod(std::uint64_t{0});  // no intervals: the single offset 0
  for (const std::uint64_t b : begin) w.pod(b);
  return w.take();
}

/// The traffic section `data`, which lies in memory that `keep` holds (the file's mapping): the
/// pair records are used in place when they are aligned as PairTraffic (every file this build
/// writes), else copied.
void decode_traffic(std::string_view data, const std::shared_ptr<const void>& keep, std::uint32_t body_count,
                    Metadata& m, const FileLoc& loc) {
  ByteReader br(data, loc);
  const auto bins = br.pod<std::uint64_t>();
  const auto pairs = br.pod<std::uint64_t>();
  // Check the counts against the section size before allocating what they claim.
  if (bins >= data.size() / 8 || pairs > data.size() / 24) throw InputError(loc, "counts exceed the section");
  m.traffic_begin.resize(bins + 1);
  for (auto& b : m.traffic_begin) b = br.pod<std::uint64_t>();
  if (m.traffic_begin.front() != 0 || m.traffic_begin.back() != pairs ||
      !std::is_sorted(m.traffic_begin.begin(), m.traffic_begin.end())) {
    throw InputError(loc, "interval offsets are not increasing from 0 to the pair count");
  }
  const std::string_view records = br.bytes(pairs * sizeof(PairTraffic));
  if (!br.done()) throw InputError(loc, "section has trailing bytes");
  if (reinterpret_cast<std::uintptr_t>(records.data()) % alignof(PairTraffic) == 0) {
    m.traffic = PairRecords(keep, {reinterpret_cast<const PairTraffic*>(records.data()), pairs});
  } else {
    std::vector<PairTraffic> copy(pairs);
    if (pairs > 0) std::memcpy(copy.data(), records.data(), records.size());
    m.traffic = PairRecords(std::move(copy));
  }
  // Checked in one branch-light pass; the first bad record is then found and named.
  constexpr double kMaxFinite = std::numeric_limits<double>::max();  // (a NaN fails every comparison)
  bool valid = true;
  for (const PairTraffic& p : m.traffic) {
    const bool ok = p.src < body_count && p.dst < body_count && p.bytes >= 0 && p.bytes <= kMaxFinite &&
                    p.messages >= 0 && p.messages <= kMaxFinite;
    valid = valid && ok;
  }
  if (valid) return;
  for (std::size_t i = 0; i < m.traffic.size(); ++i) {
    const PairTraffic& p = m.traffic[i];
    if (p.src >= body_count || p.dst >= body_count) {
      throw InputError(loc, "pair record " + std::to_string(i) + " names a missing body");
    }
    if (!std::isfinite(p.bytes) || p.bytes < 0 || !std::isfinite(p.messages) || p.messages < 0) {
      throw InputError(loc, "pair record " + std::to_string(i) + " has a negative or non-finite amount");
    }
  }
}

std::size_t Metadata::interval_of(double t) const {
  if (!(interval_s > 0) || !(t > trace_begin_s)) return 0;
  const double k = std::floor((t - trace_begin_s) / interval_s);
  return k >= 1e18 ? std::numeric_limits<std::size_t>::max() : static_cast<std::size_t>(k);
}

int Metadata::stat_index(std::string_view name) const {
  for (std::size_t i = 0; i < stat_names.size(); ++i) {
    if (stat_names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

// ---- Writer -------------------------------------------------------------------------------

struct Writer::Impl {
  AtomicOutputFile out;
  Header header{};
  std::uint64_t frame_count = 0;
  std::uint64_t block_count = 0;     ///< blocks finished
  std::uint32_t frames_in_block = 0;  ///< frames of the block being written
  double block_first_time = 0;
  double block_last_time = 0;
  Checksum block_checksum{kVersionMajor};
  Checksum footers_hash{kVersionMajor};
  std::vector<double> frame_buffer;
  // The sections, written one after the other from kSectionsOffset (the traffic first).
  Checksum sections_hash{kVersionMajor};
  std::uint64_t section_bytes = 0;
  std::uint32_t section_count = 0;
  std::uint64_t traffic_bodies = 0;  ///< 1 + the largest body index the traffic names (0: none)
  bool started = false;              ///< start() wrote the header: frames may follow
  // The traffic section's writing on a thread of its own (the constructor with a TrafficSource).
  std::thread traffic_thread;
  std::atomic<bool> cancel{false};
  std::exception_ptr traffic_error;

  explicit Impl(const std::filesystem::path& path) : out(path) {
    // The header and the completion record, zero until start() and commit() write them: a
    // reader of the file before then finds no run yet.
    const std::array<char, kSectionsOffset> zero{};
    out.write(zero.data(), zero.size());
  }
  ~Impl() {
    cancel = true;
    if (traffic_thread.joinable()) traffic_thread.join();
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  /// Hashes and writes bytes of the sections.
  void section_data(const void* data, std::size_t bytes) {
    sections_hash.update(data, bytes);
    out.write(data, bytes);
  }
  /// Hashes and writes a section's name and size; its `size` bytes of data must follow.
  void section_head(std::string_view name, std::uint64_t size) {
    std::array<char, kSectionNameBytes + sizeof(std::uint64_t)> head{};
    std::memcpy(head.data(), name.data(), std::min(name.size(), kSectionNameBytes - 1));
    std::memcpy(head.data() + kSectionNameBytes, &size, sizeof size);
    section_data(head.data(), head.size());
    section_bytes += head.size() + size;
    ++section_count;
  }
  void section(std::string_view name, std::string_view data) {
    section_head(name, data.size());
    section_data(data.data(), data.size());
  }

  /// The traffic section from `traffic`, a piece at a time (hundreds of MB for a long run of
  /// thousands of bodies: never a whole copy). Returns early if cancelled.
  void write_traffic(const TrafficSource& traffic) {
    const std::vector<std::uint64_t>& begin = traffic.begin;
    KANOKO_ASSERT(begin.empty() || (begin.front() == 0 && std::is_sorted(begin.begin(), begin.end())),
                  "traffic offsets do not start at 0 and increase");
    const std::uint64_t count = begin.empty() ? 0 : begin.back();
    const std::string head = encode_traffic_head(begin);
    section_head("traffic", head.size() + count * sizeof(PairTraffic));
    section_data(head.data(), head.size());
    constexpr std::uint64_t kPiece = std::uint64_t{1} << 16U;  // records, 1.5 MiB
    std::vector<PairTraffic> piece(static_cast<std::size_t>(std::min(count, kPiece)));
    std::uint32_t largest = 0;
    for (std::uint64_t first = 0; first < count; first += kPiece) {
      if (cancel) return;
      const std::span<PairTraffic> records(piece.data(), static_cast<std::size_t>(std::min(kPiece, count - first)));
      traffic.fill(first, records);
      for (const PairTraffic& p : records) largest = std::max({largest, p.src, p.dst});
      section_data(records.data(), records.size_bytes());
    }
    traffic_bodies = count > 0 ? std::uint64_t{largest} + 1 : 0;
  }

  /// The other sections of `m`, the padding and the header (Writer::start).
  void start(const Metadata& m) {
    KANOKO_ASSERT(!started, "the writer has started already");
    if (traffic_thread.joinable()) traffic_thread.join();
    if (traffic_error) std::rethrow_exception(traffic_error);
    KANOKO_ASSERT(traffic_bodies <= m.bodies.size(), "traffic names a missing body");
    for (const auto& e : m.edges) {
      KANOKO_ASSERT(e[0] < m.bodies.size() && e[1] < m.bodies.size(), "edge names a missing body");
    }
    section("meta", encode_meta_text(m));
    section("bodies", encode_bodies(m));
    section("edges", encode_edges(m));
    section("stats", encode_stats(m));
    section("mapping", m.mapping_text);
    if (const std::string groups = encode_groups(m); !groups.empty()) section("groups", groups);
    // Frames start 8-byte aligned so that a memory map can view them as doubles.
    const std::string padding((8 - (kSectionsOffset + section_bytes) % 8) % 8, '\0');
    section_data(padding.data(), padding.size());
    section_bytes += padding.size();

    Header& h = header;
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version_major = kVersionMajor;
    h.version_minor = kVersionMinor;
    h.little_endian = 1;
    h.double_bytes = sizeof(double);
    h.body_count = static_cast<std::uint32_t>(m.bodies.size());
    h.stat_count = static_cast<std::uint32_t>(m.stat_names.size());
    h.frame_stride = frame_stride_bytes(h.body_count, h.stat_count);
    h.block_frames = block_frames_for(h.frame_stride);
    h.section_count = section_count;
    h.frames_offset = kSectionsOffset + section_bytes;
    h.input_hash = m.input_hash;
    h.dt_s = m.dt_s;
    h.steps_per_frame = m.steps_per_frame;
    h.planned_frames = m.planned_frames;
    h.sections_hash = sections_hash.digest();
    h.header_hash = digest_prefix(kVersionMajor, h, kHeaderHashedBytes);
    // The header last, over the zeros: a reader sees a run only once its sections are there.
    out.flush();
    out.write_at(0, &h, sizeof h);
    out.flush();
    frame_buffer.resize(h.frame_stride / sizeof(double));
    started = true;
  }

  /// Writes the footer of the block being written and hands the block to the file.
  void end_block() {
    BlockFooter f{};
    std::memcpy(f.magic, kBlockMagic, sizeof kBlockMagic);
    f.frame_count = frames_in_block;
    f.block_index = block_count;
    f.first_time = block_first_time;
    f.last_time = block_last_time;
    f.checksum = block_checksum.digest();
    f.footer_hash = digest_prefix(kVersionMajor, f, kFooterHashedBytes);
    out.write(&f, sizeof f);
    footers_hash.update(&f, sizeof f);
    ++block_count;
    frames_in_block = 0;
    block_checksum = Checksum(kVersionMajor);
    out.flush();
  }
};

namespace {

/// The traffic of `m`, as a source for the writer.
TrafficSource traffic_of(const Metadata& m) {
  KANOKO_ASSERT(m.traffic_begin.empty() ? m.traffic.empty() : m.traffic_begin.back() == m.traffic.size(),
                "traffic offsets do not cover the pairs");
  return {m.traffic_begin, [&m](std::uint64_t first, std::span<PairTraffic> out) {
            std::copy_n(m.traffic.begin() + static_cast<std::ptrdiff_t>(first), out.size(), out.begin());
          }};
}

}  // namespace

Writer::Writer(const std::filesystem::path& path, const Metadata& m) : impl_(std::make_unique<Impl>(path)) {
  impl_->write_traffic(traffic_of(m));
  impl_->start(m);
}

Writer::Writer(const std::filesystem::path& path, TrafficSource traffic) : impl_(std::make_unique<Impl>(path)) {
  Impl* impl = impl_.get();
  impl->traffic_thread = std::thread([impl, traffic = std::move(traffic)] {
    try {
      impl->write_traffic(traffic);
    } catch (...) {
      impl->traffic_error = std::current_exception();
    }
  });
}

void Writer::start(const Metadata& m) { impl_->start(m); }

Writer::~Writer() = default;

void Writer::append_frame(double time_s, const Eigen::Ref<const Eigen::Matrix3Xd>& positions,
                          const Eigen::Ref<const Eigen::Matrix3Xd>& velocities,
                          const Eigen::Ref<const Eigen::MatrixXd>& stats) {
  KANOKO_ASSERT(impl_->started, "a frame before the writer's start()");
  const Header& h = impl_->header;
  KANOKO_ASSERT(positions.cols() == h.body_count && velocities.cols() == h.body_count,
                "frame has the wrong number of bodies");
  KANOKO_ASSERT(stats.rows() == h.stat_count && (h.stat_count == 0 || stats.cols() == h.body_count),
                "frame statistics have the wrong shape");
  auto& buf = impl_->frame_buffer;
  const auto n = static_cast<Eigen::Index>(h.body_count);
  buf[0] = time_s;
  Eigen::Map<Eigen::Matrix3Xd>(buf.data() + 1, 3, n) = positions;
  Eigen::Map<Eigen::Matrix3Xd>(buf.data() + 1 + 3 * n, 3, n) = velocities;
  if (h.stat_count > 0) {
    Eigen::Map<Eigen::MatrixXd>(buf.data() + 1 + 6 * n, h.stat_count, n) = stats;
  }
  const std::size_t bytes = buf.size() * sizeof(double);
  impl_->out.write(buf.data(), bytes);
  impl_->block_checksum.update(buf.data(), bytes);
  if (impl_->frames_in_block == 0) impl_->block_first_time = time_s;
  impl_->block_last_time = time_s;
  ++impl_->frames_in_block;
  ++impl_->frame_count;
  if (impl_->frames_in_block == h.block_frames) impl_->end_block();
}

std::uint64_t Writer::frame_count() const { return impl_->frame_count; }

const std::filesystem::path& Writer::temporary_path() const { return impl_->out.temporary(); }

void Writer::commit() {
  KANOKO_ASSERT(impl_->started, "commit() before the writer's start()");
  if (impl_->frames_in_block > 0) impl_->end_block();
  // Everything else is on disk before the completion record says so.
  impl_->out.flush(/*durable=*/true);
  Completion c{};
  std::memcpy(c.magic, kCompletionMagic, sizeof kCompletionMagic);
  c.frame_count = impl_->frame_count;
  c.file_size = impl_->out.size();
  c.footers_hash = impl_->footers_hash.digest();
  c.record_hash = digest_prefix(kVersionMajor, c, sizeof c - sizeof c.record_hash);
  impl_->out.write_at(sizeof(Header), &c, sizeof c);
  impl_->out.commit();
}

// ---- Reader -------------------------------------------------------------------------------

namespace {

/// What the index knows of one block of frames.
struct BlockIndex {
  double first_time = 0;
  double last_time = 0;
  std::uint64_t checksum = 0;
  std::uint32_t frame_count = 0;
};

/// The range a statistic's values must lie in.
enum class StatRange : std::uint8_t { any, non_negative };

StatRange range_of(std::string_view name) {
  // busy, communicating and idle are fractions of a member's interval, summed over the members of
  // a body that groups several (a host's ranks): ≥ 0, not ≤ 1.
  for (const char* n : {stat::kMass, stat::kBytesSent, stat::kBytesRecv, stat::kMsgsSent, stat::kMsgsRecv,
                        stat::kBytesSentTotal, stat::kBytesRecvTotal, stat::kMsgsSentTotal, stat::kMsgsRecvTotal,
                        stat::kBusy, stat::kCommunicating, stat::kIdle}) {
    if (name == n) return StatRange::non_negative;
  }
  return StatRange::any;
}


/// A bad block: where (block or frame, body, byte offset) and what.
struct BlockProblem {
  std::string where;
  std::string what;
};

std::string range_text(std::uint64_t first, std::uint64_t last) {
  return std::to_string(first) + "–" + std::to_string(last);
}

}  // namespace

struct Reader::Impl {
  std::string path;
  int fd = -1;
  const unsigned char* base = nullptr;
  std::size_t size = 0;  ///< bytes mapped
  /// Owns the mapping at `base` (unmaps it when the last holder lets go: the traffic records are
  /// read in place, and may outlive a refresh's new mapping or the reader).
  std::shared_ptr<const void> mapping;
  unsigned version = 0;
  std::uint32_t body_count = 0;
  std::uint32_t stat_count = 0;
  std::uint64_t frames_offset = 0;
  std::uint64_t frame_stride = 0;
  std::uint64_t block_frames = 1;
  std::uint64_t block_stride = 0;  ///< bytes from one block's start to the next
  bool complete = false;
  std::size_t frame_count = 0;
  std::vector<BlockIndex> blocks;
  /// Per block: 1 once checked. Read and set through std::atomic_ref (const readers on threads).
  mutable std::vector<std::uint8_t> verified;
  std::vector<StatRange> stat_ranges;
  Metadata meta;

  ~Impl() { unmap(); if (fd >= 0) ::close(fd); }

  void unmap() {
    mapping.reset();
    base = nullptr;
  }
  [[nodiscard]] FileLoc loc(const std::string& record, std::int64_t byte = -1) const {
    return FileLoc::in_record(path, record, byte);
  }
  /// The end of the file, where a truncated file's missing bytes were expected.
  [[nodiscard]] FileLoc end_loc() const { return loc("end of file", static_cast<std::int64_t>(size)); }
  [[nodiscard]] std::uint64_t frame_offset(std::size_t k) const {
    return frames_offset + (k / block_frames) * block_stride + (k % block_frames) * frame_stride;
  }
  [[nodiscard]] const double* frame_ptr(std::size_t k) const {
    return reinterpret_cast<const double*>(base + frame_offset(k));
  }
  [[nodiscard]] std::uint64_t block_first_frame(std::size_t b) const { return b * block_frames; }
  [[nodiscard]] std::optional<BlockProblem> check_block(std::size_t b) const;
  /// True if every position, velocity and statistic of the frame at `p` is finite and in range.
  [[nodiscard]] bool frame_values_valid(const double* p) const {
    const auto n = static_cast<Eigen::Index>(body_count), s = static_cast<Eigen::Index>(stat_count);
    if (!Eigen::Map<const Eigen::ArrayXd>(p + 1, 6 * n + s * n).allFinite()) return false;
    const Eigen::Map<const Eigen::ArrayXXd> stats(p + 1 + 6 * n, s, n);
    for (Eigen::Index j = 0; j < s; ++j) {
      const StatRange range = stat_ranges[static_cast<std::size_t>(j)];
      if (range != StatRange::any && n > 0 && stats.row(j).minCoeff() < 0) return false;
    }
    return true;
  }
  /// check_block(b) unless block b already verified; a verified block is remembered.
  [[nodiscard]] std::optional<BlockProblem> check_block_once(std::size_t b) const {
    if (std::atomic_ref<std::uint8_t>(verified[b]).load(std::memory_order_acquire) != 0) return std::nullopt;
    auto problem = check_block(b);
    if (!problem) std::atomic_ref<std::uint8_t>(verified[b]).store(1, std::memory_order_release);
    return problem;
  }
  void ensure_verified(std::size_t b) const {
    if (const auto problem = check_block_once(b)) {
      throw InputError(loc(problem->where), "trajectory " + problem->what + ": the file is corrupt; re-simulate to recreate it");
    }
  }
  void ensure_frame(std::size_t k) const {
    KANOKO_ASSERT(k < frame_count, "frame index out of range");
    ensure_verified(k / block_frames);
  }
};

std::optional<BlockProblem> Reader::Impl::check_block(std::size_t b) const {
  const BlockIndex& blk = blocks[b];
  const std::uint64_t first = block_first_frame(b);
  const std::uint64_t begin = frame_offset(first);
  const std::uint64_t bytes = blk.frame_count * frame_stride;
  if (version >= 2) {
    if (checksum_of(version, base + begin, bytes) != blk.checksum) {
      return BlockProblem{"block " + std::to_string(b) + ", frames " + range_text(first, first + blk.frame_count - 1) +
                              ", bytes " + range_text(begin, begin + bytes - 1),
                          "fails its checksum"};
    }
  }
  const std::uint32_t n = body_count, s = stat_count;
  double previous = b > 0 ? blocks[b - 1].last_time : -std::numeric_limits<double>::infinity();
  for (std::uint64_t k = first; k < first + blk.frame_count; ++k) {
    const double* p = frame_ptr(k);
    const std::uint64_t at = frame_offset(k);
    const auto where = [&](std::uint64_t body, std::uint64_t value_index) {
      return "frame " + std::to_string(k) + ", body " + std::to_string(body) + ", byte " +
             std::to_string(at + 8 * value_index);
    };
    if (!std::isfinite(p[0]) || !(p[0] > previous)) {
      return BlockProblem{"frame " + std::to_string(k) + ", byte " + std::to_string(at),
                          std::isfinite(p[0]) ? "has frame times that do not increase" : "has a non-finite frame time"};
    }
    previous = p[0];
    if (frame_values_valid(p)) continue;  // the vectorised check; the loop below finds the culprit
    for (std::uint32_t i = 0; i < n; ++i) {
      for (std::uint32_t c = 0; c < 6; ++c) {
        const std::uint64_t index = 1 + (c < 3 ? 3 * i + c : 3 * n + 3 * i + c - 3);
        if (!std::isfinite(p[index])) {
          return BlockProblem{where(i, index), std::string("has a non-finite ") + (c < 3 ? "position" : "velocity") +
                                                   " (" + format_double(p[index]) + ")"};
        }
      }
      for (std::uint32_t j = 0; j < s; ++j) {
        const std::uint64_t index = 1 + 6 * std::uint64_t{n} + std::uint64_t{i} * s + j;
        const double v = p[index];
        const StatRange range = stat_ranges[j];
        const bool bad = !std::isfinite(v) || (range != StatRange::any && v < 0);
        if (bad) {
          return BlockProblem{where(i, index), "has statistic '" + meta.stat_names[j] + "' = " + format_double(v) +
                                                   (range == StatRange::non_negative ? ", not a finite value ≥ 0"
                                                                                     : ", not finite")};
        }
      }
    }
  }
  if (frame_ptr(first)[0] != blk.first_time || previous != blk.last_time) {
    return BlockProblem{"block " + std::to_string(b), "has an index whose times do not match its frames"};
  }
  return std::nullopt;
}

namespace {

/// Maps the whole file as it is now (again, after growth).
void map_file(Reader::Impl& r) {
  struct stat st {};
  if (::fstat(r.fd, &st) != 0 || !S_ISREG(st.st_mode)) throw InputError(FileLoc{r.path}, "not a regular file");
  const auto size = static_cast<std::size_t>(st.st_size);
  if (r.base != nullptr && size == r.size) return;
  r.unmap();
  r.size = size;
  if (r.size < sizeof(HeaderV1)) {
    throw InputError(r.end_loc(), "not a Kanoko trajectory: file is " + std::to_string(r.size) +
                                      " bytes, shorter than the 96-byte header");
  }
  void* p = ::mmap(nullptr, r.size, PROT_READ, MAP_SHARED, r.fd, 0);
  if (p == MAP_FAILED) throw InputError(FileLoc{r.path}, std::string("cannot map: ") + std::strerror(errno));
  r.base = static_cast<const unsigned char*>(p);
  r.mapping = std::shared_ptr<const void>(p, [bytes = r.size](const void* q) { ::munmap(const_cast<void*>(q), bytes); });
}

std::unique_ptr<Reader::Impl> open_file(const std::filesystem::path& path) {
  auto impl = std::make_unique<Reader::Impl>();
  impl->path = path.string();
  impl->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (impl->fd < 0) {
    throw InputError(FileLoc{impl->path}, std::string("cannot open trajectory: ") + std::strerror(errno));
  }
  map_file(*impl);
  return impl;
}

/// Checks magic, version and machine fields (same bytes in every format); returns the major version.
unsigned check_magic_and_version(const Reader::Impl& r) {
  HeaderV1 h{};
  std::memcpy(&h, r.base, sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) {
    throw InputError(r.loc("header"), "not a Kanoko trajectory (bad magic bytes)");
  }
  if (h.version_major > kVersionMajor) {
    throw InputError(r.loc("header"), "written by a newer Kanoko (trajectory format " +
                                          std::to_string(h.version_major) + "." +
                                          std::to_string(h.version_minor) + "; this build reads " +
                                          std::to_string(kVersionMajor) + ".x): upgrade kanoko or re-simulate");
  }
  if (h.version_major < 1) throw InputError(r.loc("header"), "unknown trajectory format version 0");
  if (h.little_endian != 1 || h.double_bytes != sizeof(double)) {
    throw InputError(r.loc("header"), "trajectory written on a machine with a different byte order or double size");
  }
  return h.version_major;
}

/// Checks the time step and takes the fields both formats' headers have.
template <class H>
void adopt_header(Reader::Impl& r, const H& h) {
  if (!(h.dt_s > 0) || !std::isfinite(h.dt_s) || h.steps_per_frame == 0) {
    throw InputError(r.loc("header"), "bad time step in header");
  }
  r.body_count = h.body_count;
  r.stat_count = h.stat_count;
  r.frames_offset = h.frames_offset;
  r.frame_stride = h.frame_stride;
  r.meta.dt_s = h.dt_s;
  r.meta.steps_per_frame = h.steps_per_frame;
  r.meta.input_hash = h.input_hash;
}

void read_sections(Reader::Impl& r, std::size_t pos, std::uint32_t section_count) {
  const std::uint64_t end = r.frames_offset;
  bool have_meta = false, have_bodies = false, have_edges = false, have_stats = false;
  std::optional<std::string_view> groups;  // read after the bodies, wherever it stands
  FileLoc groups_loc;
  for (std::uint32_t s = 0; s < section_count; ++s) {
    if (pos + kSectionNameBytes + 8 > end) {
      throw InputError(r.loc("section " + std::to_string(s)), "section table runs past the frames");
    }
    char name_bytes[kSectionNameBytes + 1] = {};
    std::memcpy(name_bytes, r.base + pos, kSectionNameBytes);
    const std::string name(name_bytes);
    std::uint64_t size = 0;
    std::memcpy(&size, r.base + pos + kSectionNameBytes, 8);
    pos += kSectionNameBytes + 8;
    if (size > end - pos) {
      throw InputError(r.loc("section '" + name + "'"), "section runs past the frames");
    }
    const std::string_view data(reinterpret_cast<const char*>(r.base + pos), size);
    const FileLoc loc = r.loc("section '" + name + "'");
    pos += size;
    Metadata& m = r.meta;
    if (name == "meta") {
      decode_meta_text(data, m, loc);
      have_meta = true;
    } else if (name == "bodies") {
      ByteReader br(data, loc);
      // Each record takes at least 32 bytes: check before allocating what the header claims.
      if (r.body_count > size / 32) throw InputError(loc, "body count exceeds the section");
      m.bodies.resize(r.body_count);
      for (auto& b : m.bodies) {
        b.name = br.str();
        b.host = br.str();
        b.rank = br.pod<std::int64_t>();
        for (float& c : b.colour_rgb) c = br.pod<float>();
        b.radius = br.pod<float>();
      }
      if (!br.done()) throw InputError(loc, "section has trailing bytes");
      have_bodies = true;
    } else if (name == "edges") {
      ByteReader br(data, loc);
      const auto n = br.pod<std::uint64_t>();
      if (n > size / 8) throw InputError(loc, "edge count exceeds the section");
      m.edges.resize(n);
      for (auto& e : m.edges) {
        e[0] = br.pod<std::uint32_t>();
        e[1] = br.pod<std::uint32_t>();
        if (e[0] >= r.body_count || e[1] >= r.body_count) throw InputError(loc, "edge names a missing body");
      }
      if (!br.done()) throw InputError(loc, "section has trailing bytes");
      have_edges = true;
    } else if (name == "stats") {
      ByteReader br(data, loc);
      if (r.stat_count > size / 4) throw InputError(loc, "statistic count exceeds the section");
      m.stat_names.resize(r.stat_count);
      for (auto& sname : m.stat_names) sname = br.str();
      if (!br.done()) throw InputError(loc, "section has trailing bytes");
      have_stats = true;
    } else if (name == "mapping") {
      m.mapping_text = std::string(data);
    } else if (name == "traffic") {
      decode_traffic(data, r.mapping, r.body_count, m, loc);
    } else if (name == "groups") {
      groups = data;
      groups_loc = loc;
    }
    // Unknown sections (written by a newer minor version) are skipped.
  }
  if (!have_meta || !have_bodies || !have_edges || !have_stats) {
    throw InputError(r.loc("section table"), "a required section (meta, bodies, edges, stats) is missing");
  }
  if (groups) decode_groups(*groups, r.body_count, r.meta, groups_loc);
  for (const std::string& name : r.meta.stat_names) r.stat_ranges.push_back(range_of(name));
}

/// Format 1: header, sections and the one checksum over everything, then every frame (one block).
void open_v1(Reader::Impl& r) {
  HeaderV1 h{};
  std::memcpy(&h, r.base, sizeof h);
  if (h.header_hash != digest_prefix(1, h, kHeaderV1HashedBytes)) {
    throw InputError(r.loc("header"), "header is corrupt (header checksum mismatch)");
  }
  if (h.file_size != r.size) {
    throw InputError(r.end_loc(), "truncated or extended: header says " + std::to_string(h.file_size) +
                                  " bytes, file has " + std::to_string(r.size) +
                                  " (interrupted copy?); re-simulate to recreate it");
  }
  if (h.frame_stride != checked_frame_stride(h.body_count, h.stat_count) || h.frames_offset % 8 != 0 ||
      h.frames_offset < sizeof(HeaderV1) || h.frames_offset > r.size) {
    throw InputError(r.loc("header"), "inconsistent frame layout");
  }
  const std::uint64_t frames_bytes = r.size - sizeof(TrailerV1) - h.frames_offset;
  if (r.size < h.frames_offset + sizeof(TrailerV1) ||
      (h.frame_stride != 0 && frames_bytes / h.frame_stride != h.frame_count) ||
      frames_bytes != h.frame_count * h.frame_stride) {
    throw InputError(r.loc("header"), "frame count does not match the file size");
  }
  if (h.frame_count == 0) throw InputError(r.loc("header"), "trajectory has no frames");
  adopt_header(r, h);
  r.frame_count = h.frame_count;
  r.block_frames = h.frame_count;
  r.block_stride = h.frame_count * h.frame_stride;
  r.complete = true;
  read_sections(r, sizeof(HeaderV1), h.section_count);
  TrailerV1 t{};
  std::memcpy(&t, r.base + r.size - sizeof(TrailerV1), sizeof t);
  if (std::memcmp(t.magic, kTrailerMagic, sizeof kTrailerMagic) != 0) {
    throw InputError(r.loc("trailer"), "missing end marker (truncated or corrupt file)");
  }
  if (checksum_of(1, r.base + sizeof(HeaderV1), r.size - sizeof(HeaderV1) - sizeof(TrailerV1)) != t.checksum) {
    throw InputError(r.loc("trailer"), "checksum mismatch: the file is corrupt; re-simulate to recreate it");
  }
  if (h.frame_count > 0xffffffffU) throw InputError(r.loc("header"), "too many frames for a format 1 file");
  r.blocks = {BlockIndex{r.frame_ptr(0)[0], r.frame_ptr(r.frame_count - 1)[0], 0,
                         static_cast<std::uint32_t>(h.frame_count)}};
  r.verified.assign(1, 0);
  r.ensure_verified(0);
}

/// Frames a killed or unfinished format 2 file holds past its last whole block.
std::uint64_t trailing_frames(const Reader::Impl& r) {
  const std::uint64_t end_of_blocks = r.frames_offset + r.blocks.size() * r.block_stride;
  if (r.size <= end_of_blocks || r.frame_stride == 0) return 0;
  return std::min<std::uint64_t>((r.size - end_of_blocks) / r.frame_stride, r.block_frames - 1);
}

/// Reads and checks the footer of block b at `at`; nullopt if it is not a valid footer.
std::optional<BlockIndex> read_footer(const Reader::Impl& r, std::size_t b, std::uint64_t at, Checksum* footers) {
  if (at > r.size || r.size - at < sizeof(BlockFooter)) return std::nullopt;
  BlockFooter f{};
  std::memcpy(&f, r.base + at, sizeof f);
  if (std::memcmp(f.magic, kBlockMagic, sizeof kBlockMagic) != 0 || f.footer_hash != digest_prefix(r.version, f, kFooterHashedBytes) ||
      f.block_index != b || f.frame_count == 0 || f.frame_count > r.block_frames) {
    return std::nullopt;
  }
  if (footers != nullptr) footers->update(&f, sizeof f);
  return BlockIndex{f.first_time, f.last_time, f.checksum, f.frame_count};
}

/// Adds index entries for blocks not yet known and takes up the completion record.
void scan_blocks(Reader::Impl& r) {
  Completion c{};
  std::memcpy(&c, r.base + sizeof(Header), sizeof c);
  const Completion zero{};
  const bool done = std::memcmp(&c, &zero, sizeof c) != 0;
  if (done) {
    if (std::memcmp(c.magic, kCompletionMagic, sizeof kCompletionMagic) != 0 ||
        c.record_hash != digest_prefix(r.version, c, sizeof c - sizeof c.record_hash)) {
      throw InputError(r.loc("completion record", 96), "completion record is corrupt (checksum mismatch)");
    }
    if (c.file_size != r.size) {
      throw InputError(r.end_loc(), "truncated or extended: the completion record says " + std::to_string(c.file_size) +
                                    " bytes, file has " + std::to_string(r.size) +
                                    " (interrupted copy?); re-simulate to recreate it");
    }
    if (c.frame_count == 0) throw InputError(r.loc("header"), "trajectory has no frames");
    const std::uint64_t block_count = (c.frame_count - 1) / r.block_frames + 1;
    const std::uint64_t last_frames = c.frame_count - (block_count - 1) * r.block_frames;
    // The size must be exactly the blocks (the last one shorter): this also bounds block_count.
    std::uint64_t expected = 0;
    if (__builtin_mul_overflow(block_count - 1, r.block_stride, &expected) ||
        __builtin_add_overflow(expected, last_frames * r.frame_stride + sizeof(BlockFooter), &expected) ||
        r.size - r.frames_offset != expected) {
      throw InputError(r.loc("completion record", 96), "frame count does not match the file size");
    }
    Checksum footers(r.version);
    r.blocks.clear();
    r.blocks.reserve(block_count);
    for (std::uint64_t b = 0; b < block_count; ++b) {
      const std::uint64_t frames = b + 1 < block_count ? r.block_frames : last_frames;
      const std::uint64_t at = r.frames_offset + b * r.block_stride + frames * r.frame_stride;
      const auto blk = read_footer(r, b, at, &footers);
      if (!blk || blk->frame_count != frames) {
        throw InputError(r.loc("block " + std::to_string(b) + " footer, byte " + std::to_string(at)),
                         "block footer is corrupt");
      }
      r.blocks.push_back(*blk);
    }
    if (footers.digest() != c.footers_hash) {
      throw InputError(r.loc("completion record", 96), "the block footers do not match the completion record");
    }
    r.complete = true;
  } else {
    for (;;) {
      const std::size_t b = r.blocks.size();
      const std::uint64_t start = r.frames_offset + b * r.block_stride;
      const std::uint64_t at = start + r.block_frames * r.frame_stride;
      if (start > r.size || r.size - start < r.block_stride) break;  // not (yet) a whole block
      const auto blk = read_footer(r, b, at, nullptr);
      if (!blk || blk->frame_count != r.block_frames) {
        // A footer the file already goes past was written whole: it is damaged, not unfinished.
        if (r.size > at + sizeof(BlockFooter)) {
          throw InputError(r.loc("block " + std::to_string(b) + " footer, byte " + std::to_string(at)),
                           "block footer is corrupt");
        }
        break;
      }
      r.blocks.push_back(*blk);
    }
  }
  for (std::size_t b = 0; b < r.blocks.size(); ++b) {
    const BlockIndex& blk = r.blocks[b];
    if (!std::isfinite(blk.first_time) || !std::isfinite(blk.last_time) || blk.last_time < blk.first_time ||
        (b > 0 && !(blk.first_time > r.blocks[b - 1].last_time))) {
      throw InputError(r.loc("block " + std::to_string(b) + " footer"), "block times do not increase");
    }
  }
  r.frame_count = 0;
  for (const BlockIndex& blk : r.blocks) r.frame_count += blk.frame_count;
  r.verified.resize(r.blocks.size(), 0);
}

/// Format 2: header, sections and the block index; the frames are checked as they are read.
void open_v2(Reader::Impl& r) {
  if (r.size < kSectionsOffset) {
    throw InputError(r.end_loc(), "not a Kanoko trajectory: file is " + std::to_string(r.size) +
                                      " bytes, shorter than the header and completion record");
  }
  Header h{};
  std::memcpy(&h, r.base, sizeof h);
  if (h.header_hash != digest_prefix(r.version, h, kHeaderHashedBytes)) {
    throw InputError(r.loc("header"), "header is corrupt (header checksum mismatch)");
  }
  const std::uint64_t stride = checked_frame_stride(h.body_count, h.stat_count);
  std::uint64_t block_bytes = 0;
  if (h.frame_stride != stride || stride == 0 || h.frames_offset % 8 != 0 || h.frames_offset < kSectionsOffset ||
      h.block_frames == 0 || __builtin_mul_overflow(stride, std::uint64_t{h.block_frames}, &block_bytes) ||
      block_bytes > (std::uint64_t{1} << 50)) {
    throw InputError(r.loc("header"), "inconsistent frame layout");
  }
  if (h.frames_offset > r.size) throw InputError(r.end_loc(), "truncated: the file ends inside its sections");
  if (checksum_of(r.version, r.base + kSectionsOffset, h.frames_offset - kSectionsOffset) != h.sections_hash) throw InputError(r.loc("sections"), "sections are corrupt (checksum mismatch)");
  adopt_header(r, h);
  r.block_frames = h.block_frames;
  r.block_stride = block_bytes + sizeof(BlockFooter);
  r.meta.planned_frames = h.planned_frames;
  read_sections(r, kSectionsOffset, h.section_count);
  scan_blocks(r);
}

/// "is incomplete (killed at frame 812 of 2000)" for an unfinished run.
std::string incomplete_text(const Reader::Impl& r) {
  const std::uint64_t written = r.frame_count + trailing_frames(r);
  std::string s = "is incomplete (still being written, or killed at frame " + std::to_string(written);
  if (r.meta.planned_frames > 0) s += " of " + std::to_string(r.meta.planned_frames);
  return s + ")";
}

}  // namespace

Reader::Reader(const std::filesystem::path& path, Open open) : impl_(open_file(path)) {
  impl_->version = check_magic_and_version(*impl_);
  if (impl_->version == 1) {
    open_v1(*impl_);
  } else {
    open_v2(*impl_);
  }
  if (open == Open::complete && !impl_->complete) {
    throw InputError(impl_->loc("completion record", 96), "the run " + incomplete_text(*impl_) +
                                       "; wait for 'kanoko simulate' to finish or re-simulate it");
  }
}

Reader::~Reader() = default;
Reader::Reader(Reader&&) noexcept = default;
Reader& Reader::operator=(Reader&&) noexcept = default;

const Metadata& Reader::meta() const { return impl_->meta; }
std::size_t Reader::frame_count() const { return impl_->frame_count; }
bool Reader::complete() const { return impl_->complete; }
unsigned Reader::version() const { return impl_->version; }

bool Reader::frame_readable(std::size_t k) const noexcept {
  if (k >= impl_->frame_count) return false;
  return !impl_->check_block_once(k / impl_->block_frames).has_value();
}

std::optional<std::size_t> Reader::last_readable_frame_at_or_before(double t) const noexcept {
  const auto& blocks = impl_->blocks;
  if (blocks.empty()) return std::nullopt;
  const auto after = std::upper_bound(blocks.begin(), blocks.end(), t,
                                      [](double v, const BlockIndex& b) { return v < b.first_time; });
  auto b = static_cast<std::size_t>(std::max<std::ptrdiff_t>(after - blocks.begin() - 1, 0));
  if (!impl_->check_block_once(b).has_value()) return frame_at_or_before(t);
  while (b > 0) {
    --b;
    if (!impl_->check_block_once(b).has_value()) return impl_->block_first_frame(b) + blocks[b].frame_count - 1;
  }
  return std::nullopt;
}

std::size_t Reader::frames_verified() const {
  std::size_t n = 0;
  for (std::size_t b = 0; b < impl_->blocks.size(); ++b) {
    if (std::atomic_ref<std::uint8_t>(impl_->verified[b]).load(std::memory_order_acquire) != 0) {
      n += impl_->blocks[b].frame_count;
    }
  }
  return n;
}

std::size_t Reader::refresh() {
  if (impl_->complete) return impl_->frame_count;
  map_file(*impl_);
  scan_blocks(*impl_);
  return impl_->frame_count;
}

std::uint64_t Reader::file_bytes() const { return impl_->size; }

void Reader::verify_all() const {
  for (std::size_t b = 0; b < impl_->blocks.size(); ++b) impl_->ensure_verified(b);
}

FrameView Reader::frame(std::size_t k) const {
  impl_->ensure_frame(k);
  const double* p = impl_->frame_ptr(k);
  const auto n = static_cast<Eigen::Index>(impl_->body_count);
  const auto s = static_cast<Eigen::Index>(impl_->stat_count);
  return FrameView{p[0], Eigen::Map<const Eigen::Matrix3Xd>(p + 1, 3, n),
                   Eigen::Map<const Eigen::Matrix3Xd>(p + 1 + 3 * n, 3, n),
                   Eigen::Map<const Eigen::MatrixXd>(p + 1 + 6 * n, s, s == 0 ? 0 : n)};
}

double Reader::frame_time(std::size_t k) const {
  impl_->ensure_frame(k);
  return impl_->frame_ptr(k)[0];
}

double Reader::begin_time() const { return frame_time(0); }
double Reader::end_time() const { return frame_time(frame_count() - 1); }

std::size_t Reader::frame_at_or_before(double t) const {
  KANOKO_ASSERT(frame_count() > 0, "no frames");
  if (!(t > frame_time(0))) return 0;
  // The block from the index (no frame is read), then the frame inside it.
  const auto& blocks = impl_->blocks;
  const auto after = std::upper_bound(blocks.begin(), blocks.end(), t,
                                      [](double v, const BlockIndex& b) { return v < b.first_time; });
  const auto b = static_cast<std::size_t>(std::max<std::ptrdiff_t>(after - blocks.begin() - 1, 0));
  std::size_t lo = impl_->block_first_frame(b), hi = lo + blocks[b].frame_count;  // answer in [lo, hi)
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (frame_time(mid) <= t) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

void Reader::positions_at(double t, Eigen::Matrix3Xd& out) const {
  const std::size_t k = frame_at_or_before(t);
  const FrameView a = frame(k);
  if (k + 1 >= frame_count() || !(t > a.time_s)) {
    out = a.positions;
    return;
  }
  const FrameView b = frame(k + 1);
  const double h = b.time_s - a.time_s;
  const double s = (t - a.time_s) / h;
  const double s2 = s * s, s3 = s2 * s;
  const double h00 = 2 * s3 - 3 * s2 + 1, h10 = s3 - 2 * s2 + s;
  const double h01 = -2 * s3 + 3 * s2, h11 = s3 - s2;
  out = h00 * a.positions + (h10 * h) * a.velocities + h01 * b.positions + (h11 * h) * b.velocities;
}

void Reader::stats_at(double t, Eigen::MatrixXd& out) const { out = frame(frame_at_or_before(t)).stats; }

bool read_input_hash(const std::filesystem::path& path, std::uint64_t& hash_out) {
  // The input hash is at byte 48 in both formats; only the header's own checksum is checked.
  std::ifstream in(path, std::ios::binary);
  HeaderV1 h1{};
  if (!in.read(reinterpret_cast<char*>(&h1), sizeof h1) || std::memcmp(h1.magic, kMagic, sizeof kMagic) != 0) {
    return false;
  }
  if (h1.version_major == 1 && h1.header_hash == digest_prefix(1, h1, kHeaderV1HashedBytes)) {
    hash_out = h1.input_hash;
    return true;
  }
  Header h2{};
  std::memcpy(&h2, &h1, sizeof h2);
  if (h2.version_major >= 2 && h2.version_major <= kVersionMajor &&
      h2.header_hash == digest_prefix(h2.version_major, h2, kHeaderHashedBytes)) {
    hash_out = h2.input_hash;
    return true;
  }
  return false;
}

std::string reuse_problem(const std::filesystem::path& path) {
  try {
    Reader reader(path, Open::partial);
    if (!reader.complete()) return incomplete_text(*reader.impl_);
    for (std::size_t b = 0; b < reader.impl_->blocks.size(); ++b) {
      if (const auto problem = reader.impl_->check_block(b)) return problem->what + " in " + problem->where;
    }
  } catch (const InputError& e) {
    return "cannot be read (" + e.diagnostics().front().message + ")";
  }
  return {};
}

bool looks_like_trajectory(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char head[sizeof kMagic] = {};
  if (!in.read(head, sizeof head)) return false;
  return std::memcmp(head, kMagic, sizeof kMagic) == 0;
}

}  // namespace kanoko::trajectory
