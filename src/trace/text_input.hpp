// Shared pieces of the text trace readers: reading a file in large chunks with interrupt checks,
// and quoting user text safely inside error messages.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace kanoko::trace {

/// Reads `path` in 1 MiB chunks and passes each to `consume`, checking for Ctrl-C between
/// chunks. Throws InputError naming the file when it cannot be opened or read.
void for_each_file_chunk(const std::filesystem::path& path, const std::function<void(std::string_view)>& consume);

/// User text for an error message: at most 40 bytes, control characters escaped as \xNN.
std::string shown(std::string_view s);

}  // namespace kanoko::trace
