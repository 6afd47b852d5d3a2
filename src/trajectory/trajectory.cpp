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
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>

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

/// The fixed header, byte for byte as in docs/trajectory-format.md.
struct Header {
  char magic[8];
  std::uint16_t version_major;
  std::uint16_t version_minor;
  std::uint8_t little_endian;
  std::uint8_t double_bytes;
  std::uint16_t reserved0;
  std::uint32_t body_count;
  std::uint32_t stat_count;
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
static_assert(sizeof(Header) == 96, "trajectory header must be 96 bytes");
constexpr std::size_t kHeaderHashedBytes = 80;

struct Trailer {
  std::uint64_t checksum;  ///< FNV-1a of bytes [96, trailer)
  char magic[8];
};
static_assert(sizeof(Trailer) == 16);

std::uint64_t header_digest(const Header& h) {
  Fnv1a64 f;
  f.update(&h, kHeaderHashedBytes);
  return f.digest();
}

// ---- section encoding --------------------------------------------------------------------

class ByteWriter {
 public:
  template <class T>
  void pod(const T& v) {
    const auto* p = reinterpret_cast<const char*>(&v);
    bytes_.insert(bytes_.end(), p, p + sizeof v);
  }
  void str(std::string_view s) {
    pod(static_cast<std::uint32_t>(s.size()));
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }
  void raw(std::string_view s) { bytes_.insert(bytes_.end(), s.begin(), s.end()); }
  [[nodiscard]] const std::string& bytes() const { return bytes_; }

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
    need(n);
    std::string s(data_.substr(pos_, n));
    pos_ += n;
    return s;
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
  return w.bytes();
}

std::string encode_edges(const Metadata& m) {
  ByteWriter w;
  w.pod(static_cast<std::uint64_t>(m.edges.size()));
  for (const auto& e : m.edges) {
    w.pod(e[0]);
    w.pod(e[1]);
  }
  return w.bytes();
}

std::string encode_stats(const Metadata& m) {
  ByteWriter w;
  for (const auto& s : m.stat_names) w.str(s);
  return w.bytes();
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

std::string encode_traffic(const Metadata& m) {
  ByteWriter w;
  w.pod(static_cast<std::uint64_t>(m.traffic_intervals()));
  w.pod(static_cast<std::uint64_t>(m.traffic.size()));
  if (m.traffic_begin.empty()) w.pod(std::uint64_t{0});  // no intervals: the single offset 0
  for (const std::uint64_t b : m.traffic_begin) w.pod(b);
  for (const PairTraffic& p : m.traffic) {
    w.pod(p.src);
    w.pod(p.dst);
    w.pod(p.bytes);
    w.pod(p.messages);
  }
  return w.bytes();
}

void decode_traffic(std::string_view data, std::uint32_t body_count, Metadata& m, const FileLoc& loc) {
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
  m.traffic.resize(pairs);
  for (std::size_t i = 0; i < m.traffic.size(); ++i) {
    PairTraffic& p = m.traffic[i];
    p.src = br.pod<std::uint32_t>();
    p.dst = br.pod<std::uint32_t>();
    p.bytes = br.pod<double>();
    p.messages = br.pod<double>();
    if (p.src >= body_count || p.dst >= body_count) {
      throw InputError(loc, "pair record " + std::to_string(i) + " names a missing body");
    }
    if (!std::isfinite(p.bytes) || p.bytes < 0 || !std::isfinite(p.messages) || p.messages < 0) {
      throw InputError(loc, "pair record " + std::to_string(i) + " has a negative or non-finite amount");
    }
  }
  if (!br.done()) throw InputError(loc, "section has trailing bytes");
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
  Metadata meta;
  Header header{};
  Fnv1a64 checksum;
  std::vector<double> frame_buffer;

  Impl(const std::filesystem::path& path, Metadata m) : out(path), meta(std::move(m)) {}

  void write_tracked(const void* data, std::size_t bytes) {
    out.write(data, bytes);
    checksum.update(data, bytes);
  }
};

Writer::Writer(const std::filesystem::path& path, Metadata meta)
    : impl_(std::make_unique<Impl>(path, std::move(meta))) {
  const Metadata& m = impl_->meta;
  for (const auto& e : m.edges) {
    KANOKO_ASSERT(e[0] < m.bodies.size() && e[1] < m.bodies.size(), "edge names a missing body");
  }
  KANOKO_ASSERT(m.traffic_begin.empty() ? m.traffic.empty()
                                        : m.traffic_begin.front() == 0 && m.traffic_begin.back() == m.traffic.size(),
                "traffic offsets do not cover the pairs");
  for (const auto& p : m.traffic) {
    KANOKO_ASSERT(p.src < m.bodies.size() && p.dst < m.bodies.size(), "traffic names a missing body");
  }
  Header& h = impl_->header;
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version_major = kVersionMajor;
  h.version_minor = kVersionMinor;
  h.little_endian = 1;
  h.double_bytes = sizeof(double);
  h.body_count = static_cast<std::uint32_t>(m.bodies.size());
  h.stat_count = static_cast<std::uint32_t>(m.stat_names.size());
  h.frame_stride = frame_stride_bytes(h.body_count, h.stat_count);
  h.input_hash = m.input_hash;
  h.dt_s = m.dt_s;
  h.steps_per_frame = m.steps_per_frame;

  const std::vector<std::pair<std::string, std::string>> sections = {
      {"meta", encode_meta_text(m)},
      {"bodies", encode_bodies(m)},
      {"edges", encode_edges(m)},
      {"stats", encode_stats(m)},
      {"mapping", m.mapping_text},
      {"traffic", encode_traffic(m)},
  };
  h.section_count = static_cast<std::uint32_t>(sections.size());
  impl_->out.write(&h, sizeof h);  // patched in commit()
  for (const auto& [name, data] : sections) {
    char name_bytes[kSectionNameBytes] = {};
    std::memcpy(name_bytes, name.data(), std::min(name.size(), kSectionNameBytes - 1));
    impl_->write_tracked(name_bytes, sizeof name_bytes);
    const auto size = static_cast<std::uint64_t>(data.size());
    impl_->write_tracked(&size, sizeof size);
    impl_->write_tracked(data.data(), data.size());
  }
  // Frames start 8-byte aligned so that a memory map can view them as doubles.
  const std::uint64_t pad = (8 - impl_->out.size() % 8) % 8;
  const char zeros[8] = {};
  impl_->write_tracked(zeros, pad);
  h.frames_offset = impl_->out.size();
  impl_->frame_buffer.resize(h.frame_stride / sizeof(double));
}

Writer::~Writer() = default;

void Writer::append_frame(double time_s, const Eigen::Ref<const Eigen::Matrix3Xd>& positions,
                          const Eigen::Ref<const Eigen::Matrix3Xd>& velocities,
                          const Eigen::Ref<const Eigen::MatrixXd>& stats) {
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
  impl_->write_tracked(buf.data(), buf.size() * sizeof(double));
  ++impl_->header.frame_count;
}

std::uint64_t Writer::frame_count() const { return impl_->header.frame_count; }

void Writer::commit() {
  Trailer t{};
  t.checksum = impl_->checksum.digest();
  std::memcpy(t.magic, kTrailerMagic, sizeof kTrailerMagic);
  impl_->out.write(&t, sizeof t);
  Header& h = impl_->header;
  h.file_size = impl_->out.size();
  h.header_hash = header_digest(h);
  impl_->out.write_at(0, &h, sizeof h);
  impl_->out.commit();
}

// ---- Reader -------------------------------------------------------------------------------

struct Reader::Impl {
  std::string path;
  int fd = -1;
  const unsigned char* base = nullptr;
  std::size_t size = 0;
  Header header{};
  Metadata meta;

  ~Impl() {
    if (base != nullptr) ::munmap(const_cast<unsigned char*>(base), size);
    if (fd >= 0) ::close(fd);
  }

  [[nodiscard]] FileLoc loc(const std::string& record = {}) const {
    FileLoc l{path};
    if (!record.empty()) l.file += " (" + record + ")";
    return l;
  }
  [[nodiscard]] const double* frame_ptr(std::size_t k) const {
    return reinterpret_cast<const double*>(base + header.frames_offset + k * header.frame_stride);
  }
};

namespace {

std::unique_ptr<Reader::Impl> open_and_map(const std::filesystem::path& path) {
  auto impl = std::make_unique<Reader::Impl>();
  impl->path = path.string();
  impl->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (impl->fd < 0) {
    throw InputError(FileLoc{impl->path}, std::string("cannot open trajectory: ") + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(impl->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    throw InputError(FileLoc{impl->path}, "not a regular file");
  }
  impl->size = static_cast<std::size_t>(st.st_size);
  if (impl->size < sizeof(Header)) {
    throw InputError(FileLoc{impl->path}, "not a Kanoko trajectory: file is " + std::to_string(impl->size) +
                                              " bytes, shorter than the 96-byte header");
  }
  void* p = ::mmap(nullptr, impl->size, PROT_READ, MAP_PRIVATE, impl->fd, 0);
  if (p == MAP_FAILED) throw InputError(FileLoc{impl->path}, std::string("cannot map: ") + std::strerror(errno));
  impl->base = static_cast<const unsigned char*>(p);
  std::memcpy(&impl->header, impl->base, sizeof(Header));
  return impl;
}

/// Checks everything in the header that does not need the rest of the file.
void validate_header(const Reader::Impl& r) {
  const Header& h = r.header;
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
  if (h.header_hash != header_digest(h)) {
    throw InputError(r.loc("header"), "header is corrupt (header checksum mismatch)");
  }
  if (h.file_size != r.size) {
    throw InputError(r.loc(), "truncated or extended: header says " + std::to_string(h.file_size) +
                                  " bytes, file has " + std::to_string(r.size) +
                                  " (interrupted copy?); re-simulate to recreate it");
  }
  if (h.frame_stride != checked_frame_stride(h.body_count, h.stat_count) || h.frames_offset % 8 != 0 ||
      h.frames_offset < sizeof(Header) || h.frames_offset > r.size) {
    throw InputError(r.loc("header"), "inconsistent frame layout");
  }
  const std::uint64_t frames_bytes = r.size - sizeof(Trailer) - h.frames_offset;
  if (r.size < h.frames_offset + sizeof(Trailer) ||
      (h.frame_stride != 0 && frames_bytes / h.frame_stride != h.frame_count) ||
      frames_bytes != h.frame_count * h.frame_stride) {
    throw InputError(r.loc("header"), "frame count does not match the file size");
  }
  if (h.frame_count == 0) throw InputError(r.loc(), "trajectory has no frames");
  if (!(h.dt_s > 0) || !std::isfinite(h.dt_s) || h.steps_per_frame == 0) {
    throw InputError(r.loc("header"), "bad time step in header");
  }
}

void read_sections(Reader::Impl& r) {
  const Header& h = r.header;
  std::size_t pos = sizeof(Header);
  bool have_meta = false, have_bodies = false, have_edges = false, have_stats = false;
  for (std::uint32_t s = 0; s < h.section_count; ++s) {
    if (pos + kSectionNameBytes + 8 > h.frames_offset) {
      throw InputError(r.loc("section " + std::to_string(s)), "section table runs past the frames");
    }
    char name_bytes[kSectionNameBytes + 1] = {};
    std::memcpy(name_bytes, r.base + pos, kSectionNameBytes);
    const std::string name(name_bytes);
    std::uint64_t size = 0;
    std::memcpy(&size, r.base + pos + kSectionNameBytes, 8);
    pos += kSectionNameBytes + 8;
    if (size > h.frames_offset - pos) {
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
      if (h.body_count > size / 32) throw InputError(loc, "body count exceeds the section");
      m.bodies.resize(h.body_count);
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
        if (e[0] >= h.body_count || e[1] >= h.body_count) throw InputError(loc, "edge names a missing body");
      }
      if (!br.done()) throw InputError(loc, "section has trailing bytes");
      have_edges = true;
    } else if (name == "stats") {
      ByteReader br(data, loc);
      if (h.stat_count > size / 4) throw InputError(loc, "statistic count exceeds the section");
      m.stat_names.resize(h.stat_count);
      for (auto& sname : m.stat_names) sname = br.str();
      if (!br.done()) throw InputError(loc, "section has trailing bytes");
      have_stats = true;
    } else if (name == "mapping") {
      m.mapping_text = std::string(data);
    } else if (name == "traffic") {
      decode_traffic(data, h.body_count, m, loc);
    }
    // Unknown sections (written by a newer minor version) are skipped.
  }
  if (!have_meta || !have_bodies || !have_edges || !have_stats) {
    throw InputError(r.loc(), "a required section (meta, bodies, edges, stats) is missing");
  }
  r.meta.dt_s = h.dt_s;
  r.meta.steps_per_frame = h.steps_per_frame;
  r.meta.input_hash = h.input_hash;
}

void verify_trailer(const Reader::Impl& r, bool verify_checksum) {
  Trailer t{};
  std::memcpy(&t, r.base + r.size - sizeof(Trailer), sizeof t);
  if (std::memcmp(t.magic, kTrailerMagic, sizeof kTrailerMagic) != 0) {
    throw InputError(r.loc("trailer"), "missing end marker (truncated or corrupt file)");
  }
  if (verify_checksum) {
    Fnv1a64 f;
    f.update(r.base + sizeof(Header), r.size - sizeof(Header) - sizeof(Trailer));
    if (f.digest() != t.checksum) {
      throw InputError(r.loc("trailer"), "checksum mismatch: the file is corrupt; re-simulate to recreate it");
    }
  }
}

}  // namespace

Reader::Reader(const std::filesystem::path& path, bool verify_checksum) : impl_(open_and_map(path)) {
  validate_header(*impl_);
  read_sections(*impl_);
  verify_trailer(*impl_, verify_checksum);
  // Frame times must increase strictly, or interpolation and seeking are meaningless.
  for (std::size_t k = 0; k < frame_count(); ++k) {
    const double t = frame_time(k);
    if (!std::isfinite(t) || (k > 0 && !(t > frame_time(k - 1)))) {
      throw InputError(impl_->loc("frame " + std::to_string(k)), "frame times do not increase");
    }
  }
}

Reader::~Reader() = default;
Reader::Reader(Reader&&) noexcept = default;
Reader& Reader::operator=(Reader&&) noexcept = default;

const Metadata& Reader::meta() const { return impl_->meta; }
std::size_t Reader::frame_count() const { return impl_->header.frame_count; }

FrameView Reader::frame(std::size_t k) const {
  KANOKO_ASSERT(k < frame_count(), "frame index out of range");
  const double* p = impl_->frame_ptr(k);
  const auto n = static_cast<Eigen::Index>(impl_->header.body_count);
  const auto s = static_cast<Eigen::Index>(impl_->header.stat_count);
  return FrameView{p[0], Eigen::Map<const Eigen::Matrix3Xd>(p + 1, 3, n),
                   Eigen::Map<const Eigen::Matrix3Xd>(p + 1 + 3 * n, 3, n),
                   Eigen::Map<const Eigen::MatrixXd>(p + 1 + 6 * n, s, s == 0 ? 0 : n)};
}

double Reader::frame_time(std::size_t k) const {
  KANOKO_ASSERT(k < frame_count(), "frame index out of range");
  return impl_->frame_ptr(k)[0];
}

double Reader::begin_time() const { return frame_time(0); }
double Reader::end_time() const { return frame_time(frame_count() - 1); }

std::size_t Reader::frame_at_or_before(double t) const {
  std::size_t lo = 0, hi = frame_count();  // invariant: answer in [lo, hi)
  if (!(t > frame_time(0))) return 0;
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
  try {
    Reader r(path, /*verify_checksum=*/false);
    hash_out = r.meta().input_hash;
    return true;
  } catch (const InputError&) {
    return false;
  }
}

bool looks_like_trajectory(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char head[sizeof kMagic] = {};
  if (!in.read(head, sizeof head)) return false;
  return std::memcmp(head, kMagic, sizeof kMagic) == 0;
}

}  // namespace kanoko::trajectory
