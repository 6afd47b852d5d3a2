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

}  // namespace kanoko::trace
