#include "src/trace/line_batches.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "src/base/error.hpp"

namespace kanoko::trace {

LineBatchSource::LineBatchSource(const std::filesystem::path& path, std::size_t batch_bytes, std::size_t max_line_bytes)
    : name_(path.string()), batch_bytes_(std::max<std::size_t>(batch_bytes, 1)), max_line_bytes_(max_line_bytes) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw InputError(FileLoc{name_}, std::string("cannot open trace: ") + std::strerror(errno));
}

LineBatchSource::~LineBatchSource() { ::close(fd_); }

bool LineBatchSource::next(LineBatch& b) {
  b.text.swap(carry_);
  carry_.clear();
  b.overlong = false;
  if (done_) {
    b.text.clear();
    return false;
  }
  for (;;) {
    const std::size_t had = b.text.size();
    b.text.resize(had + batch_bytes_);
    ssize_t n = 0;
    do {
      n = ::read(fd_, b.text.data() + had, batch_bytes_);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      const int err = errno;
      b.text.resize(had);
      if (err == EISDIR) throw InputError(FileLoc{name_}, "is a directory, expected a trace file");
      throw InputError(FileLoc{name_}, std::string("read failed: ") + std::strerror(err));
    }
    b.text.resize(had + static_cast<std::size_t>(n));
    if (n == 0) {
      // The end: the last line may lack its '\n'.
      done_ = true;
      return !b.text.empty();
    }
    // Only the bytes just read can hold a '\n' (the ones before are a partial line).
    const void* last = ::memrchr(b.text.data() + had, '\n', static_cast<std::size_t>(n));
    if (last != nullptr) {
      const auto end = static_cast<std::size_t>(static_cast<const char*>(last) - b.text.data()) + 1;
      carry_.assign(b.text, end);
      b.text.resize(end);
      return true;
    }
    if (b.text.size() > max_line_bytes_) {
      b.overlong = true;
      done_ = true;
      return true;
    }
  }
}

int reader_workers(int requested) {
  if (requested > 0) return std::min(requested - 1, 8);
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores <= 1) return 0;
  return static_cast<int>(std::min(cores, 4U)) - 1;
}

}  // namespace kanoko::trace
