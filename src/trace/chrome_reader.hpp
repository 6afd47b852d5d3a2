// Streaming reader of Chrome/Perfetto trace-event JSON (Chrome tracing, Perfetto "legacy JSON",
// PyTorch/Kineto, ...), docs/trace-formats.md. Parsed with a SAX parser (rapidjson::Reader),
// never into a document tree.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "src/trace/event.hpp"
#include "src/trace/event_window.hpp"

namespace kanoko::trace {

/// What the Chrome JSON reader turns into Kanoko events.
struct ChromeOptions {
  /// Key of `args` whose number is a flow's byte count ("bytes", "args.bytes", "data.size" for
  /// args.data.size), read from the flow's start event (v1 `s`, v2 `flow_out` slice). Empty: 0.
  std::string bytes_key;
  /// Counter whose values become load samples: "NAME" (its first series) or "NAME.SERIES".
  /// Empty: the first series of the first counter (`C` event) in the file.
  std::string counter;
  /// Bound of the reordering window (tests lower it to exercise the bound).
  std::size_t max_held = kDefaultEventWindow;
  bool operator==(const ChromeOptions&) const = default;  ///< same options, same events (survey_trace's memo)
};

/// What one read found besides the event stream.
struct ChromeSummary {
  std::uint64_t events = 0;        ///< elements of the event array (objects)
  std::uint64_t processes = 0;     ///< distinct pids of events
  std::uint64_t threads = 0;       ///< entities: distinct (pid, tid) of events
  std::uint64_t states = 0;        ///< complete X events + matched B/E pairs
  std::uint64_t flow_messages = 0; ///< messages from flows (v1 s→t→f hops and v2 bind_id pairs)
  std::uint64_t counter_samples = 0;  ///< load samples from the chosen counter
  std::uint64_t metadata = 0;      ///< M events
  std::uint64_t markers = 0;       ///< instant events and marks (`i`, `I`, `R`), delivered as markers
  std::uint64_t ignored = 0;       ///< events of phases Kanoko does not read (async, ...)
  std::string counter;             ///< the counter series read as load ("" if none)
  std::int64_t truncated_at = -1;  ///< byte offset where a truncated file ends; -1 if complete
  std::vector<ReaderWarning> warnings;
  /// The record that set the trace's end: where its latest time (or a declared end) was read.
  FileLoc end_at;
};

/// Reads a trace-event JSON file (array form or {"traceEvents": [...]}) and streams it to `sink`
/// in time order. Reads the file twice: once for the names (M events may come last) and the time
/// origin, once for the events. Throws InputError with line:column and byte offset for malformed
/// JSON; a file cut off inside the event array reads with a warning. Memory is bounded by the
/// entities, the open B slices and pending flows, and the reordering window.
ChromeSummary read_chrome_trace(const std::filesystem::path& path, TraceSink& sink, const ChromeOptions& options = {});

/// The same for text already in memory; `name` is used in error locations.
ChromeSummary read_chrome_trace_text(std::string_view text, const std::string& name, TraceSink& sink,
                                     const ChromeOptions& options = {});

/// True when `head` (the first bytes of a file) looks like trace-event JSON: first non-blank
/// character '[' or '{', and a "ph" or "traceEvents" key.
bool looks_like_chrome_json(std::string_view head);

}  // namespace kanoko::trace
