#include "src/trace/line_batches.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

namespace kanoko::trace {

LineBatchSource::LineBatchSource(const std::filesystem::path& path, std::size_t batch_bytes, std::size_t max_line_bytes)
    : input_(path), batch_bytes_(std::max<std::size_t>(batch_bytes, 1)), max_line_bytes_(max_line_bytes) {}

namespace {

/// Makes `b.storage` hold at least `bytes`, keeping its first `keep` bytes.
void reserve_batch(LineBatch& b, std::size_t bytes, std::size_t keep) {
  if (b.capacity >= bytes) return;
  const std::size_t capacity = std::max(bytes, 2 * b.capacity);
  auto grown = std::make_unique_for_overwrite<char[]>(capacity);
  if (keep > 0) std::memcpy(grown.get(), b.storage.get(), keep);
  b.storage = std::move(grown);
  b.capacity = capacity;
}

}  // namespace

bool LineBatchSource::next(LineBatch& b) {
  b.overlong = false;
  b.text = {};
  if (done_) return false;
  // The partial last line of the previous read comes first.
  std::size_t size = carry_.size();
  reserve_batch(b, size + batch_bytes_, 0);
  if (size > 0) std::memcpy(b.storage.get(), carry_.data(), size);
  carry_.clear();
  for (;;) {
    reserve_batch(b, size + batch_bytes_, size);
    char* data = b.storage.get();
    const std::size_t n = input_.read(data + size, batch_bytes_);
    const std::size_t had = size;
    size += n;
    if (n == 0) {
      // The end: the last line may lack its '\n'.
      done_ = true;
      b.text = std::string_view(data, size);
      return size > 0;
    }
    // Only the bytes just read can hold a '\n' (the ones before are a partial line).
    const void* last = ::memrchr(data + had, '\n', n);
    if (last != nullptr) {
      const auto end = static_cast<std::size_t>(static_cast<const char*>(last) - data) + 1;
      carry_.assign(data + end, size - end);
      b.text = std::string_view(data, end);
      return true;
    }
    if (size > max_line_bytes_) {
      b.overlong = true;
      done_ = true;
      b.text = std::string_view(data, size);
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
