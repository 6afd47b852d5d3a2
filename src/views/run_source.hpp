// Where the views get their trace: a trace file given directly, or the trace a simulated run
// (.kntj) was made from, as its metadata records it.
#pragma once

#include <filesystem>
#include <string>

namespace kanoko::views {

/// True when the file starts with the trajectory magic (KANOKOTJ).
bool is_run_file(const std::filesystem::path& path);

/// The trace to index for `input`: `override` when given; `input` itself when it is a trace; for
/// a run, the trace its metadata names, looked up as written, then next to the run file. Throws
/// InputError naming the run, the recorded path and the places tried when it is missing.
std::filesystem::path trace_for(const std::filesystem::path& input, const std::string& override = "");

}  // namespace kanoko::views
