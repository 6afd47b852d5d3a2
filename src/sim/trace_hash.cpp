#include "src/sim/trace_hash.hpp"

#include <atomic>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "src/base/background.hpp"
#include "src/base/error.hpp"
#include "src/base/file_version.hpp"
#include "src/base/hash.hpp"

namespace kanoko::sim {

namespace {

/// Set at exit: a digest still being computed in the background stops (an error that ends the
/// command must not wait for the rest of a 100 GB trace to be read).
std::atomic<bool> g_stop{false};

std::uint64_t compute(const std::vector<std::filesystem::path>& files) {
  Xxh3_64 h;
  std::vector<char> buf(std::size_t{1} << 20U);
  for (const std::filesystem::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw InputError(FileLoc{file.string()}, "cannot open trace");
    const std::string name = file.filename().string();
    h.update_value(static_cast<std::uint64_t>(name.size()));
    h.update(name);
    while (in) {
      if (g_stop.load(std::memory_order_relaxed)) throw std::runtime_error("stopped at exit");
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      h.update(buf.data(), static_cast<std::size_t>(in.gcount()));
    }
    if (in.bad()) throw InputError(FileLoc{file.string()}, "cannot read trace");
  }
  return h.digest();
}

/// The digests computed or under way in this process, by the files' versions. Destroyed at exit
/// after waiting for a computation still under way.
struct Known {
  Known() = default;
  ~Known() { g_stop.store(true, std::memory_order_relaxed); }  // then the futures wait for their threads
  Known(const Known&) = delete;
  Known& operator=(const Known&) = delete;
  std::mutex mutex;
  std::map<std::vector<FileVersion>, std::shared_future<std::uint64_t>> digests;
};

Known& known() {
  static Known k;
  return k;
}

}  // namespace

std::uint64_t trace_files_hash(const std::vector<std::filesystem::path>& files) {
  if (const auto versions = file_versions(files)) {
    std::shared_future<std::uint64_t> digest;
    {
      Known& k = known();
      const std::lock_guard lock(k.mutex);
      if (const auto it = k.digests.find(*versions); it != k.digests.end()) digest = it->second;
    }
    if (digest.valid()) {
      try {
        return digest.get();
      } catch (const std::exception&) {
        // Failed in the background: computed again here, where its error is thrown.
      }
    }
  }
  return compute(files);
}

void prefetch_trace_files_hash(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return;  // a folder (an archive) is read as its files
  std::vector<std::filesystem::path> files{file};
  auto versions = file_versions(files);
  if (!versions) return;
  Known& k = known();
  const std::lock_guard lock(k.mutex);
  if (k.digests.count(*versions) != 0) return;
  k.digests.emplace(std::move(*versions), background_async([files] { return compute(files); }).share());
}

}  // namespace kanoko::sim
