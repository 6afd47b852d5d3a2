#include "src/trace/text_input.hpp"

#include <cstring>
#include <vector>

#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"
#include "src/trace/decompress.hpp"

namespace kanoko::trace {

namespace {

/// for_each_file_chunk, stopping early when `consume` returns false.
void read_chunks(const std::filesystem::path& path, const std::function<bool(std::string_view)>& consume) {
  constexpr std::size_t kChunkBytes = 1 << 20;
  DecompressedInput input(path);
  std::vector<char> buffer(kChunkBytes);
  std::size_t chunks = 0;
  for (;;) {
    const std::size_t n = input.read(buffer.data(), buffer.size());
    if (n == 0 || !consume(std::string_view(buffer.data(), n))) break;
    if (++chunks % 64 == 0) check_interrupt();
  }
}

}  // namespace

void for_each_file_chunk(const std::filesystem::path& path, const std::function<void(std::string_view)>& consume) {
  read_chunks(path, [&consume](std::string_view chunk) {
    consume(chunk);
    return true;
  });
}

std::string shown(std::string_view s) { return escaped_excerpt(s, 40); }

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
  for_each_file_line_while(path, [&on_line](std::string_view line) {
    on_line(line);
    return true;
  });
}

void for_each_file_line_while(const std::filesystem::path& path, const std::function<bool(std::string_view)>& on_line) {
  bool go = true;
  ChunkLineSplitter splitter(path.string(), [&](std::string_view line) {
    if (go) go = on_line(line);
  });
  read_chunks(path, [&](std::string_view chunk) {
    splitter.feed(chunk);
    return go;
  });
  if (go) splitter.finish();
}

}  // namespace kanoko::trace
