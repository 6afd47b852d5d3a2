// Fuzz target run_paraver (libFuzzer, and the replay test): any bytes as a Paraver trace, split
// into .prv/.pcf/.row at the first two form feeds (so that the fuzzer mutates all three files),
// streamed into a timeline as `kanoko simulate` does, with thread-level entities, a load event type
// and a small reorder window so that every path of the reader runs. Accepting or throwing
// kanoko::InputError are the only allowed outcomes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "src/base/error.hpp"
#include "tests/fuzz/targets.hpp"
#include "src/trace/paraver_reader.hpp"
#include "src/trace/timeline.hpp"
#include "tests/trace/mutation.hpp"

void kanoko::fuzz::run_paraver(const std::uint8_t* data, std::size_t size) {
  const auto [prv, pcf, row] =
      kanoko::trace::testing::split_paraver_bundle(std::string_view(reinterpret_cast<const char*>(data), size));
  try {
    kanoko::trace::TimelineOptions options;
    options.busy_states = {"Running", "state 1"};
    kanoko::trace::TimelineBuilder builder(options);
    kanoko::trace::ParaverOptions paraver;
    paraver.max_held = 16;
    paraver.load_event_type = 42000050;
    paraver.application = 0;
    paraver.entity_level = size % 2 == 0 ? "task" : "thread";
    const auto summary = kanoko::trace::read_paraver_trace_text(prv, pcf, row, "fuzz.prv", builder, paraver);
    const kanoko::trace::Timeline tl = builder.take();
    double sum = static_cast<double>(summary.state_records + summary.comm_records + summary.warnings.size());
    sum += kanoko::fuzz::touch(tl);
    g_sink = sum;
  } catch (const kanoko::InputError&) {
  }
}
