#include "src/trace/decompress.hpp"

#include <fcntl.h>
#include <lzma.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <new>
#include <utility>

#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"

namespace kanoko::trace {

namespace {

constexpr std::size_t kInBytes = std::size_t{256} << 10U;  ///< compressed bytes read at a time
constexpr std::uint64_t kXzMemoryLimit = std::uint64_t{1} << 30U;
constexpr std::array<const char*, 3> kSuffixes{".gz", ".xz", ".zst"};

std::string errno_text(int err) { return std::strerror(err); }

/// What one decoding step did.
enum class Step : std::uint8_t { more, end, error };

}  // namespace

/// One codec's streaming state. step() decodes from [in, in + in_n) into [out, out + out_n),
/// advancing both; `input_ended` says no byte follows the ones given.
class DecompressedInput::Decoder {
 public:
  virtual ~Decoder() = default;
  virtual Step step(const unsigned char*& in, std::size_t& in_n, unsigned char*& out, std::size_t& out_n,
                    bool input_ended) = 0;
  /// Between members or frames: the end of the file here is the end of the text.
  [[nodiscard]] virtual bool at_boundary() const = 0;
  /// What went wrong when step() returned Step::error.
  [[nodiscard]] const std::string& error() const { return error_; }
  /// What is cut short when the file ends inside the data ("member", "frame", "stream").
  [[nodiscard]] virtual const char* unit() const = 0;

 protected:
  /// Moves the step's windows past `used` input and `made` output bytes.
  static void advance(const unsigned char*& in, std::size_t& in_n, std::size_t used, unsigned char*& out,
                      std::size_t& out_n, std::size_t made) {
    in += used;
    in_n -= used;
    out += made;
    out_n -= made;
  }
  std::string error_;
};

namespace {

/// The input and output sizes zlib takes (unsigned int).
unsigned clamp_uint(std::size_t n) { return static_cast<unsigned>(std::min<std::size_t>(n, UINT_MAX)); }

class GzipDecoder final : public DecompressedInput::Decoder {
 public:
  GzipDecoder() {
    // 16 + 15: a gzip header and trailer, the largest window.
    if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) throw std::bad_alloc();
  }
  ~GzipDecoder() override { inflateEnd(&z_); }
  GzipDecoder(const GzipDecoder&) = delete;
  GzipDecoder& operator=(const GzipDecoder&) = delete;

  Step step(const unsigned char*& in, std::size_t& in_n, unsigned char*& out, std::size_t& out_n, bool) override {
    if (!in_member_) {
      if (in_n == 0) return Step::more;
      // Another member follows (gzip files may be concatenated).
      inflateReset(&z_);
      in_member_ = true;
    }
    z_.next_in = const_cast<unsigned char*>(in);  // zlib's API is not const-correct
    z_.avail_in = clamp_uint(in_n);
    z_.next_out = out;
    z_.avail_out = clamp_uint(out_n);
    const unsigned in_before = z_.avail_in;
    const unsigned out_before = z_.avail_out;
    const int rc = inflate(&z_, Z_NO_FLUSH);
    advance(in, in_n, in_before - z_.avail_in, out, out_n, out_before - z_.avail_out);
    if (rc == Z_STREAM_END) {
      in_member_ = false;
      return Step::more;
    }
    if (rc == Z_OK || rc == Z_BUF_ERROR) return Step::more;
    error_ = z_.msg != nullptr ? z_.msg : (rc == Z_MEM_ERROR ? "out of memory" : "invalid data");
    return Step::error;
  }
  [[nodiscard]] bool at_boundary() const override { return !in_member_; }
  [[nodiscard]] const char* unit() const override { return "member"; }

 private:
  z_stream z_{};
  bool in_member_ = false;
};

class XzDecoder final : public DecompressedInput::Decoder {
 public:
  XzDecoder() {
    // Concatenated streams (and stream padding) read as one, as xz(1) does.
    if (lzma_stream_decoder(&s_, kXzMemoryLimit, LZMA_CONCATENATED) != LZMA_OK) throw std::bad_alloc();
  }
  ~XzDecoder() override { lzma_end(&s_); }
  XzDecoder(const XzDecoder&) = delete;
  XzDecoder& operator=(const XzDecoder&) = delete;

  Step step(const unsigned char*& in, std::size_t& in_n, unsigned char*& out, std::size_t& out_n,
            bool input_ended) override {
    s_.next_in = in;
    s_.avail_in = in_n;
    s_.next_out = out;
    s_.avail_out = out_n;
    const lzma_ret rc = lzma_code(&s_, input_ended ? LZMA_FINISH : LZMA_RUN);
    advance(in, in_n, in_n - s_.avail_in, out, out_n, out_n - s_.avail_out);
    switch (rc) {
      case LZMA_OK:
      case LZMA_BUF_ERROR: return Step::more;  // no progress: the caller sees it
      case LZMA_STREAM_END: return Step::end;
      case LZMA_MEM_ERROR: error_ = "out of memory"; break;
      case LZMA_MEMLIMIT_ERROR: error_ = "needs more than 1 GiB of memory to decompress"; break;
      case LZMA_FORMAT_ERROR: error_ = "not xz data"; break;
      case LZMA_OPTIONS_ERROR: error_ = "unsupported xz options"; break;
      case LZMA_DATA_ERROR: error_ = "corrupt data"; break;
      default: error_ = "decoder error " + std::to_string(static_cast<int>(rc)); break;
    }
    return Step::error;
  }
  [[nodiscard]] bool at_boundary() const override { return false; }  // step() says Step::end
  [[nodiscard]] const char* unit() const override { return "stream"; }

 private:
  lzma_stream s_ = LZMA_STREAM_INIT;
};

class ZstdDecoder final : public DecompressedInput::Decoder {
 public:
  ZstdDecoder() : d_(ZSTD_createDCtx()) {
    if (d_ == nullptr) throw std::bad_alloc();
  }
  ~ZstdDecoder() override { ZSTD_freeDCtx(d_); }
  ZstdDecoder(const ZstdDecoder&) = delete;
  ZstdDecoder& operator=(const ZstdDecoder&) = delete;

  Step step(const unsigned char*& in, std::size_t& in_n, unsigned char*& out, std::size_t& out_n, bool) override {
    ZSTD_inBuffer ib{in, in_n, 0};
    ZSTD_outBuffer ob{out, out_n, 0};
    const std::size_t rc = ZSTD_decompressStream(d_, &ob, &ib);
    advance(in, in_n, ib.pos, out, out_n, ob.pos);
    if (ZSTD_isError(rc) != 0U) {
      error_ = ZSTD_getErrorName(rc);
      return Step::error;
    }
    // 0: a frame is decoded and flushed; more frames may follow.
    if (ib.pos > 0 || ob.pos > 0) at_boundary_ = rc == 0;
    return Step::more;
  }
  [[nodiscard]] bool at_boundary() const override { return at_boundary_; }
  [[nodiscard]] const char* unit() const override { return "frame"; }

 private:
  ZSTD_DCtx* d_;
  bool at_boundary_ = false;
};

}  // namespace

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::gzip: return "gzip";
    case Compression::xz: return "xz";
    case Compression::zstd: return "zstd";
    case Compression::none: break;
  }
  return "none";
}

Compression compression_of(std::string_view head) {
  if (head.substr(0, 2) == "\x1f\x8b") return Compression::gzip;
  if (head.substr(0, 6) == std::string_view("\xfd" "7zXZ\0", 6)) return Compression::xz;
  if (head.substr(0, 4) == "\x28\xb5\x2f\xfd") return Compression::zstd;
  if (head.size() >= 4 && (static_cast<unsigned char>(head[0]) & 0xf0U) == 0x50U && head.substr(1, 3) == "\x2a\x4d\x18") {
    return Compression::zstd;
  }
  return Compression::none;
}

Compression file_compression(const std::filesystem::path& path) {
  try {
    return DecompressedInput(path).compression();
  } catch (const InputError&) {
    return Compression::none;
  }
}

std::filesystem::path without_compression_suffix(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (std::find(kSuffixes.begin(), kSuffixes.end(), ext) == kSuffixes.end()) return path;
  std::filesystem::path p = path;
  p.replace_extension();
  return p;
}

std::filesystem::path existing_maybe_compressed(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return path;
  for (const char* suffix : kSuffixes) {
    std::filesystem::path p = path;
    p += suffix;
    if (std::filesystem::is_regular_file(p, ec)) return p;
  }
  return path;
}

DecompressedInput::DecompressedInput(const std::filesystem::path& path) : name_(path.string()) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw InputError(FileLoc{name_}, "cannot open trace: " + errno_text(errno));
  try {
    // The longest magic is 6 bytes; short reads (pipes) are retried until then.
    while (head_size_ < 6) {
      const std::size_t n = read_raw(head_.data() + head_size_, head_.size() - head_size_);
      if (n == 0) break;
      head_size_ += n;
    }
    compression_ = compression_of(std::string_view(head_.data(), head_size_));
    switch (compression_) {
      case Compression::gzip: decoder_ = std::make_unique<GzipDecoder>(); break;
      case Compression::xz: decoder_ = std::make_unique<XzDecoder>(); break;
      case Compression::zstd: decoder_ = std::make_unique<ZstdDecoder>(); break;
      case Compression::none: return;
    }
    in_.resize(kInBytes);
    std::memcpy(in_.data(), head_.data(), head_size_);
    in_size_ = head_size_;
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

DecompressedInput::~DecompressedInput() { ::close(fd_); }

std::size_t DecompressedInput::read_raw(char* out, std::size_t n) {
  for (;;) {
    const ssize_t got = ::read(fd_, out, n);
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno == EINTR) continue;
    if (errno == EISDIR) throw InputError(FileLoc{name_}, "is a directory, expected a trace file");
    throw InputError(FileLoc{name_}, "read failed: " + errno_text(errno));
  }
}

void DecompressedInput::fail(const std::string& what) const {
  // The line reached: the one the text had got to when the damage was found.
  throw InputError(FileLoc{name_, newlines_ + 1, 0}, what);
}

std::size_t DecompressedInput::read(char* out, std::size_t n) {
  if (n == 0) return 0;
  if (compression_ == Compression::none) {
    if (head_pos_ < head_size_) {
      const std::size_t k = std::min(n, head_size_ - head_pos_);
      std::memcpy(out, head_.data() + head_pos_, k);
      head_pos_ += k;
      return k == n ? k : k + read_raw(out + k, n - k);
    }
    return read_raw(out, n);
  }
  auto* const first = reinterpret_cast<unsigned char*>(out);
  unsigned char* o = first;
  std::size_t o_n = n;
  while (!finished_) {
    if (in_pos_ == in_size_ && !eof_) {
      in_base_ += in_size_;
      in_pos_ = 0;
      in_size_ = read_raw(reinterpret_cast<char*>(in_.data()), in_.size());
      eof_ = in_size_ == 0;
    }
    const bool ended = eof_ && in_pos_ == in_size_;
    const unsigned char* in = in_.data() + in_pos_;
    std::size_t in_n = in_size_ - in_pos_;
    const std::size_t in_before = in_n;
    const Step s = decoder_->step(in, in_n, o, o_n, ended);
    in_pos_ += in_before - in_n;
    if (s == Step::error) {
      // The text decoded with the damage is not handed out, but it tells the line reached.
      newlines_ += std::count(out, reinterpret_cast<char*>(o), '\n');
      fail("corrupt " + std::string(compression_name(compression_)) + " data at byte " +
           std::to_string(in_base_ + in_pos_) + " of the compressed file: " + decoder_->error());
    }
    if (s == Step::end) finished_ = true;
    if (o != first) break;
    if (ended && !finished_) {
      if (decoder_->at_boundary()) {
        finished_ = true;
      } else {
        fail("truncated " + std::string(compression_name(compression_)) + " data: the compressed file ends at byte " +
             std::to_string(in_base_ + in_size_) + " inside a " + decoder_->unit());
      }
    }
    if (!ended && in_before > 0 && in_n == in_before) {
      fail("corrupt " + std::string(compression_name(compression_)) + " data at byte " +
           std::to_string(in_base_ + in_pos_) + " of the compressed file: the decoder makes no progress");
    }
  }
  const auto made = static_cast<std::size_t>(o - first);
  newlines_ += std::count(out, out + made, '\n');
  return made;
}

PlainFile::PlainFile(const std::filesystem::path& path, std::size_t max_line_bytes, const char* what)
    : source_(path) {
  DecompressedInput input(path);
  compression_ = input.compression();
  if (compression_ == Compression::none) return;
  std::string tmpl = (std::filesystem::temp_directory_path() / "kanoko-plain-XXXXXX").string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) {
    throw InputError(FileLoc{input.name()}, "cannot create a temporary file for its decompressed text: " + errno_text(errno));
  }
  // Only this name, made just now, is ever removed (on an error here or by the destructor).
  const std::filesystem::path copy = tmpl;
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  try {
    std::vector<char> buffer(std::size_t{1} << 20U);
    std::size_t line_bytes = 0;  // bytes of the current line so far
    std::int64_t line = 1;
    std::size_t chunks = 0;
    for (;;) {
      const std::size_t n = input.read(buffer.data(), buffer.size());
      if (n == 0) break;
      for (const char* p = buffer.data(); p < buffer.data() + n;) {
        const auto left = static_cast<std::size_t>(buffer.data() + n - p);
        const auto* nl = static_cast<const char*>(std::memchr(p, '\n', left));
        const std::size_t run = nl == nullptr ? left : static_cast<std::size_t>(nl - p);
        line_bytes += run;
        if (line_bytes > max_line_bytes) {
          throw InputError(FileLoc{input.name(), line, 1}, "line is longer than " + std::to_string(max_line_bytes >> 20U) +
                                                               " MiB: not a " + what + " (binary file?)");
        }
        if (nl == nullptr) break;
        line_bytes = 0;
        ++line;
        p = nl + 1;
      }
      for (std::size_t done = 0; done < n;) {
        const ssize_t w = ::write(fd, buffer.data() + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
          throw InputError(FileLoc{input.name()},
                           "cannot write its decompressed text to " + tmpl + ": " + errno_text(errno));
        }
        done += static_cast<std::size_t>(w);
      }
      if (++chunks % 64 == 0) check_interrupt();
    }
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(copy, ec);
    throw;
  }
  copy_ = copy;
}

PlainFile::PlainFile(PlainFile&& o) noexcept
    : source_(std::move(o.source_)), copy_(std::exchange(o.copy_, {})), compression_(o.compression_) {}

PlainFile::~PlainFile() {
  if (copy_.empty()) return;
  std::error_code ec;
  std::filesystem::remove(copy_, ec);
}

}  // namespace kanoko::trace
