// Sizes a trace may declare. Readers check them before allocating for what a header or a
// declaration announces, so that a corrupt count is a located error, not an exhausted memory.
#pragma once

#include <cstddef>

namespace kanoko::trace {

/// Entities (nodes, tasks, threads) a trace may declare: 2^20, about a million. Every entity
/// becomes a body with per-interval arrays, and a run of more bodies is beyond what the viewer
/// shows (docs/trace-formats.md, "Limits").
inline constexpr std::size_t kMaxEntities = std::size_t{1} << 20U;

}  // namespace kanoko::trace
