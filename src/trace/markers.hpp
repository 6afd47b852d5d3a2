// What marks iterations in a trace: names that say so ("iteration", "timestep", "main loop").
#pragma once

#include <string_view>

namespace kanoko::trace {

/// The words a marker, state, region or event-type name must contain (any case) to mark
/// iterations when no marker name is given: "iter", "step", "loop".
inline constexpr std::string_view kIterationWords[] = {"iter", "step", "loop"};

/// True when `name` contains one of kIterationWords, in any case ("Iteration 3", "TIMESTEP").
bool names_iteration(std::string_view name);

}  // namespace kanoko::trace
