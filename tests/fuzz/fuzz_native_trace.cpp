// Fuzz target run_native_trace (libFuzzer, and the replay test): any bytes as a native trace,
// streamed into a timeline as `kanoko simulate` does. Accepting or throwing kanoko::InputError are
// the only allowed outcomes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "src/base/error.hpp"
#include "tests/fuzz/targets.hpp"
#include "src/trace/native_reader.hpp"
#include "src/trace/timeline.hpp"

void kanoko::fuzz::run_native_trace(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    kanoko::trace::TimelineOptions options;  // the paper's 0.1 s, busy = compute
    kanoko::trace::TimelineBuilder builder(options);
    kanoko::trace::read_native_trace_text(text, "fuzz.kntr", builder);
    const kanoko::trace::Timeline tl = builder.take();
    // Touch everything a model reads.
    double sum = kanoko::fuzz::touch(tl);
    sum += static_cast<double>(tl.bin_of(tl.end_s));
    g_sink = sum;
  } catch (const kanoko::InputError&) {
  }
}
