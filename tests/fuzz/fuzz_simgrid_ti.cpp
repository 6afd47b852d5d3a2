// Fuzz target run_simgrid_ti (libFuzzer, and the replay test): any bytes as a single-file SimGrid
// time-independent trace, replayed into a timeline as `kanoko simulate` does, with a small reorder
// window so that waits are split. Accepting or throwing kanoko::InputError are the only allowed
// outcomes (deadlocks, unknown actions and mismatched collectives are InputErrors).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "src/base/error.hpp"
#include "tests/fuzz/targets.hpp"
#include "src/trace/simgrid_ti_reader.hpp"
#include "src/trace/timeline.hpp"

void kanoko::fuzz::run_simgrid_ti(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    kanoko::trace::TimelineOptions options;
    options.busy_states = {"compute", "communication"};
    kanoko::trace::TimelineBuilder builder(options);
    kanoko::trace::SimgridTiOptions ti;
    ti.max_held = 16;
    const auto summary = kanoko::trace::read_simgrid_ti_text(text, "fuzz.txt", builder, ti);
    const kanoko::trace::Timeline tl = builder.take();
    double sum = static_cast<double>(summary.actions + summary.collectives + summary.warnings.size()) + summary.end_s;
    sum += kanoko::fuzz::touch(tl);
    g_sink = sum;
  } catch (const kanoko::InputError&) {
  }
}
