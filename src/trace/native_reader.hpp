// Streaming reader of the native text trace (.kntr), docs/native-trace-format.md.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "src/base/error.hpp"
#include "src/trace/event.hpp"
#include "src/trace/line_batches.hpp"

namespace kanoko::trace {

/// Reads a native trace file and streams its entries to `sink`. Memory stays bounded by the
/// longest line and the number of declared nodes. Throws InputError (file:line:column) at the
/// first malformed entry. The common entries are pre-parsed on `options.threads` worker threads;
/// what reaches the sink, and every error, is the same for any number of threads. Returns where
/// the trace's end was set (the entry with the latest time, or the declared end).
FileLoc read_native_trace(const std::filesystem::path& path, TraceSink& sink, const TextReadOptions& options = {});

/// The same for text already in memory; `name` is used in error locations.
FileLoc read_native_trace_text(std::string_view text, const std::string& name, TraceSink& sink);

}  // namespace kanoko::trace
