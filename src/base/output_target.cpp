#include "src/base/output_target.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>

#include "src/base/error.hpp"

namespace kanoko {

namespace {

std::mutex& inputs_mutex() {
  static std::mutex m;
  return m;
}

std::vector<std::filesystem::path>& inputs() {
  static std::vector<std::filesystem::path> list;
  return list;
}

// What a file that is not a regular file is, for the message.
const char* kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

[[noreturn]] void refuse(const std::filesystem::path& target, const std::string& why) {
  throw InputError(FileLoc{target.string()}, "refusing to write: " + why);
}

}  // namespace

void note_command_input(const std::filesystem::path& path) {
  if (path.empty()) return;
  const std::lock_guard lock(inputs_mutex());
  if (std::find(inputs().begin(), inputs().end(), path) == inputs().end()) inputs().push_back(path);
}

void note_command_inputs(const std::vector<std::filesystem::path>& paths) {
  for (const auto& p : paths) note_command_input(p);
}

void forget_command_inputs() {
  const std::lock_guard lock(inputs_mutex());
  inputs().clear();
}

std::filesystem::path checked_output_target(const std::filesystem::path& target) {
  struct stat entry {};
  // A name that does not exist (or cannot be looked at) is left to the open to report.
  if (::lstat(target.c_str(), &entry) != 0) return target;
  struct stat file = entry;
  std::filesystem::path destination = target;
  const bool through_link = S_ISLNK(entry.st_mode);
  if (through_link) {
    std::error_code ec;
    const std::filesystem::path points_to = std::filesystem::read_symlink(target, ec);
    if (::stat(target.c_str(), &file) != 0) {
      refuse(target, "it is a symbolic link to " + points_to.string() + ", which leads to no file (" +
                         std::strerror(errno) + "); remove the link or name another file");
    }
  }
  if (!S_ISREG(file.st_mode)) {
    refuse(target, std::string("it is ") + kind_of(file.st_mode) +
                       (through_link ? " (through a symbolic link)" : "") + "; outputs are regular files");
  }
  if (through_link) {
    std::error_code ec;
    destination = std::filesystem::canonical(target, ec);
    if (ec) refuse(target, "cannot resolve the symbolic link: " + ec.message());
  }
  const std::lock_guard lock(inputs_mutex());
  for (const auto& input : inputs()) {
    struct stat in {};
    if (::stat(input.c_str(), &in) == 0 && in.st_dev == file.st_dev && in.st_ino == file.st_ino) {
      refuse(target, "it is " + (input == target ? std::string("an input") : "the input " + input.string()) +
                         " of this command; choose another output name");
    }
  }
  return destination;
}

}  // namespace kanoko
