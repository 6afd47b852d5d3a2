// Fuzz target run_paje (libFuzzer, and the replay test): any bytes as a Pajé trace, streamed into a
// timeline as `kanoko simulate` does, with a load variable and a small reorder window so that every
// path of the reader runs. Accepting or throwing kanoko::InputError are the only allowed outcomes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "src/base/error.hpp"
#include "tests/fuzz/targets.hpp"
#include "src/trace/paje_reader.hpp"
#include "src/trace/timeline.hpp"

void kanoko::fuzz::run_paje(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    kanoko::trace::TimelineOptions options;  // the paper's 0.1 s, busy = compute
    options.busy_states = {"compute", "computing"};
    kanoko::trace::TimelineBuilder builder(options);
    kanoko::trace::PajeOptions paje;
    paje.load_variable = "load";
    paje.max_held = 16;
    const kanoko::trace::PajeSummary summary = kanoko::trace::read_paje_trace_text(text, "fuzz.trace", builder, paje);
    const kanoko::trace::Timeline tl = builder.take();
    double sum = static_cast<double>(summary.containers + summary.states + summary.links + summary.warning_count());
    sum += kanoko::fuzz::touch(tl);
    g_sink = sum;
  } catch (const kanoko::InputError&) {
  }
}
