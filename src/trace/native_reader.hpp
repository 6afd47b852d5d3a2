// Streaming reader of the native text trace (.kntr), docs/native-trace-format.md.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "src/trace/event.hpp"

namespace kanoko::trace {

/// Reads a native trace file and streams its entries to `sink`. Memory stays bounded by the
/// longest line and the number of declared nodes. Throws InputError (file:line:column) at the
/// first malformed entry.
void read_native_trace(const std::filesystem::path& path, TraceSink& sink);

/// The same for text already in memory; `name` is used in error locations.
void read_native_trace_text(std::string_view text, const std::string& name, TraceSink& sink);

}  // namespace kanoko::trace
