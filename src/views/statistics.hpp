// The numbers every companion view draws, machine-readable (`kanoko plot VIEW --json`): the
// summary's per-entity split and traffic over the span up to the cursor, and the current
// interval's split (Kiviat) and sender × receiver traffic (matrix), each with its units
// (docs/statistics.md).
#pragma once

#include <string>

#include "src/views/trace_index.hpp"
#include "src/views/view.hpp"

namespace kanoko::views {

/// The statistics of `index` at `state` as one JSON object: times in seconds ("_s"), fractions
/// of the span in 0..1, bytes in B, counts of messages.
[[nodiscard]] std::string statistics_json(const TraceIndex& index, const ViewState& state);

}  // namespace kanoko::views
