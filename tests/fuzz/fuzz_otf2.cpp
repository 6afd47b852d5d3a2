// Fuzz target run_otf2 (libFuzzer, and the replay test): an OTF2 archive (read through Debian's
// libotf2) with one of its files replaced by the input. The first byte picks the file of the seed
// archive (../shared/traces/otf2's ping-pong-otf2-papi, or KANOKO_FUZZ_OTF2_ARCHIVE): the global
// definitions, a rank's local definitions or a rank's events; the rest of the input is that file's
// new content. The anchor file is left alone: libotf2 itself spins for about 20 s on some anchor
// mutations (otf2-print too). The archive is read into a timeline as `kanoko simulate` does.
// Accepting or throwing kanoko::InputError are the only allowed outcomes.
#include <stdlib.h>  // mkdtemp

#include <array>
#include <cstddef>
#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

#include "src/base/error.hpp"
#include "tests/fuzz/targets.hpp"
#include "src/trace/otf2_reader.hpp"
#include "src/trace/timeline.hpp"

namespace fs = std::filesystem;

namespace {

/// A private copy of the seed archive in a temporary folder, removed when the process exits.
class ArchiveCopy {
 public:
  ArchiveCopy() {
    const char* env = std::getenv("KANOKO_FUZZ_OTF2_ARCHIVE");
    const fs::path seed = env != nullptr ? fs::path(env) : fs::path(KANOKO_FUZZ_OTF2_SEED);
    std::string tmpl = (fs::temp_directory_path() / "kanoko-fuzz-otf2-XXXXXX").string();
    const char* made = ::mkdtemp(tmpl.data());
    if (made == nullptr) std::abort();
    folder_ = made;
    copy_ = folder_ / "archive";
    fs::copy(seed, copy_, fs::copy_options::recursive);
    for (const auto& e : fs::recursive_directory_iterator(copy_)) {
      fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
    }
  }
  ~ArchiveCopy() {
    std::error_code ec;
    fs::remove_all(folder_, ec);
  }
  ArchiveCopy(const ArchiveCopy&) = delete;
  ArchiveCopy& operator=(const ArchiveCopy&) = delete;
  [[nodiscard]] const fs::path& path() const { return copy_; }

 private:
  fs::path folder_, copy_;
};

/// The archive copy of this process, made on first use.
const fs::path& archive() {
  static const ArchiveCopy copy;
  return copy.path();
}

constexpr const char* kFiles[] = {"traces.def", "traces/0.def", "traces/1.def", "traces/0.evt", "traces/1.evt"};
constexpr std::size_t kFileCount = sizeof kFiles / sizeof kFiles[0];

/// The seed's own bytes of every file, to restore after each input.
const std::string& original(std::size_t i) {
  static const auto all = [] {
    std::array<std::string, kFileCount> a;
    const char* env = std::getenv("KANOKO_FUZZ_OTF2_ARCHIVE");
    const fs::path seed = env != nullptr ? fs::path(env) : fs::path(KANOKO_FUZZ_OTF2_SEED);
    for (std::size_t k = 0; k < kFileCount; ++k) {
      std::ifstream in(seed / kFiles[k], std::ios::binary);
      a[k].assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    return a;
  }();
  return all[i];
}

void write(const fs::path& p, const char* data, std::size_t size) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(data, static_cast<std::streamsize>(size));
}
}  // namespace

void kanoko::fuzz::run_otf2(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  const std::size_t which = data[0] % kFileCount;
  const fs::path& dir = archive();
  write(dir / kFiles[which], reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    kanoko::trace::TimelineOptions options;
    options.busy_states = {"main", "MPI_Send"};
    kanoko::trace::TimelineBuilder builder(options);
    const auto summary = kanoko::trace::read_otf2_trace(dir / "traces.otf2", builder);
    const kanoko::trace::Timeline tl = builder.take();
    double sum = static_cast<double>(summary.enters + summary.messages);
    sum += kanoko::fuzz::touch(tl);
    g_sink = sum;
  } catch (const kanoko::InputError&) {
  }
  const std::string& o = original(which);
  write(dir / kFiles[which], o.data(), o.size());
}
