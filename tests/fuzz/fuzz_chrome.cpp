// Fuzz target run_chrome (libFuzzer, and the replay test): any bytes as Chrome/Perfetto trace-event
// JSON, streamed into a timeline as `kanoko simulate` does, with a bytes key, a counter and a small
// reorder window so that every path of the reader runs. Accepting or throwing kanoko::InputError
// are the only allowed outcomes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "src/base/error.hpp"
#include "tests/fuzz/targets.hpp"
#include "src/trace/chrome_reader.hpp"
#include "src/trace/timeline.hpp"

void kanoko::fuzz::run_chrome(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    kanoko::trace::TimelineOptions options;
    options.busy_states = {"compute", "X"};
    kanoko::trace::TimelineBuilder builder(options);
    kanoko::trace::ChromeOptions chrome;
    chrome.bytes_key = "args.bytes";
    chrome.max_held = 16;
    const kanoko::trace::ChromeSummary s = kanoko::trace::read_chrome_trace_text(text, "fuzz.json", builder, chrome);
    const kanoko::trace::Timeline tl = builder.take();
    double sum = static_cast<double>(s.events + s.states + s.flow_messages + s.counter_samples + s.warnings.size() +
                                     tl.message_count + tl.state_count + tl.pairs.size());
    for (const double v : tl.load) sum += v;
    for (const double v : tl.busy_s) sum += v;
    g_sink = sum;
  } catch (const kanoko::InputError&) {
  }
}
