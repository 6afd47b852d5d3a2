#include "src/trace/text_input.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"

namespace kanoko::trace {

void for_each_file_chunk(const std::filesystem::path& path, const std::function<void(std::string_view)>& consume) {
  constexpr std::size_t kChunkBytes = 1 << 20;
  const std::string name = path.string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(FileLoc{name}, std::string("cannot open trace: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  std::vector<char> buffer(kChunkBytes);
  std::size_t chunks = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EISDIR) throw InputError(FileLoc{name}, "is a directory, expected a trace file");
      throw InputError(FileLoc{name}, std::string("read failed: ") + std::strerror(errno));
    }
    if (n == 0) break;
    consume(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
    if (++chunks % 64 == 0) check_interrupt();
  }
}

std::string shown(std::string_view s) {
  constexpr std::size_t kMaxShown = 40;
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < kMaxShown; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > kMaxShown) out += "...";
  return out;
}

ChunkLineSplitter::ChunkLineSplitter(std::string name, std::function<void(std::string_view)> on_line, std::size_t max_bytes)
    : name_(std::move(name)), on_line_(std::move(on_line)), max_bytes_(max_bytes) {}

void ChunkLineSplitter::feed(std::string_view chunk) {
  std::size_t pos = 0;
  while (pos < chunk.size()) {
    const char* nl = static_cast<const char*>(std::memchr(chunk.data() + pos, '\n', chunk.size() - pos));
    if (nl == nullptr) {
      carry_.append(chunk.substr(pos));
      if (carry_.size() > max_bytes_) {
        throw InputError(FileLoc{name_, lines_ + 1, 1}, "line is longer than " + std::to_string(max_bytes_ >> 20U) +
                                                            " MiB: not a text trace (binary file?)");
      }
      return;
    }
    const auto end = static_cast<std::size_t>(nl - chunk.data());
    ++lines_;
    if (carry_.empty()) {
      on_line_(chunk.substr(pos, end - pos));
    } else {
      carry_.append(chunk.substr(pos, end - pos));
      on_line_(carry_);
      carry_.clear();
    }
    pos = end + 1;
  }
}

void ChunkLineSplitter::finish() {
  if (carry_.empty()) return;
  ++lines_;
  on_line_(carry_);
  carry_.clear();
}

void for_each_file_line(const std::filesystem::path& path, const std::function<void(std::string_view)>& on_line) {
  ChunkLineSplitter splitter(path.string(), on_line);
  for_each_file_chunk(path, [&splitter](std::string_view chunk) { splitter.feed(chunk); });
  splitter.finish();
}

}  // namespace kanoko::trace
