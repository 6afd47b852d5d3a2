#include "src/trace/line_batches.hpp"

#include <algorithm>
#include <cstring>

namespace kanoko::trace {

LineBatchSource::LineBatchSource(const std::filesystem::path& path, std::size_t batch_bytes, std::size_t max_line_bytes)
    : input_(path), batch_bytes_(std::max<std::size_t>(batch_bytes, 1)), max_line_bytes_(max_line_bytes) {}

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
    const std::size_t n = input_.read(b.text.data() + had, batch_bytes_);
    b.text.resize(had + n);
    if (n == 0) {
      // The end: the last line may lack its '\n'.
      done_ = true;
      return !b.text.empty();
    }
    // Only the bytes just read can hold a '\n' (the ones before are a partial line).
    const void* last = ::memrchr(b.text.data() + had, '\n', n);
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
