#include "src/base/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "src/base/check.hpp"
#include "src/base/error.hpp"
#include "src/base/interrupt.hpp"
#include "src/base/output_target.hpp"

namespace kanoko {

namespace {

/// The process id in a temporary's name "<target>.tmp-<pid>" or "<target>.tmp-<pid>-<n>", given
/// the part after "<target>.tmp-" as `suffix`; 0 if the name is not one of those.
pid_t temporary_owner(std::string_view suffix) {
  const std::size_t dash = suffix.find('-');
  const std::string_view pid_text = suffix.substr(0, dash);
  long pid = 0;
  const auto [end, ec] = std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), pid);
  if (ec != std::errc() || end != pid_text.data() + pid_text.size() || pid <= 0) return 0;
  if (dash != std::string_view::npos) {
    const std::string_view n = suffix.substr(dash + 1);
    unsigned long attempt = 0;
    const auto [n_end, n_ec] = std::from_chars(n.data(), n.data() + n.size(), attempt);
    if (n.empty() || n_ec != std::errc() || n_end != n.data() + n.size()) return 0;
  }
  return static_cast<pid_t>(pid);
}

/// The temporaries "<target>.tmp-<P>[-n]" beside `target`, with their process P.
std::vector<std::pair<std::filesystem::path, pid_t>> temporaries_of(const std::filesystem::path& target) {
  const std::string prefix = target.filename().string() + ".tmp-";
  const std::filesystem::path folder = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  std::vector<std::pair<std::filesystem::path, pid_t>> found;
  std::error_code ec;
  std::filesystem::directory_iterator it(folder, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const pid_t owner = temporary_owner(std::string_view(name).substr(prefix.size()));
    if (owner != 0) found.emplace_back(it->path(), owner);
  }
  return found;
}

/// Removes the temporaries beside `target` whose process no longer exists (a run killed by
/// SIGKILL or a crash), one line on stderr for each. Those of live processes, and this process's
/// own, are kept: they may still be written.
void remove_stale_temporaries(const std::filesystem::path& target) {
  for (const auto& [path, owner] : temporaries_of(target)) {
    if (owner == ::getpid() || process_running(owner)) continue;
    std::error_code removed;
    if (std::filesystem::remove(path, removed)) {
      std::cerr << "kanoko: removed " << path.string() << ", left by process " << owner << " which no longer runs\n";
    }
  }
}

}  // namespace

int temporary_writer(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  const std::size_t at = name.rfind(".tmp-");
  if (at == std::string::npos) return 0;
  // The pid is the part after the last ".tmp-" (a target's own name may contain ".tmp-").
  return static_cast<int>(temporary_owner(std::string_view(name).substr(at + 5)));
}

bool process_running(int pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno != ESRCH); }

std::vector<std::filesystem::path> live_temporaries(const std::filesystem::path& target) {
  std::vector<std::filesystem::path> found;
  for (const auto& [path, owner] : temporaries_of(target)) {
    if (process_running(owner)) found.push_back(path);
  }
  std::sort(found.begin(), found.end());
  return found;
}

AtomicOutputFile::AtomicOutputFile(std::filesystem::path target)
    : target_(std::move(target)), destination_(checked_output_target(target_)) {
  remove_stale_temporaries(destination_);
  // "<target>.tmp-<pid>", created exclusively: a second writer to the same target in this process
  // (or a stale file of an earlier process with the same pid) gets "-1", "-2", ... appended
  // instead of truncating a temporary that is still in use.
  for (unsigned attempt = 0;; ++attempt) {
    temp_ = destination_;
    temp_ += ".tmp-" + std::to_string(::getpid()) + (attempt == 0 ? std::string() : "-" + std::to_string(attempt));
    const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      file_ = ::fdopen(fd, "wb");
      if (file_ == nullptr) {
        const std::string why = std::strerror(errno);
        ::close(fd);
        std::error_code ec;
        std::filesystem::remove(temp_, ec);
        throw InputError(FileLoc{target_.string()}, "cannot write output: " + why);
      }
      break;
    }
    if (errno != EEXIST || attempt >= 1000) {
      throw InputError(FileLoc{target_.string()}, std::string("cannot write output: ") + std::strerror(errno));
    }
  }
  register_temporary_file(temp_);
}

AtomicOutputFile::~AtomicOutputFile() {
  if (!committed_) discard();
}

void AtomicOutputFile::write(const void* data, std::size_t bytes) {
  if (bytes == 0) return;
  KANOKO_ASSERT(file_ != nullptr, "write after commit() or discard()");
  if (std::fwrite(data, 1, bytes, file_) != bytes) fail(std::strerror(errno));
  size_ += bytes;
}

void AtomicOutputFile::write_at(std::uint64_t offset, const void* data, std::size_t bytes) {
  KANOKO_ASSERT(file_ != nullptr, "write after commit() or discard()");
  if (std::fseek(file_, static_cast<long>(offset), SEEK_SET) != 0 ||
      std::fwrite(data, 1, bytes, file_) != bytes || std::fseek(file_, 0, SEEK_END) != 0) {
    fail(std::strerror(errno));
  }
}

void AtomicOutputFile::flush(bool durable) {
  KANOKO_ASSERT(file_ != nullptr, "flush after commit() or discard()");
  if (std::fflush(file_) != 0 || (durable && ::fdatasync(::fileno(file_)) != 0)) fail(std::strerror(errno));
}

void AtomicOutputFile::close() {
  if (file_ == nullptr) throw RunError("output " + target_.string() + " was already discarded");
  // Each result is checked where it happens: a full disk often shows only at the flush or close.
  int error = 0;
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) error = errno;
  if (std::fclose(file_) != 0 && error == 0) error = errno;
  file_ = nullptr;
  if (error != 0) fail(std::strerror(error));
  closed_ = true;
}

void AtomicOutputFile::commit() {
  if (!closed_) close();
  std::error_code ec;
  std::filesystem::rename(temp_, destination_, ec);
  if (ec) {
    discard();
    throw RunError("cannot move output into place at " + destination_.string() + ": " + ec.message());
  }
  unregister_temporary_file(temp_);
  committed_ = true;
}

void AtomicOutputFile::fail(const std::string& why) {
  discard();
  throw RunError("writing " + target_.string() + " failed: " + why);
}

void AtomicOutputFile::discard() noexcept {
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
  closed_ = false;
  if (!committed_) {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
    unregister_temporary_file(temp_);
  }
}

void write_file_atomically(const std::filesystem::path& target, std::string_view content) {
  AtomicOutputFile out(target);
  out.write(content);
  out.commit();
}

std::string read_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(FileLoc{path.string()}, "is a directory, expected a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError(FileLoc{path.string()}, std::string("cannot open: ") + std::strerror(errno));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(FileLoc{path.string()}, "read failed");
  return std::move(ss).str();
}

}  // namespace kanoko
