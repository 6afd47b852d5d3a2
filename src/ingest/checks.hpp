// What makes a picture degenerate, found before any physics runs: a force that reads bytes the
// trace does not have, a mass meant to follow load that stays constant, too few intervals, events
// crowded into a few intervals, no forcing at all. Each finding is one line with the fix.
#pragma once

#include <string>
#include <vector>

#include "src/ingest/schema.hpp"
#include "src/mapping/mapping.hpp"
#include "src/trace/timeline.hpp"

namespace kanoko::ingest {

/// Adapts `m` to what the trace holds and says what it changed: a communication force by bytes on
/// a trace without message sizes falls back to message counts, unless the mapping writes
/// `quantity = "bytes"`, which is then an InputError located at that key. Changes are made in the
/// mapping's text as well (the mapping is parsed again, so the caller re-applies its overrides).
std::vector<std::string> adapt_to_trace(mapping::Mapping& m, const SelectionReport& r);

/// Warnings about the inputs of a run (the mapping applied to the timeline), each with its fix.
std::vector<std::string> input_warnings(const mapping::Mapping& m, const trace::Timeline& tl, const SelectionReport& r);

/// What every command that runs or checks a mapping on a trace says before any physics: adapts `m`
/// (adapt_to_trace, which may throw), gives it the timeline's interval, and returns the adaptation
/// notes followed by input_warnings.
std::vector<std::string> prepare_run(mapping::Mapping& m, const trace::Timeline& tl, const SelectionReport& r);

/// The fewest intervals a run should have to animate (below it, input_warnings says so).
inline constexpr std::size_t kFewestIntervals = 100;

}  // namespace kanoko::ingest
